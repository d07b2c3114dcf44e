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

__all__ = ["Explorer", "slider", "int_slider", "dropdown", "checkbox", "sweep_values"]


def _widgets():
    import ipywidgets

    return ipywidgets


def slider(description: str, lo: float, hi: float, step: float, value: float, *, fmt: str = ".2f"):
    """A float slider that reports its value continuously off (updates on release and on keys)."""
    w = _widgets()
    return w.FloatSlider(value=value, min=lo, max=hi, step=step, description=description, readout_format=fmt,
                         continuous_update=False, style={"description_width": "initial"},
                         layout=w.Layout(width="420px"))


def int_slider(description: str, lo: int, hi: int, value: int, step: int = 1):
    w = _widgets()
    return w.IntSlider(value=value, min=lo, max=hi, step=step, description=description, continuous_update=False,
                       style={"description_width": "initial"}, layout=w.Layout(width="420px"))


def dropdown(description: str, options, value=None):
    w = _widgets()
    options = list(options)
    return w.Dropdown(options=options, value=options[0] if value is None else value, description=description,
                      style={"description_width": "initial"})


def checkbox(description: str, value: bool = False):
    return _widgets().Checkbox(value=value, description=description, indent=False)


def sweep_values(control) -> list:
    """The values a test should drive a control through: both ends and the middle of a slider,
    every option of a dropdown, both states of a checkbox."""
    if hasattr(control, "options"):
        values = [o[1] if isinstance(o, tuple) else o for o in control.options]
        return values
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


class Explorer:
    """Controls plus one figure, redrawn by ``draw(ax, **values)`` whenever a control changes.

    Parameters
    ----------
    draw: draws into ``ax`` (an Axes, or an array of them when ``subplots`` is given) and may
        return a short text, shown under the figure.
    controls: name -> widget; the names are ``draw``'s keyword arguments.
    figsize, subplots: the figure's size in inches and its ``(rows, cols)`` grid.
    play: name of an integer slider to drive with a Play button (animations).
    clear: clear the axes before each draw (default). With ``clear=False`` the draw function
        keeps its artists and updates them in place (set_data, set_text), which skips rebuilding
        ticks and lines: the fastest redraw.
    fast: after the first render, keep the layout (constrained layout is solved once, not on
        every redraw) and use light PNG compression; about halves the time per slider step.
    """

    def __init__(self, draw: Callable[..., str | None], controls: Mapping[str, Any], *, figsize=(8, 3.5),
                 subplots: tuple[int, int] | None = None, play: str | None = None, interval: int = 400,
                 dpi: int = 80, fast: bool = True, clear: bool = True):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        from .plotting import use_cjk_font

        use_cjk_font()
        self.draw = draw
        self.controls = dict(controls)
        self.dpi = dpi
        # A bare Figure, not pyplot: the inline backend must not show it a second time.
        self.figure = Figure(figsize=figsize, layout="constrained")
        FigureCanvasAgg(self.figure)
        self.axes = self.figure.subplots(*subplots) if subplots else self.figure.subplots()
        self.play = play
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
            self.figure.set_layout_engine("none")   # positions found once stay put
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
                                value=target.value, description="play")
                w.jslink((button, "value"), (target, "value"))
                top = [button] + top
            rows = [w.HBox(top[k:k + 2]) for k in range(0, len(top), 2)]
            self._view = w.VBox([*rows, self._image, self._html])
        return self._view

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
