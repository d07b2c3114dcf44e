"""Every widget of the book (hetlab.book.views): driven through every control, named apart from the library."""
import importlib
import pkgutil
import re
import subprocess
import sys

import ipywidgets as w
import matplotlib.pyplot as plt
import pytest

import hetlab
from hetlab.book import views
from hetlab.widgets import Explorer, dropdown, int_slider, slider

FACTORIES = sorted({f for _, f in views.ALL}, key=lambda f: f.__name__)


def sweep_values(control) -> list:
    """The values to drive a control through: both ends and the middle of a slider (the middle rounded to
    its step), every option of a drop-down, both states of a check box."""
    assert isinstance(control, (w.FloatSlider, w.IntSlider, w.Dropdown, w.Checkbox, w.ToggleButtons,
                                w.RadioButtons, w.SelectionSlider, w.ToggleButton)), control
    if hasattr(control, "options"):
        return [o[1] if isinstance(o, tuple) else o for o in control.options]
    if isinstance(control.value, bool):
        return [False, True]
    lo, hi = control.min, control.max
    mid = lo + (hi - lo) / 2
    if isinstance(control.value, int):
        mid = int(round(mid))
    else:
        step = control.step or 1
        mid = lo + round((mid - lo) / step) * step
    return [lo, mid, hi]


@pytest.mark.parametrize("factory", FACTORIES, ids=lambda f: f.__name__)
def test_every_widget_runs_at_the_ends_and_middle_of_every_control(factory):
    plt.close("all")
    explorer = factory()
    assert isinstance(explorer, Explorer) and explorer.controls
    for name, control in explorer.controls.items():
        for value in sweep_values(control):
            text = explorer.update(**{name: value})
            assert isinstance(text, str) and text, (name, value)
    assert explorer.png()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not plt.get_fignums(), "widget figures must stay out of pyplot, or the inline backend shows them twice"


def test_moving_a_control_redraws_the_widget_image():
    explorer = views.granularity_explorer()
    view = explorer.widget
    before_png, before_text = explorer._image.value, explorer.text
    explorer.controls["Os"].value = 4.0       # what a slider drag does
    assert explorer.text != before_text and "N* = √(W/Oₛ) = 50.00" in explorer.text
    assert explorer._image.value != before_png
    assert view.children[-1].value.endswith("</pre>")


def test_every_chapter_has_a_figure_widget():
    assert {c for c, _ in views.ALL} == set(range(1, 16))   # 14, 15: appendices A1 and A2


def test_sweep_values_covers_ends_and_middle():
    assert sweep_values(int_slider("n", 1, 9, 3)) == [1, 5, 9]
    assert sweep_values(slider("p", 0.0, 1.0, 0.01, 0.5)) == [0.0, 0.5, 1.0]
    assert sweep_values(dropdown("x", ["a", "b"])) == ["a", "b"]


CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.mark.parametrize("factory", FACTORIES, ids=lambda f: f.__name__)
def test_every_control_and_readout_speaks_chinese(factory):
    # Widget descriptions and readouts are HTML text, shown by the browser whether or not matplotlib
    # has a CJK font, so they are Chinese on every machine (figure text falls back to English instead).
    explorer = factory()
    for name, control in explorer.controls.items():
        assert CJK.search(control.description), f"{factory.__name__}: control {name!r} is {control.description!r}"
    assert CJK.search(explorer.text), f"{factory.__name__}: readout {explorer.text!r}"


def test_probing_the_views_package_for_dunders_imports_no_chapter_module():
    """doctest and inspect probe ``__wrapped__`` on every module they walk; a lazy ``__getattr__`` that
    imported every chapter module on that probe added submodules to ``hetlab`` while doctest iterated its
    ``__dict__`` ("dictionary changed size during iteration" in a fresh clone's `make test`)."""
    code = ("import sys, hetlab.book.views as v; hasattr(v, '__wrapped__'); "
            "print(sorted(m for m in sys.modules if m.startswith('hetlab.book.views.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    code = "import hetlab, doctest; doctest.DocTestFinder().find(hetlab); print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr


def test_no_two_chapter_modules_export_the_same_name():
    """``views.<name>`` returns the first chapter module that exports ``name``: a second chapter
    exporting the same name would silently hand one chapter the other's figure."""
    import importlib

    owners: dict[str, list[str]] = {}
    for module_name in views.MODULES:
        module = importlib.import_module(f"hetlab.book.views.{module_name}")
        for name in module.__all__:
            owners.setdefault(name, []).append(module_name)
    shared = {name: mods for name, mods in owners.items() if len(mods) > 1}
    assert shared == {}


def test_no_widget_factory_shares_a_name_with_a_module_or_a_library_function():
    """Rule 7 of issue 16: ``views.amdahl`` used to be a widget while ``hetlab.amdahl`` was the formula, and
    ``views.granularity`` a widget while ``hetlab.models.granularity`` was the model."""
    taken = set()
    for info in pkgutil.walk_packages(hetlab.__path__, prefix="hetlab."):
        last = info.name.rsplit(".", 1)[-1]
        if last.startswith("_"):                   # private modules, and __main__ (importing it runs the CLI)
            continue
        taken.add(last)
        if not info.name.startswith("hetlab.book"):
            taken.update(getattr(importlib.import_module(info.name), "__all__", ()))
    clashes = sorted(f.__name__ for f in FACTORIES if f.__name__ in taken)
    assert clashes == []
