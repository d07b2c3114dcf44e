"""A small widget toolkit: an :class:`Explorer` ties controls (sliders, dropdowns, Play) to a
draw function that redraws one matplotlib figure in place.

The draw function is plain Python, ``draw(ax, **values) -> str | None``, so a test (or a
learner) can call :meth:`Explorer.update` with any values and get the same figure and text
that the widget shows, without a browser. The figure is created once and re-rendered to a
PNG shown by an ``ipywidgets.Image``, so a slider move only redraws, never rebuilds.
"""
from __future__ import annotations

import io
from collections.abc import Callable, Mapping
from typing import Any

from hetlab._validate import (
    check_bool,
    check_callable,
    check_instance,
    check_int,
    check_positive,
    check_real,
    check_sequence,
    check_str,
    describe,
)

__all__ = ["Explorer", "slider", "int_slider", "dropdown", "checkbox"]


def _widgets():
    import ipywidgets

    return ipywidgets


def slider(description: str, lo: float, hi: float, step: float, value: float, *, fmt: str = ".2f"):
    """A float slider that reports its value continuously off (updates on release and on keys)."""
    check_str("description", description, empty=True)
    lo, hi = check_real("lo", lo, finite=True), check_real("hi", hi, finite=True)
    if not lo < hi:
        raise ValueError(f"hi must be above lo={lo:g}, got {hi:g}")
    step = check_positive("step", step)
    if step > hi - lo:
        raise ValueError(f"step must be at most hi - lo = {hi:g} - {lo:g}, got {step:g}")
    value = check_real("value", value, finite=True)
    if not lo <= value <= hi:
        raise ValueError(f"value must be in [lo, hi] = [{lo:g}, {hi:g}], got {value:g}")
    check_str("fmt", fmt)
    try:
        format(1.0, fmt)
    except ValueError:
        raise ValueError(f"fmt must be a number format such as '.2f', got {fmt!r}") from None
    w = _widgets()
    return w.FloatSlider(value=value, min=lo, max=hi, step=step, description=description, readout_format=fmt,
                         continuous_update=False, style={"description_width": "initial"},
                         layout=w.Layout(width="420px"))


def int_slider(description: str, lo: int, hi: int, value: int, step: int = 1):
    """An integer slider (continuous updates off)."""
    check_str("description", description, empty=True)
    lo, hi = check_int("lo", lo, low=-2**31, high=2**31 - 1), check_int("hi", hi, low=-2**31, high=2**31 - 1)
    if not lo < hi:
        raise ValueError(f"hi must be above lo={lo}, got {hi}")
    step = check_int("step", step, low=1, high=hi - lo)
    value = check_int("value", value, low=lo, high=hi)
    w = _widgets()
    return w.IntSlider(value=value, min=lo, max=hi, step=step, description=description, continuous_update=False,
                       style={"description_width": "initial"}, layout=w.Layout(width="420px"))


def dropdown(description: str, options, value=None):
    """A drop-down menu of ``options`` (values, or ``(label, value)`` pairs); ``value`` defaults to the first."""
    check_str("description", description, empty=True)
    options = list(check_sequence("options", options))
    values = [o[1] if isinstance(o, tuple) and len(o) == 2 else o for o in options]
    if any(isinstance(v, float) and v != v for v in values):
        raise ValueError("options must not contain nan (it never equals itself, so it cannot be selected)")
    if value is not None:
        def same(a, b) -> bool:
            try:
                return a is b or (isinstance(a, bool) == isinstance(b, bool) and bool(a == b))
            except (TypeError, ValueError):
                return False

        if not any(same(value, v) for v in values):
            raise ValueError(f"value must be one of the options {values!r:.80}, got {describe(value)}")
    w = _widgets()
    return w.Dropdown(options=options, value=values[0] if value is None else value, description=description,
                      style={"description_width": "initial"})


def checkbox(description: str, value: bool = False):
    """A check box."""
    check_str("description", description, empty=True)
    check_bool("value", value)
    return _widgets().Checkbox(value=value, description=description, indent=False)


class Explorer:
    """Controls plus one figure, redrawn by ``draw(ax, **values)`` whenever a control changes.

    Parameters
    ----------
    draw: draws into ``ax`` (an Axes, or an array of them when ``subplots`` is given) and may
        return a short text, shown under the figure.
    controls: name -> widget; the names are ``draw``'s keyword arguments.
    figsize, subplots: the figure's size in inches and its ``(rows, cols)`` grid.
    play: name of an integer slider to drive with a Play button (animations).
    play_label: the Play button's text (the book passes its own language's word).
    clear: clear the axes before each draw (default). With ``clear=False`` the draw function
        keeps its artists and updates them in place (set_data, set_text), which skips rebuilding
        ticks and lines: the fastest redraw.
    fast: after the first render, keep the layout (constrained layout is solved once, not on
        every redraw) and use light PNG compression; about halves the time per slider step.
    """

    def __init__(self, draw: Callable[..., str | None], controls: Mapping[str, Any], *, figsize=(8, 3.5),
                 subplots: tuple[int, int] | None = None, play: str | None = None, interval: int = 400,
                 play_label: str = "Play", dpi: int = 80, fast: bool = True, clear: bool = True):
        from collections.abc import Mapping

        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        from hetlab.plotting import use_cjk_font

        check_callable("draw", draw)
        if not isinstance(controls, Mapping):
            raise TypeError(f"controls must map names to widgets, got {describe(controls)}")
        w = _widgets()
        for name, control in controls.items():
            check_str("controls key", name)
            check_instance(f"controls[{name!r}]", control, w.ValueWidget, "an ipywidgets control")
        size = check_sequence("figsize", figsize)
        if len(size) != 2:
            raise ValueError(f"figsize must be (width, height) in inches, got {describe(figsize)}")
        figsize = tuple(check_positive("figsize", x, high=50.0) for x in size)
        if subplots is not None:
            grid = check_sequence("subplots", subplots)
            if len(grid) != 2:
                raise ValueError(f"subplots must be (rows, cols), got {describe(subplots)}")
            subplots = tuple(check_int("subplots", k, low=1, high=10) for k in grid)
        if play is not None:
            check_str("play", play)
            if not isinstance(controls.get(play), w.IntSlider):
                raise ValueError(f"play must name an integer slider among the controls {sorted(controls)}, "
                                 f"got {play!r}")
        interval = check_int("interval", interval, low=10, high=60_000)
        dpi = check_int("dpi", dpi, low=10, high=600)
        fast, clear = check_bool("fast", fast), check_bool("clear", clear)
        use_cjk_font()
        self.draw = draw
        self.controls = dict(controls)
        self.dpi = dpi
        # A bare Figure, not pyplot: the inline backend must not show it a second time.
        self.figure = Figure(figsize=figsize, layout="constrained")
        FigureCanvasAgg(self.figure)
        self.axes = self.figure.subplots(*subplots) if subplots else self.figure.subplots()
        self.play = play
        self.play_label = check_str("play_label", play_label)
        self.interval = interval
        self.fast = fast
        self.clear = clear
        self.text = ""
        self._image = None
        self._html = None
        self._view = None
        self.update()

    @property
    def values(self) -> dict[str, Any]:
        return {name: c.value for name, c in self.controls.items()}

    def _clear(self) -> None:
        import numpy as np

        for ax in np.atleast_1d(self.axes).ravel():
            ax.clear()

    def update(self, **changes: Any) -> str:
        """Set controls (by name) and redraw; return the text shown under the figure."""
        for name, value in changes.items():
            if name not in self.controls:
                raise ValueError(f"unknown control {name!r}; controls are {sorted(self.controls)}")
            self._silent_set(name, value)
        if self.clear:
            self._clear()
        self.text = self.draw(self.axes, **self.values) or ""
        if self._image is not None:
            self._render()
        return self.text

    def _silent_set(self, name: str, value: Any) -> None:
        control = self.controls[name]
        if self._view is None:
            control.value = value
            return
        control.unobserve(self._on_change, names="value")
        try:
            control.value = value
        finally:
            control.observe(self._on_change, names="value")

    def png(self) -> bytes:
        """The current figure as PNG bytes."""
        buffer = io.BytesIO()
        options = {"pil_kwargs": {"compress_level": 1}} if self.fast else {}
        self.figure.savefig(buffer, format="png", dpi=self.dpi, **options)
        if self.fast and self.figure.get_layout_engine() is not None:
            # Positions found once stay put. No engine at all, not "none" (a placeholder engine): with any
            # engine set, every savefig draws the figure twice, a dry run for the layout and then the render.
            import matplotlib

            with matplotlib.rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
                self.figure.set_layout_engine(None)
        return buffer.getvalue()

    def _render(self) -> None:
        self._image.value = self.png()
        self._html.value = f"<pre style='margin:0'>{self.text}</pre>" if self.text else ""

    def _on_change(self, change) -> None:
        self.update()

    @property
    def widget(self):
        """The ipywidgets view: controls above, figure and text below."""
        if self._view is None:
            w = _widgets()
            self._image = w.Image(format="png")
            self._html = w.HTML()
            self._render()
            for control in self.controls.values():
                control.observe(self._on_change, names="value")
            top = list(self.controls.values())
            if self.play:
                target = self.controls[self.play]
                button = w.Play(min=target.min, max=target.max, step=target.step, interval=self.interval,
                                value=target.value, description=self.play_label)
                w.jslink((button, "value"), (target, "value"))
                top = [button] + top
            rows = [w.HBox(top[k:k + 2]) for k in range(0, len(top), 2)]
            self._view = w.VBox([*rows, self._image, self._html])
        return self._view

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
