"""Appendix A1 (real execution): readings of the measured cells, each next to a stored reference reading.

Every reading states the prediction first, made before the run from calibration alone (A1.1's figures, the
plan, the known work), then the measurement, then one verdict that follows from the printed numbers, and
last the same experiment on a named machine (:mod:`hetlab.book.reference`). The verdicts use no threshold
that the printed numbers do not show, so a reader can check each one by eye.
"""
from __future__ import annotations

import numpy as np

from hetlab._validate import check_instance, check_int, check_positive
from hetlab.book.readings.ch12 import process_verdict, thread_verdict
from hetlab.book.reference import Reference
from hetlab.models import granularity as G
from hetlab.real.execute import task_gaps
from hetlab.real.experiments import Run, SweepReading
from hetlab.schedule import Schedule

__all__ = ["BAND", "calibration_lines", "plan_prediction", "plan_lines", "sweep_prediction", "sweep_lines",
           "dag_prediction", "dag_lines"]

#: A measured makespan within this relative band of its prediction counts as "as predicted".
BAND = 0.15


def _ref(reference, name: str = "reference") -> Reference | None:
    return None if reference is None else check_instance(name, reference, Reference)


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.0f} µs"


def calibration_lines(cal: dict, round_trip: float, reference: Reference | None = None,
                      h200: Reference | None = None) -> str:
    """A1.1: this machine's CPUs, FP64 matmul rate (with its BLAS threads) and dispatch overheads
    (``cal`` from :func:`hetlab.real.measure.calibrate`, ``round_trip`` in seconds), then the same figures
    of the stored machines."""
    needed = {"cpus", "matmul_gflops", "thread_overhead_s", "process_overhead_s"}
    if not isinstance(cal, dict) or not needed <= set(cal):
        raise TypeError(f"cal must be the dict returned by hetlab.real.measure.calibrate(), got {cal!r:.80}")
    round_trip = check_positive("round_trip", round_trip)

    def line(c: dict, trip: float | None) -> str:
        blas = c.get("blas_threads")
        text = (f"{c['cpus']} 个可用 CPU；FP64 矩阵乘 {c['matmul_gflops']:.0f} GFLOP/s"
                + (f"（BLAS 用 {blas} 个线程）" if blas else "")
                + f"；派发开销 O_s：线程池 {_us(c['thread_overhead_s'])}，进程池 {_us(c['process_overhead_s'])}")
        return text + (f"，进程池单次往返 {_us(trip)}" if trip else "")

    lines = ["本机：" + line(cal, round_trip),
             f"  进程池的单次往返是流水线 O_s 的 {round_trip / cal['process_overhead_s']:.1f} 倍，"
             f"进程池的 O_s 是线程池的 {cal['process_overhead_s'] / cal['thread_overhead_s']:.1f} 倍"]
    for ref in (_ref(reference), _ref(h200, "h200")):
        if ref is not None and ref.calibration:
            lines.append(f"参照 · {ref.label}：" + line(ref.calibration, ref.calibration.get("round_trip_s")))
    return "\n".join(lines)


def plan_prediction(plan: Schedule, seconds_per_unit: float, cpus: int) -> tuple[int, float]:
    """(cores the process pool can use, lower bound on its makespan in seconds) for chapter 11's plan run on
    ``cpus`` CPUs: min(cpus, devices) and max(planned makespan, total busy time / that many cores)."""
    check_instance("plan", plan, Schedule)
    scale = check_positive("seconds_per_unit", seconds_per_unit)
    cpus = check_int("cpus", cpus, low=1, high=4096)
    cores = min(cpus, len(plan.devices))
    return cores, max(plan.makespan * scale, float(plan.busy.sum()) * scale / cores)


def _share_line(threads: Run, serial: Run) -> list[str]:
    """When the thread pool beats the serial run in wall clock without computing on more than one core, the
    line that says why (wall = CPU seconds / parallelism): a larger CPU share, or fewer CPU seconds."""
    if threads.wall >= serial.wall or threads.parallelism > 1.05:
        return []
    reason = ("线程池分到的 CPU 份额更大" if threads.parallelism > serial.parallelism
              else "这次线程池的循环用的 CPU 秒更少")
    return [f"线程池的墙钟比单线程依次执行还短（{threads.wall:.3f} 对 {serial.wall:.3f} 秒），但不是并行：{reason}"
            f"（有效并行度 {threads.parallelism:.2f} 对 {serial.parallelism:.2f}，"
            f"CPU 秒 {threads.cpu:.3f} 对 {serial.cpu:.3f}）"]


def plan_lines(runs: dict, plan: Schedule, seconds_per_unit: float, cpus: int,
               reference: Reference | None = None) -> str:
    """A1.2: the prediction (threads at most one core; processes at most min(cpus, devices) cores, makespan
    at least :func:`plan_prediction`'s bound), the three runs of :func:`hetlab.real.experiments.plan_runs`
    (makespan and effective parallelism), the verdicts, and the stored machine's parallelism."""
    if not isinstance(runs, dict) or set(runs) != {"thread pool", "process pool", "sequential"}:
        raise TypeError(f"runs must be the dict returned by plan_runs, got {runs!r:.80}")
    cores, bound = plan_prediction(plan, seconds_per_unit, cpus)
    r = {k: Run.of(s) for k, s in runs.items()}
    proc = runs["process pool"].makespan
    lines = [f"运行前的预测：线程池 ≤ 1 个核；进程池 ≤ min({cpus}, {len(plan.devices)}) = {cores} 个核，"
             f"完成时间不少于 {bound:.3f} 秒（下界）",
             f"实测（有效并行度 = CPU 秒 ÷ 墙钟秒）：单线程依次执行 {runs['sequential'].makespan:.3f} 秒"
             f"（{r['sequential'].parallelism:.2f}），线程池 {runs['thread pool'].makespan:.3f} 秒"
             f"（{r['thread pool'].parallelism:.2f}），进程池 {proc:.3f} 秒（{r['process pool'].parallelism:.2f}）",
             thread_verdict(r["thread pool"].parallelism, f"{len(plan.devices)} 个线程"),
             *_share_line(r["thread pool"], r["sequential"]),
             process_verdict(r["process pool"].parallelism, cores, r["sequential"].parallelism)
             + (f"；完成时间 {proc:.3f} 秒，不低于下界" if proc >= bound else
                f"；完成时间 {proc:.3f} 秒，低于下界 {bound:.3f} 秒：这次循环跑得比标定时快")]
    ref = _ref(reference)
    if ref is not None and ref.plan:
        par = {k: f"{v.parallelism:.2f}" for k, v in ref.plan.items()}
        idle = ref.plan["process pool"].parallelism > 1.0
        lines.append(f"参照 · {ref.label}：单线程 {par['sequential']}，线程池 {par['thread pool']}，"
                     f"进程池 {par['process pool']}"
                     + ("" if idle else "（这份参照测时也没有空闲的核，进程池同样没有超过 1 个核）"))
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


def sweep_lines(sweep: SweepReading, os_: float, reference: Reference | None = None) -> str:
    """A1.3: the prediction and the measurement at every N (a table in milliseconds), then the sawtooth at
    N = P + 1 and the cost of the finest split, each measured against predicted, and the stored machine's."""
    pred = sweep_prediction(sweep, os_)
    p, top = sweep.workers, sweep.counts[-1]
    lines = [f"运行前的预测：W = {sweep.total:g} 秒的等待分成 N 份，P = {p} 个工作者，O_s = A1.1 的进程池 O_s "
             f"{_us(os_)}",
             "    N   实测（毫秒）  预测（毫秒）  偏差"]
    for n, t in zip(sweep.counts, sweep.seconds):
        lines.append(f"{n:>5} {t * 1e3:>12.1f} {pred[n] * 1e3:>12.1f}   {t / pred[n] - 1:+.0%}")
    saw, tooth, fine = _sweep_facts(sweep)
    lines.append(f"锯齿：N = {p + 1} {'比' if saw else '并不比'} N = {p} 和 N = {2 * p} 都慢；比 N = {2 * p} 多 "
                 f"{tooth * 1e3:.1f} 毫秒（预测多 {(pred[p + 1] - pred[2 * p]) * 1e3:.1f} 毫秒）"
                 + ("：多出的一个任务独占第二轮" if saw else ""))
    lines.append(f"切细：N = {top} 比 N = {p} {'慢' if fine > 0 else '快'} {abs(fine) * 1e3:.1f} 毫秒（预测慢 "
                 f"{(pred[top] - pred[p]) * 1e3:.1f} 毫秒）" + ("：每多一个任务，就多付一次派发" if fine > 0 else ""))
    ref = _ref(reference)
    if ref is not None and ref.sweep is not None:
        rs, rt, rf = _sweep_facts(ref.sweep)
        lines.append(f"参照 · {ref.label}：P = {ref.sweep.workers}；N = P + 1 比 2P 多 {rt * 1e3:.1f} 毫秒，"
                     f"N = {ref.sweep.counts[-1]} 比 P 多 {rf * 1e3:.1f} 毫秒")
    return "\n".join(lines)


def dag_prediction(simulated: Schedule, round_trip: float) -> float:
    """Seconds predicted for a pool run of ``simulated``'s graph before the run: each task keeps its worker
    idle for one dispatch round trip (submit, result back to the parent), and the tasks are shared by the
    workers, so ``makespan + tasks * round_trip / workers``."""
    check_instance("simulated", simulated, Schedule)
    round_trip = check_positive("round_trip", round_trip, high=1.0)
    return simulated.makespan + len(simulated.graph.tasks) * round_trip / len(simulated.devices)


def dag_lines(simulated: Schedule, measured: Schedule, round_trip: float, reference: Reference | None = None) -> str:
    """A1.4: the prediction (:func:`dag_prediction`), the measured makespan and its deviation against the
    band :data:`BAND`, where the extra time over the simulation went (tasks stretched beyond their set
    length, summed, against the gaps between tasks, summed, as :func:`~hetlab.real.execute.task_gaps`
    measures them), a cause read from those two sums, and the stored machine's deviation."""
    check_instance("measured", measured, Schedule)
    pred = dag_prediction(simulated, round_trip)
    n, p = len(simulated.graph.tasks), len(simulated.devices)
    if len(measured.graph.tasks) != n:
        raise ValueError(f"measured must run the simulated graph's {n} tasks, got {len(measured.graph.tasks)}")
    dev = measured.makespan / pred - 1
    stretch = float(np.sum((measured.end - measured.start) - (simulated.end - simulated.start)))
    gaps = float(np.sum(task_gaps(measured)))
    dispatch = n * round_trip
    ms = 1e3
    lines = [f"运行前的预测：中心就绪队列模拟 {simulated.makespan * ms:.1f} 毫秒 + {n} 个任务 × 单次往返 "
             f"{_us(round_trip)} ÷ {p} 个工作者 = {pred * ms:.1f} 毫秒",
             f"实测 {measured.makespan * ms:.1f} 毫秒，偏差 (实测 − 预测) / 预测 = {dev:+.0%}；"
             f"比模拟多 {(measured.makespan - simulated.makespan) * ms:.1f} 毫秒（预测多 "
             f"{(pred - simulated.makespan) * ms:.1f} 毫秒）",
             f"逐个任务对账：任务本身比设定的等待长，合计 {stretch * ms:.1f} 毫秒；任务之间的空隙合计 "
             f"{gaps * ms:.1f} 毫秒（{n} 次往返合计 {dispatch * ms:.1f} 毫秒）"]
    band = (f"在 ±{BAND:.0%} 之内" if abs(dev) <= BAND else
            f"比预测慢 {BAND:.0%} 以上" if dev > 0 else f"比预测快 {BAND:.0%} 以上")
    if stretch > gaps:
        cause = "多出的时间主要是任务本身被拉长（等待醒得晚：核被别的程序占着），不是派发往返"
    elif gaps < dispatch:
        cause = "空隙合计少于每个任务一次往返：同时就绪的任务被池子预先取走，不少任务省掉了往返"
    else:
        cause = "多出的时间主要在任务之间，空隙合计不少于每个任务一次往返：派发是主因"
    lines.append(f"{band}：{cause}")
    if pred - simulated.makespan < BAND * pred:
        lines.append(f"注意：预测的派发只占预测的 {(pred - simulated.makespan) / pred:.0%}，小于 ±{BAND:.0%} "
                     "的带宽，单看完成时间分辨不出它；归因要看上面的逐个任务对账")
    if reference is not None and _ref(reference).dag:
        d = reference.dag
        lines.append(f"参照 · {reference.label}：预测 {d['predicted_s'] * ms:.1f} 毫秒，实测 "
                     f"{d['measured_s'] * ms:.1f} 毫秒（{d['measured_s'] / d['predicted_s'] - 1:+.0%}）")
    return "\n".join(lines)
