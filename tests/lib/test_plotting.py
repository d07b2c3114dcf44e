"""Gantt charts, curves, the label table and CJK display width (hetlab.plotting)."""
import re
import warnings

import matplotlib
import matplotlib.pyplot as plt
import pytest

from hetlab import plotting
from hetlab import schedulers as S
from hetlab.devices import identical, kitchen
from hetlab.tasks import Task, TaskGraph
from hetlab.workloads import article_tasks, heft_paper_example


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_a_cjk_font_is_chosen_when_installed():
    family = plotting.use_cjk_font()
    if family is None:
        pytest.skip("no CJK font installed (Debian fonts-noto-cjk); the fallback is tested below")
    assert family in plotting.CJK_FONTS
    assert matplotlib.rcParams["font.sans-serif"][0] == family
    assert plotting.label("设备", "device") == "设备"


def test_without_a_cjk_font_labels_fall_back_to_english_with_one_warning(monkeypatch):
    from matplotlib import font_manager

    monkeypatch.setattr(font_manager.fontManager, "ttflist", [])
    plotting.use_cjk_font.cache_clear()
    try:
        with pytest.warns(plotting.FontFallbackWarning, match="fonts-noto-cjk"):
            assert plotting.label("设备", "device") == "device"
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert plotting.label("设备", "device") == "device"   # warned once only
    finally:
        plotting.use_cjk_font.cache_clear()
    monkeypatch.undo()
    plotting.use_cjk_font()


def _draw_all():
    s = S.work_stealing(article_tasks(), kitchen(), steal_latency=0.1, initial="first")
    plotting.gantt(s)
    graph, procs = heft_paper_example()
    plotting.gantt(S.heft(graph, procs), show_deps=True)
    plotting.gantt(S.heft(graph, procs), critical=True, show_deps="critical", fit_names=True)
    plotting.speedup_curve([0.5, 0.95])
    plotting.granularity_curve(10_000, 1.0)
    plotting.flynn_diagram()
    plotting.parallelism_grid(2, 2, 4)
    for fig in map(plt.figure, plt.get_fignums()):
        fig.canvas.draw()   # glyphs are looked up when text is drawn


def test_every_figure_draws_without_missing_glyph_warnings():
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*[Gg]lyph.*")
        _draw_all()


def test_gantt_hatches_stolen_tasks_and_labels_devices():
    s = S.work_stealing(article_tasks(), kitchen(), steal_latency=0.05, initial="first", seed=1)
    ax = plotting.gantt(s)
    stolen = {e.task for e in s.log if e.task}
    hatched = [c for c in ax.collections if c.get_hatch() == "//"]
    assert stolen and len(hatched) == 1 and len(hatched[0].get_paths()) == len(stolen)
    bars = ax.collections[0].get_paths()
    assert len(bars) == len(s.graph.tasks)
    first = bars[0].vertices[:4]
    assert first[:, 0].min() == s.start[0] and first[:, 0].max() == s.end[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["NPU", "GPU", "CPU"]
    assert "makespan" in ax.get_title()


def test_figures_refuse_bad_input_by_name():
    # issue 11: these were AttributeErrors, numpy DType errors or a MemoryError deep inside numpy.
    heft = S.heft(*heft_paper_example())
    cases = [
        (lambda: plotting.gantt("not a schedule"), "schedule"),
        (lambda: plotting.gantt(heft, ax="nope"), "ax"),
        (lambda: plotting.gantt(heft, show_names="yes"), "show_names"),
        (lambda: plotting.speedup_curve([0.5], n_max=10**12, log=False), "n_max"),   # np.arange of 10**12
        (lambda: plotting.speedup_curve(0.5), "p_values"),
        (lambda: plotting.speedup_curve([1.5]), "p_values"),
        (lambda: plotting.gantt(heft, show_deps="some"), "show_deps"),
        (lambda: plotting.gantt(heft, colors=["red"]), "colors"),                  # one colour for ten tasks
        (lambda: plotting.gantt_panels([]), "panels"),
        (lambda: plotting.gantt_panels([(heft, 3)]), "panels"),
        (lambda: plotting.granularity_curve(float("inf"), 1.0), "W"),
        (lambda: plotting.pad("x", -1), "width"),
        (lambda: plotting.new_axes(figsize=3), "figsize"),
    ]
    for call, name in cases:
        with pytest.raises((ValueError, TypeError)) as info:
            call()
        assert name in str(info.value), info.value


def test_granularity_curve_handles_huge_work():
    # W = 1e100, Os = 1: N* = 1e50 is drawn on a log axis without overflow.
    ax = plotting.granularity_curve(1e100, 1.0)
    assert ax.get_xscale() == "log"


def _diamond():
    # a -> b (3) -> d and a -> c (1) -> d: the critical path is a, b, d
    return TaskGraph([Task("a", 1), Task("b", 3), Task("c", 1), Task("d", 1)],
                     [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])


def test_critical_gantt_colours_the_critical_path_and_draws_its_edges():
    graph = _diamond()
    s = S.earliest_free(graph, identical(2))
    ax = plotting.gantt(s, critical=True, show_deps="critical")
    faces = ax.collections[0].get_facecolors()
    orange, blue = (matplotlib.colors.to_rgba(c) for c in (plotting.CRITICAL_COLOUR, plotting.OTHER_COLOUR))
    assert [tuple(f) for f in faces] == [orange, orange, blue, orange]
    arrows = [t for t in ax.texts if getattr(t, "arrow_patch", None) is not None]
    assert len(arrows) == 2                                       # a -> b and b -> d, not the four edges
    assert ax.get_legend() is None                                # no legend of kinds when coloured by path
    every = plotting.gantt(s, show_deps=True)
    assert len([t for t in every.texts if getattr(t, "arrow_patch", None) is not None]) == 4


def test_gantt_writes_only_the_names_asked_for_and_fits_them():
    s = S.earliest_free(_diamond(), identical(2))
    ax = plotting.gantt(s, show_names=["b"])
    assert [t.get_text() for t in ax.texts] == ["b"]
    wide = plotting.gantt(S.earliest_free(TaskGraph([Task("a_very_long_task_name", 2), Task("b", 10)]),
                                          identical(1)), fit_names=True)
    shown = {t.get_text(): t.get_visible() for t in wide.texts}
    assert shown == {"a_very_long_task_name": False, "b": True}


def test_gantt_panels_share_one_time_axis_and_label_it_once():
    graph = _diamond()
    one, two = S.earliest_free(graph, identical(1)), S.earliest_free(graph, identical(2))
    axes = plotting.gantt_panels([(one, "one"), (two, "two")], critical=True)
    assert [ax.get_title() for ax in axes] == ["one", "two"]
    assert axes[0].get_xlim() == axes[1].get_xlim() == (0.0, one.makespan * 1.02)
    assert axes[0].get_xlabel() == "" and axes[1].get_xlabel()


def test_display_width_counts_cjk_as_two_columns():
    assert plotting.display_width("最早空闲") == 8 and plotting.display_width("LPT") == 3
    assert plotting.pad("最早空闲", 10) == "最早空闲  " and plotting.pad("LPT", 6) == "LPT   "
    assert plotting.pad("2.5", 5, right=True) == "  2.5" and plotting.pad("太长的名字", 4) == "太长的名字"


def test_every_label_has_an_english_fallback_with_the_same_fields():
    for key, (zh, en) in plotting.LABELS.items():
        assert not re.search(r"[\u4e00-\u9fff]", en) and re.search(r"[\u4e00-\u9fff]", zh), key
        assert re.findall(r"{(\w+)", zh) == re.findall(r"{(\w+)", en), key


def test_flynn_diagram_has_a_key_and_consistent_subtitles():
    axes = plotting.flynn_diagram()
    fig = axes[0].figure
    texts = [t.get_text() for leg in fig.legends for t in leg.get_texts()]
    assert len(texts) == 3
    assert "线程束" in axes[1].get_title() or "warp" in axes[1].get_title()
