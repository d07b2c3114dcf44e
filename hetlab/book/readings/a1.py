"""Appendix A1 (real execution): readings of the measured cells, each next to a stored reference reading.

Every reading states the prediction first, made before the run from calibration alone (A1.1's figures, the
plan, the known work), then the measurement, then a verdict that follows from the printed numbers, and last
the same experiment on a named machine (:mod:`hetlab.book.reference`). The verdicts use no threshold that the
printed numbers do not show, so a reader can check each one by eye. A1.1's calibration lives in
:mod:`~hetlab.book.readings.a1_calibration`, A1.4's task graph in :mod:`~hetlab.book.readings.a1_dag` and its
interval in :mod:`~hetlab.book.readings.a1_band`; all are re-exported here, the one module the appendix imports.
"""
from __future__ import annotations

import math

from hetlab._validate import check_instance, check_int, check_positive
from hetlab.book.readings.a1_band import (
    CONDITIONS,
    condition,
    enough_pairs,
    error_band,
    left_condition,
    matching_pairs,
    reference_pairs,
    stayed,
    steady,
)
from hetlab.book.readings.a1_calibration import Costs, _refs, _us, calibration_lines, handover_costs
from hetlab.book.readings.a1_dag import (
    Prediction,
    calibration_disturbed,
    dag_lines,
    dispatch_lines,
    dispatch_schedule,
    dispatch_simulation,
    graph_predictions,
    predict_extra,
    split_lines,
    typical_costs,
)
from hetlab.book.readings.ch12 import TOLERANCE, process_verdict, thread_verdict
from hetlab.models import granularity as G
from hetlab.real.experiments import Run, SweepReading
from hetlab.schedule import Schedule

__all__ = ["Costs", "handover_costs", "calibration_lines", "plan_prediction", "plan_lines",
           "sweep_prediction", "sweep_lines", "dispatch_schedule", "dispatch_simulation", "Prediction",
           "error_band", "predict_extra", "graph_predictions", "typical_costs", "reference_pairs", "CONDITIONS",
           "condition", "matching_pairs", "enough_pairs", "left_condition", "stayed", "steady", "calibration_disturbed",
           "split_lines", "dispatch_lines", "dag_lines", "FINE"]

#: A1.3's finest split is "as predicted" when its measured cost lies within this factor of (N - P) O_s either
#: way: O_s is an average over one calibration, and two equal calibrations of an idle machine differ by a
#: third or more, so the prediction is only good to a factor, and the verdict says so before the run.
FINE = 2.0


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
    # wall = CPU seconds / parallelism: name the factor that shortened it more (review A1-24: comparing the shares
    # alone named "a larger share" for 1.0004 against 1.0000 while the CPU seconds fell 7%)
    larger_share = threads.parallelism / serial.parallelism
    fewer_seconds = serial.cpu / threads.cpu if threads.cpu > 0 else math.inf
    reason = "线程池分到的 CPU 份额更大" if larger_share > fewer_seconds else "这次线程池的循环用的 CPU 秒更少"
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
