"""Chapter 1 (visual demo): decompose, assign, orchestrate; serial vs parallel; parallelism combinations.

:func:`orchestration_player` is the same demo as a self-contained HTML player (frames embedded as PNG),
so it plays on GitHub's viewer and on the book's website without a kernel.
"""
from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from hetlab import plotting as P
from hetlab import schedulers as S
from hetlab.book.views._shared import preference_legend
from hetlab.devices import identical, kitchen
from hetlab.tasks import cost_matrix
from hetlab.widgets import Explorer, dropdown, int_slider, slider
from hetlab.workloads import article_tasks, skewed_tasks

__all__ = ['orchestration_explorer', 'orchestration_player', 'kitchen_schedule', 'serial_vs_parallel_explorer',
           'parallelism_combo_explorer', 'serial_vs_parallel_figure', 'memory_map_figure', 'CARD_GIB']

#: Dropdown labels for the policies; only the article's demo policy is taught in chapter 1.
POLICY_LABELS = {"article_demo": ("演示调度（最早空闲）", "demo (earliest free)"),
                 "eft": ("EFT（第 5 章会讲）", "EFT (chapter 5)"),
                 "lpt": ("LPT（第 5 章会讲）", "LPT (chapter 5)"),
                 "optimal": ("最优解（第 5 章会讲）", "optimal (chapter 5)")}


def _policy_name(policy: str) -> str:
    return P.label(*POLICY_LABELS[policy])


@lru_cache(maxsize=8)
def kitchen_schedule(policy: str = "article_demo"):
    """The demo's 8 dishes on the article's kitchen (CPU 10, GPU 20, NPU 15) under ``policy``, validated."""
    if policy not in POLICY_LABELS:
        raise ValueError(f"policy must be one of {sorted(POLICY_LABELS)}, got {policy!r}")
    return S.POLICIES[policy](article_tasks(), kitchen()).validate()


def _step_text(s, order, step: int, *, figure: bool = False) -> str:
    """What the frame's one new dispatch did (one dish per frame): Chinese for the widget's readout,
    ``plotting.label`` inside a figure."""
    n = len(s.graph)
    if step == 0:
        zh, en = (f"分解：一张大单拆成 {n} 道互不依赖的菜，还没有派出去",
                  f"decompose: {n} independent dishes, none dispatched yet")
    else:
        i = order[step - 1]
        t, d, start = s.graph.tasks[i], s.devices[s.device_of[i]].name, s.start[i]
        zh = f"分配 + 编排：第 {step} 道，{t.name}（偏好 {t.kind}）→ {d}，{start:.2f} 开工"
        en = f"assign + orchestrate: dish {step}, {t.name} (prefers {t.kind}) -> {d} at {start:.2f}"
    return P.label(zh, en) if figure else zh


class _Chart:
    """The full Gantt chart of one schedule, drawn once; :meth:`show` reveals the first ``step`` dispatches
    by changing colours, visibility and texts only (no axes rebuilt), for the widget and the player alike."""

    def __init__(self, ax, policy: str):
        from matplotlib.collections import PolyCollection

        self.ax, self.policy = ax, policy
        self.schedule = s = kitchen_schedule(policy)
        self.order = np.argsort(s.start, kind="stable")
        P.gantt(s, ax, xmax=s.makespan, title=self.title(len(s.graph)))
        preference_legend(ax)
        self.bars = next(c for c in ax.collections if isinstance(c, PolyCollection))
        self.colours = self.bars.get_facecolors().copy()
        self.names = {t.get_text(): t for t in ax.texts}
        self.finish_line = ax.lines[-1]            # gantt's dashed makespan line

    def title(self, step: int) -> str:
        """The frame's title: the latest finish *so far*; the makespan only once every dish is placed
        (an earlier frame must not give the ending away)."""
        s, name = self.schedule, _policy_name(self.policy)
        n = len(s.graph)
        if step >= n:
            return P.label(f"{name}：{n} 道菜全部派出，完工时间 {s.makespan:.2f}",
                           f"{name}: all {n} dishes dispatched, makespan {s.makespan:.2f}")
        if step == 0:
            return P.label(f"{name}：已派出 0/{n} 道菜", f"{name}: 0/{n} dishes dispatched")
        done = float(s.end[self.order[:step]].max())
        return P.label(f"{name}：已派出 {step}/{n} 道菜，目前最晚出锅于 {done:.2f}",
                       f"{name}: {step}/{n} dishes dispatched, latest finish so far {done:.2f}")

    @property
    def moving(self) -> list:
        return [self.bars, self.finish_line, self.ax.title, *self.names.values()]

    def show(self, step: int) -> None:
        s, n = self.schedule, len(self.schedule.graph)
        shown = np.zeros(n, dtype=bool)
        shown[self.order[:step]] = True
        faces = self.colours.copy()
        faces[~shown, 3] = 0.0
        self.bars.set_facecolors(faces)
        self.bars.set_edgecolors([(1, 1, 1, 1.0 if k else 0.0) for k in shown])
        for i, task in enumerate(s.graph.tasks):
            if task.name in self.names:
                self.names[task.name].set_visible(bool(shown[i]))
        done = float(s.end[shown].max()) if step else 0.0
        self.finish_line.set_xdata([done, done])
        self.finish_line.set_visible(step > 0)
        self.ax.set_title(self.title(step))


def orchestration_explorer() -> Explorer:
    """Decompose, assign, orchestrate: the demo's dishes appear on the Gantt chart one by one (Play button).

    The chart of a policy is drawn once; moving the step slider only updates artists in place.
    """
    n = len(article_tasks())
    options = [(POLICY_LABELS[p][0], p) for p in POLICY_LABELS]
    state: dict = {}

    def draw(ax, step: int, policy: str) -> str:
        chart = state.get("chart")
        if chart is None or chart.policy != policy:
            ax.clear()
            chart = state["chart"] = _Chart(ax, policy)
        chart.show(step)
        return _step_text(chart.schedule, chart.order, step)

    return Explorer(draw, {"step": int_slider("已派出的菜", 0, n, n),
                           "policy": dropdown("调度策略", options, "article_demo")},
                    play="step", play_label="播放", figsize=(8, 2.8), clear=False)


class Player:
    """A self-contained animation: ``.html`` (a JavaScript player with the frames embedded) and
    ``.widget`` (an ``IPython.display.HTML`` of it, what a notebook cell shows)."""

    def __init__(self, html: str, frames: int):
        self.html = html
        self.frames = frames

    @property
    def widget(self):
        from IPython.display import HTML

        return HTML(self.html)

    def _repr_html_(self) -> str:
        return self.html


#: Inline SVG icons for the three buttons whose Unicode symbols (U+23EE, U+23F8, U+23ED) no installed font draws.
_ICON = '<svg width="11" height="11" viewBox="0 0 16 16" aria-hidden="true" style="vertical-align:-1px">{}</svg>'
_FIRST = _ICON.format('<path d="M2 2h2.5v12H2zM14 2v12L5 8z" fill="currentColor"/>')
_PAUSE = _ICON.format('<path d="M3 2h3.5v12H3zm6.5 0H13v12H9.5z" fill="currentColor"/>')
_LAST = _ICON.format('<path d="M11.5 2H14v12h-2.5zM2 2v12l9-6z" fill="currentColor"/>')
#: The player's buttons: matplotlib's English tooltip -> (Unicode symbol + Chinese label, Chinese tooltip).
#: Unicode text replaces the Font Awesome icons, whose stylesheet comes from a CDN (blank buttons offline).
_BUTTONS = {"Decrease speed": ("－ 减速", "放慢播放"),
            "First frame": (f"{_FIRST} 首帧", "回到第一帧"),
            "Previous frame": ("◁ 上一帧", "后退一帧"),
            "Play backwards": ("◀\ufe0e 倒放", "倒着播放"),
            "Pause": (f"{_PAUSE} 暂停", "暂停"),
            "Play": ("▶\ufe0e 播放", "播放"),
            "Next frame": ("▷ 下一帧", "前进一帧"),
            "Last frame": (f"{_LAST} 末帧", "跳到最后一帧"),
            "Increase speed": ("＋ 加速", "加快播放")}
#: The repetition-mode radio buttons.
_MODES = {"Once": "播放一次", "Loop": "循环", "Reflect": "往返", "Repetition mode": "重复方式"}
_PLAYER_STYLE = """
<style>
.animation .anim-buttons button {
    width: auto; padding: 2px 6px; margin: 0 2px; font-size: 13px; line-height: 1.4;
}
.animation img { max-width: 100%; height: auto; }
input[type=range].anim-slider { width: 80%; }
</style>
"""


def _localise_player(html: str) -> str:
    """matplotlib's player made self-contained and Chinese: no CDN stylesheet, Unicode + Chinese buttons,
    Chinese repetition modes and tooltips. Raises ``RuntimeError`` if matplotlib's template changed so much
    that an English control would be left behind."""
    html, links = re.subn(r'<link rel="stylesheet"\s*href="https?://[^"]*font-awesome[^"]*">', "", html)
    for english, (text, tip) in _BUTTONS.items():
        pattern = (rf'title="{english}" aria-label="{english}"(\s*onclick="[^"]*">)\s*'
                   r'<i class="fa [^"]*"></i>')
        html, count = re.subn(pattern, lambda m, t=text, h=tip: f'title="{h}" aria-label="{h}"{m.group(1)}{t}',
                              html)
        if count != 1:
            raise RuntimeError(f"matplotlib's player template changed: button {english!r} found {count} times")
    for english, chinese in _MODES.items():
        html = html.replace(f">{english}</label>", f">{chinese}</label>")
        html = html.replace(f'title="{english}" aria-label="{english}"', f'title="{chinese}" aria-label="{chinese}"')
    if links != 1 or re.search(r'class="fa |https?://|>(Once|Loop|Reflect)<', html):
        raise RuntimeError("matplotlib's player template changed: a CDN link or English label is left")
    return html + _PLAYER_STYLE


def _jshtml(frames_png: list[bytes], interval: int) -> str:
    """matplotlib's JavaScript player (the one ``Animation.to_jshtml`` writes) around ready-made PNG frames,
    localised by :func:`_localise_player` (works offline, controls in Chinese)."""
    import base64
    import uuid

    from matplotlib._animation_data import DISPLAY_TEMPLATE, JS_INCLUDE, STYLE_INCLUDE

    def line(k: int, png: bytes) -> str:
        # base64 lines end in a backslash: a JavaScript string continued on the next line (as matplotlib does)
        data = base64.encodebytes(png).decode("ascii").replace("\n", "\\\n")
        return f'  frames[{k}] = "data:image/png;base64,{data}"\n'

    fill = "\n" + "".join(line(k, png) for k, png in enumerate(frames_png))
    return _localise_player(JS_INCLUDE + STYLE_INCLUDE + DISPLAY_TEMPLATE.format(
        id=uuid.uuid4().hex, Nframes=len(frames_png), fill_frames=fill, interval=interval,
        once_checked="checked", loop_checked="", reflect_checked=""))


#: Font sizes (points) in the player's frames: readable at the embedded size.
PLAYER_FONT = 10


def orchestration_player(policy: str = "article_demo", *, dpi: int = 120, interval: int = 900) -> Player:
    """The decompose -> assign -> orchestrate demo as a kernel-free player (matplotlib's ``to_jshtml`` player).

    One frame per dispatched dish (9 frames for the 8 dishes); the schedule is produced and validated by
    :func:`kitchen_schedule`. The static part of the chart (axes, ticks, legend) is rendered once and each
    frame only redraws the bars, names, finish line, title and readout over it (blitting). Frames are
    8 x 3 inches at ``dpi`` (960 x 360 pixels by default) with text of at least :data:`PLAYER_FONT` points,
    stored as palette PNGs to keep the notebook light. The player needs no network (no CDN icons) and its
    controls are labelled in Chinese.
    """
    import io

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from PIL import Image

    from hetlab._validate import check_int

    dpi = check_int("dpi", dpi, low=20, high=200)
    interval = check_int("interval", interval, low=50, high=10_000)
    P.use_cjk_font()
    fig = Figure(figsize=(8, 3.0), dpi=dpi, layout="constrained")
    canvas = FigureCanvasAgg(fig)
    ax = fig.subplots()
    chart = _Chart(ax, policy)
    for text in chart.names.values():
        text.set_fontsize(PLAYER_FONT)
    ax.title.set_fontsize(PLAYER_FONT + 1)
    ax.tick_params(labelsize=PLAYER_FONT)
    ax.xaxis.label.set_fontsize(PLAYER_FONT)
    legend = ax.get_legend()
    if legend is not None:
        for text in legend.get_texts():
            text.set_fontsize(PLAYER_FONT)
    s, order, n = chart.schedule, chart.order, len(chart.schedule.graph)
    # Lay out with a readout present (the longest kind), so constrained layout leaves room for it.
    readout = fig.supxlabel(_step_text(s, order, n, figure=True), fontsize=PLAYER_FONT, x=0.01, ha="left")
    moving = [*chart.moving, readout]
    fig.draw_without_rendering()                  # solve the constrained layout once, without rasterising
    fig.set_layout_engine("none")                 # the layout found for the full chart stays put
    for artist in moving:
        artist.set_animated(True)                 # left out of the background
    canvas.draw()
    background = canvas.copy_from_bbox(fig.bbox)
    frames = []
    for step in range(n + 1):
        chart.show(step)
        readout.set_text(_step_text(s, order, step, figure=True))
        canvas.restore_region(background)
        for artist in moving:
            fig.draw_artist(artist)
        buffer = io.BytesIO()
        image = Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
        # A 64-colour palette keeps text crisp (flat colours, anti-aliased edges) at a third of the RGB size.
        image.convert("RGB").quantize(colors=64).save(buffer, format="png", optimize=True)
        frames.append(buffer.getvalue())
    return Player(_jshtml(frames, interval), n + 1)


def _serial_parallel_draw(ax, tasks: int, spread: float) -> str:
    """Bars of the dishes' times (one cook each) against the serial sum; returns the readout."""
    from matplotlib.lines import Line2D

    graph = skewed_tasks(tasks, spread=spread, seed=1)
    devices = identical(tasks, speed=10.0)
    serial = S.serial(graph, devices).validate()
    parallel = S.eft(graph, devices).validate()
    times = cost_matrix(graph, devices)[:, 0]
    ax.bar([P.label("串行", "serial")], [serial.makespan], color="#4C72B0",
           label=P.label("串行 = 各道菜用时之和", "serial = sum of the times"))
    ax.bar([f"t{i}" for i in range(tasks)], times, color="#55A868",
           label=P.label("每道菜的用时（一位师傅做一道）", "each dish's time (one cook each)"))
    ax.axhline(parallel.makespan, color="crimson", ls="--", lw=1)
    handles, _ = ax.get_legend_handles_labels()
    handles.append(Line2D([], [], color="crimson", ls="--", lw=1,
                          label=P.label("红色虚线 = 并行时间 = 最大值", "dashed red = parallel time = max")))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    ax.set_ylabel(P.label("时间（时间单位）", "time (time units)"))
    ax.set_title(P.label(f"串行 = 求和 {serial.makespan:.2f}，并行 = 最大值 {parallel.makespan:.2f}",
                         f"serial = sum {serial.makespan:.2f}, parallel = max {parallel.makespan:.2f}"))
    return (f"串行 {serial.makespan:.2f}，并行 {parallel.makespan:.2f}，"
            f"加速比 {parallel.speedup(serial):.2f} 倍（{tasks} 位师傅）")


def serial_vs_parallel_explorer() -> Explorer:
    """Serial sum against parallel max for n tasks on n identical cooks (the 4x of chapter 1)."""
    return Explorer(_serial_parallel_draw, {"tasks": int_slider("菜的数量（= 师傅数）", 1, 8, 4),
                                            "spread": slider("大小差异 σ", 0.0, 1.0, 0.1, 0.0)},
                    figsize=(8, 3))


def serial_vs_parallel_figure(tasks: int = 4, spread: float = 0.5, ax=None):
    """The widget's chart as a static figure (for readers of the HTML or PDF). Returns the axes."""
    from hetlab._validate import check_int, check_nonnegative

    tasks = check_int("tasks", tasks, low=1, high=8)
    check_nonnegative("spread", spread)
    if spread > 1.0:
        raise ValueError(f"spread must be in [0, 1], got {spread!r}")
    P.use_cjk_font()
    ax = P.new_axes(ax, figsize=(8, 3))
    _serial_parallel_draw(ax, tasks, float(spread))
    return ax


#: Memory of the card the chapter's training case uses: an A100 80 GB has 80 GiB of HBM2e (NVIDIA A100 datasheet).
CARD_GIB = 80
#: Tensor-parallel ways the widget and figure 1-5 offer: powers of two, as practice uses (a server's 8 GPUs).
TENSOR_WAYS = (1, 2, 4, 8)
#: The models the widget offers: (label, parameters).
MODELS = [("130 亿参数", 13e9), ("700 亿参数", 70e9)]


def _model_states_gib(params: float, data: int, tensor: int, pipeline: int) -> float:
    """Parameters, gradients and Adam's states per card (16 bytes a parameter, no ZeRO), in GiB."""
    from hetlab.models.training import memory_per_device

    states = memory_per_device(params, dp=data, tp=tensor, pp=pipeline, activations=False)["model_states"]
    return states / 2**30


def _combo_draw(ax, data: int, tensor: int, pipeline: int, params: float = 70e9) -> str:
    """:func:`plotting.parallelism_grid` with stages and replicas numbered from 1, the tensor-parallel
    ways named, and every card greyed out when the model states do not fit in :data:`CARD_GIB`;
    returns the readout."""
    P.parallelism_grid(data, tensor, pipeline, ax)
    gib = _model_states_gib(params, data, tensor, pipeline)
    fits = gib <= CARD_GIB
    if not fits:                                # an infeasible configuration: every card greyed out
        for patch in ax.patches:
            patch.set_facecolor("0.85")
            patch.set_edgecolor("0.55")
            patch.set_hatch("//")
    ax.set_aspect("auto")                       # fill the figure: no empty band above and below
    ax.set_yticks([pipeline - 1 - s + 0.42 for s in range(pipeline)],
                  [P.label(f"第 {s + 1} 段", f"stage {s + 1}") for s in range(pipeline)])
    if data <= 8:
        ax.set_xticks([d * (tensor + 0.6) + tensor / 2 - 0.05 for d in range(data)],
                      [P.label(f"副本 {d + 1}", f"replica {d + 1}") for d in range(data)])
    ax.set_xlabel(P.label(f"每个副本内横排的 {tensor} 个方块 = {tensor} 路张量并行的卡；同一颜色 = 同一段流水线",
                          f"within a replica, the {tensor} squares side by side = {tensor} tensor-parallel devices"),
                  fontsize=9)
    total = data * tensor * pipeline
    billions = params / 1e8
    verdict = (P.label("放得下（未计激活）", "fits (no activations)") if fits
               else P.label("放不下（灰色）", "does not fit (grey)"))
    ax.set_title(P.label(f"{total} 张卡；每张卡的模型状态 {gib:.1f} GiB {'≤' if fits else '>'} {CARD_GIB} GiB：",
                         f"{total} cards; model states per card {gib:.1f} GiB {'<=' if fits else '>'} "
                         f"{CARD_GIB} GiB: ") + verdict, fontsize=10)
    return (f"设备数 = 数据并行 {data} × 张量并行 {tensor} × 流水线 {pipeline} 段 = {total}\n"
            f"每张卡的参数、梯度和优化器状态 = 16 字节 × {billions:g} 亿 ÷ ({tensor} × {pipeline}) = {gib:.1f} GiB，"
            + (f"不超过 {CARD_GIB} GiB，放得下（还没算激活）" if fits else f"超过 {CARD_GIB} GiB，放不下"))


def parallelism_combo_explorer() -> Explorer:
    """Data x tensor x pipeline parallelism: how many devices a combination uses, and whether the model's
    parameters, gradients and optimizer states fit on each card (infeasible combinations greyed out)."""
    return Explorer(_combo_draw, {"data": int_slider("数据并行路数", 1, 8, 2),
                                  "tensor": dropdown("张量并行路数", list(TENSOR_WAYS), 2),
                                  "pipeline": int_slider("流水线段数", 1, 4, 4),
                                  "params": dropdown("模型大小", MODELS, 13e9)}, figsize=(8, 3.0))


def memory_map_figure(ways: int = 4, axes=None):
    """The combo widget's lesson at one glance (its static twin): per-card model states (GiB) over
    tensor ways :data:`TENSOR_WAYS` x pipeline stages 1..``ways``, one panel per model of :data:`MODELS`, cells over
    :data:`CARD_GIB` hatched grey. Data parallelism is no axis: it leaves every cell unchanged.
    Returns the axes."""
    from hetlab._validate import check_int

    ways = check_int("ways", ways, low=1, high=8)
    P.use_cjk_font()
    if axes is None:
        import matplotlib.pyplot as plt

        _, axes = plt.subplots(1, len(MODELS), figsize=(8, 3.3), layout="constrained")
    for ax, (name, params) in zip(axes, MODELS):
        gib = np.array([[_model_states_gib(params, 1, t, p) for t in TENSOR_WAYS]
                        for p in range(1, ways + 1)])
        cols = len(TENSOR_WAYS)                 # column t + 1 shows TENSOR_WAYS[t] ways
        ax.imshow(np.where(gib <= CARD_GIB, gib, np.nan), cmap="Greens", vmin=0, vmax=2 * CARD_GIB,
                  origin="lower", extent=(0.5, cols + 0.5, 0.5, ways + 0.5), aspect="auto")
        for p in range(ways):
            for t in range(cols):
                fits = gib[p, t] <= CARD_GIB
                if not fits:
                    ax.add_patch(_grey_cell(t + 1, p + 1))
                ax.text(t + 1, p + 1, f"{gib[p, t]:.0f}", ha="center", va="center", fontsize=9,
                        color="black" if fits else "0.35")
        ax.set_xticks(range(1, cols + 1), [str(t) for t in TENSOR_WAYS])
        ax.set_yticks(range(1, ways + 1))
        ax.set_xlabel(P.label("张量并行路数", "tensor-parallel ways"))
        ax.set_ylabel(P.label("流水线段数", "pipeline stages"))
        ax.set_title(P.label(f"{name}", f"{params / 1e9:g}B parameters"), fontsize=10)
    axes[0].figure.suptitle(P.label(f"每张卡的模型状态（GiB）；灰色斜线 = 超过 {CARD_GIB} GiB，放不下",
                                    f"model states per card (GiB); grey hatched = over {CARD_GIB} GiB"),
                            fontsize=10)
    return axes


def _grey_cell(x: float, y: float):
    from matplotlib.patches import Rectangle

    return Rectangle((x - 0.5, y - 0.5), 1, 1, facecolor="0.88", edgecolor="0.6", hatch="//", lw=0.5)


#: (chapter, factory) for each widget of this module.
VIEWS = [(1, orchestration_explorer), (1, serial_vs_parallel_explorer), (1, parallelism_combo_explorer)]
