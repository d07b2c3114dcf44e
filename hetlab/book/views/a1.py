"""Appendix A1 (real execution): the rounds widget, the appendix's fixed workloads and its figures.

The experiments themselves are in :mod:`hetlab.real.experiments` and return numbers; their sentences are
in :mod:`hetlab.book.readings.a1`. Here: the widget :func:`pool_rounds` (equal tasks on P workers run in
ceil(N / P) rounds) with its static figure, the workloads the appendix and ``tools/record_reference.py``
share (:data:`SCALE`, :func:`demo_plan`, :func:`dag`, :func:`sleep_bodies`, :func:`pool_size`), and the
Gantt charts and the sweep figure of the measured runs.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from hetlab import plotting as P
from hetlab._validate import check_int, check_positive
from hetlab.devices import Device
from hetlab.models import granularity as G
from hetlab.real.execute import Sleep, queued_tasks
from hetlab.real.experiments import SweepReading
from hetlab.real.measure import cpu_count
from hetlab.schedule import Schedule
from hetlab.tasks import TaskGraph, random_dag
from hetlab.widgets import Explorer, int_slider, slider

__all__ = ["pool_rounds", "pool_rounds_figure", "SCALE", "demo_plan", "dag", "CALIBRATION_SEEDS", "calibration_dags",
           "pool_size", "dag_workers", "sleep_bodies", "stored_runs", "stored_dag_run", "plan_gantt", "sweep_figure",
           "dag_gantt"]

#: Seconds per simulated time unit when chapter 11's demo plan is run for real (A1.2).
SCALE = 0.03


def _rounds_draw():
    """The draw function of :func:`pool_rounds` and the artists it keeps (shared with the static figure)."""
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
            art["book"], = ax.plot(counts, book, ":", color="0.5", label=P.label(r"N·$O_s$ + W/N（设备无限）",
                                                                                  r"N $O_s$ + W/N (unlimited)"))
            art["ideal"], = ax.plot(counts, ideal, "--", color="#4C72B0", label=P.label(r"N·$O_s$ + W/min(N,P)",
                                                                                         r"N $O_s$ + W/min(N,P)"))
            art["rounds"], = ax.plot(counts, rounds, "o-", ms=2.5, lw=0.6, color="#C44E52",
                                     label=P.label(r"N·$O_s$ + $\lceil N/P \rceil$·W/N（按轮执行）",
                                                   r"N $O_s$ + $\lceil N/P \rceil$ W/N (rounds)"))
            art["best"], = ax.plot([best], [rounds[best - 1]], "o", color="#C44E52")
            ax.set_xscale("log")
            art["root"] = ax.axvline(1.0, color="0.5", lw=0.8, ls=":", label=r"$\sqrt{W/O_s}$")
            ax.set_xlabel(P.label("任务数 N（对数轴，1–256）", "tasks N (log)"))
            ax.set_ylabel(P.label("总耗时（秒）", "total time (s)"))
            ax.legend(fontsize=8, loc="upper right")
        ax.set_title(P.label(f"W = 0.4 秒，P = {workers}，$O_s$ = {overhead_us:g} µs：三种模型",
                             f"W = 0.4 s, P = {workers}, $O_s$ = {overhead_us:g} us: three models"),
                     fontsize=9, loc="left")
        art["book"].set_ydata(book)
        art["ideal"].set_ydata(ideal)
        art["rounds"].set_data(counts, rounds)
        art["best"].set_data([best], [rounds[best - 1]])
        art["root"].set_xdata([min(n_star, 256.0)] * 2)
        ax.set_ylim(0, 1.05 * float(min(book.max(), rounds.max(), 0.45)))
        return (f"P = {workers}，Oₛ = {overhead_us:g} µs：按轮执行时 N = {best} 最快（{rounds[best - 1]:.4f} 秒）；"
                f"设备无限时的 √(W/Oₛ) = {n_star:.1f}" + ("（超出横轴，灰色竖线画在 256 处）" if n_star > 256 else
                                                        "（灰色竖线）"))

    return draw, art


def pool_rounds() -> Explorer:
    """T(N) of 0.4 s of work in N equal tasks on P workers: the book's N Os + W/N, the P-device
    form N Os + W/min(N, P), and the rounds form N Os + ceil(N/P) W/N, with every optimum marked."""
    draw, _ = _rounds_draw()
    return Explorer(draw, {"workers": int_slider("工作进程数 P", 1, 16, 2),
                           "overhead_us": slider("派发开销 Oₛ（µs）", 10.0, 2000.0, 10.0, 300.0, fmt=".0f")},
                    figsize=(7, 3.2), clear=False)


def pool_rounds_figure():
    """The widget's default picture (P = 2, Os = 300 us) as a static figure, drawn by the widget's own draw
    function, for reading the appendix without a kernel."""
    draw, _ = _rounds_draw()
    ax = P.new_axes(figsize=(7, 3.2))
    draw(ax, 2, 300.0)
    return ax.figure


#: (chapter, factory) for each widget of this module (the appendix is chapter 14 in the question bank).
VIEWS = [(14, pool_rounds)]


def demo_plan() -> tuple[Schedule, Schedule]:
    """Chapter 11's demo plan (8 dishes on CPU, GPU and NPU, the article's heap-based earliest-free rule)
    and the same dishes all on the CPU, one after another (the demo's serial baseline)."""
    from hetlab import schedulers as S
    from hetlab.book import demo
    from hetlab.devices import kitchen

    report = demo.compare_policies()
    return report.schedules["article demo"], S.serial(demo.article_tasks(), kitchen(), device="CPU")


def dag(seed: int = 1) -> TaskGraph:
    """A1.4's task graph: 40 tasks, 2-10 work units each (one unit is one millisecond when run), random
    dependencies (mean degree 1.5, ``seed`` 1), no data on the edges. Other seeds give its siblings
    (:func:`calibration_dags`)."""
    return random_dag(40, mean_degree=1.5, work=(2.0, 10.0), data=(0.0, 0.0), seed=check_int("seed", seed, low=0))


#: Seeds of the graphs A1.1 calibrates the hand-overs on: A1.4's generator, never A1.4's own seed.
CALIBRATION_SEEDS = (2, 3, 4, 5, 6)


def calibration_dags() -> list[TaskGraph]:
    """The five siblings of :func:`dag` (same generator, seeds :data:`CALIBRATION_SEEDS`) that A1.1 runs to
    calibrate A1.4's hand-overs (:func:`hetlab.real.measure.handovers`): the same task lengths and shape, so
    the hand-overs are paid under A1.4's conditions, but not A1.4's graph, let alone its run.

    >>> [len(g.tasks) for g in calibration_dags()], dag(2).tasks == calibration_dags()[0].tasks
    ([40, 40, 40, 40, 40], True)
    """
    return [dag(s) for s in CALIBRATION_SEEDS]


def pool_size() -> int:
    """Workers of the appendix's waiting pools: one per usable CPU, at least two (a wait needs no core)."""
    return max(2, cpu_count())


def dag_workers(count: int) -> list[Device]:
    """``count`` identical simulated workers ``worker0``, ``worker1``, ... (the names a pool run records) of speed
    1000 work units per second, so that one work unit of :func:`dag` is one millisecond."""
    return [Device(f"worker{k}", "CPU", 1000.0) for k in range(check_int("count", count, low=1, high=256))]


def sleep_bodies(graph: TaskGraph, seconds_per_unit: float = 1e-3) -> dict:
    """Task name -> :class:`hetlab.real.execute.Sleep` of the task's work times ``seconds_per_unit``."""
    if not isinstance(graph, TaskGraph):
        raise TypeError(f"graph must be a TaskGraph, got {type(graph).__name__}")
    return {t.name: Sleep(t.work * seconds_per_unit) for t in graph.tasks}


#: One colour per lane (row) of a Gantt chart: the colour says which worker ran the task.
LANE_COLOURS = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3", "#8C8C8C")


def _stacked(panels, *, height: float, lanes: list[str] | None = None, by_task: bool = False, hatched=None):
    """:func:`hetlab.plotting.gantt_panels` of ``panels`` = [(Schedule in seconds, title)], time in seconds,
    each bar coloured by its lane (no legend: the lane is named on the axis), or with ``by_task`` by its task,
    so that one task has one colour in every panel even where the pool ran it on another worker, and its
    number written in its bar (40 colours cannot all be told apart by eye; with ``hatched``, only the hatched
    tasks' numbers); ``lanes`` renames the rows;
    ``hatched``: one bool per task for each panel, the tasks whose bars are hatched."""
    import matplotlib

    # tab20 then tab20b: 40 different colours, one per task of A1.4's graph
    palette = [*matplotlib.colormaps["tab20"].colors, *matplotlib.colormaps["tab20b"].colors]
    colours = [[palette[i % len(palette)] if by_task else LANE_COLOURS[d % len(LANE_COLOURS)]
                for i, d in enumerate(s.device_of)] for s, _ in panels]
    axes = P.gantt_panels(panels, figsize=(8, height), xlabel=P.label("时间（秒）", "time (s)"), legend=False,
                          show_names=not by_task)
    for k, (ax, (s, _), colour) in enumerate(zip(axes, panels, colours)):
        ax.collections[0].set_facecolors(colour)
        if hatched is not None:        # hatching drawn over the coloured bars (A1.4: the released tasks)
            for i in np.flatnonzero(hatched[k]):
                y = len(s.devices) - 1 - s.device_of[i]
                ax.fill_between([s.start[i], s.end[i]], y - 0.35, y + 0.35, facecolor="none", edgecolor="black",
                                hatch="////", lw=0.8, zorder=2.5)
        ax.title.set_fontsize(9)
        if by_task:          # the task's number, so the panels can be matched bar by bar
            rows = len(s.devices)
            # review A1-16 #6: 40 numbers in 6-pt type could not be read; with hatching only the released
            # tasks (the few that matter) are numbered, in a type that can be read at page width
            shown = range(len(s.start)) if hatched is None else np.flatnonzero(hatched[k])
            for i in shown:
                ax.text((s.start[i] + s.end[i]) / 2, rows - 1 - s.device_of[i], str(i), ha="center", va="center",
                        fontsize=8, color="black", clip_on=True, zorder=3,
                        bbox={"boxstyle": "round,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.85})
        if lanes is not None:
            ax.set_yticks(range(len(s.devices)), list(reversed(lanes[:len(s.devices)])))
    return axes[0].figure


def _parallelism(run: Schedule) -> float:
    return float(np.sum(run.info["cpu_seconds"])) / float(run.end.max() - run.start.min())


def stored_runs(plan: Schedule, stored: dict) -> dict[str, Schedule]:
    """A stored reading's plan runs (``Reference.plan_runs``: kind -> its tasks' ``start``, ``end`` and
    ``cpu_seconds``, as ``tools/record_reference.py`` records them) as Schedules of ``plan``'s graph and devices,
    the form :func:`plan_gantt` draws."""
    if not isinstance(plan, Schedule) or not isinstance(stored, dict):
        raise TypeError("plan must be a Schedule and stored a Reference's plan_runs dict")
    return {kind: dataclasses.replace(plan, start=np.asarray(r["start"], dtype=float),
                                      end=np.asarray(r["end"], dtype=float), policy=kind,
                                      info={"cpu_seconds": list(r["cpu_seconds"])})
            for kind, r in stored.items()}


def stored_dag_run(stored: dict) -> Schedule:
    """A stored reading's first A1.4 run (``Reference.dag`` with the ``start``, ``end`` and ``device_of`` that
    ``tools/record_reference.py`` records) as a Schedule of :func:`dag` on its workers, the form
    :func:`dag_gantt` draws as its reference panel."""
    if not isinstance(stored, dict) or not {"start", "end", "device_of", "workers"} <= set(stored):
        raise TypeError("stored must be a Reference's dag dict recorded with its run (start, end, device_of)")
    return Schedule(dag(), dag_workers(stored["workers"]), np.asarray(stored["device_of"], dtype=int),
                    np.asarray(stored["start"], dtype=float), np.asarray(stored["end"], dtype=float),
                    "process pool")


def plan_gantt(plan: Schedule, runs: dict, seconds_per_unit: float = SCALE, reference: dict | None = None,
               stored: dict | None = None, bound: float | None = None):
    """A1.2's figure: the simulated plan (in seconds) above the process-pool and thread-pool runs, each run's
    panel titled with its measured effective parallelism and, given ``reference`` (a stored reading's
    ``plan``: kind -> :class:`hetlab.real.experiments.Run`), the stored machine's. ``stored``: the stored
    machine's own process-pool and thread-pool runs (:func:`stored_runs`), drawn as two more panels below.
    ``bound`` (seconds, :func:`hetlab.book.readings.a1.plan_prediction` on this machine's CPUs): the process
    pool's lower bound, a red dashed line in this machine's process-pool panel (a stored machine may have had
    another number of CPUs, so its panels get none)."""
    if not isinstance(plan, Schedule) or not isinstance(runs, dict) or not {"process pool", "thread pool"} <= set(runs):
        raise TypeError("plan must be a Schedule and runs the dict returned by hetlab.real.experiments.plan_runs")
    in_seconds = dataclasses.replace(plan, start=plan.start * seconds_per_unit, end=plan.end * seconds_per_unit)

    def title(kind: str, chinese: str) -> str:
        par = _parallelism(runs[kind])
        ref = reference[kind].parallelism if reference and kind in reference else None
        return P.label(f"{chinese}实测：有效并行度 {par:.2f}" + (f"；参照 {ref:.2f}" if ref is not None else ""),
                       f"{kind} (measured): parallelism {par:.2f}" + (f"; stored {ref:.2f}" if ref is not None else ""))

    panels = [(in_seconds, P.label(f"模拟（第 11 章的演示，1 单位 = {seconds_per_unit:g} 秒）", "simulated")),
              (runs["process pool"], title("process pool", "本机 · 进程池")),
              (runs["thread pool"], title("thread pool", "本机 · 线程池"))]
    for kind, chinese in (("process pool", "进程池"), ("thread pool", "线程池")):
        if stored and kind in stored:
            run = stored[kind]
            panels.append((run, P.label(f"空闲参照 · {chinese}：有效并行度 {_parallelism(run):.2f}",
                                        f"stored idle run, {kind}: parallelism {_parallelism(run):.2f}")))
    bound = None if bound is None else check_positive("bound", bound, high=3600.0)
    fig = _stacked(panels, height=1.6 * len(panels),
                   # every lane runs on a CPU process or thread: it only plays the planned device
                   lanes=[P.label(f"扮演 {d.name}", f"as {d.name}") for d in plan.devices])
    if bound is not None:       # review A1-16 #6: the bound the output and the caption discuss, drawn
        ax = fig.axes[1]        # this machine's process pool
        ax.axvline(bound, color="#C44E52", ls="--", lw=1.2, zorder=4, label=P.label("下界", "lower bound"))
        ax.legend(fontsize=8, loc="lower right")
    return fig


def dag_gantt(predicted: Schedule, measured: Schedule, reference: Schedule | None = None,
              interval: tuple[float, float, float] | None = None, tested: bool = True):
    """A1.4's figure: the predicted run (the central-queue simulation with each task's dispatch,
    :func:`hetlab.book.readings.a1.dispatch_schedule`) above the measured pool run and, where given, a stored
    machine's measured run of the same graph (``reference``), on one time axis (seconds), one row per worker
    process, each task in one colour in every panel (the pool may run it on another worker), the released tasks
    hatched (in the prediction as it classed them, ``info["queued"]``; in a run as
    :func:`hetlab.real.execute.queued_tasks` classes them). ``interval`` = (the simulation's makespan without
    dispatch, the interval's low and high ends as makespans), seconds: a grey dotted line at the first and a
    shaded band between the other two in this machine's panels, so the verdict (the run's end inside the band or
    not) can be seen; ``tested`` False labels the band as a reference band with untested coverage
    (:class:`hetlab.book.readings.a1.Prediction`'s ``tested``). The time axis reaches past the band's high end."""
    if not isinstance(predicted, Schedule) or not isinstance(measured, Schedule) or "queued" not in predicted.info:
        raise TypeError("predicted must be the Schedule of readings.a1.dispatch_schedule and measured a Schedule")
    if reference is not None and not isinstance(reference, Schedule):
        raise TypeError(f"reference must be a Schedule or None, got {type(reference).__name__}")
    panels = [(predicted, P.label("运行前的预测：中央队列模拟，计入派发（斜线：被释放的任务）",
                                  "predicted: central queue with dispatch (hatched: released)")),
              (measured, P.label("本机进程池实测（任务 = 定时等待；斜线：被释放的任务）",
                                 "process pool here (measured; hatched: released)"))]
    released = [~np.asarray(predicted.info["queued"], dtype=bool), ~queued_tasks(measured)]
    if reference is not None:
        panels.append((reference, P.label("参照：空闲的构建机上的实测", "stored reading: idle build VM")))
        released.append(~queued_tasks(reference))
    rows = max(len(s.devices) for s, _ in panels)
    lanes = [P.label(f"工作进程 {k}", f"worker {k}") for k in range(rows)]
    fig = _stacked(panels, height=1.2 + 0.5 * sum(len(s.devices) for s, _ in panels), lanes=lanes,
                   by_task=True, hatched=released)
    if interval is not None:
        if not isinstance(tested, bool):
            raise TypeError(f"tested must be True or False, got {type(tested).__name__} {tested!r}")
        bare, low, high = (check_positive("interval", x, high=3600.0) for x in interval)
        if not bare <= high or low > high:
            raise ValueError(f"interval must be (no-dispatch makespan, low end, high end), got {interval!r}")
        from matplotlib.lines import Line2D

        for k, ax in enumerate(fig.axes):
            ax.axvline(bare, color="0.4", ls=":", lw=1.2, zorder=4,
                       label=P.label("不计派发的模拟", "simulation without dispatch") if k == 0 else None)
            if k < 2:           # this machine's interval: not the stored run's, which had a calibration of its own
                name = (P.label("本机的预测区间", "prediction interval here") if tested else
                        P.label("本机的参考区间（覆盖率没有检验过）", "reference band here (coverage untested)"))
                ax.axvspan(low, high, color="#C44E52", alpha=0.18, lw=0, zorder=0.5, label=name if k == 0 else None)
            ax.set_xlim(right=max(ax.get_xlim()[1], high * 1.01))
        # below the time axis, where no bar is: the bars fill every panel from 0 to the makespan
        handles, labels = fig.axes[0].get_legend_handles_labels()
        handles.append(Line2D([], [], color="black", ls="--", lw=0.8))
        labels.append(P.label("完工时刻", "makespan"))
        fig.legend(handles, labels, loc="outside lower center", ncol=3, fontsize=8, frameon=False)
    return fig


def sweep_figure(sweep: SweepReading, os_: float, reference: SweepReading | None = None):
    """A1.3's figure: the measured times, the rounds model predicted from the work put in and ``os_``
    (A1.1's process-pool O_s, seconds), and a stored reading's times when given. The model is drawn at
    every N up to max(16, 4P) and beyond only at multiples of P (the sawtooth's lower edge)."""
    if not isinstance(sweep, SweepReading):
        raise TypeError(f"sweep must be a SweepReading, got {type(sweep).__name__}")
    os_ = check_positive("os_", os_, high=1.0)
    p, top = sweep.workers, max(sweep.counts)
    cut = -(-max(16, 4 * p) // p) * p          # the first multiple of P from max(16, 4P): the two parts meet
    ax = P.new_axes(figsize=(7, 3.2))
    model = P.label(f"运行前的预测（W = {sweep.total:g} 秒，$O_s$ = A1.1 的 {os_ * 1e6:.0f} µs）", "predicted")
    for xs, text in ((list(range(1, min(cut, top) + 1)), model), (list(range(cut, top + 1, p)), None)):
        if xs:
            ax.plot(xs, G.total_time_on(xs, sweep.total, os_, p, model="rounds"), "--", lw=0.8, color="#4C72B0",
                    label=text)
    ax.plot(sweep.counts, sweep.seconds, "o", color="black", ms=4, zorder=3,
            label=P.label(f"本机实测（P = {p}，三轮中最快的一次）", "measured here"))
    if reference is not None:
        ax.plot(reference.counts, reference.seconds, "s", mfc="none", color="#C44E52", ms=5,
                label=P.label(f"参照读数（P = {reference.workers}）", "stored reading"))
    ax.set_xscale("log")
    ax.set_xlabel(P.label("任务数 N（对数轴）", "tasks N (log)"))
    ax.set_ylabel(P.label("墙钟时间（秒）", "wall time (s)"))
    ax.set_title(P.label(f"进程池上的粒度扫描：W = {sweep.total:g} 秒的等待分成 N 份",
                         "granularity sweep on a process pool"), fontsize=9)
    ax.legend(fontsize=8)
    return ax.figure
