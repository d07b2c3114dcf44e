"""The widget toolkit (hetlab.widgets): controls, and an Explorer that redraws one figure in place."""
import pytest

from hetlab.widgets import Explorer, checkbox, dropdown, int_slider, slider


def _explorer(**options):
    calls = []

    def draw(ax, n: int, on: bool) -> str:
        calls.append((n, on))
        ax.plot([0, n], [0, 1])
        return f"n = {n}, on = {on}"

    return Explorer(draw, {"n": int_slider("n", 1, 9, 3), "on": checkbox("on")}, **options), calls


def test_update_sets_controls_redraws_and_returns_the_text():
    explorer, calls = _explorer()
    assert calls == [(3, False)] and explorer.text == "n = 3, on = False"
    assert explorer.update(n=7, on=True) == "n = 7, on = True" and calls[-1] == (7, True)
    assert explorer.values == {"n": 7, "on": True}


def test_update_rejects_unknown_controls():
    explorer, _ = _explorer()
    with pytest.raises(ValueError, match="unknown control 'q'"):
        explorer.update(q=1)


def test_fast_png_keeps_the_first_layout_and_draws_once_per_image():
    # After the first render the layout engine is dropped altogether: with any engine set (even a placeholder)
    # savefig draws the figure twice, a dry run for the layout and then the image.
    explorer, _ = _explorer()
    first = explorer.png()
    assert explorer.figure.get_layout_engine() is None
    draws = []
    explorer.figure.canvas.mpl_connect("draw_event", lambda event: draws.append(event))
    assert explorer.png() == first and len(draws) == 1
    slow, _ = _explorer(fast=False)
    slow.png()
    assert slow.figure.get_layout_engine() is not None


def test_controls_refuse_bad_ranges_by_name():
    with pytest.raises(ValueError, match="hi must be above lo"):
        slider("x", 1.0, 1.0, 0.1, 1.0)
    with pytest.raises(ValueError, match="value must be in"):
        int_slider("n", 1, 9, 10)
    with pytest.raises(ValueError, match="value must be one of the options"):
        dropdown("x", ["a", "b"], "c")


def test_the_play_button_drives_its_slider_and_carries_the_callers_label():
    explorer, _ = _explorer(play="n", play_label="播放")
    play = explorer.widget.children[0].children[0]
    assert type(play).__name__ == "Play" and play.description == "播放"
    assert (play.min, play.max, play.value) == (1, 9, 3)
    assert _explorer(play="n")[0].widget.children[0].children[0].description == "Play"
    with pytest.raises(TypeError, match="play_label must be a string, got int 3"):
        _explorer(play="n", play_label=3)
