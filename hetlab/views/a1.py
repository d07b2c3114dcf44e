"""Appendix A1 (real execution): equal tasks on a pool of P workers run in ceil(N / P) rounds."""
from __future__ import annotations

import math

import numpy as np

from .. import granularity as G
from .. import plotting as P
from ..widgets import Explorer, int_slider, slider

__all__ = ["pool_rounds", "gantt_panels", "machine_note", "demo_for_real", "sweep_report", "attribution_text",
           "dask_report"]


def pool_rounds() -> Explorer:
    """T(N) of 0.4 s of work in N equal tasks on P workers: the book's N Os + W/N, the P-device
    form N Os + W/min(N, P), and the rounds form N Os + ceil(N/P) W/N, with every optimum marked."""
    W = 0.4
    counts = np.arange(1, 65)
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
            art["rounds"], = ax.step(counts, rounds, where="mid", color="#C44E52",
                                     label=P.label(r"N·Os + $\lceil N/P \rceil$·W/N（按轮执行）",
                                                   r"N Os + $\lceil N/P \rceil$ W/N (rounds)"))
            art["best"], = ax.plot([best], [rounds[best - 1]], "o", color="#C44E52")
            ax.set_xlabel(P.label("任务数 N", "tasks N"))
            ax.set_ylabel(P.label("总耗时（秒）", "total time (s)"))
            ax.legend(fontsize=8, loc="upper right")
        art["book"].set_ydata(book)
        art["ideal"].set_ydata(ideal)
        art["rounds"].set_data(counts, rounds)
        art["best"].set_data([best], [rounds[best - 1]])
        ax.set_ylim(0, 1.05 * float(min(book.max(), rounds.max(), 0.45)))
        return (f"P = {workers}，Os = {overhead_us:g} µs：按轮执行时 N = {best} 最快（{rounds[best - 1]:.4f} 秒）；"
                f"设备无限时的 √(W/Os) = {n_star:.1f}")

    return Explorer(draw, {"workers": int_slider("工作者数 P", 1, 16, 2),
                           "overhead_us": slider("派发开销 Os（µs）", 10.0, 2000.0, 10.0, 300.0, fmt=".0f")},
                    figsize=(7, 3.2), clear=False)


#: (chapter, factory) for each widget of this module (the appendix is chapter 14 in the question bank).
VIEWS = [(14, pool_rounds)]


def gantt_panels(panels, *, mark: float | None = None, names: int = 5, figsize=(8.0, 4.0)):
    """Stacked Gantt charts on one time axis (seconds), every task in its own colour in every panel so
    that the same task can be followed from plan to measurement; the ``names`` longest tasks of each
    panel are labelled; ``mark`` draws a dashed line (e.g. the simulated makespan) on every panel
    after the first. ``panels`` is a list of (Schedule, title). Returns the figure."""
    import matplotlib.pyplot as plt

    from .._validate import check_int, check_nonnegative
    from ..schedule import Schedule

    if not isinstance(panels, (list, tuple)) or not panels:
        raise ValueError(f"panels must be a non-empty list of (Schedule, title), got {panels!r:.80}")
    for k, item in enumerate(panels):
        if not (isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], Schedule)
                and isinstance(item[1], str)):
            raise TypeError(f"panels[{k}] must be a (Schedule, title) pair, got {item!r:.80}")
    names = check_int("names", names, low=0, high=100)
    if mark is not None:
        mark = check_nonnegative("mark", mark)
    fig, axes = plt.subplots(len(panels), 1, sharex=True, figsize=figsize, squeeze=False)
    cmap = plt.get_cmap("tab20")
    span = max(max(s.makespan for s, _ in panels), mark or 0.0)
    for row, (ax, (s, title)) in enumerate(zip(axes[:, 0], panels)):
        rows = len(s.devices)
        for i in range(len(s.graph.tasks)):
            y = rows - 1 - int(s.device_of[i])
            ax.barh(y, s.end[i] - s.start[i], left=s.start[i], height=0.7, color=cmap(i % 20),
                    edgecolor="white", linewidth=0.6)
        longest = np.argsort(-(s.end - s.start), kind="stable")[:names]
        for i in longest:
            width = s.end[i] - s.start[i]
            if width > 0.03 * span:
                ax.text(s.start[i] + width / 2, rows - 1 - int(s.device_of[i]), s.graph.tasks[i].name,
                        ha="center", va="center", fontsize=7, color="black", clip_on=True)
        ax.axvline(s.makespan, color="black", lw=0.8)
        if mark is not None and row > 0:
            ax.axvline(mark, color="#C44E52", lw=1.0, ls="--")
            ax.text(mark, rows - 0.45, P.label(" 模拟完成时间", " simulated makespan"), color="#C44E52",
                    fontsize=7, va="bottom", ha="left")
        ax.set_yticks(range(rows), [d.name for d in reversed(s.devices)])
        ax.set_ylim(-0.6, rows - 0.1)
        ax.set_title(title, fontsize=9, loc="left")
    axes[-1, 0].set_xlim(0, span * 1.03)
    axes[-1, 0].set_xlabel(P.label("时间（秒）", "time (s)"))
    fig.tight_layout()
    return fig


def machine_note(load: float | None = None) -> str:
    """One Chinese sentence on how busy this machine was (runnable processes per CPU, last minute), to
    print beside a timing that is compared with a model."""
    from .. import measure
    from .._validate import check_nonnegative

    load = measure.load_per_cpu() if load is None else check_nonnegative("load", load)
    if load is None:
        return "本系统不报告负载，无法判断测量时机器是否空闲。"
    if load > 0.75:
        return (f"⚠ 机器较忙：过去一分钟平均每个 CPU 有 {load:.2f} 个可运行进程（空闲时接近 0），"
                "实测会被别的进程拉长，与模拟的差距不能全算在模型头上。")
    return f"机器基本空闲：过去一分钟平均每个 CPU 有 {load:.2f} 个可运行进程。"


def _band(err: float, band: float) -> str:
    return f"（在 ±{band:.0%} 之内）" if abs(err) <= band else f"（超出 ±{band:.0%}）"


def demo_for_real(scale: float = 0.1, band: float = 0.15):
    """Run chapter 11's demo plan for real (serial, process pool, thread pool), each task a pure-Python
    loop lasting work / speed * ``scale`` seconds; return (Chinese report, figure of plan and both runs)."""
    import dataclasses

    from .. import demo, measure
    from .. import plotting as PL
    from .. import schedulers as S
    from .._validate import check_positive
    from ..devices import kitchen
    from ..execute import run_plan

    scale = check_positive("scale", scale, high=0.5)
    band = check_positive("band", band, high=1.0)
    note = machine_note()
    report = demo.compare_policies()
    plan = report.schedules["article demo"]
    serial_plan = S.serial(demo.article_tasks(), kitchen(), device="CPU")
    rate = measure.loop_rate()
    runs = {kind: run_plan(p, scale, executor=ex, steps_per_second=rate).schedule
            for kind, p, ex in [("串行", serial_plan, "thread"), ("进程池", plan, "process"),
                                ("线程池", plan, "thread")]}
    cores = measure.cpu_count()
    busy = float(plan.busy.sum()) * scale
    expect = {"串行": report.serial * scale, "进程池": max(plan.makespan * scale, busy / min(cores, 3)), "线程池": busy}
    lines = [f"循环速度 {rate / 1e6:.1f} 百万步/秒；{cores} 个可用 CPU；1 时间单位 = {scale:g} 秒"]
    for kind, s in runs.items():
        err = s.makespan / expect[kind] - 1
        lines.append(f"{kind}：实测 {s.makespan:.3f} 秒，预测 {expect[kind]:.3f} 秒，偏差 {err:+.1%}{_band(err, band)}"
                     + (f"，有效并行度 {busy / s.makespan:.2f}" if kind != "串行" else ""))
    t_serial = runs["串行"].makespan
    lines.append(f"实测加速比：进程池 {t_serial / runs['进程池'].makespan:.2f}x，线程池 "
                 f"{t_serial / runs['线程池'].makespan:.2f}x；演示的模拟 {report.speedup:.2f}x，"
                 f"{cores} 核上的预测 {expect['串行'] / expect['进程池']:.2f}x")
    lines.append(note)
    in_seconds = dataclasses.replace(plan, start=plan.start * scale, end=plan.end * scale)
    fig = gantt_panels([(in_seconds, PL.label(f"模拟（第 11 章的演示，1 单位 = {scale:g} 秒）", "simulated demo")),
                        (runs["进程池"], PL.label("进程池实测", "process pool (measured)")),
                        (runs["线程池"], PL.label("线程池实测", "thread pool (measured)"))],
                       mark=plan.makespan * scale, names=8, figsize=(8, 4.6))
    return "\n".join(lines), fig


def sweep_report(process_os: float, round_trip: float, total: float = 0.2,
                 counts=(1, 2, 3, 4, 8, 16, 64, 256), repeat: int = 3, band: float = 0.10) -> dict:
    """A measured granularity sweep on a process pool, fitted by relative least squares, with its
    reading against ``process_os`` / ``round_trip`` (A1.1's pipelined and round-trip Os). Returns a
    dict with ``text`` (Chinese report), ``wall``, ``os``, ``w``, ``P`` and ``counts``."""
    import math

    from .. import measure
    from .._validate import check_positive

    process_os = check_positive("process_os", process_os)
    round_trip = check_positive("round_trip", round_trip)
    band = check_positive("band", band, high=1.0)
    note = machine_note()
    counts = list(counts)
    wall = measure.granularity_sweep(total_seconds=total, task_counts=counts, repeat=repeat)
    P = measure.cpu_count()
    os_fit, w_fit = measure.fit_overhead(counts, list(wall.values()), workers=P, relative=True)
    lines = []
    for n, t in wall.items():
        m = G.total_time_on(n, w_fit, os_fit, P, model="rounds")
        lines.append(f"N = {n:>3}：实测 {t:.3f} 秒，模型 {m:.3f} 秒（{m / t - 1:+.0%}）")
    dev = w_fit / total - 1
    lines.append(f"拟合（P = {P}，相对误差）：Os = {os_fit * 1e6:.0f} µs/任务，W = {w_fit:.3f} 秒，与放进去的 "
                 f"{total:g} 秒相差 {dev:+.1%}" + (f"，在 ±{band:.0%} 之内" if abs(dev) <= band
                                                 else f"，超出 ±{band:.0%}：见下文核对的第 1 条"))
    lines.append(f"拟合的 Os 是 A1.1 流水线吞吐的 {os_fit / process_os:.1f} 倍、"
                 f"单次往返的 {os_fit / round_trip:.1f} 倍")
    fastest = min(wall, key=wall.get)
    safe = max(os_fit, 1e-9)
    lines.append(f"实测最快的 N = {fastest}（{'是' if fastest % P == 0 else '不是'} P 的倍数）；模型的最优 N = "
                 f"{G.optimal_task_count(w_fit, safe, P=P)}；√(W/Os) = {math.sqrt(w_fit / safe):.1f}")
    lines.append(f"模型里 N = 8 比 N = 2 多付的派发开销 6·Os = {6 * os_fit * 1e3:.2f} 毫秒")
    if P == 2 and {2, 3, 4} <= set(wall):
        saw = wall[3] > max(wall[2], wall[4])
        lines.append(f"锯齿：N = 3（{wall[3]:.3f} 秒）{'比' if saw else '并不比'} N = 2 和 N = 4 都慢")
    lines.append(note)
    return {"text": "\n".join(lines), "wall": wall, "os": os_fit, "w": w_fit, "P": P, "counts": counts}


def attribution_text(simulated, measured, process_os: float, round_trip: float, band: float = 0.15) -> str:
    """Chinese reading of a measured process-pool run of appendix A1's DAG against its simulation:
    error and band, median stretch, idle gaps, the reconstructed estimate and the implied per-task overhead."""
    from .._validate import check_positive
    from ..execute import attribute, makespan_error

    process_os = check_positive("process_os", process_os)
    round_trip = check_positive("round_trip", round_trip)
    band = check_positive("band", band, high=1.0)
    why = attribute(simulated, measured)
    err = makespan_error(simulated, measured)
    n = why.tasks
    estimate = why.stretched_plan + why.gaps / why.workers
    return "\n".join([
        f"进程池实测 {why.measured * 1e3:.1f} 毫秒，模拟 {why.planned * 1e3:.1f} 毫秒，"
        f"模拟误差 {err:+.1%}{_band(err, band)}",
        f"归因：拉长倍数（中位数）{why.median_stretch:.2f}；任务间空隙合计 {why.gaps * 1e3:.1f} 毫秒，"
        f"分摊到 {why.workers} 个工作者上约 {why.gaps / why.workers * 1e3:.1f} 毫秒",
        f"模拟 × 拉长倍数 + 空隙 / 工作者数 = {estimate * 1e3:.1f} 毫秒，与实测相差 {estimate / why.measured - 1:+.1%}",
        f"对照：{n} 个任务 × A1.1 的进程池 Os（流水线）= {n * process_os * 1e3:.1f} 毫秒，× 单次往返 = "
        f"{n * round_trip * 1e3:.1f} 毫秒；能解释全部差距的每任务开销 {why.implied_overhead * 1e3:.2f} 毫秒",
        machine_note()])


def dask_report(dag, bodies, workers, process_run) -> str:
    """Run appendix A1's DAG on a local Dask cluster and read it against random work stealing, before and
    after adding the measured per-task gap to every task; ``process_run`` is the process-pool RealRun."""
    import dataclasses

    from .. import schedulers as S
    from ..execute import attribute, makespan_error, run_graph
    from ..tasks import TaskGraph

    note = machine_note()
    try:
        on_dask = run_graph(dag, bodies, executor="dask", workers=len(workers))
    except ImportError as exc:
        return f"跳过 Dask（未安装）：{exc}"
    stolen = S.work_stealing(dag, workers, steal_latency=0.0005, seed=0)
    why = attribute(stolen, on_dask.schedule)
    per_task = why.gaps / why.tasks
    speed = workers[0].speed
    padded = TaskGraph([dataclasses.replace(t, work=t.work + per_task * speed) for t in dag.tasks], dag.edges)
    with_overhead = S.work_stealing(padded, workers, steal_latency=0.0005, seed=0)
    e0, e1 = makespan_error(stolen, on_dask.schedule), makespan_error(with_overhead, on_dask.schedule)
    moved = on_dask.schedule.info.get("stolen")
    proc = attribute(stolen, process_run.schedule)
    return "\n".join([
        f"Dask 实测：{on_dask.schedule.makespan * 1e3:.1f} 毫秒（{len(on_dask.schedule.devices)} 个 worker 执行了任务；"
        f"调度器发起窃取 {moved if moved is not None else '（未知）'} 次）",
        f"随机窃取模拟（不计开销）：{stolen.makespan * 1e3:.1f} 毫秒，误差 {e0:+.1%}",
        f"归因：拉长倍数 {why.median_stretch:.2f}；任务间空隙合计 {why.gaps * 1e3:.1f} 毫秒，平均每任务 "
        f"{per_task * 1e3:.2f} 毫秒；能解释全部差距的每任务开销 {why.implied_overhead * 1e3:.2f} 毫秒",
        f"每任务加上实测空隙 {per_task * 1e3:.2f} 毫秒后再模拟：{with_overhead.makespan * 1e3:.1f} 毫秒，误差 {e1:+.1%}"
        f"（误差的绝对值{'缩小' if abs(e1) < abs(e0) else '没有缩小'}：{abs(e0):.0%} → {abs(e1):.0%}）",
        f"对照：同一张图在进程池上实测 {process_run.schedule.makespan * 1e3:.1f} 毫秒，任务间空隙合计 "
        f"{proc.gaps * 1e3:.1f} 毫秒",
        note])
