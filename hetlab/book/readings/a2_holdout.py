"""Appendix A2.7 (the two hold-out batches): the tables and sentences the appendix prints about readings the
machine profile never saw, and about the CUDA-graph replay measured with them. The rest of the appendix's
sentences are in :mod:`hetlab.book.readings.a2`.
"""
from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from hetlab._validate import check_instance, check_int, check_positive, describe
from hetlab.book.readings.a2 import _PLAN_ZH, _ms, _us
from hetlab.models.host import HostProfile
from hetlab.plotting import pad
from hetlab.real.readings import case_of
from hetlab.workloads.cholesky import OPS, CholeskyCase

__all__ = ["holdout_table", "miss_lines", "batch_lines", "heft_vs_gpu_lines", "cost_change_lines", "same_plan_lines",
           "copy_in_run_lines", "graph_replay_lines"]


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


def _executed(r: Mapping) -> tuple:
    """The configuration (n, b, plan, CPU workers) a row actually ran: a dispatch-aware plan that gave no task to a
    CPU worker (``cpu_workers_used`` 0) ran the GPU-only plan, so it is keyed as that plan."""
    if r["plan"] == "hybrid_dispatch_aware" and r.get("cpu_workers_used") == 0:
        return r["n"], r["b"], "gpu_only", 0
    return r["n"], r["b"], r["plan"], r["cpu_workers"]


def repeat_lines(rows: Sequence[Mapping], calibration: Sequence[Mapping], band: float = 0.25) -> str:
    """Split hold-out ``rows`` into configurations (n, b, plan, CPU workers) the ``calibration`` rows already
    held, whose readings are re-measurements, and genuinely new ones; how many of each are within ``band``
    (rows: the dicts of :func:`~hetlab.real.readings.compare_readings`). A dispatch-aware row that used no CPU
    worker counts as the GPU-only plan it ran."""
    rows, calibration = _rows(rows), _rows(calibration, "calibration")
    band = check_positive("band", band, high=10.0)
    seen = {_executed(r) for r in calibration}
    old = [r for r in rows if _executed(r) in seen]
    new = [r for r in rows if _executed(r) not in seen]

    def inside(part: list[Mapping]) -> int:
        return sum(abs(r["predicted_s"] / r["measured_s"] - 1) <= band for r in part)

    return (f"校准里有过、这里重测的配置 {len(old)} 个，{inside(old)} 个在 ±{band:.0%} 以内；"
            f"新配置 {len(new)} 个，{inside(new)} 个在带里")


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
    lines = [
        f"n = {case.n}、b = {case.b}，{cpu_workers} 个 CPU 工作线程的混合（HEFT）运行里，"
        "GPU 上的 GEMM（不含第一次拷贝）：",
        f"  输入都在 GPU 上：{len(by_inputs[0])} 个，时长中位数 {_us(none)}",
        f"  一个输入来自 CPU 工作线程：{len(by_inputs[1])} 个，时长中位数 {_us(one)}，多出 {_us(one - none)}",
        f"  模型为这次拷贝记的是：占用主机 {_us(profile.hold_s)} + 单独测的块拷贝 {_us(case.tile_copy_s)}"
        f" = {_us(charged)}"]
    fresh = (sec.get("tile_copy") or {}).get("h2d_first_s")
    if fresh is not None:      # a tile a CPU worker just wrote is fresh memory too: the nearer measured figure
        lines.append(f"  单独测的新切出的块第一次拷上 GPU：{_us(check_positive('h2d_first_s', fresh))}，"
                     f"比反复拷同一块多 {_us(fresh - case.tile_copy_s)}")
    return "\n".join(lines)


def graph_replay_lines(graphs: Mapping, executor: Mapping[str, float]) -> str:
    """The GPU-only plan with the host taken off the GPU's critical path (``graphs``: the ``cuda_graph``
    section of the hold-out ``cuda_graph.json``, one entry per reading), beside the executor's GPU-only makespan
    (``executor``: reading name -> seconds) and the whole-matrix library call. The replay is compared with the
    same kernels issued eagerly by one thread without synchronising (like for like: the executor's time also holds
    each tile's first copy to the GPU and a synchronise per task)."""
    if not isinstance(graphs, Mapping) or not graphs:
        raise TypeError(f"graphs must be the 'cuda_graph' section of cuda_graph.json, got {describe(graphs)}")
    if not isinstance(executor, Mapping):
        raise TypeError(f"executor must map each reading name to its GPU-only makespan, got {describe(executor)}")
    lines = [f"{pad('n, b', 12)}{pad('任务', 6, right=True)}{pad('执行器', 10, right=True)}"
             f"{pad('一个线程连发', 14, right=True)}{pad('CUDA 图重放', 18, right=True)}"
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
        eager = check_positive("eager_one_thread_s", g["eager_one_thread_s"])
        eagers, replays = g.get("eager_all_s") or [eager], g.get("graph_all_s") or [replay]
        median = statistics.median(eagers) / statistics.median(replays)   # the best run flatters the eager side less
        lines.append(f"  重放时平均每个任务 {_us(replay / g['tasks'])}；{len(eagers)} 次连发里最快的一次，"
                     f"用时是重放的 {eager / replay:.1f} 倍（重放是它的 {replay / eager:.0%}），按中位数是 "
                     f"{median:.1f} 倍；执行器又比最快的连发多 {_ms(run - eager)}")
    return "\n".join(lines)
