"""Appendix A1 (real execution): readings of the measured cells, each next to a stored reference reading.

Every reading states the prediction first, made before the run from calibration alone (A1.1's figures, the
plan, the known work), then the measurement, then a verdict that follows from the printed numbers (A1.4's
dispatch term is only described: each class of task's median gap against its own predicted cost), and
last the same experiment on a named machine (:mod:`hetlab.book.reference`). The verdicts use no threshold
that the printed numbers do not show, so a reader can check each one by eye.
"""
from __future__ import annotations

import heapq

import numpy as np

from hetlab._validate import check_instance, check_int, check_nonnegative, check_positive, check_sequence
from hetlab.book.readings.a1_calibration import Costs, _us, calibration_lines, handover_costs, trip_band
from hetlab.book.readings.ch12 import TOLERANCE, process_verdict, thread_verdict
from hetlab.book.reference import Reference
from hetlab.models import granularity as G
from hetlab.real.execute import task_gaps
from hetlab.real.experiments import Run, SweepReading, queued_tasks
from hetlab.schedule import Schedule

__all__ = ["BAND", "Costs", "handover_costs", "trip_band", "calibration_lines", "plan_prediction", "plan_lines",
           "sweep_prediction", "sweep_lines", "dispatch_schedule", "dispatch_simulation", "dag_prediction",
           "extra_band", "split_lines", "dispatch_lines", "dag_lines", "STALL"]

#: A measured makespan within this relative band of its prediction counts as "as predicted".
BAND = 0.15


def _refs(reference) -> list[Reference]:
    """``reference``: None, one :class:`~hetlab.book.reference.Reference`, or a tuple or list of them."""
    items = reference if isinstance(reference, (tuple, list)) else [reference]
    return [check_instance("reference", r, Reference) for r in items if r is not None]


def plan_prediction(plan: Schedule, seconds_per_unit: float, cpus: int) -> tuple[int, float]:
    """(cores the process pool can use, lower bound on its makespan in seconds) for chapter 11's plan run on
    ``cpus`` CPUs: min(cpus, devices) and max(planned makespan, total busy time / that many cores)."""
    check_instance("plan", plan, Schedule)
    scale = check_positive("seconds_per_unit", seconds_per_unit)
    cpus = check_int("cpus", cpus, low=1, high=4096)
    cores = min(cpus, len(plan.devices))
    return cores, max(plan.makespan * scale, float(plan.busy.sum()) * scale / cores)


def _share_line(threads: Run, serial: Run, walls: tuple[float, float]) -> list[str]:
    """When the thread pool beats the serial run in wall clock (``walls``: the two makespans, as printed)
    without computing on more than one core, the line that says why (wall = CPU seconds / parallelism): a
    larger CPU share, or fewer CPU seconds. A difference within ``TOLERANCE`` of the serial makespan is noise,
    not a finding: no line."""
    if walls[0] >= walls[1] * (1 - TOLERANCE) or threads.parallelism > 1 + TOLERANCE:
        return []
    reason = ("线程池分到的 CPU 份额更大" if threads.parallelism > serial.parallelism
              else "这次线程池的循环用的 CPU 秒更少")
    return [f"线程池的墙钟比单线程依次执行短 {1 - walls[0] / walls[1]:.0%}（{walls[0]:.3f} 对 {walls[1]:.3f} 秒），"
            f"但不是并行：{reason}"
            f"（有效并行度 {threads.parallelism:.2f} 对 {serial.parallelism:.2f}，"
            f"CPU 秒 {threads.cpu:.3f} 对 {serial.cpu:.3f}）"]


def _range(low: float, high: float) -> str:
    """Two relative differences as one number when they print alike (review A1-14: no "+3% 到 +3%").

    >>> _range(0.031, 0.034), _range(0.0, 0.04)
    ('+3%', '+0% 到 +4%')
    """
    a, b = f"{low:+.0%}", f"{high:+.0%}"
    return a if a == b else f"{a} 到 {b}"


def _drift_line(r: dict, planned: float, bound: float) -> str:
    """The loops' CPU seconds in each run against the ``planned`` CPU seconds (sized from the calibrated loop
    rate): the ``bound`` assumes the calibrated speed, so it is also printed recomputed at the process pool's
    own loop speed (every task's length scales with it, so both terms of the bound do; review A1-13).

    >>> from hetlab.real.experiments import Run
    >>> runs = {"sequential": Run(0.25, 0.24), "thread pool": Run(0.25, 0.24), "process pool": Run(0.13, 0.22)}
    >>> _drift_line(runs, 0.2, 0.1).split("（")[1]        # 0.1 s x 0.22 / 0.2
    '下界按标定的速度算；按进程池循环实际用的 CPU 秒换算是 0.110 秒）'
    """
    cpu = [r[k].cpu for k in ("sequential", "thread pool", "process pool")]
    return (f"循环实际用的 CPU 秒：单线程依次执行 {cpu[0]:.3f}，线程池 {cpu[1]:.3f}，进程池 {cpu[2]:.3f}；"
            f"按标定应为 {planned:.3f}，相差 {_range(min(cpu) / planned - 1, max(cpu) / planned - 1)}"
            f"（下界按标定的速度算；按进程池循环实际用的 CPU 秒换算是 {bound * cpu[2] / planned:.3f} 秒）")


def plan_lines(runs: dict, plan: Schedule, seconds_per_unit: float, cpus: int, reference=None) -> str:
    """A1.2: the prediction (threads at most one core; processes at most min(cpus, devices) cores, makespan
    at least :func:`plan_prediction`'s bound), the three runs of :func:`hetlab.real.experiments.plan_runs`
    (makespan and effective parallelism), the verdicts, and each stored machine's three runs (``reference``: one
    :class:`~hetlab.book.reference.Reference` or several)."""
    if not isinstance(runs, dict) or set(runs) != {"thread pool", "process pool", "sequential"}:
        raise TypeError(f"runs must be the dict returned by plan_runs, got {runs!r:.80}")
    cores, bound = plan_prediction(plan, seconds_per_unit, cpus)
    r = {k: Run.of(s) for k, s in runs.items()}
    proc = runs["process pool"].makespan
    lines = [f"运行前的预测：线程池 ≤ 1 个核；进程池 ≤ min({cpus}, {len(plan.devices)}) = {cores} 个核，"
             f"完工时间不少于 {bound:.3f} 秒（下界）",
             f"实测（有效并行度 = CPU 秒 ÷ 墙钟秒）：单线程依次执行 {runs['sequential'].makespan:.3f} 秒"
             f"（{r['sequential'].parallelism:.2f}），线程池 {runs['thread pool'].makespan:.3f} 秒"
             f"（{r['thread pool'].parallelism:.2f}），进程池 {proc:.3f} 秒（{r['process pool'].parallelism:.2f}）",
             _drift_line(r, float(plan.busy.sum()) * seconds_per_unit, bound),
             thread_verdict(r["thread pool"].parallelism, f"{len(plan.devices)} 个线程"),
             *_share_line(r["thread pool"], r["sequential"],
                          (runs["thread pool"].makespan, runs["sequential"].makespan)),
             process_verdict(r["process pool"].parallelism, cores, r["sequential"].parallelism)
             + (f"；完工时间 {proc:.3f} 秒，不低于下界" if proc >= bound else
                f"；完工时间 {proc:.3f} 秒，低于下界 {bound:.3f} 秒：这次循环跑得比标定时快")]
    target = float(plan.busy.sum()) * seconds_per_unit      # the CPU seconds the loops were sized to use
    for ref in _refs(reference):
        if not ref.plan:
            continue
        rp = ref.plan
        procs, threads = rp["process pool"].parallelism, rp["thread pool"].parallelism
        # parallelism and the makespan ratio only: the stored loops were sized by an earlier calibration, so
        # their seconds are not comparable with this run's bound
        lines.append(f"参照 · {ref.label}：有效并行度 单线程依次执行 {rp['sequential'].parallelism:.2f}，"
                     f"线程池 {threads:.2f}，进程池 {procs:.2f}；进程池的完工时间是单线程依次执行的 "
                     f"{rp['process pool'].wall / rp['sequential'].wall:.0%}，它的循环用了 "
                     f"{rp['process pool'].cpu:.3f} CPU 秒（按标定应为 {target:.3f}）"
                     + (f"：核空着时，进程池用上了 {procs:.2f} 个核，线程池仍不超过 1 个"
                        if procs > 1 + TOLERANCE >= threads else "：这份参照测时进程池也没有超过 1 个核"))
    return "\n".join(lines)


def sweep_prediction(sweep: SweepReading, os_: float) -> dict[int, float]:
    """The rounds model ``N Os + ceil(N/P) W/N`` at every count of ``sweep``, from the work put in and
    ``os_`` (seconds per task, calibrated before the run)."""
    check_instance("sweep", sweep, SweepReading)
    os_ = check_positive("os_", os_, high=1.0)
    return {n: float(G.total_time_on(n, sweep.total, os_, sweep.workers, model="rounds")) for n in sweep.counts}


def _sweep_facts(sweep: SweepReading) -> tuple[bool, float, float]:
    """(N = P + 1 slower than both P and 2P, T(P + 1) - T(2P), T(largest N) - T(P)) in seconds."""
    p = sweep.workers
    a, b, c = sweep.at(p), sweep.at(p + 1), sweep.at(2 * p)
    return b > max(a, c), b - c, sweep.seconds[-1] - a


def sweep_lines(sweep: SweepReading, os_: float, reference=None) -> str:
    """A1.3: the prediction and the measurement at every N (a table in milliseconds), then the sawtooth at
    N = P + 1 and the cost of the finest split, each measured against predicted, and each stored machine's
    (``reference``: one :class:`~hetlab.book.reference.Reference` or several), the finest split against that
    machine's own prediction where it stores its calibration: with its pipelined O_s (the one its A1.4 line
    uses), and with its other stored O_s where the two differ (the spread of one procedure run twice)."""
    pred = sweep_prediction(sweep, os_)
    p, top = sweep.workers, sweep.counts[-1]
    lines = [f"运行前的预测：W = {sweep.total:g} 秒的等待分成 N 份，P = {p} 个工作进程，O_s = A1.1 的进程池 O_s "
             f"{_us(os_)}",
             "    N   实测（毫秒）  预测（毫秒）  偏差"]
    for n, t in zip(sweep.counts, sweep.seconds):
        lines.append(f"{n:>5} {t * 1e3:>12.1f} {pred[n] * 1e3:>12.1f}   {t / pred[n] - 1:+.0%}")
    saw, tooth, fine = _sweep_facts(sweep)
    lines.append(f"锯齿：N = {p + 1} {'比' if saw else '并不比'} N = {p} 和 N = {2 * p} 都慢；比 N = {2 * p} 多 "
                 f"{tooth * 1e3:.1f} 毫秒（预测多 {(pred[p + 1] - pred[2 * p]) * 1e3:.1f} 毫秒）"
                 + ("：多出的一个任务独占第二轮" if saw else ""))
    lines.append(f"切细：N = {top} 比 N = P = {p} {'慢' if fine > 0 else '快'} {abs(fine) * 1e3:.1f} 毫秒（预测慢 "
                 f"{(pred[top] - pred[p]) * 1e3:.1f} 毫秒）" + ("：每多一个任务，就多付一次派发" if fine > 0 else ""))
    for ref in _refs(reference):
        if ref.sweep is None:
            continue
        rs, rt, rf = _sweep_facts(ref.sweep)
        rp, rtop = ref.sweep.workers, ref.sweep.counts[-1]
        text = (f"参照 · {ref.label}：P = {rp}；N = P + 1 比 2P 多 {rt * 1e3:.1f} 毫秒，"
                f"N = {rtop} 比 P 多 {rf * 1e3:.1f} 毫秒")
        if ref.calibration:                    # the reference's own prediction, from its own calibration
            c = ref.calibration               # its pipelined O_s, the one its A1.4 line uses
            first = c.get("pipelined_s", c["process_overhead_s"])
            own = sweep_prediction(ref.sweep, first)
            text += (f"（用它自己标定的流水线 O_s {_us(first)} 预测多 {(own[rtop] - own[rp]) * 1e3:.1f} 毫秒"
                     + _second_os(ref.sweep, first, c["process_overhead_s"]) + "）")
        lines.append(text)
    return "\n".join(lines)


def _second_os(sweep: SweepReading, first: float, second: float) -> str:
    """The same machine's other stored O_s (``calibrate()``'s, the same procedure minutes apart) and the
    prediction it gives, where the two differ by 5 % or more: the spread of two equal measurements."""
    ratio = max(first, second) / min(first, second)
    if ratio < 1.05:
        return ""
    alt = sweep_prediction(sweep, second)
    top, p = sweep.counts[-1], sweep.workers
    return (f"；同一台机器另一次同样的测量得 {_us(second)}，大的是小的 {ratio:.2f} 倍，"
            f"按它预测多 {(alt[top] - alt[p]) * 1e3:.1f} 毫秒")


def dispatch_schedule(simulated: Schedule, round_trip: float, pipelined: float, stretch: float = 0.0) -> Schedule:
    """The central-queue simulation of ``simulated``'s graph (FIFO ready queue, same task lengths and worker
    count) rerun with each task's dispatch inside it, as a :class:`~hetlab.schedule.Schedule` in seconds: a
    *released* task (its worker was idle when it became ready) starts one ``round_trip`` after it became ready,
    the worker waiting (A1 passes the round trip after an idle pause, :func:`hetlab.real.measure.round_trips`
    with ``pause``: the released task's worker and the parent slept through its predecessor); a *queued* task
    (ready while its worker was still busy) starts ``pipelined`` (the pipelined O_s) after its worker frees.
    ``stretch`` (seconds) lengthens every task (what a wait and its timing add, A1.1's calibration).
    ``info["queued"]``: one bool per task, True when queued.

    >>> from hetlab import schedulers as S
    >>> from hetlab.devices import Device
    >>> from hetlab.tasks import Task, TaskGraph
    >>> chain = TaskGraph([Task("a", 2.0), Task("b", 2.0)], [("a", "b")])
    >>> sim = S.central_queue(chain, [Device(w, "CPU", 1000.0) for w in "uv"], ready="fifo")
    >>> s = dispatch_schedule(sim, 1e-3, 1e-4)      # 2 + 2 ms of work + 2 round trips
    >>> s.start.round(6).tolist(), round(s.makespan, 6), s.info["queued"].tolist()
    ([0.001, 0.004], 0.006, [False, False])
    """
    check_instance("simulated", simulated, Schedule)
    round_trip = check_positive("round_trip", round_trip, high=1.0)
    pipelined = check_positive("pipelined", pipelined, high=1.0)
    stretch = check_nonnegative("stretch", stretch, high=1.0)
    g, p = simulated.graph, len(simulated.devices)
    length = np.asarray(simulated.end, dtype=float) - np.asarray(simulated.start, dtype=float) + stretch
    waiting = [len(q) for q in g.preds]
    ready = [i for i, w in enumerate(waiting) if w == 0]
    ready_at, start, end = np.zeros(len(g.tasks)), np.zeros(len(g.tasks)), np.zeros(len(g.tasks))
    device_of = np.zeros(len(g.tasks), dtype=int)
    free_at, idle, running = [-np.inf] * p, list(range(p)), []       # -inf: the worker never ran a task
    queued = np.zeros(len(g.tasks), dtype=bool)
    while ready or running:
        while idle and ready:
            i, k = ready.pop(0), idle.pop(0)
            queued[i] = ready_at[i] < free_at[k]
            start[i] = free_at[k] + pipelined if queued[i] else ready_at[i] + round_trip
            end[i], device_of[i] = start[i] + length[i], k
            heapq.heappush(running, (end[i], i, k))
        now, i, k = heapq.heappop(running)
        free_at[k], idle = now, sorted(idle + [k])
        for s in sorted(g.succs[i]):
            waiting[s] -= 1
            if waiting[s] == 0:
                ready.append(s)
                ready_at[s] = now
    return Schedule(g, simulated.devices, device_of, start, end, "central queue with dispatch",
                    info={"queued": queued})


def dispatch_simulation(simulated: Schedule, round_trip: float, pipelined: float,
                        stretch: float = 0.0) -> tuple[float, np.ndarray]:
    """:func:`dispatch_schedule`'s makespan (seconds) and its one bool per task, True when queued.

    >>> from hetlab import schedulers as S
    >>> from hetlab.devices import Device
    >>> from hetlab.tasks import Task, TaskGraph
    >>> chain = TaskGraph([Task("a", 2.0), Task("b", 2.0)], [("a", "b")])
    >>> sim = S.central_queue(chain, [Device(w, "CPU", 1000.0) for w in "uv"], ready="fifo")
    >>> round(dispatch_simulation(sim, 1e-3, 1e-4)[0], 6)       # 2 + 2 ms of work + 2 round trips
    0.006
    """
    s = dispatch_schedule(simulated, round_trip, pipelined, stretch)
    return s.makespan, s.info["queued"]


def dag_prediction(simulated: Schedule, round_trip: float, pipelined: float | None = None,
                   stretch: float = 0.0) -> float:
    """Seconds predicted for a pool run of ``simulated``'s graph before the run: the makespan of
    :func:`dispatch_simulation`, released tasks paying ``round_trip`` and queued ones ``pipelined``
    (without it, every task pays one round trip), every task ``stretch`` longer."""
    return dispatch_simulation(simulated, round_trip, round_trip if pipelined is None else pipelined, stretch)[0]


def extra_band(simulated: Schedule, low: Costs, high: Costs) -> tuple[float, float]:
    """The allowed range, stated before the run, of the measured makespan minus ``simulated``'s (seconds):
    the extra time :func:`dispatch_simulation` gives with A1.1's lowest and highest batch costs
    (:func:`~hetlab.book.readings.a1_calibration.handover_costs`), least first (a list schedule may finish
    earlier with longer tasks, Graham's anomaly, so the two are sorted, not assumed in order).

    >>> from hetlab import schedulers as S
    >>> from hetlab.devices import Device
    >>> from hetlab.tasks import Task, TaskGraph
    >>> chain = TaskGraph([Task("a", 2.0), Task("b", 2.0)], [("a", "b")])
    >>> sim = S.central_queue(chain, [Device(w, "CPU", 1000.0) for w in "uv"], ready="fifo")
    >>> [round(x * 1e3, 3) for x in extra_band(sim, Costs(5e-4, 1e-4, 0.0), Costs(1e-3, 2e-4, 1e-4))]
    [1.0, 2.2]
    """
    check_instance("low", low, Costs)
    check_instance("high", high, Costs)
    ends = [dispatch_simulation(simulated, c.released, c.queued, c.stretch)[0] for c in (low, high)]
    return tuple(sorted(e - simulated.makespan for e in ends))


#: A gap longer than this many calibrated round trips is a stall, reported apart from the typical dispatch.
STALL = 5


def split_lines(simulated: Schedule, round_trip: float, pipelined: float, stretch: float = 0.0,
                band: tuple[float, float] | None = None) -> str:
    """A1.4's prediction, printed before the run from the simulation and the calibration alone: how many of
    the graph's tasks the central-queue simulation releases (ready when their worker is idle: they wait
    ``round_trip``) and how many it queues (ready while their worker is busy: ``pipelined`` after it frees),
    and the predicted makespan (:func:`dag_prediction`, every task ``stretch`` longer). With ``band``
    (:func:`extra_band`, A1.1's hand-over calibration) the costs are named as calibrated hand-overs and the
    allowed range of the extra time over the simulation is printed too.

    >>> from hetlab import schedulers as S
    >>> from hetlab.devices import Device
    >>> from hetlab.tasks import Task, TaskGraph
    >>> sim = S.central_queue(TaskGraph([Task("a", 2.0), Task("b", 2.0)]), [Device("w", "CPU", 1000.0)], ready="fifo")
    >>> print(split_lines(sim, 1e-3, 1e-4).splitlines()[1])
    运行前的预测：把这两种派发放进中央队列模拟，完工时间 5.1 毫秒（不计派发 4.0 毫秒）
    >>> print(split_lines(sim, 1e-3, 1e-4, 1e-4, band=(9e-4, 1.6e-3)).splitlines()[1])
    运行前的预测：完工时间 5.3 毫秒，比不计派发的模拟（4.0 毫秒）多 1.3 毫秒；允许范围 0.9 到 1.6 毫秒
    """
    pred, flags = dispatch_simulation(simulated, round_trip, pipelined, stretch)
    n, p = len(simulated.graph.tasks), len(simulated.devices)
    queued = int(np.sum(flags))
    ms = 1e3
    if band is None:
        return "\n".join([
            f"模拟（P = {p}）里 {n - queued} 个任务被释放（就绪时工作进程已空闲，就绪后晚一次空闲后的往返 "
            f"{_us(round_trip)} 才开始），{queued} 个排队（就绪时工作进程还忙，它空出来后再付流水线的 O_s "
            f"{_us(pipelined)}）",
            f"运行前的预测：把这两种派发放进中央队列模拟，完工时间 {pred * ms:.1f} 毫秒"
            f"（不计派发 {simulated.makespan * ms:.1f} 毫秒）"])
    low, high = _band_pair(band)
    return "\n".join([
        f"模拟（P = {p}）里 {n - queued} 个任务被释放（就绪后晚一次释放交接 {_us(round_trip)} 才开始），"
        f"{queued} 个排队（工作进程空出来后晚一次排队交接 {_us(pipelined)}），每个任务再拉长 {_us(stretch)}："
        "都是 A1.1 在同一个执行器上标定的",
        f"运行前的预测：完工时间 {pred * ms:.1f} 毫秒，比不计派发的模拟（{simulated.makespan * ms:.1f} 毫秒）多 "
        f"{(pred - simulated.makespan) * ms:.1f} 毫秒；允许范围 {low * ms:.1f} 到 {high * ms:.1f} 毫秒"])


def dispatch_lines(gaps, queued, round_trip: float, pipelined: float,
                   what: tuple[str, str] = ("空闲后往返", "流水线 O_s")) -> list[str]:
    """A1.4's dispatch reading, a description with no verdict: the median gap (seconds, as
    :func:`~hetlab.real.execute.task_gaps` returns them) of the released tasks against the round trip they
    were predicted to pay, and of the queued ones (``queued``: one bool per task, as
    :func:`~hetlab.real.experiments.queued_tasks` gives it for the measured run) against the pipelined O_s;
    then the gaps over :data:`STALL` round trips, counted and summed apart on a line of their own (where there
    are none, the last line says so). ``what``: the names of the two costs as printed.

    >>> dispatch_lines([1e-3, 1e-4], [False, True], 1e-3, 1e-4)[0]
    '被释放的 1 个任务：中位空隙 1000 µs，是预测的空闲后往返 1000 µs 的 1.00 倍'
    """
    values = np.array([check_nonnegative("gaps", g, high=60.0) for g in check_sequence("gaps", gaps)])
    flags = np.array([bool(check_instance("queued", q, (bool, np.bool_))) for q in check_sequence("queued", queued)],
                     dtype=bool)
    if len(values) == 0 or len(flags) != len(values):
        raise ValueError(f"gaps and queued must hold one entry per task (at least one), got {len(values)} and "
                         f"{len(flags)}")
    round_trip = check_positive("round_trip", round_trip, high=1.0)
    pipelined = check_positive("pipelined", pipelined, high=1.0)
    what = check_sequence("what", what)
    if len(what) != 2 or not all(isinstance(w, str) for w in what):
        raise ValueError(f"what must name the two costs, (released, queued) strings, got {what!r}")
    out = []
    for mask, name, cost, label in ((~flags, "被释放的", round_trip, what[0]), (flags, "排队的", pipelined, what[1])):
        if mask.any():
            mid = float(np.median(values[mask]))
            out.append(f"{name} {int(mask.sum())} 个任务：中位空隙 {_us(mid)}，是预测的{label} {_us(cost)} 的 "
                       f"{mid / cost:.2f} 倍")
        else:
            out.append(f"没有{name}任务")
    stalls = values[values > STALL * round_trip]
    limit = f"超过{what[0]} {STALL} 倍（{round_trip * STALL * 1e3:.1f} 毫秒）的停顿"
    if len(stalls):
        out.append(f"另有 {len(stalls)} 个{limit}，共 {stalls.sum() * 1e3:.1f} 毫秒"
                   f"（空隙合计的 {stalls.sum() / values.sum():.0%}）")
    else:                                     # no stall: said on the last line, not a line of its own
        out[-1] += f"；没有{limit}"
    return out


def _band_pair(band) -> tuple[float, float]:
    """``band`` checked: two non-negative seconds, least first (:func:`extra_band`)."""
    pair = check_sequence("band", band)
    if len(pair) != 2:
        raise ValueError(f"band must be (low, high) seconds of extra time, got {len(pair)} values")
    low, high = (check_nonnegative("band", x, high=60.0) for x in pair)
    if low > high:
        raise ValueError(f"band must hold its least value first, got {pair!r}")
    return low, high


def _extra_verdict(extra: float, band: tuple[float, float]) -> str:
    """The measured extra time over the simulation against the allowed range stated before the run."""
    low, high, ms = band[0], band[1], 1e3
    if extra > high:
        return f"超出允许范围 {(extra - high) * ms:.1f} 毫秒"
    if extra < low:
        return f"比允许范围的下限少 {(low - extra) * ms:.1f} 毫秒"
    return "在允许范围之内"


def dag_lines(simulated: Schedule, measured: Schedule, round_trip: float, pipelined: float,
              reference=None, stretch: float = 0.0, band: tuple[float, float] | None = None) -> str:
    """A1.4 after the run: the measured makespan and its deviation from the prediction (:func:`dag_prediction`
    with ``pipelined`` and ``stretch``); with ``band`` (:func:`extra_band`, stated before the run) the extra time
    over the simulation judged against it, else the makespan against the band :data:`BAND`; where the extra
    time went (tasks stretched beyond their set length against the gaps between tasks, as
    :func:`~hetlab.real.execute.task_gaps` measures them, summed over the workers and per worker), the gaps of
    released and queued tasks against their predicted costs (:func:`dispatch_lines`, no verdict), and each
    stored machine's simulation and measurement (``reference``: one
    :class:`~hetlab.book.reference.Reference` or several)."""
    check_instance("measured", measured, Schedule)
    pipelined = check_positive("pipelined", pipelined, high=1.0)
    pred = dag_prediction(simulated, round_trip, pipelined, stretch)
    n, p = len(simulated.graph.tasks), len(simulated.devices)
    if len(measured.graph.tasks) != n:
        raise ValueError(f"measured must run the simulated graph's {n} tasks, got {len(measured.graph.tasks)}")
    extra = measured.makespan - simulated.makespan
    stretched = float(np.sum((measured.end - measured.start) - (simulated.end - simulated.start)))
    gaps = float(np.sum(task_gaps(measured)))
    ms = 1e3
    where = ("多出的时间主要是任务本身被拉长（等待醒得晚）" if stretched > gaps else "多出的时间主要在任务之间的空隙")
    if band is None:
        dev = measured.makespan / pred - 1
        verdict = (f"在 ±{BAND:.0%} 之内" if abs(dev) <= BAND else
                   f"比预测慢 {BAND:.0%} 以上" if dev > 0 else f"比预测快 {BAND:.0%} 以上")
        first = (f"实测 {measured.makespan * ms:.1f} 毫秒，偏差 (实测 − 预测) / 预测 = {dev:+.0%}，{verdict}；"
                 f"比模拟多 {extra * ms:.1f} 毫秒（预测多 {(pred - simulated.makespan) * ms:.1f} 毫秒）")
        what = ("空闲后往返", "流水线 O_s")
    else:
        low, high = _band_pair(band)
        # review A1-16 #3: the makespan's deviation cannot test the dispatch (a few per cent of it): only the extra
        first = (f"实测 {measured.makespan * ms:.1f} 毫秒；比模拟多 "
                 f"{extra * ms:.1f} 毫秒（预测多 {(pred - simulated.makespan) * ms:.1f}，允许范围 {low * ms:.1f} 到 "
                 f"{high * ms:.1f} 毫秒）：{_extra_verdict(extra, (low, high))}")
        what = ("释放交接", "排队交接")
    # review A1-13: the verdicts ride on the lines whose numbers they read (fewer lines to take in)
    lines = [first,
             f"逐个任务对账（{p} 个工作进程合计）：任务本身比设定的等待长 {stretched * ms:.1f} 毫秒，任务之间的空隙 "
             f"{gaps * ms:.1f} 毫秒；除以 {p}，每个工作进程平均 {stretched / p * ms:.1f} + {gaps / p * ms:.1f} 毫秒："
             + where,
             *dispatch_lines(task_gaps(measured), queued_tasks(measured), round_trip, pipelined, what)]
    if band is None and pred - simulated.makespan < BAND * pred:
        lines.append(f"注意：预测的派发只占预测的 {(pred - simulated.makespan) / pred:.0%}，小于 ±{BAND:.0%} "
                     "的允许范围，单看完工时间检验不了它，要看上面的派发项")
    for ref in _refs(reference):
        if ref.dag:
            lines += _reference_dag(ref)
    return "\n".join(lines)


def _reference_dag(ref: Reference) -> list[str]:
    """A stored machine's A1.4 run: simulated and measured makespans; where the reading was recorded with its
    paused trip (``tools/record_reference.py``), also its prediction, deviation, its gaps per worker (the rest
    of the extra time over the simulation is the tasks' own stretch) and dispatch lines."""
    d, ms = ref.dag, 1e3
    # a reading may store A1.4 from a recording of its own (then with its own label: machine, date, load)
    head = f"参照 · {d.get('label', ref.label)}：P = {d['workers']}，模拟 {d['queue_s'] * ms:.1f} 毫秒，"
    more = f"比模拟多 {(d['measured_s'] - d['queue_s']) * ms:.1f} 毫秒"
    if "gaps" not in d:                       # an older reading: makespans only
        return [head + f"实测 {d['measured_s'] * ms:.1f} 毫秒，{more}"]
    pred = d["predicted_s"]
    if "costs" in d:                          # recorded with A1.1's hand-over calibration and its allowed range
        released, queued, _ = d["costs"]
        extra, (low, high) = d["measured_s"] - d["queue_s"], d["band_s"]
        return [head + f"预测 {pred * ms:.1f} 毫秒，实测 {d['measured_s'] * ms:.1f} 毫秒，{more}（预测多 "
                f"{(pred - d['queue_s']) * ms:.1f}，允许范围 {low * ms:.1f} 到 {high * ms:.1f} 毫秒）："
                + _extra_verdict(extra, (low, high)),
                *("  参照中" + x for x in dispatch_lines(d["gaps"], d["queued"], released, queued,
                                                        ("释放交接", "排队交接")))]
    return [head + f"预测 {pred * ms:.1f} 毫秒，实测 {d['measured_s'] * ms:.1f} 毫秒，偏差 "
            f"{d['measured_s'] / pred - 1:+.0%}；{more}（预测多 {(pred - d['queue_s']) * ms:.1f} 毫秒），"
            f"其中任务之间的空隙每个工作进程平均 {sum(d['gaps']) / d['workers'] * ms:.1f} 毫秒",
            *("  参照中" + x for x in dispatch_lines(d["gaps"], d["queued"], d["paused_trip_s"], d["pipelined_s"]))]
