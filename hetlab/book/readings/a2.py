"""Appendix A2 (a real CPU + GPU run): the sentences and tables the appendix prints about the H200 readings.

Every number comes from the stored readings (:mod:`hetlab.real.readings`), a HEFT plan, or the host model
(:mod:`hetlab.models.host`) with the machine profile; these functions only put them into words.
"""
from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Mapping, Sequence
from itertools import permutations

from hetlab._validate import check_instance, check_int, check_positive, describe
from hetlab.models.host import TERMS, HostProfile, shapley, term_makespans
from hetlab.plotting import pad
from hetlab.real.readings import MeasuredRun
from hetlab.schedule import Schedule
from hetlab.workloads.cholesky import OPS, CholeskyCase, cholesky_graph, task_counts

__all__ = ["MACHINE_ZH", "GAP_ZH", "workload_lines", "plan_lines", "measured_lines", "trace_lines", "prediction_table",
           "calibration_lines", "host_limit_lines", "gpu_only_spread_lines", "planner_lines", "gap_lines",
           "heft_gap_lines", "cuda_graph_lines", "calibration_spread_lines", "timeline_lines",
           "race_verdict"]

#: How the appendix names the machine of the stored readings.
MACHINE_ZH = "一台 H200 + 16 核 CPU 的机器（2026-12-04 实测）"
_PLAN_ZH = {"gpu_only": "只用 GPU", "cpu_only": "只用 CPU", "hybrid_heft": "混合（HEFT）",
            "hybrid_heft_overhead_aware": "混合（HEFT，重拟合代价）", "hybrid_dispatch_aware": "考虑主机的计划"}


#: Plain names of the reading files of hetlab/data/readings/h200-2026-12-04 (the appendix's A2.4 explains them).
_SOURCE_ZH = {"h200": "基准", "h200_hetero": "线程数", "async_b256": "异步对照", "async_b512": "异步对照"}


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms"


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.0f} µs"


def workload_lines(case: CholeskyCase, gpu_flops: float | None = None, tile_matmul_s: float | None = None,
                   launch_sync_s: float | None = None) -> str:
    """The task graph of ``case`` (tiles, tasks of each kernel, edges) and its per-tile kernel times; with
    ``gpu_flops`` (the GPU's measured FP64 matmul rate on a large matrix, FLOP/s), the lower bound on a GEMM
    tile's arithmetic; with ``tile_matmul_s`` (a measured FP64 matmul of order b, launch and synchronise
    included) and ``launch_sync_s`` (one launch plus synchronise), the device time that measurement leaves."""
    check_instance("case", case, CholeskyCase)
    counts = task_counts(case.tiles)
    t = case.tiles
    edges = len(cholesky_graph(t).edges)
    lines = [f"n = {case.n}，b = {case.b}：{t} × {t} 个块，{counts['total']} 个任务"
             f"（POTRF {counts['potrf']}、TRSM {counts['trsm']}、SYRK {counts['syrk']}、GEMM {counts['gemm']}），"
             f"{edges} 条依赖边",
             f"每个块的核函数时间（{MACHINE_ZH}）：",
             f"  {pad('核函数', 8)}{pad('一个 CPU 线程', 16, right=True)}{pad('GPU', 12, right=True)}"
             f"{pad('CPU ÷ GPU', 12, right=True)}"]
    for op in OPS:
        cpu, gpu = case.op_costs[op]["CPU"], case.op_costs[op]["GPU"]
        lines.append(f"  {pad(op.upper(), 8)}{pad(_us(cpu), 16, right=True)}{pad(_us(gpu), 12, right=True)}"
                     f"{pad(f'{cpu / gpu:.1f}', 12, right=True)}")
    lines.append(f"  一个块在 CPU 内存与 GPU 之间拷贝一次：{_us(case.tile_copy_s)}")
    if gpu_flops is not None:
        rate = check_positive("gpu_flops", gpu_flops)
        flop = 2.0 * case.b ** 3
        lines.append(f"  一个 GEMM 块的运算量 2b³ = {flop / 1e6:.1f} MFLOP，按大矩阵的 FP64 矩阵乘速度 "
                     f"{rate / 1e12:.1f} TFLOP/s 算只需 {flop / rate * 1e6:.2f} µs（下界：小矩阵填不满 GPU）")
    overhead = None if launch_sync_s is None else check_positive("launch_sync_s", launch_sync_s)
    if tile_matmul_s is not None:
        alone = check_positive("tile_matmul_s", tile_matmul_s)
        text = f"  单独测的 {case.b} 阶 FP64 矩阵乘：{alone * 1e6:.1f} µs（含一次发射和同步）"
        if overhead is not None:
            overhead = check_positive("launch_sync_s", overhead, high=alone)
            text += (f"；一次发射加同步 {overhead * 1e6:.1f} µs，"
                     f"设备上的运算约 {(alone - overhead) * 1e6:.0f} µs")
        lines.append(text)
    return "\n".join(lines)


def plan_lines(hybrid: Schedule, gpu_only: Schedule) -> str:
    """HEFT's own simulation of the two plans: the GPU alone, and the GPU with CPU workers."""
    check_instance("hybrid", hybrid, Schedule)
    check_instance("gpu_only", gpu_only, Schedule)
    workers = len(hybrid.devices) - 1
    n, on_gpu = len(hybrid.graph.tasks), sum(hybrid.devices[j].kind == "GPU" for j in hybrid.device_of)
    return "\n".join([
        f"HEFT 的模拟：只用 GPU {_ms(gpu_only.makespan)}；GPU + {workers} 个 CPU 工作线程 {_ms(hybrid.makespan)}"
        f"（GPU 上 {on_gpu} 个任务，CPU 上 {n - on_gpu} 个）",
        f"按 HEFT 的模型，只用 GPU 的用时是混合计划的 {gpu_only.makespan / hybrid.makespan:.2f} 倍"])


def measured_lines(gpu_only_s: float, hybrid_s: float, hybrid_plan: Schedule) -> str:
    """The measured makespans of the two plans, and what HEFT had promised."""
    gpu_only_s = check_positive("gpu_only_s", gpu_only_s)
    hybrid_s = check_positive("hybrid_s", hybrid_s)
    check_instance("hybrid_plan", hybrid_plan, Schedule)
    return "\n".join([
        f"实测（{MACHINE_ZH}）：只用 GPU {_ms(gpu_only_s)}；混合计划 {_ms(hybrid_s)}",
        f"混合计划的用时是只用 GPU 的 {hybrid_s / gpu_only_s:.1f} 倍，"
        f"是 HEFT 模拟的 {hybrid_s / hybrid_plan.makespan:.1f} 倍"])


def _gaps_and_lengths(schedule: Schedule, kind: str) -> tuple[list[float], list[float]]:
    """For the tasks on devices of ``kind``: how long each waited after it could have started (its device free
    and its inputs done), and how long it ran."""
    g = schedule.graph
    waits, lengths = [], []
    free: dict[int, float] = {}
    for i in sorted(range(len(g.tasks)), key=lambda k: schedule.start[k]):
        j = int(schedule.device_of[i])
        if schedule.devices[j].kind != kind:
            continue
        ready = max([free.get(j, 0.0), *(float(schedule.end[p]) for p in g.preds[i])])
        waits.append(max(float(schedule.start[i]) - ready, 0.0))
        lengths.append(float(schedule.end[i] - schedule.start[i]))
        free[j] = float(schedule.end[i])
    return waits, lengths


def trace_lines(measured: Schedule, gpu_alone: Schedule) -> str:
    """What the stored traces show: with CPU workers beside it, each GPU task waits longer before it starts
    (its inputs done, the GPU free) and runs longer than when the GPU works alone."""
    check_instance("measured", measured, Schedule)
    check_instance("gpu_alone", gpu_alone, Schedule)
    wait_alone, run_alone = _gaps_and_lengths(gpu_alone, "GPU")
    wait_mixed, run_mixed = _gaps_and_lengths(measured, "GPU")
    if not (wait_alone and wait_mixed):
        raise ValueError("measured and gpu_alone must both hold tasks on a GPU")
    idle = 1 - sum(run_mixed) / measured.makespan
    return "\n".join([
        f"GPU 单独工作时：任务前的等待中位数 {_us(statistics.median(wait_alone))}，"
        f"任务时长中位数 {_us(statistics.median(run_alone))}",
        f"旁边有 CPU 工作线程时：等待中位数 {_us(statistics.median(wait_mixed))}，"
        f"时长中位数 {_us(statistics.median(run_mixed))}",
        f"混合运行中，GPU 有 {idle:.0%} 的时间在空等——输入早已备好，它在等主机"])


def prediction_table(runs: Sequence[MeasuredRun], predicted: Sequence[float]) -> str:
    """Every stored makespan beside HEFT's simulation and the host model's value (``predicted``, seconds, one
    per run), with the model's error; a last line gives the largest error. The synchronising runs are the ones
    the profile was calibrated on, so their values are labelled fitted (拟合), the others predicted (预测)."""
    if isinstance(runs, (str, bytes)) or not isinstance(runs, Sequence) or not runs:
        raise TypeError(f"runs must be a non-empty list of MeasuredRun, got {describe(runs)}")
    for run in runs:
        check_instance("a run in runs", run, MeasuredRun)
    if isinstance(predicted, (str, bytes)) or not isinstance(predicted, Sequence) or len(predicted) != len(runs):
        raise ValueError(f"predicted must give one makespan per run ({len(runs)}), got {describe(predicted)}")
    head = (f"{pad('读数', 10)}{pad('n, b', 12)}{pad('模式', 12)}{pad('计划', 24)}{pad('CPU', 5, right=True)}"
            f"{pad('HEFT 模拟', 12, right=True)}{pad('主机模型', 12, right=True)}{pad('实测', 10, right=True)}"
            f"{pad('误差', 8, right=True)}")
    lines = [head]
    worst = 0.0
    for run, p in zip(runs, predicted):
        p = check_positive("a makespan in predicted", p)
        error = p / run.measured_s - 1
        worst = max(worst, abs(error))
        mode = "同步·拟合" if run.mode == "sync" else "异步·预测"
        lines.append(f"{pad(_SOURCE_ZH[run.source.split('.')[0]], 10)}{pad(f'{run.case.n}, {run.case.b}', 12)}"
                     f"{pad(mode, 12)}"
                     f"{pad(_PLAN_ZH[run.plan], 24)}{pad(str(run.cpu_workers or '–'), 5, right=True)}"
                     f"{pad(_ms(run.simulated_s), 12, right=True)}{pad(_ms(p), 12, right=True)}"
                     f"{pad(_ms(run.measured_s), 10, right=True)}{pad(f'{error:+.0%}', 8, right=True)}")
    lines.append(f"模型在全部 {len(runs)} 个读数上的最大误差：{worst:.0%}")
    return "\n".join(lines)


def calibration_lines(profile: HostProfile) -> str:
    """The machine profile's constants, what they were calibrated on, and the hold-out errors it records."""
    check_instance("profile", profile, HostProfile)
    record = profile.calibration
    if "held_out" not in record:
        raise ValueError(f"profile {profile.name!r} records no calibration (see tools/calibrate_host_profile.py)")
    names = {"h200_hetero.json -> every other run": "只用 h200_hetero.json 校准 → 其余读数",
             "every other synchronising run -> h200_hetero.json": "用其余同步读数校准 → h200_hetero.json",
             "256-tile runs (synchronising) -> 512-tile runs": "只用 256 的块校准 → 512 的块"}
    lines = [f"机器参数 {profile.name}：每次占用主机 {_us(profile.hold_s)}，唤醒时间 λ {_us(profile.handoff_s)}，"
             f"k 个块同时计算时每块的用时是单独算的 {profile.slowdown_base:.2f} + {profile.slowdown_log:.2f}·ln k 倍，"
             f"切换间隔 {profile.switch_interval_s * 1e3:g} ms（CPython 默认值，不拟合）",
             f"校准：在 {len(record['calibrated_on'])} 个同步读数上一次拟合；"
             f"不同步的 {len(record['runs']) - len(record['calibrated_on'])} 个读数只用来检验",
             "留出检验（用一部分读数校准，在其余读数上比较）："]
    for key, split in record["held_out"].items():
        lines.append(f"  {names.get(key, key)}：最大误差 {split['max_abs_error']:.0%}")
    lines.append(f"对照：只把每个任务 30 µs 的主机时间串起来、没有交接代价的模型，最大误差 "
                 f"{record['naive_serialised_30us']['max_abs_error']:.0%}")
    return "\n".join(lines)


def host_limit_lines(case: CholeskyCase, profile: HostProfile, gpu_only_s: float) -> str:
    """Where the fitted constants stop meaning what their names say: two host visits (2h) against each kernel's
    GPU cost (the model gives a GPU task max(cost - 2h, 0) of device time), the host bound h * sum(v) of the
    GPU-only plan of ``case`` against its measured makespan ``gpu_only_s``, and s(1)."""
    check_instance("case", case, CholeskyCase)
    check_instance("profile", profile, HostProfile)
    gpu_only_s = check_positive("gpu_only_s", gpu_only_s)
    hold = profile.hold_s
    device = {op.upper(): max(case.op_costs[op]["GPU"] - 2 * hold, 0.0) for op in OPS}
    tiny = [op for op, d in device.items() if d < 1e-6]
    visits = 2 * task_counts(case.tiles)["total"]       # one device: no copies, two visits per task
    bound = visits * hold
    lines = [f"两次占用主机 2h = {_us(2 * hold)}；模型留给 GPU 任务的设备时间（实测代价 − 2h）："
             + "，".join(f"{op} {d * 1e6:.1f} µs" for op, d in device.items()),
             f"只用 GPU：{visits} 次占用主机，下界 h·Σv = {_ms(bound)}；实测 {_ms(gpu_only_s)}"
             f"（{'低于' if gpu_only_s < bound else '高于'}下界 {abs(gpu_only_s / bound - 1):.1%}"
             + ("：拟合的 h 是等效值，只用 GPU 时偏大）" if gpu_only_s < bound else "）"),
             f"只有一个 CPU 块在算时 s(1) = {profile.slowdown(1):.2f}：比单独标定的单线程时间慢 "
             f"{profile.slowdown(1) - 1:.0%}"]
    if tiny:
        lines.insert(1, f"  {'、'.join(tiny)} 在模型里几乎没有设备时间（不到 1 µs）")
    return "\n".join(lines)


def gpu_only_spread_lines(runs: Sequence[MeasuredRun], predicted: Sequence[float], b: int = 256) -> str:
    """The synchronising GPU-only runs of ``b``-tiles (``runs`` with the model's values ``predicted``, seconds):
    the same configuration measured several times, each beside the model's one value and its error."""
    if not (isinstance(runs, list) and isinstance(predicted, list) and len(predicted) == len(runs)):
        raise ValueError(f"runs and predicted must be lists of one length, got {describe(runs)}, {describe(predicted)}")
    b = check_int("b", b, low=1)
    same = sorted((check_instance("a run in runs", r, MeasuredRun).measured_s, check_positive("predicted", p), r)
                  for r, p in zip(runs, predicted) if r.plan == "gpu_only" and r.mode == "sync" and r.case.b == b)
    if not same:
        raise ValueError(f"b = {b}: runs must hold a synchronising GPU-only run of b-tiles, got none")
    ns = sorted({r.case.n for *_, r in same})
    return (f"只用 GPU、同步、b = {b}（n = {'、'.join(map(str, ns))}）的 {len(same)} 次运行，从快到慢：\n"
            + "\n".join(f"  {_SOURCE_ZH[r.source.split('.')[0]]}：实测 {_ms(m)}，模型 {_ms(p)}，误差 {p / m - 1:+.0%}"
                        for m, p, r in same))


def planner_lines(predictions: Mapping, chosen: Mapping[int, int]) -> str:
    """The predicted makespans of :func:`~hetlab.workloads.cholesky.predict_makespans` per worker count, and the
    number of CPU workers the dispatch-aware plan chose (``chosen``: workers -> CPU workers used)."""
    if not isinstance(predictions, Mapping) or "gpu_only" not in predictions:
        raise TypeError(f"predictions must be the dict of predict_makespans, got {describe(predictions)}")
    if not isinstance(chosen, Mapping):
        raise TypeError(f"chosen must map each worker count to the CPU workers used, got {describe(chosen)}")
    gpu = check_positive("predictions['gpu_only']", predictions["gpu_only"])
    lines = [f"模型预测：只用 GPU {_ms(gpu)}",
             f"  {pad('CPU 工作线程', 14)}{pad('只用 CPU', 12, right=True)}{pad('混合（HEFT）', 14, right=True)}"
             f"{pad('考虑主机的计划', 16, right=True)}{pad('用了几个 CPU', 14, right=True)}"]
    for key, row in predictions.items():
        if key == "gpu_only":
            continue
        w = int(key[3:])
        check_int(f"chosen[{w}]", chosen.get(w), low=0)
        lines.append(f"  {pad(str(w), 14)}{pad(_ms(row['cpu_only']), 12, right=True)}"
                     f"{pad(_ms(row['hybrid_heft']), 14, right=True)}"
                     f"{pad(_ms(row['hybrid_dispatch_aware']), 16, right=True)}{pad(str(chosen[w]), 14, right=True)}")
    return "\n".join(lines)


#: The terms of :func:`hetlab.models.host.term_makespans`, as the appendix names them.
GAP_ZH = {"copies": "拷贝（GPU 线程逐个等）", "slowdown": "CPU 块一起算变慢", "hold": "占用主机 h",
          "handoff": "交接（唤醒时间 λ）"}


def gap_lines(hybrid: Schedule, profile: HostProfile, measured_s: float, gpu_only: Schedule | None = None) -> str:
    """Where the host model's extra time on ``hybrid`` comes from, free of any order of the four terms
    (:func:`~hetlab.models.host.term_makespans`): each term's increment added first, added last, its range over
    the 24 orders and its Shapley value; the host's two terms together, the copies behind the copy term, the
    measured makespan ``measured_s``; with ``gpu_only``, that plan's value with a free host and with the profile's."""
    check_instance("hybrid", hybrid, Schedule)
    measured_s = check_positive("measured_s", measured_s)
    v = term_makespans(hybrid, check_instance("profile", profile, HostProfile))
    none, full, phi = v[frozenset()], v[frozenset(TERMS)], shapley(v)
    lines = [f"  {pad('一项', 24)}{pad('单独加上', 11, right=True)}{pad('最后加上', 11, right=True)}"
             f"{pad('24 种次序里', 16, right=True)}{pad('Shapley 值', 12, right=True)}"]
    for t in TERMS:
        adds = [v[s | {t}] - v[s] for s in v if t not in s]   # every order adds t to one of these sets
        lines.append(f"  {pad(GAP_ZH[t], 24)}{pad(f'+{_ms(v[frozenset({t})] - none)}', 11, right=True)}"
                     f"{pad(f'+{_ms(full - v[frozenset(TERMS) - {t}])}', 11, right=True)}"
                     f"{pad(f'{min(adds) * 1e3:.1f}–{_ms(max(adds))}', 16, right=True)}"
                     f"{pad(_ms(phi[t]), 12, right=True)}")
    host, copies_max = [], -math.inf
    for order in permutations(TERMS):
        steps = [frozenset(order[:k]) for k in range(5)]
        adds = {t: v[after] - v[before] for t, before, after in zip(order, steps, steps[1:])}
        host.append(adds["hold"] + adds["handoff"])
        copies_max = max(copies_max, adds["copies"] - host[-1])
    extra = full - none

    def share(seconds: float) -> str:
        return f"{seconds / extra:.0%}" if extra > 0 else "–"

    lines += [f"四项都不加 {_ms(none)}（HEFT 的计划，主机不花时间），四项都加 {_ms(full)}，实测 {_ms(measured_s)}；"
              f"多出 {_ms(extra)}，四个 Shapley 值合起来正好是它",
              f"主机两项（h 与 λ）合起来：Shapley 值 {_ms(phi['hold'] + phi['handoff'])}"
              f"（多出时间的 {share(phi['hold'] + phi['handoff'])}）；24 种次序里 "
              f"{min(host) * 1e3:.1f}–{_ms(max(host))}（{share(min(host))}–{share(max(host))}），"
              + ("每种次序里都比拷贝一项多" if copies_max < 0 else "有的次序里不如拷贝一项多"),
              f"单独加上 λ：多出 {_ms(v[frozenset({'handoff'})] - none)}（没有占用，就没有交接）"]
    accel, on = [d.kind in profile.accelerator_kinds for d in hybrid.devices], hybrid.device_of.tolist()
    copies = sum(not accel[on[p]] and accel[on[i]] for i, ps in enumerate(hybrid.graph.preds) for p in ps)
    link = max(d.link.latency for d in hybrid.devices if d.kind in profile.accelerator_kinds)
    lines.append(f"拷贝一项：计划里有 {copies} 条 CPU → GPU 的依赖，{copies} × {_us(link)} = {_ms(copies * link)}"
                 f"（HEFT 让拷贝和 GPU 的计算重叠，主机模型里 GPU 线程逐个等它们）")
    if gpu_only is not None:
        alone = term_makespans(check_instance("gpu_only", gpu_only, Schedule), profile)
        lines.append(f"只用 GPU 的计划：占用与交接都不花时间 {_ms(alone[frozenset({'copies', 'slowdown'})])}，"
                     f"按校准的参数 {_ms(alone[frozenset(TERMS)])}")
    lines.append(f"混合计划：唤醒不花时间（λ = 0）{_ms(v[frozenset(TERMS) - {'handoff'}])}；"
                 f"占用与交接都不花时间 {_ms(v[frozenset({'copies', 'slowdown'})])}")
    return "\n".join(lines)


def heft_gap_lines(runs: Sequence[MeasuredRun]) -> str:
    """How far HEFT's own simulation falls from each stored makespan, by kind of plan and tile size: the range
    of simulated / measured - 1 (GPU or CPU only) or of measured / simulated (hybrid plans)."""
    if isinstance(runs, (str, bytes)) or not isinstance(runs, Sequence) or not runs:
        raise TypeError(f"runs must be a non-empty list of MeasuredRun, got {describe(runs)}")
    groups: dict[tuple[str, int], list[float]] = {}
    for r in runs:
        kind = "hybrid" if check_instance("a run in runs", r, MeasuredRun).plan.startswith("hybrid") else r.plan
        groups.setdefault((kind, r.case.b if kind == "hybrid" else 0), []).append(r.simulated_s / r.measured_s)
    lines = ["HEFT 的模拟与实测比："]
    for (kind, b), q in sorted(groups.items()):
        if kind == "hybrid":
            lines.append(f"  混合计划，b = {b}：实测用时是模拟的 {1 / max(q):.1f}–{1 / min(q):.1f} 倍"
                         f"（{len(q)} 个读数）")
        else:
            lines.append(f"  {_PLAN_ZH[kind]}：模拟偏差 {min(q) - 1:+.0%} 到 {max(q) - 1:+.0%}（{len(q)} 个读数）")
    return "\n".join(lines)


def cuda_graph_lines(launch: Mapping, gpu_only_s: float, tasks: int, library_s: float, device_s: float) -> str:
    """What a CUDA graph would change: the stored launch costs (``launch``: the ``launch`` section of
    h200.json), the measured GPU-only time per task, the whole-matrix library call, and the floor a replay cannot
    beat: ``tasks`` kernels of ``device_s`` device time each, one after another on one stream.

    >>> from hetlab.real.readings import reading
    >>> print(cuda_graph_lines(reading("h200")["launch"], 0.0247, 364, 0.0016, 13e-6).splitlines()[-1])
    重放的下限：364 个任务 × 设备上约 13 µs ≈ 4.7 ms（一条流上顺序执行），是库函数的 3.0 倍
    """
    if not isinstance(launch, Mapping) or "per_kernel_in_cuda_graph_us" not in launch:
        raise TypeError(f"launch must be the 'launch' section of h200.json, got {describe(launch)}")
    gpu_only_s = check_positive("gpu_only_s", gpu_only_s)
    library_s = check_positive("library_s", library_s)
    device_s = check_positive("device_s", device_s)
    tasks = check_int("tasks", tasks, low=1)
    per_task = gpu_only_s / tasks
    graph_s = tasks * launch["per_kernel_in_cuda_graph_us"] * 1e-6
    floor = tasks * device_s
    return "\n".join([
        f"一个很小的核函数：异步发射 {launch['per_launch_async_us']:.1f} µs，每次发射后同步 "
        f"{launch['per_launch_with_sync_us']:.1f} µs，"
        f"在 CUDA 图里重放 {launch['per_kernel_in_cuda_graph_us']:.2f} µs",
        f"实测只用 GPU：{tasks} 个任务 {_ms(gpu_only_s)}，平均每个任务 {_us(per_task)}",
        f"图内重放，{tasks} 个任务的发射共约 {_ms(graph_s)}；"
        f"整矩阵一次调用 torch.linalg.cholesky 实测 {_ms(library_s)}",
        f"重放的下限：{tasks} 个任务 × 设备上约 {_us(device_s)} ≈ {_ms(floor)}（一条流上顺序执行），"
        f"是库函数的 {floor / library_s:.1f} 倍"])


def calibration_spread_lines(hybrid: Schedule, gpu_only: Schedule, profile: HostProfile) -> str:
    """The decomposition's conclusions under the profile's constants and under each hold-out fit it records
    (``calibration["held_out"]``): the host's two terms' share of the extra time (Shapley), the hybrid with the
    copies alone and with the CPU slowdown alone, against ``gpu_only`` with a free host; a last line keeps only
    what holds under every set."""
    check_instance("hybrid", hybrid, Schedule)
    check_instance("gpu_only", gpu_only, Schedule)
    check_instance("profile", profile, HostProfile)
    sets = [("校准的", profile)]
    for fit in dict(profile.calibration).get("held_out", {}).values():
        sets.append(("留出拟合", dataclasses.replace(profile, **fit["constants"])))
    floor = term_makespans(gpu_only, profile)[frozenset({"copies", "slowdown"})]
    lines = [f"  {pad('常数', 10)}{pad('s₁', 6, right=True)}{pad('s_ln', 7, right=True)}"
             f"{pad('h', 7, right=True)}{pad('λ', 8, right=True)}"
             f"{pad('主机两项占', 12, right=True)}{pad('只加拷贝', 11, right=True)}"
             f"{pad('只加 CPU 块变慢', 17, right=True)}"]
    shares, copies, slow = [], [], []
    for label, prof in sets:
        v = term_makespans(hybrid, prof)
        phi = shapley(v)
        extra = v[frozenset(TERMS)] - v[frozenset()]
        shares.append((phi["hold"] + phi["handoff"]) / extra if extra > 0 else 0.0)   # no extra time: no share
        copies.append(v[frozenset({"copies"})])
        slow.append(v[frozenset({"slowdown"})])
        lines.append(f"  {pad(label, 10)}{pad(f'{prof.slowdown_base:.2f}', 6, right=True)}"
                     f"{pad(f'{prof.slowdown_log:.3f}', 7, right=True)}{pad(_us(prof.hold_s), 7, right=True)}"
                     f"{pad(_us(prof.handoff_s), 8, right=True)}{pad(f'{shares[-1]:.0%}', 12, right=True)}"
                     f"{pad(_ms(copies[-1]), 11, right=True)}{pad(_ms(slow[-1]), 17, right=True)}")
    faster = sum(x < floor for x in slow)
    lines += [f"只用 GPU 的计划（主机不花时间）{_ms(floor)}",
              f"{len(sets)} 组常数下：主机两项占多出时间的 {min(shares):.0%}–{max(shares):.0%}；"
              f"只加拷贝 {_span(copies)}，"
              + ("每组都比只用 GPU 慢" if min(copies) > floor else "有的组不比只用 GPU 慢")
              + f"；只加 CPU 块变慢 {_span(slow)}，{faster} 组比只用 GPU 快"]
    return "\n".join(lines)


def _span(values: Sequence[float]) -> str:
    low, high = _ms(min(values)), _ms(max(values))
    return low if low == high else f"{low[:-3]}–{high}"


def _gpu_idle(schedule: Schedule) -> tuple[float, float]:
    """The GPU's idle time between its tasks, and the part of it spent waiting for an input from a CPU task."""
    g, idle, for_cpu, prev = schedule.graph, 0.0, 0.0, 0.0
    gpu = [i for i in range(len(g.tasks)) if schedule.devices[int(schedule.device_of[i])].kind == "GPU"]
    for i in sorted(gpu, key=lambda k: schedule.start[k]):
        start = float(schedule.start[i])
        idle += max(start - prev, 0.0)
        if g.preds[i]:
            last = max(g.preds[i], key=lambda p: schedule.end[p])
            if schedule.devices[int(schedule.device_of[last])].kind != "GPU":
                for_cpu += max(min(float(schedule.end[last]), start) - prev, 0.0)
        prev = float(schedule.end[i])
    return idle, for_cpu


def timeline_lines(measured: Schedule, model: Schedule) -> str:
    """The GPU's timeline in the measured trace beside the host model's (same plan): the GPU's idle share of
    the makespan, the idle time spent waiting for an input from a CPU task, the median GPU task span."""
    check_instance("measured", measured, Schedule)
    check_instance("model", model, Schedule)
    rows = []
    for s in (measured, model):
        idle, for_cpu = _gpu_idle(s)
        spans = _gaps_and_lengths(s, "GPU")[1]
        if not spans:
            raise ValueError("measured and model must both hold tasks on a GPU")
        rows.append((f"{idle / s.makespan:.0%}", _ms(for_cpu), _us(statistics.median(spans)), _ms(s.makespan)))
    names = ["GPU 空闲占完工时间", "其中等 CPU 任务的输入", "GPU 任务时长中位数", "首尾跨度"]
    lines = [f"  {pad('', 20)}{pad('实测轨迹', 10, right=True)}{pad('主机模型', 10, right=True)}"]
    lines += [f"  {pad(n, 20)}{pad(a, 10, right=True)}{pad(b, 10, right=True)}" for n, (a, b) in
              zip(names, zip(*rows))]
    return "\n".join(lines)


#: Makespans closer than this fraction of the shorter one are a tie: the host model is no finer than that.
TIE = 0.01


def race_verdict(hybrid_ms: float, gpu_only_ms: float) -> str:
    """The widget's verdict on the host model's two makespans (ms): within 1 % of each other they are a tie.

    >>> race_verdict(29.4, 29.3)
    '两者相当'
    >>> race_verdict(36.3, 29.3)
    '只用 GPU 更快'
    """
    hybrid_ms = check_positive("hybrid_ms", hybrid_ms)
    gpu_only_ms = check_positive("gpu_only_ms", gpu_only_ms)
    if abs(hybrid_ms - gpu_only_ms) <= TIE * min(hybrid_ms, gpu_only_ms):
        return "两者相当"
    return "混合计划更快" if hybrid_ms < gpu_only_ms else "只用 GPU 更快"
