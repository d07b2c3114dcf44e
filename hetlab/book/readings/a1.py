"""Appendix A1 (real execution): readings of the measured cells, each next to a stored reference reading.

Every reading states the prediction first, made before the run from calibration alone (A1.1's figures, the
plan, the known work), then the measurement, then a verdict that follows from the printed numbers (A1.4's
dispatch term is only described: each class of task's median gap against its own predicted cost), and
last the same experiment on a named machine (:mod:`hetlab.book.reference`). The verdicts use no threshold
that the printed numbers do not show, so a reader can check each one by eye.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hetlab._validate import check_instance, check_int, check_nonnegative, check_positive, check_sequence
from hetlab.book.readings.a1_calibration import Costs, _us, calibration_lines, handover_costs
from hetlab.book.readings.ch12 import TOLERANCE, process_verdict, thread_verdict
from hetlab.book.reference import Reference
from hetlab.models import granularity as G
from hetlab.real.execute import queued_tasks, task_gaps
from hetlab.real.experiments import Run, SweepReading
from hetlab.schedule import Schedule
from hetlab.schedulers import central_queue
from hetlab.tasks import Task, TaskGraph

__all__ = ["Costs", "handover_costs", "calibration_lines", "plan_prediction", "plan_lines",
           "sweep_prediction", "sweep_lines", "dispatch_schedule", "dispatch_simulation", "Prediction",
           "predict_extra", "split_lines", "dispatch_lines", "dag_lines", "FINE"]

#: A1.3's finest split is "as predicted" when its measured cost lies within this factor of (N - P) O_s either
#: way: O_s is an average over one calibration, and two equal calibrations of an idle machine differ by a
#: third or more, so the prediction is only good to a factor, and the verdict says so before the run.
FINE = 2.0


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


def _fine_verdict(measured: float, predicted: float) -> str:
    """The finest split's measured cost against its prediction, within :data:`FINE` either way."""
    ratio = measured / predicted
    if ratio > FINE:
        return f"是预测的 {ratio:.1f} 倍，超出预测的 {FINE:g} 倍"
    if ratio < 1 / FINE:
        return f"是预测的 {ratio:.2f} 倍，不到预测的 1/{FINE:g}"
    return f"是预测的 {ratio:.2f} 倍，在预测的 1/{FINE:g} 到 {FINE:g} 倍之间"


def sweep_lines(sweep: SweepReading, os_: float, reference=None) -> str:
    """A1.3: the prediction and the measurement at every N (a table in milliseconds), then the sawtooth at
    N = P + 1 and the cost of the finest split, each measured against predicted (the finest split judged
    within a factor :data:`FINE`, stated before the run), and each stored machine's (``reference``: one
    :class:`~hetlab.book.reference.Reference` or several), the finest split against that machine's own
    prediction from its own pipelined O_s where it stores its calibration."""
    pred = sweep_prediction(sweep, os_)
    p, top = sweep.workers, sweep.counts[-1]
    lines = [f"运行前的预测：W = {sweep.total:g} 秒的等待分成 N 份，P = {p} 个工作进程，O_s = A1.1 的进程池 O_s "
             f"{_us(os_)}；切到 N = {top} 多出的时间，实测在预测的 1/{FINE:g} 到 {FINE:g} 倍之间就算相符",
             "    N   实测（毫秒）  预测（毫秒）  偏差"]
    for n, t in zip(sweep.counts, sweep.seconds):
        lines.append(f"{n:>5} {t * 1e3:>12.1f} {pred[n] * 1e3:>12.1f}   {t / pred[n] - 1:+.0%}")
    saw, tooth, fine = _sweep_facts(sweep)
    lines.append(f"锯齿：N = {p + 1} {'比' if saw else '并不比'} N = {p} 和 N = {2 * p} 都慢；比 N = {2 * p} 多 "
                 f"{tooth * 1e3:.1f} 毫秒（预测多 {(pred[p + 1] - pred[2 * p]) * 1e3:.1f} 毫秒）"
                 + ("：多出的一个任务独占第二轮" if saw else ""))
    want = pred[top] - pred[p]
    lines.append(f"切细：N = {top} 比 N = P = {p} {'慢' if fine > 0 else '快'} {abs(fine) * 1e3:.1f} 毫秒（预测慢 "
                 f"{want * 1e3:.1f} 毫秒）" + (f"，{_fine_verdict(fine, want)}" if fine > 0 else "，方向与预测相反"))
    for ref in _refs(reference):
        if ref.sweep is None:
            continue
        rs, rt, rf = _sweep_facts(ref.sweep)
        rp, rtop = ref.sweep.workers, ref.sweep.counts[-1]
        text = (f"参照 · {ref.label}：P = {rp}；N = P + 1 比 2P 多 {rt * 1e3:.1f} 毫秒，"
                f"N = {rtop} 比 P 多 {rf * 1e3:.1f} 毫秒")
        if ref.calibration:                    # the reference's own prediction, from its own calibration
            c = ref.calibration
            own_os = c.get("pipelined_s", c["process_overhead_s"])
            own = sweep_prediction(ref.sweep, own_os)
            own_want = own[rtop] - own[rp]
            text += (f"（用它自己标定的 O_s {_us(own_os)} 预测多 {own_want * 1e3:.1f} 毫秒，"
                     + (_fine_verdict(rf, own_want) if rf > 0 else "方向与预测相反") + "）")
        lines.append(text)
    return "\n".join(lines)


def _per_task(name: str, value, n: int) -> np.ndarray:
    """``value`` seconds for each of ``n`` tasks: one number for all, or one per task (graph order), each in
    [0, 1]."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return np.full(n, check_nonnegative(name, value, high=1.0))
    values = [check_nonnegative(name, v, high=1.0) for v in check_sequence(name, value)]
    if len(values) != n:
        raise ValueError(f"{name} must be one number or one per task ({n}), got {len(values)} values")
    return np.array(values, dtype=float)


def dispatch_schedule(simulated: Schedule, released, queued, stretch=0.0) -> Schedule:
    """The central-queue simulation of ``simulated``'s graph (FIFO ready queue, same task lengths and worker
    count) rerun with each task's dispatch inside it, as a :class:`~hetlab.schedule.Schedule` in seconds: a
    *released* task (its worker was idle when it became ready, or had never run a task) starts ``released``
    seconds after it became ready; a *queued* task (ready while its worker was still busy) starts ``queued``
    seconds after its worker frees; every task lasts ``stretch`` seconds longer. Each cost is one number for
    every task or one per task (graph order; :func:`predict_extra` draws them). ``info["queued"]``: one bool per
    task, True when queued.

    >>> from hetlab import schedulers as S
    >>> from hetlab.devices import Device
    >>> from hetlab.tasks import Task, TaskGraph
    >>> chain = TaskGraph([Task("a", 2.0), Task("b", 2.0)], [("a", "b")])
    >>> sim = S.central_queue(chain, [Device(w, "CPU", 1000.0) for w in "uv"], ready="fifo")
    >>> s = dispatch_schedule(sim, 1e-3, 1e-4)      # 2 + 2 ms of work, both released
    >>> s.start.round(6).tolist(), round(s.makespan, 6), s.info["queued"].tolist()
    ([0.001, 0.004], 0.006, [False, False])
    """
    check_instance("simulated", simulated, Schedule)
    g, devices = simulated.graph, simulated.devices
    if len({d.speed for d in devices}) != 1:
        raise ValueError("simulated must run on identical workers (a pool's processes): got speeds "
                         f"{sorted({d.speed for d in devices})}")
    n = len(g.tasks)
    # each task as long as in the simulation plus its stretch, on the same identical workers: the one greedy
    # engine, with the pool's two hand-overs (hetlab.schedulers.central_queue's handover)
    length = (np.asarray(simulated.end, dtype=float) - np.asarray(simulated.start, dtype=float)
              + _per_task("stretch", stretch, n))
    longer = TaskGraph([Task(t.name, float(x) * devices[0].speed) for t, x in zip(g.tasks, length)],
                       [(u, v, data) for (u, v), data in g.edges.items()])
    run = central_queue(longer, devices, ready="fifo", handover=(_per_task("released", released, n),
                                                                 _per_task("queued", queued, n)))
    return Schedule(g, devices, run.device_of, run.start, run.end, "central queue with dispatch",
                    info={"queued": queued_tasks(run)})


def dispatch_simulation(simulated: Schedule, released, queued, stretch=0.0) -> tuple[float, np.ndarray]:
    """:func:`dispatch_schedule`'s makespan (seconds) and its one bool per task, True when queued.

    >>> from hetlab import schedulers as S
    >>> from hetlab.devices import Device
    >>> from hetlab.tasks import Task, TaskGraph
    >>> chain = TaskGraph([Task("a", 2.0), Task("b", 2.0)], [("a", "b")])
    >>> sim = S.central_queue(chain, [Device(w, "CPU", 1000.0) for w in "uv"], ready="fifo")
    >>> round(dispatch_simulation(sim, 1e-3, 1e-4)[0], 6)       # 2 + 2 ms of work + 2 released hand-overs
    0.006
    """
    s = dispatch_schedule(simulated, released, queued, stretch)
    return s.makespan, s.info["queued"]


@dataclass(frozen=True)
class Prediction:
    """A1.4's prediction, stated before the run (seconds): the makespan of the simulation without dispatch
    (``simulated``), the predicted extra time over it (``extra``, the median of the draws) and the interval
    that holds ``coverage`` of the draws (``low``, ``high``); ``released`` and ``queued``: how many tasks the
    simulation with the typical costs releases and queues; ``draws``: how many simulations were drawn."""

    simulated: float
    extra: float
    low: float
    high: float
    coverage: float
    released: int
    queued: int
    draws: int

    def __post_init__(self) -> None:
        check_positive("simulated", self.simulated, high=3600.0)
        for name in ("extra", "low", "high"):     # extra time: a run may even beat the simulation slightly
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not -1.0 <= value <= 60.0:
                raise (TypeError if not isinstance(value, (int, float)) or isinstance(value, bool) else ValueError)(
                    f"{name} must be seconds of extra time in [-1, 60], got {value!r}")
        if not self.low <= self.high:
            raise ValueError(f"low must not exceed high, got {self.low!r} and {self.high!r}")
        check_positive("coverage", self.coverage, high=0.99)
        check_int("released", self.released, low=0)
        check_int("queued", self.queued, low=0)
        check_int("draws", self.draws, low=1)


def predict_extra(simulated: Schedule, handovers: dict, *, draws: int = 400, coverage: float = 0.9,
                  seed: int = 0) -> Prediction:
    """A1.4's prediction from A1.1's calibration alone (``handovers``, :func:`hetlab.real.measure.handovers` on
    graphs like ``simulated``'s): ``draws`` times, pick one calibration graph at random and give every task a
    released hand-over, a queued hand-over and a stretch drawn from that graph's own values (a kind the graph
    lacks is drawn from all graphs'), rerun :func:`dispatch_schedule`, and keep the extra time over
    ``simulated``'s makespan. Drawing per graph keeps what one run shares (the machine's state during it), so
    the interval is for one run, not for the mean of many. The median draw is the prediction; the central
    ``coverage`` of the draws is its interval.

    >>> from hetlab import schedulers as S
    >>> from hetlab.devices import Device
    >>> from hetlab.tasks import Task, TaskGraph
    >>> chain = TaskGraph([Task("a", 2.0), Task("b", 2.0)], [("a", "b")])
    >>> sim = S.central_queue(chain, [Device(w, "CPU", 1000.0) for w in "uv"], ready="fifo")
    >>> h = {"released": ((1e-3,),) * 3, "queued": ((),) * 3, "stretch": ((0.0,),) * 3}
    >>> p = predict_extra(sim, h)             # every draw the same: two released hand-overs of 1 ms
    >>> round(p.extra * 1e3, 6), round(p.low * 1e3, 6), round(p.high * 1e3, 6), p.released, p.queued
    (2.0, 2.0, 2.0, 2, 0)
    """
    check_instance("simulated", simulated, Schedule)
    typical = handover_costs(handovers)            # validates handovers
    rows = {k: [list(map(float, b)) for b in handovers[k]] for k in ("released", "queued", "stretch")}
    draws = check_int("draws", draws, low=20, high=10_000)
    coverage = check_positive("coverage", coverage, high=0.99)
    seed = check_int("seed", seed, low=0)
    everything = {k: [t for b in v for t in b] for k, v in rows.items()}
    if not everything["queued"]:                     # nothing queued in the calibration: as handover_costs says
        everything["queued"] = everything["released"]
    n, rng = len(simulated.graph.tasks), np.random.default_rng(seed)
    extra = np.empty(draws)
    for d in range(draws):
        b = int(rng.integers(len(rows["released"])))
        cost = {k: rng.choice(rows[k][b] or everything[k], n) for k in rows}
        extra[d] = dispatch_simulation(simulated, cost["released"], cost["queued"], cost["stretch"])[0]
    extra -= simulated.makespan
    low, high = np.quantile(extra, [(1 - coverage) / 2, (1 + coverage) / 2])
    flags = dispatch_simulation(simulated, typical.released, typical.queued, typical.stretch)[1]
    return Prediction(simulated.makespan, float(np.median(extra)), float(low), float(high), coverage,
                      int(n - flags.sum()), int(flags.sum()), draws)


def split_lines(prediction: Prediction, costs: Costs, workers: int) -> str:
    """A1.4's prediction, printed before the run from the simulation and the calibration alone: how many tasks
    the simulation releases and queues with the typical ``costs`` (:func:`handover_costs`), and the predicted
    extra time over the simulation with its interval (:func:`predict_extra`).

    >>> p = Prediction(0.004, 0.0013, 0.0009, 0.0016, 0.9, 1, 1, 400)
    >>> print(split_lines(p, Costs(1e-3, 1e-4, 1e-4), 1).splitlines()[1])
    运行前的预测：比不计派发的模拟（4.0 毫秒）多 1.3 毫秒；90% 预测区间 0.9 到 1.6 毫秒（400 次抽样模拟）
    """
    check_instance("prediction", prediction, Prediction)
    check_instance("costs", costs, Costs)
    workers = check_int("workers", workers, low=1, high=4096)
    p, ms = prediction, 1e3
    return "\n".join([
        f"模拟（P = {workers}）里 {p.released} 个任务被释放（就绪后晚一次释放交接才开始，平均 {_us(costs.released)}），"
        f"{p.queued} 个排队（工作进程空出来后晚一次排队交接，平均 {_us(costs.queued)}），每个任务平均拉长 "
        f"{_us(costs.stretch)}",
        f"运行前的预测：比不计派发的模拟（{p.simulated * ms:.1f} 毫秒）多 {p.extra * ms:.1f} 毫秒；"
        f"{p.coverage:.0%} 预测区间 {p.low * ms:.1f} 到 {p.high * ms:.1f} 毫秒（{p.draws} 次抽样模拟）"])


def _extra_verdict(extra: float, low: float, high: float) -> str:
    """The measured extra time over the simulation against the interval stated before the run."""
    ms = 1e3
    if extra > high:
        return f"高于预测区间 {(extra - high) * ms:.1f} 毫秒"
    if extra < low:
        return f"低于预测区间 {(low - extra) * ms:.1f} 毫秒"
    return "在预测区间之内"


def dispatch_lines(gaps, queued, costs: Costs) -> list[str]:
    """A1.4's diagnosis, no verdict: the mean gap (seconds, as :func:`~hetlab.real.execute.task_gaps` returns
    them) of the released tasks and of the queued ones (``queued``: one bool per task, as
    :func:`~hetlab.real.execute.queued_tasks` gives it for the measured run), each against its calibrated mean.

    >>> dispatch_lines([1e-3, 1e-4], [False, True], Costs(1e-3, 2e-4))
    ['诊断（不作判断）：被释放的 1 个任务平均空隙 1000 µs，是标定的 1.00 倍；排队的 1 个任务 100 µs，是标定的 0.50 倍']
    """
    values = np.array([check_nonnegative("gaps", g, high=60.0) for g in check_sequence("gaps", gaps)])
    flags = np.array([bool(check_instance("queued", q, (bool, np.bool_))) for q in check_sequence("queued", queued)],
                     dtype=bool)
    if len(values) == 0 or len(flags) != len(values):
        raise ValueError(f"gaps and queued must hold one entry per task (at least one), got {len(values)} and "
                         f"{len(flags)}")
    check_instance("costs", costs, Costs)
    parts = []
    kinds = ((~flags, "被释放的", costs.released, "平均空隙 "), (flags, "排队的", costs.queued, " "))
    for mask, name, cost, unit in kinds:
        if mask.any():
            mean = float(np.mean(values[mask]))
            parts.append(f"{name} {int(mask.sum())} 个任务{unit}{_us(mean)}，是标定的 {mean / cost:.2f} 倍")
        else:
            parts.append(f"没有{name}任务")
    return ["诊断（不作判断）：" + "；".join(parts)]


def dag_lines(measured: Schedule, prediction: Prediction, costs: Costs, reference=None) -> str:
    """A1.4 after the run: the measured extra time over the simulation against the interval stated before the
    run (:func:`predict_extra`), the one comparison; then, as diagnosis, where the extra time went (tasks
    stretched beyond their set length against the gaps between tasks, :func:`~hetlab.real.execute.task_gaps`,
    summed over the workers and per worker) and each kind's mean gap against its calibrated mean
    (:func:`dispatch_lines`); last each stored machine's A1.4 (``reference``: one
    :class:`~hetlab.book.reference.Reference` or several)."""
    check_instance("measured", measured, Schedule)
    check_instance("prediction", prediction, Prediction)
    check_instance("costs", costs, Costs)
    p, ms = prediction, 1e3
    workers = len(measured.devices)
    extra = measured.makespan - p.simulated
    waits = np.array([t.work for t in measured.graph.tasks]) * 1e-3
    stretched = float(np.sum((measured.end - measured.start) - waits))
    gaps = task_gaps(measured)
    where = "多出的时间主要是任务本身被拉长" if stretched > gaps.sum() else "多出的时间主要在任务之间的空隙"
    lines = [f"实测 {measured.makespan * ms:.1f} 毫秒，比模拟多 {extra * ms:.1f} 毫秒（预测多 {p.extra * ms:.1f}，"
             f"{p.coverage:.0%} 预测区间 {p.low * ms:.1f} 到 {p.high * ms:.1f} 毫秒）："
             + _extra_verdict(extra, p.low, p.high),
             f"逐个任务对账（{workers} 个工作进程合计）：任务本身比设定的等待长 {stretched * ms:.1f} 毫秒，"
             f"任务之间的空隙 {gaps.sum() * ms:.1f} 毫秒；除以 {workers}，每个工作进程平均 "
             f"{stretched / workers * ms:.1f} + {gaps.sum() / workers * ms:.1f} 毫秒：{where}",
             *dispatch_lines(gaps, queued_tasks(measured), costs)]
    for ref in _refs(reference):
        if ref.dag and "extras_s" in ref.dag:
            lines.append(_reference_dag(ref))
    return "\n".join(lines)


def _reference_dag(ref: Reference) -> str:
    """A stored machine's A1.4: one calibration (recorded with its own label where it was recorded apart),
    then a run of the graph repeated (``extras_s``: each run's extra time over the simulation), tallied against
    the interval stated before the runs."""
    d, ms = ref.dag, 1e3
    extras = np.asarray(d["extras_s"], dtype=float)
    low, high = d["interval_s"]
    inside = int(np.sum((extras >= low) & (extras <= high)))
    above, below = int(np.sum(extras > high)), int(np.sum(extras < low))
    # two decimals: a run just outside the interval must not print as its edge
    return (f"参照 · {d.get('label', ref.label)}：P = {d['workers']}，预测多 {d['extra_s'] * ms:.2f} 毫秒，"
            f"{d['coverage']:.0%} 预测区间 {low * ms:.2f} 到 {high * ms:.2f} 毫秒；"
            f"同一份标定之后连跑 {len(extras)} 次，"
            f"实测多 {extras.min() * ms:.2f} 到 {extras.max() * ms:.2f} 毫秒（中位数 {np.median(extras) * ms:.2f}），"
            f"{inside} 次在区间里，{above} 次高于区间，{below} 次低于区间")
