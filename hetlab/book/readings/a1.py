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
from hetlab.book.readings.ch12 import TOLERANCE, process_verdict, thread_verdict
from hetlab.book.reference import Reference
from hetlab.models import granularity as G
from hetlab.real.execute import task_gaps
from hetlab.real.experiments import Run, SweepReading, queued_tasks
from hetlab.schedule import Schedule

__all__ = ["BAND", "trip_band", "calibration_lines", "plan_prediction", "plan_lines", "sweep_prediction", "sweep_lines",
           "dispatch_schedule", "dispatch_simulation", "dag_prediction", "split_lines", "dispatch_lines", "dag_lines",
           "STALL"]

#: A measured makespan within this relative band of its prediction counts as "as predicted".
BAND = 0.15


def _ref(reference, name: str = "reference") -> Reference | None:
    return None if reference is None else check_instance(name, reference, Reference)


def _refs(reference) -> list[Reference]:
    """``reference``: None, one :class:`~hetlab.book.reference.Reference`, or a tuple or list of them."""
    items = reference if isinstance(reference, (tuple, list)) else [reference]
    return [check_instance("reference", r, Reference) for r in items if r is not None]


def _us(seconds: float) -> str:
    """Microseconds, with a decimal under 10 µs: a ratio printed beside two of them reads right (review A1-13:
    "9.6 倍" beside 81 and 8 µs).

    >>> _us(6.94e-6), _us(61.4e-6)
    ('6.9 µs', '61 µs')
    """
    us = seconds * 1e6
    return f"{us:.1f} µs" if us < 9.95 else f"{us:.0f} µs"


def trip_band(trips) -> tuple[float, float, float]:
    """(round trip, low, high) from the single trips of :func:`hetlab.real.measure.round_trips` (one sequence
    of trips, in seconds, per batch): the median of all trips (seconds), and the lowest and highest batch
    median as multiples of it -- the calibration's own spread. Both are medians of single trips, the statistic
    A1.4 sets beside the median gap of its released tasks.

    >>> [round(x, 6) for x in trip_band([[1e-4, 1e-4, 9e-3], [2e-4, 2e-4, 2e-4], [3e-4, 3e-4, 1e-4]])]
    [0.0002, 0.5, 1.5]
    """
    return _band(trips, "trips")


def _band(trips, name: str) -> tuple[float, float, float]:
    batches = [[check_positive(name, t, high=1.0) for t in check_sequence(name, b)]
               for b in check_sequence(name, trips)]
    if len(batches) < 3:
        raise ValueError(f"{name} must hold at least 3 batches of single round trips, got {len(batches)}")
    mid = float(np.median([t for b in batches for t in b]))
    medians = [float(np.median(b)) for b in batches]
    return mid, min(medians) / mid, max(medians) / mid


def calibration_lines(cal: dict, round_trip: float, reference: Reference | None = None,
                      h200: Reference | None = None, *, trips=None, paused=None, pause: float | None = None,
                      pipelined: float | None = None, workers: int | None = None) -> str:
    """A1.1: this machine's CPUs, FP64 matmul rate (with its BLAS threads) and dispatch overheads
    (``cal`` from :func:`hetlab.real.measure.calibrate`, ``round_trip`` in seconds; ``trips``: the batches of
    single trips it is the median of, whose batch medians' range is printed), then the same figures of the
    stored machines.

    ``pipelined`` (seconds): the pipelined process-pool O_s measured on the appendix's pool of ``workers``
    workers, printed in place of ``cal``'s (what queued tasks pay in A1.3 and A1.4). ``paused``: the batches of
    single trips each taken after an idle pause of ``pause`` seconds (:func:`hetlab.real.measure.round_trips`
    with ``pause``), whose median is printed beside the back-to-back trip (what released tasks pay)."""
    needed = {"cpus", "matmul_gflops", "thread_overhead_s", "process_overhead_s"}
    if not isinstance(cal, dict) or not needed <= set(cal):
        raise TypeError(f"cal must be the dict returned by hetlab.real.measure.calibrate(), got {cal!r:.80}")
    round_trip = check_positive("round_trip", round_trip)
    pipelined = None if pipelined is None else check_positive("pipelined", pipelined, high=1.0)
    workers = None if workers is None else check_int("workers", workers, low=1, high=4096)
    pause = None if pause is None else check_positive("pause", pause, high=0.1)
    band = None if paused is None else _band(paused, "paused")
    if (pipelined is None) != (workers is None):
        raise ValueError("pipelined and workers go together: the pipelined O_s and the pool size it was measured on")
    if (paused is None) != (pause is None):
        raise ValueError("paused and pause go together: the paused trips and the idle pause before each")

    def line(c: dict, trip: float | None, pipe: float | None = None) -> str:
        blas = c.get("blas_threads")
        text = (f"{c['cpus']} 个可用 CPU；FP64 矩阵乘 {c['matmul_gflops']:.0f} GFLOP/s"
                + (f"（BLAS 用 {blas} 个线程）" if blas else "")
                + f"；派发开销 O_s：线程池 {_us(c['thread_overhead_s'])}，"
                f"进程池 {_us(pipe or c['process_overhead_s'])}")
        return text + (f"，进程池单次往返 {_us(trip)}" if trip else "")

    def spread(batches, what: str) -> str:
        mid, low, high = _band(batches, "paused" if batches is paused else "trips")
        count = sum(len(b) for b in batches)
        return (f"  {what}是 {len(batches)} 批共 {count} 次逐次计时的中位数；各批自己的中位数在 "
                f"{_us(mid * low)} 到 {_us(mid * high)} 之间，即总中位数的 {low:.2f} 到 {high:.2f} 倍")

    os_ = pipelined or cal["process_overhead_s"]
    pool = (" " if pipelined is None else
            f"（A1.3、A1.4 的 {workers} 个工作进程上三次 200 个空任务中最快的一次）")
    lines = ["本机：" + line(cal, round_trip, pipelined),
             f"  进程池的单次往返是流水线 O_s{pool}的 {round_trip / os_:.1f} 倍，"
             f"进程池的 O_s 是线程池的 {os_ / cal['thread_overhead_s']:.1f} 倍"]
    if trips is not None:
        lines.append(spread(trips, "单次往返"))
    if band is not None:
        mid = band[0]
        lines.append(f"  每次往返前先空闲 {pause * 1e3:.1f} 毫秒（A1.4 任务的中位长度）：单次往返 {_us(mid)}，"
                     f"是一次接一次的 {mid / round_trip:.1f} 倍；A1.4 里被释放的任务付它")
        lines.append(spread(paused, "空闲后的单次往返"))
    for ref in (_ref(reference), _ref(h200, "h200")):
        if ref is None or not ref.calibration:
            continue
        c = ref.calibration
        if c.get("paused_trip_s"):          # recorded as A1.1 measures: medians of single trips, O_s on P workers
            text = (line(c, c["round_trip_median_s"], c["pipelined_s"])
                    + f"；空闲 {c['pause_s'] * 1e3:.1f} 毫秒后的单次往返 {_us(c['paused_trip_s'])}，"
                    f"是一次接一次的 {c['paused_trip_s'] / c['round_trip_median_s']:.1f} 倍")
        else:
            text = line(c, c.get("round_trip_s"))
            if c.get("round_trip_s"):
                # older readings time the round trip as one mean of consecutive trips in one pool
                text += "（一个池子里连续 200 次的均值，不是逐次计时的中位数）"
        lines.append(f"参照 · {ref.label}：" + text)
    return "\n".join(lines)


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


def dispatch_schedule(simulated: Schedule, round_trip: float, pipelined: float) -> Schedule:
    """The central-queue simulation of ``simulated``'s graph (FIFO ready queue, same task lengths and worker
    count) rerun with each task's dispatch inside it, as a :class:`~hetlab.schedule.Schedule` in seconds: a
    *released* task (its worker was idle when it became ready) starts one ``round_trip`` after it became ready,
    the worker waiting (A1 passes the round trip after an idle pause, :func:`hetlab.real.measure.round_trips`
    with ``pause``: the released task's worker and the parent slept through its predecessor); a *queued* task
    (ready while its worker was still busy) starts ``pipelined`` (the pipelined O_s) after its worker frees.
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
    g, p = simulated.graph, len(simulated.devices)
    length = np.asarray(simulated.end, dtype=float) - np.asarray(simulated.start, dtype=float)
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


def dispatch_simulation(simulated: Schedule, round_trip: float, pipelined: float) -> tuple[float, np.ndarray]:
    """:func:`dispatch_schedule`'s makespan (seconds) and its one bool per task, True when queued.

    >>> from hetlab import schedulers as S
    >>> from hetlab.devices import Device
    >>> from hetlab.tasks import Task, TaskGraph
    >>> chain = TaskGraph([Task("a", 2.0), Task("b", 2.0)], [("a", "b")])
    >>> sim = S.central_queue(chain, [Device(w, "CPU", 1000.0) for w in "uv"], ready="fifo")
    >>> round(dispatch_simulation(sim, 1e-3, 1e-4)[0], 6)       # 2 + 2 ms of work + 2 round trips
    0.006
    """
    s = dispatch_schedule(simulated, round_trip, pipelined)
    return s.makespan, s.info["queued"]


def dag_prediction(simulated: Schedule, round_trip: float, pipelined: float | None = None) -> float:
    """Seconds predicted for a pool run of ``simulated``'s graph before the run: the makespan of
    :func:`dispatch_simulation`, released tasks paying ``round_trip`` and queued ones ``pipelined``
    (without it, every task pays one round trip)."""
    return dispatch_simulation(simulated, round_trip, round_trip if pipelined is None else pipelined)[0]


#: A gap longer than this many calibrated round trips is a stall, reported apart from the typical dispatch.
STALL = 5


def split_lines(simulated: Schedule, round_trip: float, pipelined: float) -> str:
    """A1.4's prediction, printed before the run from the simulation and the calibration alone: how many of
    the graph's tasks the central-queue simulation releases (ready when their worker is idle: one
    ``round_trip``, in A1 the trip after an idle pause)
    and how many it queues (ready while their worker is busy: the pipelined O_s), and the predicted makespan
    (:func:`dag_prediction` with ``pipelined``).

    >>> from hetlab import schedulers as S
    >>> from hetlab.devices import Device
    >>> from hetlab.tasks import Task, TaskGraph
    >>> sim = S.central_queue(TaskGraph([Task("a", 2.0), Task("b", 2.0)]), [Device("w", "CPU", 1000.0)], ready="fifo")
    >>> print(split_lines(sim, 1e-3, 1e-4).splitlines()[1])
    运行前的预测：把这两种派发放进中央队列模拟，完工时间 5.1 毫秒（不计派发 4.0 毫秒）
    """
    pred, flags = dispatch_simulation(simulated, round_trip, pipelined)
    n, p = len(simulated.graph.tasks), len(simulated.devices)
    queued = int(np.sum(flags))
    ms = 1e3
    return "\n".join([
        f"模拟（P = {p}）里 {n - queued} 个任务被释放（就绪时工作进程已空闲，就绪后晚一次空闲后的往返 "
        f"{_us(round_trip)} 才开始），{queued} 个排队（就绪时工作进程还忙，它空出来后再付流水线的 O_s "
        f"{_us(pipelined)}）",
        f"运行前的预测：把这两种派发放进中央队列模拟，完工时间 {pred * ms:.1f} 毫秒"
        f"（不计派发 {simulated.makespan * ms:.1f} 毫秒）"])


def dispatch_lines(gaps, queued, round_trip: float, pipelined: float) -> list[str]:
    """A1.4's dispatch reading, a description with no verdict: the median gap (seconds, as
    :func:`~hetlab.real.execute.task_gaps` returns them) of the released tasks against the round trip they
    were predicted to pay, and of the queued ones (``queued``: one bool per task, as
    :func:`~hetlab.real.experiments.queued_tasks` gives it for the measured run) against the pipelined O_s;
    then the gaps over :data:`STALL` round trips, counted and summed apart on a line of their own (where there
    are none, the last line says so).

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
    out = []
    for mask, name, cost, what in ((~flags, "被释放的", round_trip, "空闲后往返"),
                                   (flags, "排队的", pipelined, "流水线 O_s")):
        if mask.any():
            mid = float(np.median(values[mask]))
            out.append(f"{name} {int(mask.sum())} 个任务：中位空隙 {_us(mid)}，是预测的{what} {_us(cost)} 的 "
                       f"{mid / cost:.2f} 倍")
        else:
            out.append(f"没有{name}任务")
    stalls = values[values > STALL * round_trip]
    limit = f"超过空闲后往返 {STALL} 倍（{round_trip * STALL * 1e3:.1f} 毫秒）的停顿"
    if len(stalls):
        out.append(f"另有 {len(stalls)} 个{limit}，共 {stalls.sum() * 1e3:.1f} 毫秒"
                   f"（空隙合计的 {stalls.sum() / values.sum():.0%}）")
    else:                                     # no stall: said on the last line, not a line of its own
        out[-1] += f"；没有{limit}"
    return out


def dag_lines(simulated: Schedule, measured: Schedule, round_trip: float, pipelined: float,
              reference=None) -> str:
    """A1.4 after the run: the measured makespan and its deviation from the prediction (:func:`dag_prediction`
    with ``pipelined``) against the band :data:`BAND`, where the extra time over the simulation went (tasks
    stretched beyond their set length against the gaps between tasks, as
    :func:`~hetlab.real.execute.task_gaps` measures them, summed over the workers and per worker), the gaps of
    released and queued tasks against their predicted costs (:func:`dispatch_lines`, no verdict), and each
    stored machine's simulation and measurement (``reference``: one
    :class:`~hetlab.book.reference.Reference` or several)."""
    check_instance("measured", measured, Schedule)
    pipelined = check_positive("pipelined", pipelined, high=1.0)
    pred = dag_prediction(simulated, round_trip, pipelined)
    n, p = len(simulated.graph.tasks), len(simulated.devices)
    if len(measured.graph.tasks) != n:
        raise ValueError(f"measured must run the simulated graph's {n} tasks, got {len(measured.graph.tasks)}")
    dev = measured.makespan / pred - 1
    stretch = float(np.sum((measured.end - measured.start) - (simulated.end - simulated.start)))
    gaps = float(np.sum(task_gaps(measured)))
    ms = 1e3
    band = (f"在 ±{BAND:.0%} 之内" if abs(dev) <= BAND else
            f"比预测慢 {BAND:.0%} 以上" if dev > 0 else f"比预测快 {BAND:.0%} 以上")
    where = ("多出的时间主要是任务本身被拉长（等待醒得晚）" if stretch > gaps else "多出的时间主要在任务之间的空隙")
    # review A1-13: the verdicts ride on the lines whose numbers they read (fewer lines to take in)
    lines = [f"实测 {measured.makespan * ms:.1f} 毫秒，偏差 (实测 − 预测) / 预测 = {dev:+.0%}，{band}；"
             f"比模拟多 {(measured.makespan - simulated.makespan) * ms:.1f} 毫秒（预测多 "
             f"{(pred - simulated.makespan) * ms:.1f} 毫秒）",
             f"逐个任务对账（{p} 个工作进程合计）：任务本身比设定的等待长 {stretch * ms:.1f} 毫秒，任务之间的空隙 "
             f"{gaps * ms:.1f} 毫秒；除以 {p}，每个工作进程平均 {stretch / p * ms:.1f} + {gaps / p * ms:.1f} 毫秒："
             + where,
             *dispatch_lines(task_gaps(measured), queued_tasks(measured), round_trip, pipelined)]
    if pred - simulated.makespan < BAND * pred:
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
    head = f"参照 · {ref.label}：P = {d['workers']}，模拟 {d['queue_s'] * ms:.1f} 毫秒，"
    more = f"比模拟多 {(d['measured_s'] - d['queue_s']) * ms:.1f} 毫秒"
    if "gaps" not in d:                       # an older reading: makespans only
        return [head + f"实测 {d['measured_s'] * ms:.1f} 毫秒，{more}"]
    pred = d["predicted_s"]
    return [head + f"预测 {pred * ms:.1f} 毫秒，实测 {d['measured_s'] * ms:.1f} 毫秒，偏差 "
            f"{d['measured_s'] / pred - 1:+.0%}；{more}（预测多 {(pred - d['queue_s']) * ms:.1f} 毫秒），"
            f"其中任务之间的空隙每个工作进程平均 {sum(d['gaps']) / d['workers'] * ms:.1f} 毫秒",
            *("  参照中" + x for x in dispatch_lines(d["gaps"], d["queued"], d["paused_trip_s"], d["pipelined_s"]))]
