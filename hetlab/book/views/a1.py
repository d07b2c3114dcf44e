"""Appendix A1 (real execution): equal tasks on a pool of P workers run in ceil(N / P) rounds."""
from __future__ import annotations

import math
import sys

import numpy as np

from hetlab import plotting as P
from hetlab.models import granularity as G
from hetlab.widgets import Explorer, int_slider, slider

__all__ = ["pool_rounds", "gantt_panels", "machine_note", "demo_for_real", "sweep_report", "attribution_text",
           "dask_report", "sweep_counts", "sawtooth_text", "sweep_figure",
           "thread_parallelism_verdict", "thread_ratio_verdict", "lane_stagger_and_stretch",
           "gil_control_verdict", "gil_control_text", "offload_text",
           "cost_and_shortfall", "cpu_cost_verdict", "idle_gap_text", "submission_text", "speedup_text"]


def pool_rounds() -> Explorer:
    """T(N) of 0.4 s of work in N equal tasks on P workers: the book's N Os + W/N, the P-device
    form N Os + W/min(N, P), and the rounds form N Os + ceil(N/P) W/N, with every optimum marked."""
    W = 0.4
    counts = np.arange(1, 257)
    art: dict = {}

    def draw(ax, workers: int, overhead_us: float) -> str:
        Os = overhead_us * 1e-6
        book = counts * Os + W / counts
        ideal = G.total_time_on(counts, W, Os, workers)
        rounds = G.total_time_on(counts, W, Os, workers, model="rounds")
        best = int(counts[np.argmin(rounds)])
        n_star = math.sqrt(W / Os)
        if not art:
            art["book"], = ax.plot(counts, book, ":", color="0.5", label=P.label("N·Os + W/N（设备无限）",
                                                                                  "N Os + W/N (unlimited)"))
            art["ideal"], = ax.plot(counts, ideal, "--", color="#4C72B0", label=P.label("N·Os + W/min(N,P)",
                                                                                         "N Os + W/min(N,P)"))
            art["rounds"], = ax.plot(counts, rounds, "o-", ms=2.5, lw=0.6, color="#C44E52",
                                     label=P.label(r"N·Os + $\lceil N/P \rceil$·W/N（按轮执行）",
                                                   r"N Os + $\lceil N/P \rceil$ W/N (rounds)"))
            art["best"], = ax.plot([best], [rounds[best - 1]], "o", color="#C44E52")
            ax.set_xscale("log")
            art["root"] = ax.axvline(1.0, color="0.5", lw=0.8, ls=":", label="√(W/Os)")
            ax.set_title(P.label("W = 0.4 秒在 P 个工作者上的三种模型", "W = 0.4 s on P workers: three models"),
                         fontsize=9, loc="left")
            ax.set_xlabel(P.label("任务数 N（对数轴，1–256）", "tasks N (log)"))
            ax.set_ylabel(P.label("总耗时（秒）", "total time (s)"))
            ax.legend(fontsize=8, loc="upper right")
        art["book"].set_ydata(book)
        art["ideal"].set_ydata(ideal)
        art["rounds"].set_data(counts, rounds)
        art["best"].set_data([best], [rounds[best - 1]])
        art["root"].set_xdata([min(n_star, 256.0)] * 2)
        ax.set_ylim(0, 1.05 * float(min(book.max(), rounds.max(), 0.45)))
        return (f"P = {workers}，Os = {overhead_us:g} µs：按轮执行时 N = {best} 最快（{rounds[best - 1]:.4f} 秒）；"
                f"设备无限时的 √(W/Os) = {n_star:.1f}" + ("（超出横轴，灰色竖线画在 256 处）" if n_star > 256 else
                                                        "（灰色竖线）"))

    return Explorer(draw, {"workers": int_slider("工作者数 P", 1, 16, 2),
                           "overhead_us": slider("派发开销 Os（µs）", 10.0, 2000.0, 10.0, 300.0, fmt=".0f")},
                    figsize=(7, 3.2), clear=False)


#: (chapter, factory) for each widget of this module (the appendix is chapter 14 in the question bank).
VIEWS = [(14, pool_rounds)]


def gantt_panels(panels, *, mark: float | None = None, names: int = 5, figsize=(8.0, 4.0),
                 label_from: int | None = None, color_by: str = "task", events=None):
    """Stacked Gantt charts on one time axis (seconds), every task in its own colour in every panel so
    that the same task can be followed from plan to measurement; the ``names`` longest tasks of each
    panel are labelled; ``mark`` draws a dashed line (e.g. the simulated makespan) on every panel
    after the first. ``panels`` is a list of (Schedule, title). With ``label_from = k`` every panel
    labels the same tasks: the ``names`` longest of panel k (panels must share the graph).
    ``color_by = "level"`` colours each task by its depth in the DAG (longest chain of predecessors)
    with a colour bar, and adds a legend for the two vertical lines. ``events`` is a list of
    (panel index, time in seconds, legend label): each is drawn as a dotted blue vertical line on that
    panel and named in the legend (e.g. the moment the last task was submitted). Returns the figure."""
    import matplotlib.pyplot as plt

    from hetlab._validate import check_int, check_nonnegative
    from hetlab.schedule import Schedule

    if not isinstance(panels, (list, tuple)) or not panels:
        raise ValueError(f"panels must be a non-empty list of (Schedule, title), got {panels!r:.80}")
    for k, item in enumerate(panels):
        if not (isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], Schedule)
                and isinstance(item[1], str)):
            raise TypeError(f"panels[{k}] must be a (Schedule, title) pair, got {item!r:.80}")
    names = check_int("names", names, low=0, high=100)
    chosen = None
    if label_from is not None:
        label_from = check_int("label_from", label_from, low=0, high=len(panels) - 1)
        ref = panels[label_from][0]
        chosen = np.argsort(-(ref.end - ref.start), kind="stable")[:names]
    if mark is not None:
        mark = check_nonnegative("mark", mark)
    if color_by not in ("task", "level"):
        raise ValueError(f"color_by must be 'task' or 'level', got {color_by!r}")
    events = [] if events is None else events
    if not isinstance(events, (list, tuple)):
        raise TypeError(f"events must be a list of (panel, time, label), got {events!r:.80}")
    for k, item in enumerate(events):
        if not (isinstance(item, (list, tuple)) and len(item) == 3 and isinstance(item[2], str)):
            raise TypeError(f"events[{k}] must be a (panel, time, label) triple, got {item!r:.80}")
        check_int(f"events[{k}] panel", item[0], low=0, high=len(panels) - 1)
        check_nonnegative(f"events[{k}] time", item[1])
    fig, axes = plt.subplots(len(panels), 1, sharex=True, figsize=figsize, squeeze=False)
    cmap = plt.get_cmap("tab20")
    level = None
    if color_by == "level":
        g = panels[0][0].graph
        level = np.zeros(len(g.tasks), dtype=int)
        for i in g.order:
            level[i] = max((level[j] + 1 for j in g.preds[i]), default=0)
        cmap = plt.get_cmap("viridis", int(level.max()) + 1)
    span = max(max(s.makespan for s, _ in panels), mark or 0.0, *(float(e[1]) for e in events))
    for row, (ax, (s, title)) in enumerate(zip(axes[:, 0], panels)):
        rows = len(s.devices)
        for i in range(len(s.graph.tasks)):
            y = rows - 1 - int(s.device_of[i])
            colour = cmap(i % 20) if level is None else cmap(int(level[i]))
            ax.barh(y, s.end[i] - s.start[i], left=s.start[i], height=0.7, color=colour,
                    edgecolor="white", linewidth=0.6)
        longest = chosen if chosen is not None else np.argsort(-(s.end - s.start), kind="stable")[:names]
        for i in longest:
            width = s.end[i] - s.start[i]
            y = rows - 1 - int(s.device_of[i])
            if width > 0.03 * span:
                rgb = cmap(i % 20) if level is None else cmap(int(level[i]))
                dark = 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] < 0.45
                ax.text(s.start[i] + width / 2, y, s.graph.tasks[i].name,
                        ha="center", va="center", fontsize=7, color="white" if dark else "black", clip_on=True)
            else:                                   # too narrow to hold its name: write it just above the bar
                ax.text(s.start[i] + width / 2, y + 0.36, s.graph.tasks[i].name, ha="center", va="bottom",
                        fontsize=6, color="black", clip_on=True,
                        bbox={"boxstyle": "square,pad=0.05", "fc": "white", "ec": "none", "alpha": 0.8})
        ax.axvline(s.makespan, color="black", lw=0.8)
        for panel, when, _ in events:
            if panel == row:
                ax.axvline(when, color="#4C72B0", lw=1.2, ls=":")
        if mark is not None and row > 0:
            ax.axvline(mark, color="#C44E52", lw=1.0, ls="--")
            ax.text(mark, rows - 0.6, P.label("模拟完成时间 ", "simulated makespan "), color="#C44E52",
                    fontsize=7, va="bottom", ha="right")     # above the top lane, inside the frame
        ax.set_yticks(range(rows), [d.name for d in reversed(s.devices)])
        ax.set_ylim(-0.6, rows + (0.15 if mark is not None and row > 0 else -0.1))
        ax.set_title(title, fontsize=9, loc="left")
    axes[-1, 0].set_xlim(0, span * 1.03)
    axes[-1, 0].set_xlabel(P.label("时间（秒）", "time (s)"))
    fig.tight_layout()
    if level is not None:
        from matplotlib.cm import ScalarMappable
        from matplotlib.colors import BoundaryNorm

        top = int(level.max())
        norm = BoundaryNorm(np.arange(-0.5, top + 1.5), cmap.N)
        bar = fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=list(axes[:, 0]), pad=0.01, aspect=30,
                           ticks=range(0, top + 1, max(1, (top + 1) // 6)))
        bar.set_label(P.label("任务在图中的层级", "DAG level"), fontsize=8)
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color="black", lw=0.8, label=P.label("黑色实线：该面板的完成时间", "panel's makespan"))]
    if mark is not None:
        handles.append(Line2D([], [], color="#C44E52", lw=1.0, ls="--",
                              label=P.label("红色虚线：模拟完成时间", "simulated makespan")))
    for _, _, text in events:
        handles.append(Line2D([], [], color="#4C72B0", lw=1.2, ls=":", label=text))
    axes[-1, 0].legend(handles=handles, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.45),
                       ncol=len(handles), frameon=False)   # below the x axis: covers no bars
    return fig


def machine_note(load: float | None = None) -> str:
    """One Chinese sentence on how busy this machine was (runnable processes per CPU, last minute), to
    print beside a timing that is compared with a model."""
    from hetlab._validate import check_nonnegative
    from hetlab.real import measure

    load = measure.load_per_cpu() if load is None else check_nonnegative("load", load)
    if load is None:
        return "本系统不报告负载，无法判断测量时机器是否空闲。"
    if load > 0.75:
        return (f"⚠ 机器较忙：过去一分钟的平均负载（可运行或等待 I/O 的进程数）每个 CPU {load:.2f}（空闲时接近 0），"
                "实测会被别的进程拉长，与模拟的差距不能全算在模型头上。")
    return f"机器基本空闲：过去一分钟的平均负载（可运行或等待 I/O 的进程数）每个 CPU {load:.2f}。"


def _band(err: float, band: float) -> str:
    return f"（在 ±{band:.0%} 之内）" if abs(err) <= band else f"（超出 ±{band:.0%}）"


def _pct(x: float, digits: int = 1) -> str:
    """A signed percentage with ``digits`` decimals; a value that rounds to zero prints unsigned (never -0%)."""
    text = f"{x:+.{digits}%}"
    return text[1:] if float(text[1:-1]) == 0 else text


def thread_parallelism_verdict(parallelism: float, tolerance: float = 0.05) -> str:
    """Chinese verdict on a thread pool's measured parallelism: at most ``1 + tolerance`` counts as
    "not above one core" (timestamp granularity and run boundaries read a few percent high)."""
    from hetlab._validate import check_positive

    tolerance = check_positive("tolerance", tolerance, high=1.0)
    if parallelism <= 1 + tolerance:
        return (f"，在 1 + 容差 {tolerance:.2f} 之内，即不超过 1 个核——GIL 让三个线程轮流执行，"
                "任何时刻只有一个在跑循环")
    return f"，超过 1 + 容差 {tolerance:.2f}：这个解释器可能是无 GIL 构建"


def thread_ratio_verdict(ratio: float, band: float = 0.15, shares: tuple[float, float] | None = None,
                         idle: bool | None = None) -> str:
    """Chinese verdict on (thread pool time) / (one thread, tasks in sequence): within ``1 ± band``
    the two are equal up to measurement noise; only beyond it is "threads are slower" reproduced, and
    then only if ``shares`` = (thread pool's, one thread's CPU seconds / wall seconds), when given, are
    within ``band`` of each other (otherwise the thread pool may simply have had less of a core).
    ``idle = True`` (the load note said the machine was idle) attributes a lower thread-pool share to
    the GIL hand-off itself, so the slowdown counts as reproduced."""
    from hetlab._validate import check_positive

    ratio = check_positive("ratio", ratio)
    band = check_positive("band", band, high=1.0)
    if shares is not None:
        if not isinstance(shares, tuple | list) or len(shares) != 2:
            raise TypeError(f"shares must be a pair (thread pool, one thread), got {shares!r}")
        shares = (check_positive("shares", shares[0]), check_positive("shares", shares[1]))
    if ratio > 1 + band:
        if shares is not None and shares[0] < (1 - band) * shares[1] and idle:
            return (f"线程池比单线程慢，超出 ±{band:.0%} 的噪声带；机器空闲，"
                    f"线程池的 CPU 秒 ÷ 墙钟秒（{shares[0]:.2f}）"
                    f"比单线程（{shares[1]:.2f}）低出的部分就是 GIL 交接的损耗：复现了“线程甚至比单线程更慢”的说法")
        if shares is not None and shares[0] < (1 - band) * shares[1]:
            return (f"线程池比单线程慢，超出 ±{band:.0%} 的噪声带；但线程池这次的 CPU 秒 ÷ 墙钟秒（{shares[0]:.2f}）"
                    f"比单线程（{shares[1]:.2f}）低了 {band:.0%} 以上："
                    "低出的部分可能是 GIL 交接的损耗，也可能是等核（负载），"
                    "机器不空闲时一次运行分不开：这一次不算复现“线程甚至比单线程更慢”，在空闲机器上重跑再判断")
        return f"线程池比单线程慢，超出 ±{band:.0%} 的噪声带，复现了“线程甚至比单线程更慢”的说法"
    if ratio >= 1 - band:
        return f"与单线程相当（差距在 ±{band:.0%} 的测量噪声之内）：线程池没有带来加速，这次测量也不足以说它更慢"
    return f"线程池反而比单线程快 {band:.0%} 以上：多半是两次测量之间负载变了，重跑一次"


def lane_stagger_and_stretch(schedule) -> tuple[float, float]:
    """For a measured run (``run_plan``): median gap in seconds between the successive first starts
    of the worker lanes, and the median ratio of measured to planned task duration."""
    if not hasattr(schedule, "info") or "planned_seconds" not in schedule.info:
        raise TypeError("schedule must be a measured run from execute.run_plan (info['planned_seconds']), "
                        f"got {type(schedule).__name__}")
    firsts = np.sort([schedule.start[schedule.device_of == d].min()
                      for d in np.unique(schedule.device_of)])
    stagger = float(np.median(np.diff(firsts))) if len(firsts) > 1 else 0.0
    planned = np.asarray(schedule.info["planned_seconds"], dtype=float)
    stretch = float(np.median((schedule.end - schedule.start)[planned > 0] / planned[planned > 0]))
    return stagger, stretch


def cost_and_shortfall(measured: float, predicted: float, parallelism: float,
                       planned_cpu: float) -> tuple[float, float]:
    """Split measured / predicted time of a run into two factors whose product is exactly that ratio:
    the CPU cost per loop step (CPU seconds spent in the loops, ``parallelism * measured``, over the
    planned loop seconds ``planned_cpu``) and the parallelism shortfall (the parallelism the prediction
    assumes, ``planned_cpu / predicted``, over the measured ``parallelism``)."""
    from hetlab._validate import check_positive

    measured = check_positive("measured", measured)
    predicted = check_positive("predicted", predicted)
    parallelism = check_positive("parallelism", parallelism)
    planned_cpu = check_positive("planned_cpu", planned_cpu)
    return parallelism * measured / planned_cpu, planned_cpu / predicted / parallelism


def cpu_cost_verdict(serial: float, process: float, thread: float, tolerance: float = 0.05,
                     saturated: bool = False) -> str:
    """Chinese reading of the CPU cost per loop step of the serial run, the process pool and the
    thread pool, each relative to one thread running the same loops in sequence (= 1). A value above
    ``1 + tolerance`` means each step cost more CPU time in that run. ``saturated = True`` (one thread
    got well under one core, or the pool's parallelism stayed near 1) means the pool's loops did not
    really run at the same time, so its factor is not read as "busy cores are slower"."""
    from hetlab._validate import check_positive

    serial = check_positive("serial", serial)
    process = check_positive("process", process)
    thread = check_positive("thread", thread)
    tolerance = check_positive("tolerance", tolerance, high=1.0)
    text = f"串行 {serial:.2f}，进程池 {process:.2f}，线程池 {thread:.2f}"
    if abs(serial - 1) > tolerance:
        text += (f"；串行行与单线程依次执行相差超过 {tolerance:.0%}：同样在一个线程上跑循环，"
                 "两次运行之间循环速度本身漂了（频率、短时负载），各行的“每步 CPU 成本”都带着这份漂移")
    if not isinstance(saturated, bool):
        raise TypeError(f"saturated must be a bool, got {saturated!r}")
    if saturated:
        text += ("；进程池的几个循环这次并没有真正同时运行（机器饱和，或它的有效并行度没有明显超过 1），"
                 "它的因子反映的是负载，不能用来检验“核都忙时每个核变慢”")
    elif process > 1 + tolerance:
        text += (f"；进程池多个循环同时运行时，每步多花 {process - 1:.0%} 的 CPU 时间——核都忙时每个核变慢"
                 "（宿主机上的 SMT 兄弟线程、睿频降低、共享缓存与内存带宽、虚拟机被拿走的时间计入客户机 CPU 秒）")
    else:
        text += f"；进程池每步 CPU 成本与单线程相差不超过 {tolerance:.0%}：同时运行没有让核明显变慢"
    if thread > 1 + tolerance and (saturated or abs(serial - 1) > tolerance):
        text += (f"；线程池每步多花 {thread - 1:.0%}，但这一次"
                 + ("机器很忙" if saturated else f"单线程的两行之间本身就差了 {abs(serial - 1):.0%}")
                 + "，分不出它是 GIL 交接的代价还是循环速度的漂移，在空闲机器上重跑再判断")
    elif thread > 1 + tolerance:
        text += (f"；线程池每步多花 {thread - 1:.0%}：GIL 交接本身的工作（加锁、唤醒、缓存失效）"
                 "记在线程自己的 CPU 秒里")
    else:
        text += f"；线程池每步 CPU 成本与单线程相差不超过 {tolerance:.0%}：GIL 交接没有明显抬高每步的 CPU 时间"
    return text


def idle_gap_text(schedule, min_gap: float = 0.0) -> str:
    """Chinese description of the longest idle gap on any worker of a simulated DAG schedule: where it
    lies, the task placed right after it, and the tasks that were already ready during the gap but ran
    later on that same worker (EFT places tasks in topological order and only appends at the end of a
    worker's queue, so a later-ready task placed earlier blocks them). ``min_gap`` in seconds: shorter
    longest gaps are reported as "no noticeable gap"."""
    from hetlab._validate import check_nonnegative

    if not hasattr(schedule, "graph") or not hasattr(schedule.graph, "preds"):
        raise TypeError(f"schedule must be a DAG Schedule (with .graph.preds), got {type(schedule).__name__}")
    min_gap = check_nonnegative("min_gap", min_gap)
    dag = schedule.graph
    start, end, dev = np.asarray(schedule.start), np.asarray(schedule.end), np.asarray(schedule.device_of)
    ready = np.array([max((end[p] for p in dag.preds[i]), default=0.0) for i in range(len(dag.tasks))])
    best = None
    for d in np.unique(dev):
        idx = np.flatnonzero(dev == d)
        idx = idx[np.argsort(start[idx])]
        prev = 0.0
        for i in idx:
            if start[i] - prev > (best[0] if best else 0.0):
                best = (float(start[i] - prev), int(d), float(prev), int(i))
            prev = max(prev, end[i])
    if best is None or best[0] <= min_gap:
        return "模拟的计划里没有明显的空闲空档"
    gap, d, t0, after = best
    name = schedule.devices[d].name
    waiting = [dag.tasks[j].name for j in np.flatnonzero(dev == d)
               if start[j] > start[after] and ready[j] <= t0 + 1e-12]
    text = (f"模拟中最长的空档：{name} 在 {t0 * 1e3:.1f}–{start[after] * 1e3:.1f} 毫秒之间空闲 {gap * 1e3:.1f} 毫秒；"
            f"紧接其后的是 {dag.tasks[after].name}（它的前驱到 {ready[after] * 1e3:.1f} 毫秒才全部完成）")
    if waiting:
        text += (f"；而 {'、'.join(waiting)} 在空档开始时已经就绪，却排在 {dag.tasks[after].name} 之后"
                 "——EFT 按拓扑顺序逐个放置、只往队尾追加，不会把它们插进空档")
    return text


def submission_text(startup: float, submit: float, tasks: int, first_starts=None, first_ready=None) -> str:
    """Chinese reading of a Dask run's submission against its start-up, true in every order of events.
    ``startup``: seconds from the clock's start (the client begins submitting the graph) to the first
    task's start; ``submit``: seconds the client's loop that submits the tasks one by one took, on the
    same clock; ``tasks``: how many it submitted. The loop's cost per task is per-task overhead (it grows
    with the number of tasks), not one-off start-up. When the loop outlasts the start-up, its tail
    overlaps the first tasks and lies inside the compared window (tasks not yet submitted cannot start).
    ``first_starts`` (optional) maps each worker's name to its first task's start, in seconds after the
    first task of all started: a worker that starts late sat idle waiting for its first task.
    ``first_ready`` (optional, same keys, same clock) gives when each worker's first task's predecessors
    had all finished (0 for a source task): of the late worker's idle start, the part before that moment
    is waiting on predecessors, the rest counts as inter-task gap (:func:`hetlab.real.execute.task_gaps`)."""
    from hetlab._validate import check_int, check_nonnegative

    startup = check_nonnegative("startup", startup, high=3600.0)
    submit = check_nonnegative("submit", submit, high=3600.0)
    tasks = check_int("tasks", tasks, low=1, high=10**7)
    starts: dict = {}
    if first_starts is not None:
        if not isinstance(first_starts, dict) or not first_starts:
            raise TypeError("first_starts must be a non-empty dict of worker name -> seconds, "
                            f"got {first_starts!r:.80}")
        for name, when in first_starts.items():
            if not isinstance(name, str):
                raise TypeError(f"first_starts keys must be worker names (str), got {name!r:.80}")
            starts[name] = check_nonnegative(f"first_starts[{name!r}]", when, high=3600.0)
    ready: dict = {}
    if first_ready is not None:
        if not isinstance(first_ready, dict) or set(first_ready) != set(starts):
            raise TypeError("first_ready must be a dict with the same worker names as first_starts, "
                            f"got {first_ready!r:.80}")
        for name, when in first_ready.items():
            ready[name] = check_nonnegative(f"first_ready[{name!r}]", when, high=3600.0)
    text = (f"客户端逐个提交 {tasks} 个任务的循环用了 {submit * 1e3:.1f} 毫秒，每任务 {submit / tasks * 1e3:.2f} 毫秒："
            "这是按任务计的开销（任务越多，循环越长），不是一次性启动")
    tail = submit - startup
    if tail > 0:
        text += (f"；第一个任务开始时提交还没结束，启动的 {startup * 1e3:.1f} 毫秒全程都在提交，"
                 f"最后一个任务在第一个任务开始后 {tail * 1e3:.1f} 毫秒才提交完（Dask 甘特图上的蓝色点线）："
                 "这一段提交与执行重叠，落在下面比较的窗口之内，其间还没提交的任务不可能开始")
    else:
        text += (f"；提交在第一个任务开始前 {-tail * 1e3:.1f} 毫秒就已结束，整段落在启动之内，"
                 "所以启动里有这一段随任务数增长，并非全是一次性的")
    if starts:
        name, late = max(starts.items(), key=lambda kv: (kv[1], kv[0]))
        if late > 1e-3:
            text += (f"；{name} 的第一个任务在第一个任务开始后 {late * 1e3:.1f} 毫秒才开始，此前它空等第一个任务"
                     + (f"（其中前 {min(late, tail) * 1e3:.1f} 毫秒提交仍在进行）" if tail > 0 else ""))
            if name in ready:
                wait = min(late, ready[name])
                if wait <= 0:
                    text += f"；它的第一个任务一开始就已就绪，这 {late * 1e3:.1f} 毫秒的白缝全部计入任务间空隙"
                else:
                    text += (f"；这段白缝里，前 {wait * 1e3:.1f} 毫秒它的第一个任务还在等前驱，"
                             + (f"其后 {(late - wait) * 1e3:.1f} 毫秒计入任务间空隙" if late - wait > 0 else
                                "没有一段计入任务间空隙"))
        else:
            text += "；各工作者的第一个任务都在 1 毫秒之内开始，开头没有工作者空等"
    return text


def speedup_text(measured: dict, model: dict, drift: float, tolerance: float = 0.05) -> str:
    """Chinese line of the speed-ups against the once-run all-CPU serial run, each next to its model
    value. ``measured`` and ``model`` map run names to speed-ups (same keys, in print order);
    ``drift`` is the serial run's CPU cost per loop step over the one-thread baseline's, minus 1. Beyond
    ``tolerance`` a note says the serial baseline drifted, so every measured speed-up is inflated
    (drift above 0: the serial run was slow) or deflated (below 0) by about that factor."""
    from hetlab._validate import check_positive

    if not isinstance(measured, dict) or not isinstance(model, dict) or not measured:
        raise TypeError("measured and model must be non-empty dicts of run name -> speed-up")
    if set(measured) != set(model):
        raise ValueError(f"model must have the same runs as measured: {sorted(measured)} vs {sorted(model)}")
    for kind in measured:
        check_positive(f"measured[{kind!r}]", measured[kind], high=1e6)
        check_positive(f"model[{kind!r}]", model[kind], high=1e6)
    if isinstance(drift, bool) or not isinstance(drift, (int, float)) or not -1 < drift < 100:
        raise ValueError(f"drift must be a number in (-1, 100), got {drift!r}")
    tolerance = check_positive("tolerance", tolerance, high=1.0)
    text = ("相对“全在 CPU 上串行”的实测加速比（括号里是模型值）："
            + "，".join(f"{kind} {measured[kind]:.2f}x（{model[kind]:.2f}x）" for kind in measured))
    if abs(drift) > tolerance:
        text += (f"\n  注意：串行基线只跑了一次，它的每步 CPU 成本比单线程依次执行{'高' if drift > 0 else '低'} "
                 f"{abs(drift):.0%}（循环速度漂了），所以上面的实测加速比都随之偏{'大' if drift > 0 else '小'}约 "
                 f"{abs(drift):.0%}，与模型值相比时以第一行“要点”为准；按单线程依次执行折算串行基线后："
                 + "，".join(f"{kind} {measured[kind] / (1 + drift):.2f}x" for kind in measured))
    return text


def demo_for_real(scale: float = 0.1, band: float = 0.15, *, details: bool = False, repeat: int = 1):
    """Run chapter 11's demo plan for real (serial, process pool, thread pool, one thread in sequence),
    each task a pure-Python loop lasting work / speed * ``scale`` seconds at the loop rate (median of
    seven timings after a warm-up). Returns (Chinese report, figure of plan and both pool runs); with
    ``details=True`` returns (summary, details, figure): the summary holds the key line, the readings
    of parallelism and of threads against one thread, the speed-ups and the load note; the details hold
    the calibration, the factor table, the per-step CPU costs, the normalised readings and the GIL lines.
    ``repeat`` rounds run the process pool, the thread pool and the one-thread baseline in turn
    (interleaved, so drift in the machine's speed hits all of them alike; the long serial run only in
    the first round); each configuration is read from its median run (by makespan)."""
    import dataclasses

    from hetlab import plotting as PL
    from hetlab import schedulers as S
    from hetlab._validate import check_bool, check_int, check_positive
    from hetlab.book import demo
    from hetlab.devices import kitchen
    from hetlab.real import measure
    from hetlab.real.execute import run_plan

    scale = check_positive("scale", scale, high=0.5)
    band = check_positive("band", band, high=1.0)
    details = check_bool("details", details)
    repeat = check_int("repeat", repeat, low=1, high=9)
    note = machine_note()
    report = demo.compare_policies()
    plan = report.schedules["article demo"]
    serial_plan = S.serial(demo.article_tasks(), kitchen(), device="CPU")
    rate = measure.loop_rate(0.05, repeat=7, statistic="median")
    configs = [("串行（全在 CPU 上）", serial_plan, "thread", False), ("进程池", plan, "process", False),
               ("线程池", plan, "thread", False), ("单线程依次执行", plan, "thread", True)]
    rounds: dict = {kind: [] for kind, *_ in configs}
    for r in range(repeat):
        for kind, p, ex, seq in configs[1:] if r else configs:     # the long serial run only once
            rounds[kind].append(run_plan(p, scale, executor=ex, steps_per_second=rate, sequential=seq).schedule)
    runs = {kind: sorted(v, key=lambda s: s.makespan)[(len(v) - 1) // 2] for kind, v in rounds.items()}
    cores = measure.cpu_count()
    busy = float(plan.busy.sum()) * scale
    expect = {"串行（全在 CPU 上）": report.serial * scale,
              "进程池": max(plan.makespan * scale, busy / min(cores, 3)), "线程池": busy, "单线程依次执行": busy}
    t_serial = runs["串行（全在 CPU 上）"].makespan
    planned_cpu = {kind: (expect[kind] if kind.startswith("串行") else busy) for kind in runs}
    t_proc, t_thr, t_seq = (runs[k].makespan for k in ("进程池", "线程池", "单线程依次执行"))
    proc_base = t_seq * expect["进程池"] / busy
    ratio, r_proc = t_thr / t_seq, t_proc / proc_base
    lines = [f"要点（以实测的单线程依次执行 {t_seq:.3f} 秒为基线，循环速度的标定偏差被约掉）："
             f"线程池 {t_thr:.3f} 秒，之比 {ratio:.2f}（{_band(ratio - 1, band)[1:-1]}）；"
             f"进程池 {t_proc:.3f} 秒，基线 × 预测 ÷ 忙碌时间之和 = "
             f"{proc_base:.3f} 秒，之比 {r_proc:.2f}（{_band(r_proc - 1, band)[1:-1]}）"]
    more = [f"循环速度 {rate / 1e6:.1f} 百万步/秒（热身一次后七次计时的中位数）；"
            + (f"进程池、线程池、单线程依次执行交替各跑 {repeat} 次，每种取完成时间居中的一次"
               "（串行只跑一次）；" if repeat > 1 else "")
            + f"{cores} 个可用 CPU；"
            + f"8 段循环的计划时长 {min(runs['线程池'].info['planned_seconds']) * 1e3:.0f}–"
            f"{max(runs['线程池'].info['planned_seconds']) * 1e3:.0f} 毫秒；"
            f"1 时间单位 = {scale:g} 秒；"
            "偏差 = (实测 − 预测) / 预测；实测 ÷ 预测 = 每步 CPU 成本 × 并行度不足（恒等式）",
            "| 运行 | 实测（秒） | 预测（秒） | 偏差 | 有效并行度 | 每步 CPU 成本 | 并行度不足 |"]
    factors = {}
    for kind, s in runs.items():
        err = s.makespan / expect[kind] - 1
        cost, short = cost_and_shortfall(s.makespan, expect[kind], s.info["parallelism"], planned_cpu[kind])
        factors[kind] = cost
        more.append(f"| {kind} | {s.makespan:.3f} | {expect[kind]:.3f} | {_pct(err)}{_band(err, band)} | "
                    f"{s.info['parallelism']:.2f} | {cost:.3f} | {short:.3f} |")
    par_p, par_t = runs["进程池"].info["parallelism"], runs["线程池"].info["parallelism"]
    share = runs["单线程依次执行"].info["parallelism"]
    cap = min(cores, 3)
    lines.append(f"读数（有效并行度）：线程池 {par_t:.2f}" + thread_parallelism_verdict(par_t)
                 + f"；进程池 {par_p:.2f}，上限 min(核数, 3) = {cap}"
                 + ("，多个进程确实同时在跑" if par_p > 1.3 else
                    "，没有明显超过 1：别的进程占住了核（见负载提示），进程池也只能轮流运行"))
    seq_cost = factors["单线程依次执行"]
    more.append("读数（每步 CPU 成本，以单线程依次执行为 1）：" + "\n  ".join(cpu_cost_verdict(
        factors["串行（全在 CPU 上）"] / seq_cost, factors["进程池"] / seq_cost, factors["线程池"] / seq_cost,
        saturated=share < 0.8 or par_p <= 1.3).split("；")))
    load = measure.load_per_cpu()
    verdict = thread_ratio_verdict(ratio, band, shares=(par_t, share), idle=None if load is None else load <= 0.75)
    drift = factors["串行（全在 CPU 上）"] / seq_cost - 1
    if ratio > 1 + band and abs(drift) > 0.05:
        verdict += (f"（但两行单线程之间循环速度本身就差了 {abs(drift):.0%}，"
                    "这个差距可能来自漂移，在空闲机器上重跑再判断）")
    lines.append(f"同样 8 段循环：线程池 {t_thr:.3f} 秒，单线程依次执行 {t_seq:.3f} 秒，之比 {ratio:.2f}——{verdict}")
    more.append(f"有效并行度：单线程依次执行 {share:.2f}，线程池 {par_t:.2f}，之比 {share / par_t:.2f}；"
                "单线程的这个值是一个线程此刻在本机实际分到的核份额"
                f"（空闲时接近 1）；按它归一，线程池 {par_t / share:.2f}，进程池 {par_p / share:.2f}"
                + ("——一个线程都分不到 0.8 个核，整台机器已经饱和，进程池也无从并行，本次只能检验“线程池 ≤ 1”这条上界"
                   if share < 0.8 else ""))
    serial_model = expect["串行（全在 CPU 上）"]
    speedups = {"进程池": t_serial / t_proc, "线程池": t_serial / t_thr, "单线程依次执行": t_serial / t_seq}
    lines.append(speedup_text(speedups, {"进程池": serial_model / expect["进程池"], "线程池": serial_model / busy,
                                         "单线程依次执行": serial_model / busy}, drift)
                 + f"\n  线程池与单线程依次执行的“加速”只来自更短的循环；进程池的模型值是 {cores} 核上的预测，"
                 f"演示的模拟（核数不少于设备数时）是 {report.speedup:.2f}x")
    stagger, stretch = lane_stagger_and_stretch(runs["线程池"])
    more.append(f"CPython 的 GIL 切换间隔 sys.getswitchinterval() = {sys.getswitchinterval() * 1e3:.1f} 毫秒："
                "有其他线程在等 GIL 时，等待方在这么久之后请求持有者让出\n  线程池三条线的起点依次相隔（中位数）"
                f"{stagger * 1e3:.1f} 毫秒；任务条的实测时长是计划的 {stretch:.1f} 倍（中位数）\n  "
                "三条线都在跑时，按 GIL 轮流的模型约为 3 × 每步 CPU 成本 ÷ 线程池有效并行度 = "
                f"3 × {factors['线程池']:.2f} / {par_t:.2f} = {3 * factors['线程池'] / par_t:.1f} 倍"
                "（每步 CPU 成本与有效并行度都是整次运行的平均，所以只是估计），"
                f"实测与它之比 {stretch * par_t / (3 * factors['线程池']):.2f}")
    first_stretch = lane_first_stretch(runs["进程池"], plan, scale)
    more.append("进程池各线首个任务的拉长倍数（实测 ÷ 计划）：" + "，".join(
        f"{d.name} × {x:.1f}" for d, x in first_stretch)
        + "；相差大说明操作系统没有平均分核，公式只是下界"
        + ("；倍数小于 1 表示那个任务比按标定算的更快，是循环速度的漂移，不是拉长"
           if any(round(x, 1) < 1 for _, x in first_stretch) else ""))
    lines.append(note)
    in_seconds = dataclasses.replace(plan, start=plan.start * scale, end=plan.end * scale)
    fig = gantt_panels([(in_seconds, PL.label(f"模拟（第 11 章的演示，1 单位 = {scale:g} 秒）", "simulated demo")),
                        (runs["进程池"], PL.label("进程池实测", "process pool (measured)")),
                        (runs["线程池"], PL.label("线程池实测", "thread pool (measured)"))],
                       mark=plan.makespan * scale, names=8, figsize=(8, 4.6))
    if details:
        return "\n".join(lines), "\n".join(more), fig
    return "\n".join(lines + more), fig


def lane_first_stretch(measured, plan, scale: float) -> list:
    """(device, measured / planned duration of its first task) for each device of ``plan`` that ran a
    task in ``measured`` (a run of the same plan, same devices and placement; planned times x ``scale``)."""
    out = []
    for k, d in enumerate(plan.devices):
        idx = [i for i in range(len(plan.graph.tasks)) if plan.device_of[i] == k]
        if not idx:
            continue
        first = min(idx, key=lambda i: float(measured.start[i]))
        planned = float(plan.end[first] - plan.start[first]) * scale
        if planned > 0:
            out.append((d, float(measured.end[first] - measured.start[first]) / planned))
    return out


def cross_worker_edges(measured) -> tuple[int, int, float, float]:
    """(edges, edges whose two tasks ran on different workers, median gap of tasks with a predecessor
    on another worker, median gap of the other tasks; NaN where a group is empty) for a measured run."""
    from hetlab.real.execute import task_gaps

    g = measured.graph
    gaps = task_gaps(measured)
    edges = sum(len(p) for p in g.preds)
    far = [any(measured.device_of[p] != measured.device_of[i] for p in g.preds[i]) for i in range(len(g.tasks))]
    crossed = sum(int(measured.device_of[p] != measured.device_of[i]) for i in range(len(g.tasks))
                  for p in g.preds[i])
    a = [gaps[i] for i in range(len(g.tasks)) if far[i]]
    b = [gaps[i] for i in range(len(g.tasks)) if not far[i]]
    return (edges, crossed, float(np.median(a)) if a else float("nan"),
            float(np.median(b)) if b else float("nan"))


def sweep_counts(workers: int, counts=(1, 2, 3, 4, 8, 16, 64, 256)) -> list[int]:
    """The task counts of appendix A1's sweep on ``workers`` workers: ``counts`` together with P, P + 1 and
    2P (where the rounds model's sawtooth shows on this machine), sorted, each at most 4096."""
    from hetlab._validate import check_int, check_sequence

    workers = check_int("workers", workers, low=1, high=2048)
    chosen = {check_int("counts", n, low=1, high=4096) for n in check_sequence("counts", counts)}
    return sorted(chosen | {workers, workers + 1, 2 * workers})


def sawtooth_text(wall: dict, os_: float, w: float, workers: int) -> str:
    """Chinese reading of the rounds model's sawtooth on ``workers`` workers: the model's
    T(P + 1) - T(2P) = W (P - 1) / (P (P + 1)) - (P - 1) Os for the fitted ``w``, ``os_`` (seconds) and, when
    ``wall`` (N -> measured seconds) holds P, P + 1 and 2P, whether N = P + 1 was slower than both."""
    from hetlab._validate import check_int, check_nonnegative, check_positive

    workers = check_int("workers", workers, low=1, high=2048)
    os_ = check_nonnegative("os_", os_)
    w = check_positive("w", w)
    if not isinstance(wall, dict):
        raise TypeError(f"wall must be a dict of task count -> seconds, got {wall!r:.80}")
    p = workers
    if p == 1:
        return "锯齿：只有 1 个工作者时每个 N 都跑 N 轮、每轮 W/N，没有锯齿（按轮模型退化为 N·Os + W）"
    model = G.total_time_on(p + 1, w, os_, p, model="rounds") - G.total_time_on(2 * p, w, os_, p, model="rounds")
    line = (f"锯齿（P = {p}）：N = P + 1 = {p + 1} 要跑两轮、第二轮只有一个任务；按拟合的模型，它比 N = 2P = {2 * p} "
            f"多花 W(P − 1)/(P(P + 1)) − (P − 1)·Os = {model * 1e3:.1f} 毫秒"
            + ("（P = 2 时即 W/6 − Os）" if p == 2 else "")
            + ("" if model > 0 else "，不为正：P(P + 1) ≥ W/Os，多派发的开销抵消了多出的一轮，按模型这里没有锯齿"))
    if {p, p + 1, 2 * p} <= set(wall):
        a, b, c = wall[p], wall[p + 1], wall[2 * p]
        saw = b > max(a, c)
        line += (f"；实测 N = {p + 1}（{b:.3f} 秒）{'比' if saw else '并不比'} N = {p}（{a:.3f} 秒）和 "
                 f"N = {2 * p}（{c:.3f} 秒）都慢，比 N = {2 * p} 多 {(b - c) * 1e3:.1f} 毫秒")
    else:
        line += f"；本次扫描没有测全 N = {p}、{p + 1}、{2 * p}，无法核对"
    return line


def sweep_report(process_os: float, round_trip: float, total: float = 0.2,
                 counts=(1, 2, 3, 4, 8, 16, 64, 256), repeat: int = 3, band: float = 0.10) -> dict:
    """A measured granularity sweep on a process pool of P = (usable CPUs) workers, fitted by relative least
    squares, with its reading against ``process_os`` / ``round_trip`` (A1.1's pipelined and round-trip Os).
    The counts are ``counts`` plus P, P + 1 and 2P (:func:`sweep_counts`), so that the sawtooth can be checked
    on any machine (:func:`sawtooth_text`). Returns a dict with ``text`` (Chinese report), ``wall``, ``os``,
    ``w``, ``P``, ``counts`` and ``total``."""
    import math

    from hetlab._validate import check_positive
    from hetlab.real import measure

    process_os = check_positive("process_os", process_os)
    round_trip = check_positive("round_trip", round_trip)
    band = check_positive("band", band, high=1.0)
    note = machine_note()
    P = measure.cpu_count()
    counts = sweep_counts(P, counts)
    wall = measure.granularity_sweep(total_seconds=total, task_counts=counts, repeat=repeat)
    os_fit, w_fit = measure.fit_overhead(counts, list(wall.values()), workers=P, relative=True)
    lines = [f"本机 P = {P} 个工作者（= 可用 CPU 数）；任务数 N 取固定的一组，再加上 P、P + 1、2P = "
             f"{P}、{P + 1}、{2 * P}",
             "偏差 = (实测 − 模型) / 模型；预测在测量之前就能算出：W = 放进去的工作量，Os = A1.1 的流水线摊销开销"]
    for n, t in wall.items():
        m = G.total_time_on(n, w_fit, os_fit, P, model="rounds")
        pred = G.total_time_on(n, total, process_os, P, model="rounds")
        lines.append(f"N = {n:>3}：实测 {t:.3f} 秒；用 A1.1 的 Os 预测 {pred:.3f} 秒（偏差 {_pct(t / pred - 1, 0)}）；"
                     f"拟合模型 {m:.3f} 秒（偏差 {_pct(t / m - 1, 0)}）")
    dev = w_fit / total - 1
    lines.append(f"拟合（P = {P}，相对误差）：Os = {os_fit * 1e6:.0f} µs/任务，W = {w_fit:.3f} 秒，与放进去的 "
                 f"{total:g} 秒相差 {dev:+.1%}" + (f"，在 ±{band:.0%} 之内" if abs(dev) <= band
                                                 else f"，超出 ±{band:.0%}：见下文核对的第 1 条"))
    lines.append(f"拟合的 Os 是 A1.1 流水线摊销开销的 {os_fit / process_os:.1f} 倍、"
                 f"单次往返的 {os_fit / round_trip:.1f} 倍")
    fastest = min(wall, key=wall.get)
    safe = max(os_fit, 1e-9)
    lines.append(f"实测最快的 N = {fastest}（{'是' if fastest % P == 0 else '不是'} P 的倍数）；模型的最优 N = "
                 f"{G.optimal_task_count(w_fit, safe, P=P)}；√(W/Os) = {math.sqrt(w_fit / safe):.1f}")
    lines.append(f"模型里 N = 4P = {4 * P} 比 N = P = {P} 多付的派发开销 3P·Os = {3 * P * os_fit * 1e3:.2f} 毫秒")
    lines.append(sawtooth_text(wall, os_fit, w_fit, P))
    lines.append(note)
    return {"text": "\n".join(lines), "wall": wall, "os": os_fit, "w": w_fit, "P": P, "counts": counts,
            "total": total}


def sweep_figure(sweep: dict, process_os: float):
    """Figure of a :func:`sweep_report` result: the measured medians, the rounds model predicted from
    ``process_os`` (A1.1) with the known W, and the fitted rounds model. The models are drawn at every
    integer N up to max(16, 4P), where the sawtooth is wide, and beyond that only at multiples of P (the
    sawtooth's lower edge), so that the dense teeth do not read as an error band. Returns the figure."""
    from hetlab._validate import check_positive

    if not isinstance(sweep, dict) or not {"counts", "wall", "os", "w", "P", "total"} <= set(sweep):
        raise TypeError(f"sweep must be the dict returned by sweep_report, got {sweep!r:.80}")
    process_os = check_positive("process_os", process_os)
    p, top = int(sweep["P"]), max(256, max(sweep["counts"]))
    cut = -(-max(16, 4 * p) // p) * p          # the first multiple of P from max(16, 4P): the two parts meet
    dense = list(range(1, min(cut, top) + 1))
    sparse = list(range(cut, top + 1, p)) if top > cut else []
    ax = P.new_axes(figsize=(7, 3.2))
    fig = ax.figure
    ax.plot(sweep["counts"], [sweep["wall"][n] for n in sweep["counts"]], "o", color="black", ms=4,
            label=P.label("实测（三次中位数）", "measured (median of 3)"), zorder=3)
    for (os_, w, style, colour, text, eng) in [
            (process_os, sweep["total"], "--", "#4C72B0", f"用 A1.1 的 Os 预测（W = {sweep['total']:g} 秒）",
             "predicted from A1.1's Os"),
            (sweep["os"], sweep["w"], "-", "#C44E52", "拟合的按轮模型", "fitted rounds model")]:
        ax.plot(dense, G.total_time_on(dense, w, os_, p, model="rounds"), style, lw=0.8, color=colour,
                label=P.label(text, eng))
        if sparse:
            ax.plot(sparse, G.total_time_on(sparse, w, os_, p, model="rounds"), style, lw=0.8, color=colour)
    ax.set_xscale("log")
    ax.set_xlabel(P.label("任务数 N（对数轴）" + (f"；N > {cut} 时模型只画 P 的倍数（锯齿的下沿）" if sparse else ""),
                          "tasks N (log)" + (f"; models at multiples of P beyond {cut}" if sparse else "")))
    ax.set_ylabel(P.label("墙钟时间（秒）", "wall time (s)"))
    ax.set_title(P.label(f"进程池上的粒度扫描（实测，P = {p}，W = {sweep['total']:g} 秒）",
                         "granularity sweep on a process pool (measured)"))
    ax.legend(fontsize=8)
    return fig


def attribution_text(simulated, measured, process_os: float, round_trip: float, band: float = 0.15) -> str:
    """Chinese reading of a measured process-pool run of appendix A1's DAG against its simulation:
    error and band, total measured vs planned task time (long tail included), idle gaps, the
    execution-order term (EFT plan minus a central-ready-queue simulation, which is what a pool fed in
    completion order does) and a conditional readout naming the largest term; ``load`` is named when
    the gaps far exceed N x one round trip."""
    from hetlab._validate import check_positive
    from hetlab.real.execute import attribute
    from hetlab.schedulers.list_scheduling import central_queue

    process_os = check_positive("process_os", process_os)
    round_trip = check_positive("round_trip", round_trip)
    band = check_positive("band", band, high=1.0)
    why = attribute(simulated, measured)
    err = measured.makespan / simulated.makespan - 1
    n, P = why.tasks, why.workers
    queue = central_queue(simulated.graph, simulated.devices, ready="fifo").makespan
    order = queue - why.planned
    stretch_term = why.extra_busy / P
    gap_term = why.gaps / P
    estimate = queue + stretch_term + gap_term
    terms = {"任务被拉长": stretch_term, "任务间空隙": gap_term, "执行顺序": order}
    top = max(terms, key=lambda k: abs(terms[k]))
    readout = [f"读数：三项中绝对值最大的是“{top}”（{terms[top] * 1e3:+.1f} 毫秒）"]
    if why.long_tasks:
        readout.append(f"拉长倍数中位数 {why.median_stretch:.2f}，但有 {why.long_tasks} 个任务被拉长 2 倍以上"
                       "（长尾，中位数看不出来）")
    elif why.median_stretch < 1.3:
        readout.append("没有任务被拉长 2 倍以上，任务本身基本没被拖慢")
    k = round(why.gaps / (n * round_trip), 1)
    if k > 3:
        readout.append(f"空隙合计是 {n} × 单次往返的 {k:.1f} 倍（超过 3 倍）：远超派发本身，主要来自等核（负载）")
    elif k > 1.5:
        readout.append(f"空隙合计是 {n} × 单次往返的 {k:.1f} 倍（1.5–3 倍）：多出的部分是父进程等核、"
                       "每个任务的序列化比空任务贵")
    else:
        readout.append(f"空隙合计是 {n} × 单次往返的 {k:.1f} 倍（不超过 1.5 倍）：与派发的往返延迟相当"
                       + ("；低于 1 倍，说明同时就绪的任务被预取，不少任务省掉了往返" if k < 1 else ""))
    return "\n".join([
        f"进程池实测 {why.measured * 1e3:.1f} 毫秒，模拟 {why.planned * 1e3:.1f} 毫秒，"
        f"偏差（实测 − 模拟）/ 模拟 = {err:+.1%}{_band(err, band)}",
        f"任务时长总量：实测 {why.measured_busy * 1e3:.1f} 毫秒，计划 {why.planned_busy * 1e3:.1f} 毫秒，"
        f"额外忙碌 {why.extra_busy * 1e3:+.1f} 毫秒，分摊到 {P} 个工作者上 {stretch_term * 1e3:+.1f} 毫秒"
        f"（拉长倍数中位数 {why.median_stretch:.2f}）",
        f"任务间空隙合计 {why.gaps * 1e3:.1f} 毫秒，分摊到 {P} 个工作者上 {gap_term * 1e3:.1f} 毫秒",
        f"执行顺序：中心就绪队列模拟 {queue * 1e3:.1f} 毫秒 − EFT 模拟 {why.planned * 1e3:.1f} 毫秒 = "
        f"{order * 1e3:+.1f} 毫秒",
        f"模拟 + 三项 = {estimate * 1e3:.1f} 毫秒，实测相对它的偏差 {why.measured / estimate - 1:+.1%}",
        f"对照：{n} 个任务 × A1.1 的进程池 Os（流水线）= {n * process_os * 1e3:.1f} 毫秒，× 单次往返 = "
        f"{n * round_trip * 1e3:.1f} 毫秒；能解释全部差距的每任务开销 {why.implied_overhead * 1e3:.2f} 毫秒",
        "；".join(readout),
        machine_note()])


def dask_report(dag, bodies, workers, process_run, *, figure: bool = False, details: bool = False,
                as_dict: bool = False):
    """Run appendix A1's DAG on a local Dask cluster and read it against a central ready queue (what
    Dask's scheduler does: free workers take ready tasks), before and after charging each dispatch the
    measured median gap, with random work stealing as a second contrast; ``process_run`` is the
    process-pool RealRun. The one-off start-up (graph submission to the first task's start) is printed
    as its own term and left out of the per-task comparison (:func:`hetlab.real.execute.split_startup`).

    Returns the text; ``details=True`` splits it into (summary, details); ``figure=True`` appends
    ``fig``, the Gantt panels of the central-queue simulation and the same Dask run with its start-up
    removed (None when Dask is missing). So ``figure=True, details=True`` returns (summary, details, fig).
    ``as_dict=True`` returns instead a dict with ``text``, ``more``, ``fig`` (always drawn; None without
    Dask) and ``gap`` (the median per-task gap in seconds, NaN without Dask), for :func:`gil_control_text`."""
    from hetlab._validate import check_bool

    figure = check_bool("figure", figure)
    details = check_bool("details", details)
    as_dict = check_bool("as_dict", as_dict)
    summary, more, queue, real = _dask_report(dag, bodies, workers, process_run)
    if as_dict:
        return {"text": summary, "more": more, "fig": None if real is None else _dask_figure(queue, real),
                "gap": float("nan") if real is None else float(real.info.get("median_gap", float("nan")))}
    out = (summary, more) if details else ("\n".join(part for part in (summary, more) if part),)
    if not figure:
        return out if details else out[0]
    return (*out, None if real is None else _dask_figure(queue, real))


def _dask_figure(queue, real):
    """Gantt panels of the central-queue simulation and the Dask run with its start-up removed."""
    startup = float(real.info.get("startup_removed", 0.0))
    submit = real.info.get("submit_seconds")
    events = ([(1, submit - startup, P.label("蓝色点线：最后一个任务提交完", "last task submitted"))]
              if submit is not None and submit > startup else [])
    return gantt_panels([(queue, P.label("中心就绪队列模拟（不计开销）", "central ready queue (simulated)")),
                         (real, P.label(f"Dask 实测（从第一个任务开始计时；之前的启动 "
                                        f"{startup * 1e3:.1f} 毫秒未画出）",
                                        "Dask (measured, from the first task's start)"))],
                        mark=queue.makespan, figsize=(8, 3.8), label_from=1, color_by="level", events=events)


def _dask_report(dag, bodies, workers, process_run):
    """(summary, details, central-queue simulation, Dask run with its start-up removed); the last three
    parts are "" / None when Dask is missing."""
    from hetlab import schedulers as S
    from hetlab.real.execute import attribute, run_graph, split_startup, task_gaps
    from hetlab.schedulers.list_scheduling import central_queue

    note = machine_note()
    try:
        on_dask = run_graph(dag, bodies, executor="dask", workers=len(workers))
    except ImportError as exc:
        return f"跳过 Dask（未安装）：{exc}", "", None, None
    measured = on_dask.schedule
    startup, real = split_startup(measured)
    submit = measured.info.get("submit_seconds")
    warm = measured.info.get("warmup") or []
    queue = central_queue(dag, workers, ready="fifo")
    stolen = S.work_stealing(dag, workers, steal_latency=0.0005, seed=0)
    why = attribute(queue, real)
    gaps = task_gaps(real)
    mean_gap, median_gap = float(gaps.mean()), float(np.median(gaps))
    real.info["median_gap"] = median_gap
    charged = central_queue(dag, workers, ready="fifo", overhead=median_gap)

    def dev(sim) -> float:
        return real.makespan / sim.makespan - 1

    charged_mean = central_queue(dag, workers, ready="fifo", overhead=mean_gap)
    e0, e1, e2 = dev(queue), dev(charged), dev(charged_mean)
    tail = f"（是中位数的 {mean_gap / median_gap:.1f} 倍）" if median_gap > 0 else ""
    moved = real.info.get("stolen")
    proc_startup, proc_real = split_startup(process_run.schedule)
    proc_why = attribute(S.eft(dag, workers), process_run.schedule)     # A1.4's attribution of the same graph
    proc_rest = process_run.schedule.makespan / (queue.makespan + (proc_why.extra_busy + proc_why.gaps)
                                                  / proc_why.workers) - 1
    low, high = sorted((charged.makespan, charged_mean.makespan))
    if real.makespan > high:
        where = (f"实测高于两者：即使给每次派发加上空隙的平均值（连长尾一起），仍剩 "
                 f"{(real.makespan - charged_mean.makespan) * 1e3:.1f} 毫秒（{e2:+.1%}）不是均摊的空隙能解释的——"
                 "它来自空隙以外（Dask 按局部性放置、放行顺序与先进先出队列不同、任务被拉长），或来自空隙的分布："
                 "模拟给每次派发加同样的量，真实的长空隙若恰好落在依赖链上，会整段加到完成时间上")
    elif real.makespan < low:
        where = ("实测低于两者：给每次派发都加同样的空隙高估了——一部分空隙与另一个工作者的执行重叠，"
                 "不在关键路径上")
    else:
        where = "实测落在两者之间：差距基本由空隙解释"
    proc = task_gaps(proc_real)
    first, first_ready = {}, {}
    for k, d in enumerate(real.devices):
        on = np.flatnonzero(real.device_of == k)
        if len(on):
            i = int(on[np.argmin(real.start[on])])
            first[d.name] = float(real.start[i])
            first_ready[d.name] = max([0.0] + [float(real.end[p]) for p in real.graph.preds[i]])
    edges, crossed, far_gap, near_gap = cross_worker_edges(real)
    summary = [
        f"Dask 实测 {measured.makespan * 1e3:.1f} 毫秒 = 启动 {startup * 1e3:.1f} 毫秒"
        f"（从客户端开始提交任务图到第一个任务开始）+ 从第一个任务开始算起的 {real.makespan * 1e3:.1f} 毫秒；"
        "下面只比较后者",
        *([submission_text(startup, submit, len(dag.tasks), first, first_ready)] if submit is not None else []),
        f"中心就绪队列模拟（空闲的工作者取最早就绪的任务，不计开销）：{queue.makespan * 1e3:.1f} 毫秒；"
        f"偏差 = (实测 − 模拟) / 模拟 = {e0:+.1%}",
        f"每任务空隙（启动已除去）：中位数 {median_gap * 1e3:.2f} 毫秒，平均 {mean_gap * 1e3:.2f} 毫秒"
        f"（含负载，是派发开销的上界）；同一张图在进程池上：中位数 {float(np.median(proc)) * 1e3:.2f} 毫秒",
        f"每次派发加上空隙的中位数 {median_gap * 1e3:.2f} 毫秒后再模拟中心队列：{charged.makespan * 1e3:.1f} 毫秒，"
        f"偏差 {e1:+.1%}（绝对值{'缩小' if abs(e1) < abs(e0) else '没有缩小'}：{abs(e0):.0%} → {abs(e1):.0%}）",
        f"对照：同一张图在进程池上实测 {process_run.schedule.makespan * 1e3:.1f} 毫秒"
        f"（其中从提交到第一个任务开始 {proc_startup * 1e3:.1f} 毫秒，除去它为 {proc_real.makespan * 1e3:.1f} 毫秒，"
        "与上面 Dask 的比较窗口同口径）；Dask 调度器发起窃取 "
        f"{moved if moved is not None else '（未知）'} 次",
        note]
    more = [
        "计时前的热身：" + (f"{len(warm)} 个任务（每个工作者一个、导入任务体所在的模块，再加工作者之间互取一次数据），"
                        f"最晚一个在计时开始前 {-max(e for _, e, _ in warm) * 1e3:.1f} 毫秒结束"
                        if warm else "（未记录）"),
        f"归因：拉长倍数中位数 {why.median_stretch:.2f}；空隙合计 {gaps.sum() * 1e3:.1f} 毫秒",
        f"改加空隙的平均值 {mean_gap * 1e3:.2f} 毫秒{tail}后：{charged_mean.makespan * 1e3:.1f} 毫秒，"
        f"偏差 {e2:+.1%}；两次模拟一个只计典型空隙、一个连长尾一起计",
        "  " + where,
        f"  对照：进程池按 A1.4 的三项归因，“模拟 + 三项”与实测相差 {proc_rest:+.1%}；Dask 加平均空隙后与实测相差 "
        f"{e2:+.1%}" + ("（Dask 剩下的明显更多：它的差距不全是空隙）" if abs(e2) > abs(proc_rest) + 0.05 else ""),
        f"对照：随机窃取模拟（第 5 章，不计开销）{stolen.makespan * 1e3:.1f} 毫秒",
        f"依赖边 {edges} 条，其中 {crossed} 条两端在不同工作者上（后继先要从另一个工作者取回前驱的输出）；"
        f"空隙中位数：有前驱在另一工作者的任务 {far_gap * 1e3:.2f} 毫秒，其余 {near_gap * 1e3:.2f} 毫秒"
        + ("" if not (far_gap > 0 and near_gap > 0) else
           "（前者是后者的 1.5 倍以上：跨工作者取依赖是空隙的重要来源）" if far_gap >= 1.5 * near_gap else
           "（前者不到后者的 1.5 倍：跨工作者取依赖不是空隙的主要来源）"),
        f"GIL 切换间隔 sys.getswitchinterval() = {sys.getswitchinterval() * 1e3:.1f} 毫秒；Dask 空隙中位数是它的 "
        f"{median_gap / sys.getswitchinterval():.2f} 倍（待检验的解释：纯 Python 的 Spin 持有 GIL，"
        "工作者的通信线程最多要等一个切换间隔才能收任务、报完成；进程池的工作者没有第二个线程；下面的对照运行检验它）"]
    return "\n".join(summary), "\n".join(more), queue, real


def gil_control_verdict(spin_gap: float, sleep_gap: float) -> str:
    """Chinese reading of the GIL control: median task gap (seconds) with a GIL-holding busy-wait body
    against the same durations in ``time.sleep``. Below half: consistent with the hypothesis (but sleep
    also frees the core); above half and below 0.8: a part at most; 0.8 or more: not supported (the
    ratio is judged rounded to the two decimals it is printed with)."""
    from hetlab._validate import check_nonnegative

    spin_gap = check_nonnegative("spin_gap", spin_gap)
    sleep_gap = check_nonnegative("sleep_gap", sleep_gap)
    if spin_gap == 0:
        return "忙等任务的空隙中位数为 0，没有可以缩小的空隙，这次对照无从检验假设"
    ratio = round(sleep_gap / spin_gap, 2)    # judged as printed, so that a printed 0.80 reads as 0.8
    if ratio <= 0.5:
        return (f"换成 time.sleep 后空隙中位数缩小到 {ratio:.2f} 倍（不超过一半）：与 GIL 假设一致；"
                "但 time.sleep 同时让出了核，少争核也会让空隙缩小，所以这只支持、不证明 GIL 是主要来源")
    if ratio < 0.8:
        return (f"换成 time.sleep 后空隙中位数缩小到 {ratio:.2f} 倍（缩小了，但不到一半）："
                "GIL 至多解释空隙的一部分，其余来自调度器往返、序列化或等核")
    return (f"换成 time.sleep 后空隙中位数是原来的 {ratio:.2f} 倍（没有明显缩小）：这次运行不支持“空隙主要来自 GIL”"
            "的假设，空隙的主要来源在别处（调度器往返、序列化、等核）")


def gil_control_text(dag, seconds_per_unit: float = 1e-3, repeat: int = 2,
                     reference_gap: float | None = None) -> str:
    """Run ``dag`` on a local Dask cluster with busy-wait bodies (hold the GIL) and ``time.sleep`` bodies
    of the same durations (release it), ``repeat`` times each, alternating; Chinese report of both median
    gaps (pooled, and run by run) against ``sys.getswitchinterval()`` and :func:`gil_control_verdict`.
    ``reference_gap`` (seconds) is the busy-wait median gap of an earlier run of the same setting (A1.5's
    main run, ``dask_report(..., as_dict=True)["gap"]``): the run-to-run spread of the busy-wait medians is
    printed, and a ratio that lies closer to a threshold (0.5, 0.8) than that spread is called uncertain.
    Says so without Dask."""
    from hetlab._validate import check_positive
    from hetlab.real.execute import gil_gap_control

    if reference_gap is not None and not (isinstance(reference_gap, float) and math.isnan(reference_gap)):
        reference_gap = check_positive("reference_gap", reference_gap, high=10.0)
    else:
        reference_gap = None
    note = machine_note()
    try:
        gaps = gil_gap_control(dag, seconds_per_unit=seconds_per_unit, executor="dask", workers=2, repeat=repeat)
    except ImportError as exc:
        return f"跳过对照运行（未安装 Dask，无法检验这个假设）：{exc}"
    spin, sleep = float(np.median(gaps["spin"])), float(np.median(gaps["sleep"]))
    per_spin = [float(np.median(g)) for g in np.array_split(np.asarray(gaps["spin"]), repeat)]
    per_sleep = [float(np.median(g)) for g in np.array_split(np.asarray(gaps["sleep"]), repeat)]
    switch = sys.getswitchinterval()
    lines = [
        f"同一张图、同样的任务时长，在 2 个工作者的 Dask 上各跑 {repeat} 次（交替进行），每任务空隙的中位数：",
        f"  忙等（Spin，持有 GIL）：{spin * 1e3:.2f} 毫秒；time.sleep（释放 GIL）：{sleep * 1e3:.2f} 毫秒；"
        f"差 {(spin - sleep) * 1e3:+.2f} 毫秒（GIL 切换间隔 {switch * 1e3:.1f} 毫秒）",
        "  逐次的中位数：忙等 " + "、".join(f"{g * 1e3:.2f}" for g in per_spin) + " 毫秒；time.sleep "
        + "、".join(f"{g * 1e3:.2f}" for g in per_sleep) + " 毫秒",
        "读数：" + gil_control_verdict(spin, sleep)]
    spins = [g for g in per_spin + ([reference_gap] if reference_gap else []) if g > 0]
    if spin > 0 and len(spins) >= 2:
        spread = max(spins) / min(spins) - 1
        ratio = round(sleep / spin, 2)
        near = [t for t in (0.5, 0.8) if 1 / (1 + spread) <= ratio / t <= 1 + spread]
        head = (f"A1.5 主运行（同一设置：忙等、Dask、2 个工作者）的空隙中位数 {reference_gap * 1e3:.2f} 毫秒，"
                "连同这里逐次的中位数，" if reference_gap else "这里逐次的中位数")
        lines.append(f"跨次波动：{head}同一设置最大与最小相差 {spread:.0%}；" + (
            f"比值 {ratio:.2f} 离阈值 {'、'.join(f'{t:g}' for t in near)} 不到这个幅度，上面的结论应视为不确定"
            if near else f"比值 {ratio:.2f} 离两个阈值（0.5、0.8）都超过这个幅度，结论不受这份波动影响"))
    lines.append(note)
    return "\n".join(lines)


def offload_text(cal: dict) -> str:
    """Chinese report of the smallest n x n matmul worth sending to the GPU, copies included
    (:func:`hetlab.communication.offload_breakeven`), from ``cal`` (:func:`hetlab.real.measure.calibrate`): the
    measured GPU when there is one (FP32, the CPU's FP64 rate doubled as an FP32 estimate), else the
    A100 preset in FP64; with and without the fixed cost of launching each of the three copies."""
    from hetlab.communication import offload_breakeven
    from hetlab.real import measure

    if not isinstance(cal, dict) or "matmul_gflops" not in cal or "gpu" not in cal:
        raise TypeError(f"cal must be the dict returned by measure.calibrate(), got {cal!r:.80}")
    gpu = cal["gpu"]
    pre = measure.GPU_PRESET
    if gpu.get("available"):
        cpu, tflops, gbps, lat = 2 * cal["matmul_gflops"], gpu["matmul_tflops"], gpu["h2d_gbps"], \
            float(gpu.get("h2d_latency_s", pre["launch_s"]))
        src, prec, bytes_ = f"本机实测的 {gpu['name']}", "FP32（CPU 的 FP32 速度按 FP64 的 2 倍估计）", 4
    else:
        cpu, tflops, gbps, lat = cal["matmul_gflops"], pre["fp64_tflops"], pre["h2d_gbps"], pre["launch_s"]
        src = ("预设值（FP64 9.7 TFLOP/s 出自 NVIDIA A100 数据手册，见参考文献 10；PCIe 4.0 x16 理论约 31.5 GB/s，"
               "拷贝带宽 25 GB/s 与每次拷贝启动 10 µs 是本书的假设值，只为估算量级，"
               "有 GPU 时可用 CUDA 示例程序 bandwidthTest 实测，见参考文献 11）")
        prec, bytes_ = "FP64", 8
    model = dict(cpu_flops=cpu * 1e9, gpu_flops=tflops * 1e12, bandwidth=gbps * 1e9, element_bytes=bytes_)
    n0 = offload_breakeven(**model, latency=0.0)
    n1 = offload_breakeven(**model, latency=lat)
    cpu_time = 2 * n1 ** 3 / (cpu * 1e9)
    return "\n".join([
        f"GPU 数据来源：{src}；精度统一为 {prec}",
        f"CPU {cpu:.1f} GFLOP/s，GPU {tflops:g} TFLOP/s（快 {tflops * 1e3 / cpu:.0f} 倍），拷贝 {gbps:g} GB/s，"
        f"每次拷贝启动 {lat * 1e6:.0f} µs；A、B 拷进去、C 拷回来，共 3 × {bytes_}n² 字节",
        f"只算带宽：n ≥ {n0} 时搬到 GPU 才划算；再算上 3 次拷贝的启动开销：n ≥ {n1}"
        f"（是只算带宽时的 {n1 / max(n0, 1):.1f} 倍；盈亏点上 CPU 自己算一次要 {cpu_time * 1e6:.0f} µs，"
        f"不少于三次启动开销之和 {3 * lat * 1e6:.0f} µs）",
        "更小的矩阵乘留在 CPU 上更快：拷贝的时间比 GPU 省下的计算时间还多"])
