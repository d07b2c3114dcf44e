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


def _blitting_explorer(animated: bool):
    """A line that moves and changes colour over fixed axes; with ``animated`` it is blitted. The title (static)
    changes only with the check box."""
    line = []

    def draw(ax, n: int, on: bool) -> str:
        if not line:
            line.extend(ax.plot([0, 1], [0, 1]))
            ax.set_xlim(-1, 10)                    # the line stays off the frame, which is painted over it
            ax.set_ylim(-1, 2)
            line[0].set_animated(animated)
        line[0].set_data([0, n], [0, 1])
        line[0].set_color("crimson" if n % 2 else "teal")
        ax.title.set_text(f"on = {on}")           # marks the figure stale when the text changes
        return f"n = {n}"

    return Explorer(draw, {"n": int_slider("n", 1, 9, 3), "on": checkbox("on")}, clear=False)


def test_animated_artists_are_blitted_over_a_kept_background_equal_to_a_full_render():
    blitted, full = _blitting_explorer(True), _blitting_explorer(False)
    assert blitted.png() == full.png() and blitted._background is not None and full._background is None
    draws = []
    blitted.figure.canvas.mpl_connect("draw_event", lambda event: draws.append(event))
    for n in (4, 5, 9):
        assert blitted.update(n=n) == full.update(n=n) == f"n = {n}"
        assert blitted.png() == full.png()
    assert draws == []                              # only the line was drawn, over the kept background
    # a static artist that changes (the title) makes the figure stale: the background is rendered again
    blitted.update(on=True)
    full.update(on=True)
    assert blitted.png() == full.png() and len(draws) == 1
    blitted.update(n=2)
    full.update(n=2)
    assert blitted.png() == full.png() and len(draws) == 1


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


def _move(explorer, **values):
    """Change controls the way a browser does: through the widget's observers."""
    for name, value in values.items():
        explorer.controls[name].value = value


def test_a_value_shown_before_is_swapped_back_without_drawing():
    explorer, calls = _explorer()
    _ = explorer.widget
    _move(explorer, n=5)
    _move(explorer, n=3)
    assert calls == [(3, False), (5, False)]             # 3 came back from the kept frames
    assert explorer.text == "n = 3, on = False" and explorer._html.value.endswith("n = 3, on = False</pre>")
    _move(explorer, on=True)
    assert calls[-1] == (3, True) and explorer._html.value.endswith("n = 3, on = True</pre>")
    # png() always shows the current values, whatever was drawn last
    assert explorer.png() == explorer._image.value and explorer.text == "n = 3, on = True"


def test_frames_keeps_at_most_that_many_and_zero_keeps_none():
    explorer, calls = _explorer(frames=2)
    _ = explorer.widget
    for n in (4, 5, 3):
        _move(explorer, n=n)
    assert len(explorer._frames) == 2 and calls[-1] == (3, False)   # 3 had been dropped: drawn again
    none, calls = _explorer(frames=0)
    _ = none.widget
    _move(none, n=4)
    _move(none, n=3)
    assert calls == [(3, False), (4, False), (3, False)] and not none._frames
    with pytest.raises(ValueError, match="frames"):
        _explorer(frames=-1)


def test_unhashable_values_are_never_kept():
    from hetlab.widgets import _key
    assert _key({"a": [1, 2]}) is None
    assert _key({"x": 0.35000000000000003}) == _key({"x": 0.35}) != _key({"x": 0.36})
    assert _key({"x": True}) != _key({"x": 1})                    # a drop-down may offer both


def test_neighbours_stay_inside_the_control():
    from hetlab.widgets import _neighbours
    assert _neighbours(int_slider("n", 1, 9, 9)) == [8]
    assert _neighbours(slider("p", 0.0, 1.0, 0.05, 0.3)) == [0.35, 0.25]
    assert _neighbours(dropdown("d", [("one", 1), ("two", 2), ("three", 3)], 1)) == [2, 3]
    assert _neighbours(dropdown("d", list("abcde"), "c")) == ["d", "b", "e", "a"]
    assert _neighbours(checkbox("c")) == [True]


def test_in_a_running_event_loop_the_next_steps_are_drawn_ahead():
    import asyncio

    explorer, calls = _explorer()

    async def session():
        _ = explorer.widget
        _move(explorer, n=4)                   # drawn now; 5 (and 3, kept already) queued
        for _ in range(200):
            if not explorer._ahead:
                break
            await asyncio.sleep(0.01)
        drawn = len(calls)
        _move(explorer, n=5)                   # the arrow key: a swap, no drawing
        return drawn

    drawn = asyncio.run(session())
    assert calls[:drawn] == [(3, False), (4, False), (5, False)] and len(calls) == drawn
    assert explorer.text == "n = 5, on = False" and explorer.png() == explorer._image.value


def test_the_other_controls_next_steps_wait_until_the_widget_settles():
    """While the learner keeps moving one control, only its steps are drawn ahead (a frame for another control
    would make the next key press wait); once the widget is left alone for SETTLE seconds, one step of each
    other control is drawn too, so turning to it is a swap."""
    import asyncio

    from hetlab.widgets import SETTLE

    explorer, calls = _explorer()
    when = []                                  # the event loop's clock at each draw
    draw = explorer.draw
    explorer.draw = lambda ax, **values: (when.append(asyncio.get_running_loop().time()), draw(ax, **values))[1]

    async def session():
        _ = explorer.widget
        _move(explorer, n=4)
        moved = when[-1]
        while explorer._ahead or explorer._later:
            await asyncio.sleep(0.01)
        return moved

    moved = asyncio.run(session())
    assert calls == [(3, False), (4, False), (5, False), (4, True)]   # the slider's next step, then the box's
    assert when[-1] - moved >= SETTLE                                  # the box's step only once settled
    _move(explorer, on=True)                               # (no loop now: a kept frame, so nothing is drawn)
    assert calls[-1] == (4, True) and explorer.text == "n = 4, on = True"


def test_when_first_shown_a_step_of_every_control_is_drawn_ahead():
    import asyncio

    explorer, calls = _explorer()

    async def session():
        _ = explorer.widget
        for _ in range(200):
            if not explorer._ahead:
                break
            await asyncio.sleep(0.01)

    asyncio.run(session())
    assert calls == [(3, False), (4, False), (3, True), (2, False)]     # each control's next value first


def test_every_book_widget_draws_ahead_exactly_the_frame_it_would_draw():
    """Drawing ahead is only sound if each view's draw depends on the controls' values alone (no state left
    by the previous draw): a frame drawn ahead must equal the one drawn when the learner gets there."""
    import asyncio

    import ipywidgets as w

    from hetlab.book import views
    from hetlab.widgets import _neighbours

    async def idle(explorer) -> None:
        for _ in range(500):
            if not explorer._ahead:
                return
            await asyncio.sleep(0.01)

    async def check(factory) -> None:
        explorer = factory()
        _ = explorer.widget                        # when first shown: one step of every control
        del explorer._ahead[3:]                    # (the first three are enough here: the suite's time)
        await idle(explorer)
        name, control = next((n, c) for n, c in explorer.controls.items()
                             if isinstance(c, (w.IntSlider, w.FloatSlider, w.Dropdown, w.Checkbox)))
        start = control.value
        step = _neighbours(control)[0]
        _move(explorer, **{name: step})
        await idle(explorer)
        for key, (png, text) in list(explorer._frames.items()):
            values = {n: v for n, _, v in key}
            assert explorer.update(**values) == text, (factory.__name__, values)
            assert explorer.png() == png, (factory.__name__, values)
        explorer.update(**{name: start})

    for _, factory in views.ALL:
        asyncio.run(check(factory))
