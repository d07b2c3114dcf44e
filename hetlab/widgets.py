"""A small widget toolkit: an :class:`Explorer` ties controls (sliders, dropdowns, Play) to a
draw function that redraws one matplotlib figure in place.

The draw function is plain Python, ``draw(ax, **values) -> str | None``, so a test (or a
learner) can call :meth:`Explorer.update` with any values and get the same figure and text
that the widget shows, without a browser. The figure is created once and re-rendered to a
PNG shown by an ``ipywidgets.Image``, so a slider move only redraws, never rebuilds.
"""
from __future__ import annotations

import io
from collections import OrderedDict
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

#: At most this many frames are drawn ahead at a time (a frame takes 20-100 ms; the kernel stays responsive).
AHEAD = 8
#: Seconds a widget must be left alone before the frames one step along its *other* controls are drawn ahead: a
#: learner who keeps pressing one slider would otherwise wait behind a frame for a control they are not using
#: (a key press waits for the frame being drawn), and one who then turns to a drop-down finds its next value
#: ready (issue 18 #10: the first change of a drop-down after a slider walk was a cold draw).
SETTLE = 0.3


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
    values = _option_values(options)
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
        ticks and lines: the fastest redraw. Faster still (with ``fast``), it may mark the artists
        it changes animated (``artist.set_animated(True)``): the rest of the figure is then rendered
        once and kept, and each frame draws only the animated artists over it, in z-order
        (blitting). It is drawn again whenever a static artist changes (the figure goes stale). The
        frame equals a full render when no static artist is painted over an animated one: mark the
        static artists above them animated too (they are then redrawn each frame).
    fast: after the first render, keep the layout (constrained layout is solved once, not on
        every redraw) and use light PNG compression; about halves the time per slider step.
    frames: how many rendered frames (PNG and text) the widget keeps, keyed by the controls'
        values, so that a control moved back to a value it had shows that frame again without
        drawing (0 keeps none). This requires ``draw`` to depend on the values only.
    prefetch: in a running kernel, after each frame the widget draws the frames one step either
        side of the control just moved (when first shown: of every control, at most :data:`AHEAD`)
        while the kernel is idle, so that the next arrow-key step only swaps a PNG; once the widget
        has been left alone for :data:`SETTLE` seconds, also one step of each other control.
        Outside an event loop (tests, batch execution) nothing is drawn ahead. Once the widget is
        shown, ``figure`` may hold a frame drawn ahead: :meth:`update` and :meth:`png` always draw
        the current values first.
    """

    def __init__(self, draw: Callable[..., str | None], controls: Mapping[str, Any], *, figsize=(8, 3.5),
                 subplots: tuple[int, int] | None = None, play: str | None = None, interval: int = 400,
                 play_label: str = "Play", dpi: int = 80, fast: bool = True, clear: bool = True,
                 frames: int = 64, prefetch: bool = True):
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
        frames, prefetch = check_int("frames", frames, low=0, high=10_000), check_bool("prefetch", prefetch)
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
        self.frames = frames
        self.prefetch = prefetch
        self._frames: OrderedDict[tuple, tuple[bytes, str]] = OrderedDict()
        self._shown: tuple | None = None        # the values the figure shows now (a prefetch may draw others)
        self._ahead: list[dict[str, Any]] = []  # frames still to draw ahead, nearest first
        self._later: list[dict[str, Any]] = []  # the other controls' next steps, drawn once the widget settles
        self._moved = 0.0                       # the event loop's time of the last change
        self._timer = None                      # the pending call of _draw_ahead, if any
        self._image = None
        self._html = None
        self._background = None                 # blitting: the static part of the figure, rendered once
        self._moving: list = []                 # blitting: the animated artists, in the order they are drawn
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
        self.text = self._draw(self.values)
        if self._image is not None:
            self._render()
        return self.text

    def _draw(self, values: dict[str, Any]) -> str:
        if self.clear:
            self._clear()
        text = self.draw(self.axes, **values) or ""
        self._shown = _key(values)
        return text

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
        current = _key(self.values)
        if current is not None and current != self._shown:   # the figure shows a frame drawn ahead
            self.text = self._draw(self.values)
        return self._savefig()

    def _savefig(self) -> bytes:
        buffer = io.BytesIO()
        options = {"pil_kwargs": {"compress_level": 1}} if self.fast else {}
        if self._background is not None:
            if self.figure.stale or self.figure.dpi != self.dpi:    # a static artist (or the dpi) changed
                self._keep_background()
            if self._background is not None:
                self._blit(buffer, options)
                return buffer.getvalue()
        self.figure.savefig(buffer, format="png", dpi=self.dpi, **options)
        if self.fast and self.figure.get_layout_engine() is not None:
            # Positions found once stay put. No engine at all, not "none" (a placeholder engine): with any
            # engine set, every savefig draws the figure twice, a dry run for the layout and then the render.
            import matplotlib

            with matplotlib.rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
                self.figure.set_layout_engine(None)
            if not self.clear:
                self._keep_background()     # after the first render: blitting if the draw function animates
        return buffer.getvalue()

    def _keep_background(self) -> None:
        """Render the figure without its animated artists and keep the pixels (none animated: keep nothing).
        The figure takes the PNG's dpi for good, so that the kept pixels and the frames share one renderer."""
        self._moving = _animated(self.figure)
        if not self._moving:
            self._background = None
            return
        self.figure.set_dpi(self.dpi)
        canvas = self.figure.canvas
        canvas.draw()               # leaves out animated artists (it is not saving) and clears the stale flag
        self._background = canvas.copy_from_bbox(self.figure.bbox)

    def _blit(self, buffer: io.BytesIO, options: dict) -> None:
        """The kept background with the animated artists drawn over it, as a PNG written as savefig writes it."""
        import matplotlib.image

        canvas = self.figure.canvas
        canvas.restore_region(self._background)
        for artist in self._moving:
            self.figure.draw_artist(artist)
        # Drawing may touch static children (a legend sizes its frame as it draws), which marks the figure
        # stale; the figure is as rendered, as after a full draw.
        self.figure.stale = False
        matplotlib.image.imsave(buffer, canvas.buffer_rgba(), format="png", origin="upper", dpi=self.dpi,
                                **options)

    def _render(self) -> None:
        key = _key(self.values)
        frame = self._frames.get(key) if key is not None else None
        if frame is None:
            frame = (self.png(), self.text)
            self._remember(key, frame)
        else:
            self._frames.move_to_end(key)
            self.text = frame[1]
        self._image.value = frame[0]
        self._html.value = f"<pre style='margin:0'>{self.text}</pre>" if self.text else ""

    def _remember(self, key: tuple | None, frame: tuple[bytes, str]) -> None:
        if key is None or self.frames == 0:
            return
        self._frames[key] = frame
        while len(self._frames) > self.frames:
            self._frames.popitem(last=False)

    def _on_change(self, change) -> None:
        key = _key(self.values)
        if key is not None and key in self._frames:
            self._render()
        else:
            self.update()
        name = next((n for n, c in self.controls.items() if c is change["owner"]), None)
        self._plan_ahead([name] if name is not None else [], others=True)

    def _plan_ahead(self, names: list[str], others: bool = False) -> None:
        """Queue the frames one step either side of the named controls (for a control just moved, its previous
        value is already kept, so in effect the next step onwards is drawn); with ``others``, queue one step of
        every other control too, to be drawn once the widget settles (:data:`SETTLE`)."""
        import asyncio

        if not (self.prefetch and self.frames):
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:        # no event loop (tests, batch execution): nothing to draw ahead
            return
        self._ahead = self._steps(names)
        self._later = self._steps([n for n in self.controls if n not in names]) if others else []
        self._moved = loop.time()
        if self._timer is not None:     # it may be waiting for the widget to settle: the new steps come first
            self._timer.cancel()
            self._timer = None
        if self._ahead or self._later:
            self._timer = loop.call_later(0.005, self._draw_ahead, loop)

    def _steps(self, names: list[str]) -> list[dict[str, Any]]:
        """The values one step along each named control, nearest first, taking turns among the controls (every
        control's next value comes before any control's second one), at most :data:`AHEAD`."""
        steps = [[{**self.values, name: value} for value in _neighbours(self.controls[name])] for name in names]
        return [row[k] for k in range(max(map(len, steps), default=0)) for row in steps if k < len(row)][:AHEAD]

    def _draw_ahead(self, loop) -> None:
        """Draw one queued frame, then yield to the kernel (a key press waits at most one frame). The other
        controls' steps wait until the widget has been left alone for :data:`SETTLE` seconds."""
        self._timer = None
        while self._ahead or self._later:
            if not self._ahead:
                wait = self._moved + SETTLE - loop.time()
                if wait > 0:
                    self._timer = loop.call_later(wait, self._draw_ahead, loop)
                    return
            values = (self._ahead or self._later).pop(0)
            key = _key(values)
            if key is not None and key not in self._frames:
                text = self._draw(values)
                self._remember(key, (self._savefig(), text))
                break
        if self._ahead or self._later:
            self._timer = loop.call_later(0.005, self._draw_ahead, loop)

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
            self._plan_ahead(list(self.controls))     # a first step of any control
        return self._view

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


def _animated(figure) -> list:
    """The figure's animated artists in the order a full draw paints them: each parent's children by z-order
    (ties in the order of its children), depth first; an animated artist's children are drawn with it."""
    found: list = []

    def visit(parent) -> None:
        for child in sorted(parent.get_children(), key=lambda a: a.get_zorder()):
            if child.get_animated():
                found.append(child)
            else:
                visit(child)

    visit(figure)
    return found


def _key(values: Mapping[str, Any]) -> tuple | None:
    """A hashable key for the controls' values (None when one is not hashable). Floats are keyed to 12
    significant digits: a slider step computed in the browser (0.35000000000000003) finds the frame drawn
    ahead for 0.35 here, and the two frames could not differ visibly."""
    key = tuple((name, type(v).__name__, float(f"{v:.12g}") if isinstance(v, float) else v)
                for name, v in values.items())
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _option_values(options) -> list:
    """A drop-down's values: options are values or ``(label, value)`` pairs."""
    return [o[1] if isinstance(o, tuple) and len(o) == 2 else o for o in options]


def _neighbours(control) -> list:
    """The values one step either side of a control's value, the higher first (none past its ends); for a
    drop-down, every other option, nearest first."""
    w = _widgets()
    value = control.value
    if isinstance(control, w.Checkbox):
        return [not value]
    if isinstance(control, w.Dropdown):      # a menu is a few options: every other one, nearest first
        values = _option_values(control.options)
        k = control.index
        if k is None:
            return []
        order = sorted((i for i in range(len(values)) if i != k), key=lambda i: (abs(i - k), i < k))
        return [values[i] for i in order]
    if isinstance(control, (w.IntSlider, w.FloatSlider)):
        out = [value + control.step, value - control.step]
        if isinstance(control, w.FloatSlider):
            out = [float(f"{v:.12g}") for v in out]
        return [v for v in out if control.min <= v <= control.max]
    return []
