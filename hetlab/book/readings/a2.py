"""Appendix A2 (a real CPU + GPU run): the sentences and tables the appendix prints about the H200 readings.

Every number comes from the stored readings (:mod:`hetlab.real.readings`), a HEFT plan, or the host model
(:mod:`hetlab.models.host`) with the machine profile; these functions only put them into words.
"""
from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from hetlab._validate import check_instance, check_int, check_positive, describe
from hetlab.models.host import HostProfile
from hetlab.plotting import pad
from hetlab.real.readings import MeasuredRun
from hetlab.schedule import Schedule
from hetlab.workloads.cholesky import OPS, CholeskyCase, cholesky_graph, task_counts

__all__ = ["MACHINE_ZH", "HOLDOUT_ZH", "workload_lines", "plan_lines", "measured_lines", "trace_lines",
           "prediction_table", "calibration_lines", "host_limit_lines", "planner_lines", "free_host_lines",
           "cuda_graph_lines",
           "holdout_table", "miss_lines", "batch_lines", "heft_vs_gpu_lines", "cost_change_lines", "same_plan_lines",
           "copy_in_run_lines", "graph_replay_lines"]

#: How the appendix names the machine of the stored readings.
MACHINE_ZH = "一台 H200 + 16 核 CPU 的机器（2026-12-04 实测）"
#: How the appendix names the machine of the hold-out readings (hetlab/data/readings/h200-2026-12-04b).
HOLDOUT_ZH = "同型号的 H200 + 16 核 CPU 机器（2026-12-04 晚些时候另一次租用，hetlab 自己的执行器）"
_PLAN_ZH = {"gpu_only": "只用 GPU", "cpu_only": "只用 CPU", "hybrid_heft": "混合（HEFT）",
            "hybrid_heft_overhead_aware": "混合（HEFT，重拟合代价）", "hybrid_dispatch_aware": "考虑主机的计划"}


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
    lines.append(f"  一个块在主机与 GPU 之间拷贝一次：{_us(case.tile_copy_s)}")
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


def _on_gpu(schedule: Schedule) -> int:
    return sum(schedule.devices[j].kind == "GPU" for j in schedule.device_of)


def plan_lines(hybrid: Schedule, gpu_only: Schedule) -> str:
    """HEFT's own simulation of the two plans: the GPU alone, and the GPU with CPU workers."""
    check_instance("hybrid", hybrid, Schedule)
    check_instance("gpu_only", gpu_only, Schedule)
    workers = len(hybrid.devices) - 1
    n = len(hybrid.graph.tasks)
    return "\n".join([
        f"HEFT 的模拟：只用 GPU {_ms(gpu_only.makespan)}；GPU + {workers} 个 CPU 工作线程 {_ms(hybrid.makespan)}"
        f"（GPU 上 {_on_gpu(hybrid)} 个任务，CPU 上 {n - _on_gpu(hybrid)} 个）",
        f"按 HEFT 的模型，混合计划比只用 GPU 快 {gpu_only.makespan / hybrid.makespan:.2f} 倍"])


def measured_lines(gpu_only_s: float, hybrid_s: float, hybrid_plan: Schedule) -> str:
    """The measured makespans of the two plans, and what HEFT had promised."""
    gpu_only_s = check_positive("gpu_only_s", gpu_only_s)
    hybrid_s = check_positive("hybrid_s", hybrid_s)
    check_instance("hybrid_plan", hybrid_plan, Schedule)
    return "\n".join([
        f"实测（{MACHINE_ZH}）：只用 GPU {_ms(gpu_only_s)}；混合计划 {_ms(hybrid_s)}",
        f"混合计划比只用 GPU 慢 {hybrid_s / gpu_only_s:.1f} 倍，"
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
    head = (f"{pad('读数', 20)}{pad('模式', 12)}{pad('计划', 24)}{pad('CPU', 5, right=True)}"
            f"{pad('HEFT 模拟', 12, right=True)}{pad('主机模型', 12, right=True)}{pad('实测', 10, right=True)}"
            f"{pad('误差', 8, right=True)}")
    lines = [head]
    worst = 0.0
    for run, p in zip(runs, predicted):
        p = check_positive("a makespan in predicted", p)
        error = p / run.measured_s - 1
        worst = max(worst, abs(error))
        mode = "同步·拟合" if run.mode == "sync" else "异步·预测"
        lines.append(f"{pad(run.source.replace('.json', ''), 20)}{pad(mode, 12)}"
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
    lines = [f"机器参数 {profile.name}：每次占用主机 {_us(profile.hold_s)}，交接（唤醒）{_us(profile.handoff_s)}，"
             f"k 个块同时计算时每块慢到 {profile.slowdown_base:.2f} + {profile.slowdown_log:.2f}·ln k 倍，"
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
             f"（{'低于' if gpu_only_s < bound else '高于'}下界 {abs(gpu_only_s / bound - 1):.1%}）",
             f"只有一个 CPU 块在算时 s(1) = {profile.slowdown(1):.2f}：比单独标定的单线程时间慢 "
             f"{profile.slowdown(1) - 1:.0%}"]
    if tiny:
        lines.insert(1, f"  {'、'.join(tiny)} 在模型里几乎没有设备时间（不到 1 µs）")
    return "\n".join(lines)


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


def free_host_lines(hybrid: Schedule, gpu_only: Schedule, profile: HostProfile) -> str:
    """The host model's predictions of the two plans as the host gets cheaper: the profile as calibrated,
    hand-offs free, and hand-offs and host visits both free (only the CPU tiles' slowdown left)."""
    import dataclasses

    from hetlab.models.host import simulate_host

    check_instance("hybrid", hybrid, Schedule)
    check_instance("gpu_only", gpu_only, Schedule)
    check_instance("profile", profile, HostProfile)
    lines = []
    for text, changes in (("按校准的参数", {}), ("交接不花时间", {"handoff_s": 0.0}),
                          ("交接与占用主机都不花时间", {"handoff_s": 0.0, "hold_s": 0.0})):
        p = dataclasses.replace(profile, **changes)
        lines.append(f"{text}：混合计划 {_ms(simulate_host(hybrid, p).makespan)}，"
                     f"只用 GPU {_ms(simulate_host(gpu_only, p).makespan)}")
    return "\n".join(lines)


def cuda_graph_lines(launch: Mapping, gpu_only_s: float, tasks: int, library_s: float) -> str:
    """What a CUDA graph would change: the stored launch costs (``launch``: the ``launch`` section of
    h200.json), the measured GPU-only time per task, and the whole-matrix library call."""
    if not isinstance(launch, Mapping) or "per_kernel_in_cuda_graph_us" not in launch:
        raise TypeError(f"launch must be the 'launch' section of h200.json, got {describe(launch)}")
    gpu_only_s = check_positive("gpu_only_s", gpu_only_s)
    library_s = check_positive("library_s", library_s)
    tasks = check_int("tasks", tasks, low=1)
    per_task = gpu_only_s / tasks
    graph_s = tasks * launch["per_kernel_in_cuda_graph_us"] * 1e-6
    return "\n".join([
        f"一个很小的核函数：异步发射 {launch['per_launch_async_us']:.1f} µs，每次发射后同步 "
        f"{launch['per_launch_with_sync_us']:.1f} µs，"
        f"在 CUDA graph 里重放 {launch['per_kernel_in_cuda_graph_us']:.2f} µs",
        f"实测只用 GPU：{tasks} 个任务 {_ms(gpu_only_s)}，平均每个任务 {_us(per_task)}",
        f"若每个任务只剩一次图内重放，{tasks} 个任务的发射共约 {_ms(graph_s)}；"
        f"整矩阵一次调用 torch.linalg.cholesky 实测 {_ms(library_s)}"])


def _rows(rows: Sequence[Mapping], name: str = "rows") -> list[Mapping]:
    keys = ("source", "n", "b", "plan", "cpu_workers", "predicted_s", "measured_s")
    if isinstance(rows, (str, bytes)) or not isinstance(rows, Sequence) or not rows:
        raise TypeError(f"{name} must be a non-empty list of comparisons (see compare_readings), got {describe(rows)}")
    for row in rows:
        if not isinstance(row, Mapping) or any(k not in row for k in keys) or row["plan"] not in _PLAN_ZH:
            raise ValueError(f"each of {name} must be a dict with {list(keys)} (see compare_readings), "
                             f"got {describe(row)}")
        check_positive("a predicted_s in rows", row["predicted_s"])
        check_positive("a measured_s in rows", row["measured_s"])
    return list(rows)


def holdout_table(rows: Sequence[Mapping], band: float = 0.25) -> str:
    """Predictions beside measurements on readings the profile never saw (``rows``: the dicts of
    :func:`~hetlab.real.readings.compare_readings`), then how many are within ``band`` and each plan's range."""
    rows = _rows(rows)
    band = check_positive("band", band, high=10.0)
    lines = [f"{pad('n, b', 12)}{pad('计划', 16)}{pad('CPU', 5, right=True)}{pad('模型预测', 12, right=True)}"
             f"{pad('实测', 12, right=True)}{pad('误差', 8, right=True)}"]
    errors: dict[str, list[float]] = {}
    for r in rows:
        error = r["predicted_s"] / r["measured_s"] - 1
        errors.setdefault(r["plan"], []).append(error)
        size = f"{r['n']}, {r['b']}"
        lines.append(f"{pad(size, 12)}{pad(_PLAN_ZH[r['plan']], 16)}"
                     f"{pad(str(r['cpu_workers'] or '–'), 5, right=True)}{pad(_ms(r['predicted_s']), 12, right=True)}"
                     f"{pad(_ms(r['measured_s']), 12, right=True)}{pad(f'{error:+.0%}', 8, right=True)}")
    every = [e for plan in errors.values() for e in plan]
    inside = sum(abs(e) <= band for e in every)
    worst = max(every, key=abs)
    lines.append(f"在 {len(every)} 个模型没见过的读数上：{inside} 个在 ±{band:.0%} 以内，最大误差 {worst:+.0%}")
    lines.append("各计划的误差范围：" + "；".join(f"{_PLAN_ZH[p]} {min(e):+.0%} 到 {max(e):+.0%}"
                                             for p, e in errors.items()))
    return "\n".join(lines)


def miss_lines(rows: Sequence[Mapping], band: float = 0.25) -> str:
    """The predictions outside ``band`` (``rows``: the dicts of :func:`~hetlab.real.readings.compare_readings`),
    grouped by matrix, tile size and plan: how many of the group miss, and the group's error range."""
    rows = _rows(rows)
    band = check_positive("band", band, high=10.0)
    groups: dict[tuple, list[float]] = {}
    for r in rows:
        groups.setdefault((r["n"], r["b"], r["plan"]), []).append(r["predicted_s"] / r["measured_s"] - 1)
    lines = [f"n = {n}、b = {b}，{_PLAN_ZH[plan]}：{len(e)} 个里 {sum(abs(x) > band for x in e)} 个在带外，"
             f"误差 {min(e):+.0%} 到 {max(e):+.0%}"
             for (n, b, plan), e in groups.items() if any(abs(x) > band for x in e)]
    return "\n".join(lines or [f"每个预测都在 ±{band:.0%} 以内"])


def batch_lines(first: Sequence[Mapping], second: Sequence[Mapping], band: float = 0.25) -> str:
    """The two hold-out batches compared like for like (rows: the dicts of
    :func:`~hetlab.real.readings.compare_readings`): how many of each are within ``band`` on the
    configurations (n, b, plan, CPU workers) both hold, and the first batch's rows the second lacks."""
    first, second = _rows(first, "first"), _rows(second, "second")
    band = check_positive("band", band, high=10.0)

    def key(r: Mapping) -> tuple:
        return r["n"], r["b"], r["plan"], r["cpu_workers"]

    def inside(rows: list[Mapping]) -> int:
        return sum(abs(r["predicted_s"] / r["measured_s"] - 1) <= band for r in rows)

    both = {key(r) for r in first} & {key(r) for r in second}
    shared = [r for r in first if key(r) in both]
    extra = [r for r in first if key(r) not in both]
    lines = [f"两批都有的 {len(both)} 个配置上：第一批 {inside(shared)} 个在 ±{band:.0%} 以内，"
             f"第二批 {inside([r for r in second if key(r) in both])} 个"]
    if extra:
        plans = "、".join(sorted({_PLAN_ZH[r["plan"]] for r in extra}))
        lines.append(f"第一批另有 {len(extra)} 个第二批没有的（{plans}），其中 {inside(extra)} 个在带里")
    return "\n".join(lines)


def heft_vs_gpu_lines(rows: Sequence[Mapping]) -> str:
    """How often HEFT's hybrid plan was slower than the GPU-only plan of the same reading, measured and predicted
    (``rows``: the dicts of :func:`~hetlab.real.readings.compare_readings`)."""
    rows = _rows(rows)
    gpu = {r["source"]: r for r in rows if r["plan"] == "gpu_only"}
    pairs = [(r, gpu[r["source"]]) for r in rows if r["plan"] == "hybrid_heft" and r["source"] in gpu]
    if not pairs:
        raise ValueError("rows must hold a GPU-only and a hybrid HEFT comparison of the same reading, got none")
    measured = sum(h["measured_s"] > g["measured_s"] for h, g in pairs)
    predicted = sum(h["predicted_s"] > g["predicted_s"] for h, g in pairs)
    return (f"混合（HEFT）计划比只用 GPU 慢：实测 {measured} / {len(pairs)} 组，"
            f"模型预测 {predicted} / {len(pairs)} 组")


def cost_change_lines(old: CholeskyCase, new: CholeskyCase) -> str:
    """The per-tile kernel costs of the same tile size ``b`` in two readings, one CPU thread and the GPU: of the
    same ``(n, b)`` in the calibration readings (``old``) and the hold-out readings (``new``), or of two matrix
    orders in one set of readings."""
    check_instance("old", old, CholeskyCase)
    check_instance("new", new, CholeskyCase)
    if old.b != new.b:
        raise ValueError(f"new must have the same tile size as old (b = {old.b}), got b = {new.b}")
    head = (f"同一个 n = {new.n}、b = {new.b}，两次读数的块代价（校准用的读数 → 留出的读数）：" if old.n == new.n
            else f"同样 b = {new.b} 的块，两次读数的块代价（n = {old.n} → n = {new.n}）：")
    lines = [head, f"  {pad('核函数', 8)}{pad('一个 CPU 线程', 24, right=True)}{pad('GPU', 20, right=True)}"]
    for op in OPS:
        cpu = f"{_us(old.op_costs[op]['CPU'])} → {_us(new.op_costs[op]['CPU'])}"
        gpu = f"{_us(old.op_costs[op]['GPU'])} → {_us(new.op_costs[op]['GPU'])}"
        lines.append(f"  {pad(op.upper(), 8)}{pad(cpu, 24, right=True)}{pad(gpu, 20, right=True)}")
    return "\n".join(lines)


def _hetero_section(section: Mapping, name: str) -> Mapping:
    if not isinstance(section, Mapping) or not all(k in section for k in ("n", "b", "gpu_only")):
        raise TypeError(f"{name} must be the 'hetero' section of a hold-out reading, got {describe(section)}")
    return section


def same_plan_lines(sections: Sequence[Mapping]) -> str:
    """For each hold-out reading (``sections``: their ``hetero`` sections): which CPU worker counts the
    dispatch-aware plan used; when it used none it is the GPU-only plan, so every run of either measures one plan:
    their spread, and how often the dispatch-aware plan's best of 3 was slower than the GPU-only best of 3. Last,
    how often HEFT's hybrid plan was measured slower than GPU-only."""
    if isinstance(sections, (str, bytes)) or not isinstance(sections, Sequence) or not sections:
        raise TypeError(f"sections must be a non-empty list of 'hetero' sections, got {describe(sections)}")
    lines = []
    heft_slower = cases = 0
    for k, raw in enumerate(sections):
        sec = _hetero_section(raw, f"sections[{k}]")
        keys = [key for key in sec if key[3:].isdigit() and isinstance(sec[key], Mapping)]
        gpu_best = check_positive("gpu_only measured_s", sec["gpu_only"]["measured_s"])
        aware = {key: sec[key]["hybrid_dispatch_aware"] for key in keys if sec[key].get("hybrid_dispatch_aware")}
        heft_slower += sum(sec[key]["hybrid_heft"]["measured_s"] > gpu_best for key in keys)
        cases += len(keys)
        used = sorted({a["cpu_workers_used"] for a in aware.values()})
        head = f"n = {sec['n']}，b = {sec['b']}：考虑主机的计划在 {len(aware)} 种工作线程数下"
        if used != [0]:
            lines.append(f"{head}用了 {'、'.join(map(str, used))} 个 CPU")
            continue
        runs = list(sec["gpu_only"]["all_s"]) + [s for a in aware.values() for s in a["all_s"]]
        slower = [a["measured_s"] / gpu_best - 1 for a in aware.values() if a["measured_s"] > gpu_best]
        lines.append(f"{head}都没用 CPU，就是只用 GPU 的计划；这个计划共跑了 {len(runs)} 次，{_ms(min(runs))} 到 "
                     f"{_ms(max(runs))}（中位数 {_ms(statistics.median(runs))}）")
        lines.append(f"  三次取最好：{len(aware)} 组里有 {len(slower)} 组比单独测的只用 GPU（{_ms(gpu_best)}）慢"
                     + (f"，最多慢 {max(slower):.0%}" if slower else ""))
    lines.append(f"实测的混合（HEFT）计划比只用 GPU 慢：{heft_slower} / {cases} 组")
    return "\n".join(lines)


def copy_in_run_lines(section: Mapping, cpu_workers: int, profile: HostProfile) -> str:
    """What a tile copied between a CPU worker and the GPU costs inside a measured run: the GPU GEMMs of the hybrid
    HEFT run with ``cpu_workers`` (``section``: the ``hetero`` section of a reading, with that run's trace) that
    copy no tile of the matrix first, by how many inputs a CPU worker made (0 or 1), beside what the host model
    charges for such a copy (a host visit and the tile copy of the reading)."""
    from hetlab.real.readings import case_of

    sec = _hetero_section(section, "section")
    key = f"cpu{check_int('cpu_workers', cpu_workers, low=1, high=1000)}"
    trace = (sec.get(key) or {}).get("hybrid_heft", {}).get("trace")
    if not trace:
        raise ValueError(f"section must hold the trace of the hybrid HEFT run {key!r}, got {describe(sec.get(key))}")
    check_instance("profile", profile, HostProfile)
    case, _ = case_of(sec)
    graph, first = case.graph(case.devices(cpu_workers)), case.host_inputs()
    device = {row[0]: row[1] for row in trace}
    length = {row[0]: row[3] - row[2] for row in trace}
    by_inputs: dict[int, list[float]] = {0: [], 1: []}
    for i, task in enumerate(graph.tasks):
        if task.op == "gemm" and device[task.name] == "GPU" and not first.get(task.name):
            from_cpu = sum(device[graph.tasks[p].name] != "GPU" for p in graph.preds[i])
            by_inputs.get(from_cpu, []).append(length[task.name])
    if not all(by_inputs.values()):
        raise ValueError(f"the run {key!r} has no GPU GEMM with 0 or with 1 input from a CPU worker to compare")
    none, one = (statistics.median(by_inputs[k]) for k in (0, 1))
    charged = profile.hold_s + case.tile_copy_s
    return "\n".join([
        f"n = {case.n}、b = {case.b}，{cpu_workers} 个 CPU 工作线程的混合（HEFT）运行里，"
        "GPU 上的 GEMM（不含第一次拷贝）：",
        f"  输入都在 GPU 上：{len(by_inputs[0])} 个，时长中位数 {_us(none)}",
        f"  一个输入来自 CPU 工作线程：{len(by_inputs[1])} 个，时长中位数 {_us(one)}，多出 {_us(one - none)}",
        f"  模型为这次拷贝记的是：占用主机 {_us(profile.hold_s)} + 单独测的块拷贝 {_us(case.tile_copy_s)}"
        f" = {_us(charged)}"])


def graph_replay_lines(graphs: Mapping, executor: Mapping[str, float]) -> str:
    """The GPU-only plan with the host taken off the GPU's critical path (``graphs``: the ``cuda_graph``
    section of the hold-out ``cuda_graph.json``, one entry per reading), beside the executor's GPU-only makespan
    (``executor``: reading name -> seconds) and the whole-matrix library call."""
    if not isinstance(graphs, Mapping) or not graphs:
        raise TypeError(f"graphs must be the 'cuda_graph' section of cuda_graph.json, got {describe(graphs)}")
    if not isinstance(executor, Mapping):
        raise TypeError(f"executor must map each reading name to its GPU-only makespan, got {describe(executor)}")
    lines = [f"{pad('n, b', 12)}{pad('任务', 6, right=True)}{pad('执行器', 10, right=True)}"
             f"{pad('一个线程连发', 14, right=True)}{pad('CUDA graph 重放', 18, right=True)}"
             f"{pad('整矩阵库函数', 14, right=True)}{pad('重放 ÷ 库函数', 14, right=True)}"]
    for name, g in graphs.items():
        if not isinstance(g, Mapping) or "graph_replay_s" not in g:
            raise ValueError(f"graphs[{name!r}] must hold a measured replay ('graph_replay_s'), got {describe(g)}")
        run = check_positive(f"executor[{name!r}]", executor.get(name))
        replay = check_positive("graph_replay_s", g["graph_replay_s"])
        library = check_positive("torch_cholesky_gpu_s", g["torch_cholesky_gpu_s"])
        size, replay_ms, library_ms = f"{g['n']}, {g['b']}", f"{replay * 1e3:.2f} ms", f"{library * 1e3:.2f} ms"
        lines.append(f"{pad(size, 12)}{pad(str(g['tasks']), 6, right=True)}"
                     f"{pad(_ms(run), 10, right=True)}{pad(_ms(g['eager_one_thread_s']), 14, right=True)}"
                     f"{pad(replay_ms, 18, right=True)}{pad(library_ms, 14, right=True)}"
                     f"{pad(f'{replay / library:.1f} 倍', 14, right=True)}")
        lines.append(f"  重放时平均每个任务 {_us(replay / g['tasks'])}，比执行器快 {run / replay:.1f} 倍")
    return "\n".join(lines)
