import matplotlib.pyplot as plt
import pytest

from hetlab import views
from hetlab.widgets import Explorer, sweep_values

FACTORIES = sorted({f for _, f in views.ALL}, key=lambda f: f.__name__)


@pytest.mark.parametrize("factory", FACTORIES, ids=lambda f: f.__name__)
def test_every_widget_runs_at_the_ends_and_middle_of_every_control(factory):
    explorer = factory()
    try:
        assert isinstance(explorer, Explorer) and explorer.controls
        for name, control in explorer.controls.items():
            for value in sweep_values(control):
                text = explorer.update(**{name: value})
                assert isinstance(text, str) and text, (name, value)
        assert explorer.png()[:8] == b"\x89PNG\r\n\x1a\n"
    finally:
        plt.close(explorer.figure)


def test_moving_a_control_redraws_the_widget_image():
    explorer = views.granularity()
    try:
        view = explorer.widget
        before_png, before_text = explorer._image.value, explorer.text
        explorer.controls["Os"].value = 4.0       # what a slider drag does
        assert explorer.text != before_text and "N* = sqrt(W/Os) = 50.00" in explorer.text
        assert explorer._image.value != before_png
        assert view.children[-1].value.endswith("</pre>")
    finally:
        plt.close(explorer.figure)


def test_update_rejects_unknown_controls():
    explorer = views.amdahl()
    try:
        with pytest.raises(ValueError, match="unknown control 'q'"):
            explorer.update(q=1)
    finally:
        plt.close(explorer.figure)


def test_every_chapter_with_a_figure_widget_is_listed():
    chapters = {c for c, _ in views.ALL}
    assert set(range(1, 13)) - chapters == {2} - chapters
    assert chapters >= {1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}


def test_sweep_values_covers_ends_and_middle():
    from hetlab.widgets import dropdown, int_slider, slider

    assert sweep_values(int_slider("n", 1, 9, 3)) == [1, 5, 9]
    assert sweep_values(slider("p", 0.0, 1.0, 0.01, 0.5)) == [0.0, 0.5, 1.0]
    assert sweep_values(dropdown("x", ["a", "b"])) == ["a", "b"]
