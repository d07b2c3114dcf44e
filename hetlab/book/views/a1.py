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
from hetlab.real.execute import Sleep
from hetlab.real.experiments import SweepReading
from hetlab.real.measure import cpu_count
from hetlab.schedule import Schedule
from hetlab.tasks import TaskGraph, random_dag
from hetlab.widgets import Explorer, int_slider, slider

__all__ = ["pool_rounds", "pool_rounds_figure", "SCALE", "demo_plan", "dag", "pool_size", "dag_workers", "sleep_bodies",
           "plan_gantt", "sweep_figure", "dag_gantt"]

#: Seconds per simulated time unit when chapter 11's demo plan is run for real (A1.2).
SCALE = 0.05


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
            ax.set_xlabel(P.label("任务数 N（对数轴，1–256）", "tasks N (log)"))
            ax.set_ylabel(P.label("总耗时（秒）", "total time (s)"))
            ax.legend(fontsize=8, loc="upper right")
        ax.set_title(P.label(f"W = 0.4 秒，P = {workers}，Os = {overhead_us:g} µs：三种模型",
                             f"W = 0.4 s, P = {workers}, Os = {overhead_us:g} us: three models"),
                     fontsize=9, loc="left")
        art["book"].set_ydata(book)
        art["ideal"].set_ydata(ideal)
        art["rounds"].set_data(counts, rounds)
        art["best"].set_data([best], [rounds[best - 1]])
        art["root"].set_xdata([min(n_star, 256.0)] * 2)
        ax.set_ylim(0, 1.05 * float(min(book.max(), rounds.max(), 0.45)))
        return (f"P = {workers}，Os = {overhead_us:g} µs：按轮执行时 N = {best} 最快（{rounds[best - 1]:.4f} 秒）；"
                f"设备无限时的 √(W/Os) = {n_star:.1f}" + ("（超出横轴，灰色竖线画在 256 处）" if n_star > 256 else
                                                        "（灰色竖线）"))

    return draw, art


def pool_rounds() -> Explorer:
    """T(N) of 0.4 s of work in N equal tasks on P workers: the book's N Os + W/N, the P-device
    form N Os + W/min(N, P), and the rounds form N Os + ceil(N/P) W/N, with every optimum marked."""
    draw, _ = _rounds_draw()
    return Explorer(draw, {"workers": int_slider("工作者数 P", 1, 16, 2),
                           "overhead_us": slider("派发开销 Os（µs）", 10.0, 2000.0, 10.0, 300.0, fmt=".0f")},
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


def dag() -> TaskGraph:
    """A1.4's task graph: 40 tasks, 2-10 work units each (one unit is one millisecond when run), random
    dependencies (mean degree 1.5, seed 1), no data on the edges."""
    return random_dag(40, mean_degree=1.5, work=(2.0, 10.0), data=(0.0, 0.0), seed=1)


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


def _stacked(panels, *, height: float):
    """:func:`hetlab.plotting.gantt_panels` of ``panels`` = [(Schedule in seconds, title)], time in seconds."""
    axes = P.gantt_panels(panels, figsize=(8, height), xlabel=P.label("时间（秒）", "time (s)"))
    for ax in axes:
        ax.title.set_fontsize(9)
    return axes[0].figure


def plan_gantt(plan: Schedule, runs: dict, seconds_per_unit: float = SCALE):
    """A1.2's figure: the simulated plan (in seconds) above the process-pool and thread-pool runs."""
    if not isinstance(plan, Schedule) or not isinstance(runs, dict) or not {"process pool", "thread pool"} <= set(runs):
        raise TypeError("plan must be a Schedule and runs the dict returned by hetlab.real.experiments.plan_runs")
    in_seconds = dataclasses.replace(plan, start=plan.start * seconds_per_unit, end=plan.end * seconds_per_unit)
    return _stacked([(in_seconds, P.label(f"模拟（第 11 章的演示，1 单位 = {seconds_per_unit:g} 秒）", "simulated")),
                     (runs["process pool"], P.label("进程池实测", "process pool (measured)")),
                     (runs["thread pool"], P.label("线程池实测：同一时刻只有一个线程在算，每条都被拉长",
                                                   "thread pool (measured)"))], height=4.8)


def dag_gantt(simulated: Schedule, measured: Schedule):
    """A1.4's figure: the central-queue simulation above the measured pool run, on one time axis (seconds)."""
    if not isinstance(simulated, Schedule) or not isinstance(measured, Schedule):
        raise TypeError("simulated and measured must be Schedules")
    return _stacked([(simulated, P.label("中心就绪队列模拟（不计开销）", "central ready queue (simulated)")),
                     (measured, P.label("进程池实测（任务 = time.sleep）", "process pool (measured)"))],
                    height=1.2 + 0.5 * (len(simulated.devices) + len(measured.devices)))


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
    model = P.label(f"运行前的预测（W = {sweep.total:g} 秒，Os = A1.1 的 {os_ * 1e6:.0f} µs）", "predicted")
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
