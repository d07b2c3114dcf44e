"""The CUDA-graph section of ``tools/measure_cholesky_gpu.py`` (its ``--graph``): the GPU-only plan launched from
one thread without synchronising, and captured once as a CUDA graph and replayed. Needs torch; imported by that
script only when it measures this section."""
from __future__ import annotations

import time

import numpy as np


def tiled_launch(torch, tiles, order) -> None:
    """Launch the GPU-only plan's kernels from this thread in the plan's order, in place, no synchronise."""
    for op, idx in order:
        if op == "potrf":
            k = idx[0]
            tiles[k, k].copy_(torch.linalg.cholesky_ex(tiles[k, k])[0])
        elif op == "trsm":
            i, k = idx
            tiles[i, k].copy_(torch.linalg.solve_triangular(tiles[k, k], tiles[i, k].T, upper=False).T)
        elif op == "syrk":
            i, k = idx
            tiles[i, i].sub_(tiles[i, k] @ tiles[i, k].T)
        else:
            i, j, k = idx
            tiles[i, j].sub_(tiles[i, k] @ tiles[j, k].T)


def cuda_graph(entry: dict, median_time) -> dict:
    """Eager single-thread launch and CUDA-graph replay of the GPU-only plan, against the library call
    (timed by ``median_time(fn, reps, warm=...)``, the measuring script's own timer)."""
    import torch

    n, b, plan = entry["n"], entry["b"], entry["gpu_plan"]
    t = n // b
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda":
        torch.backends.cuda.preferred_linalg_library("cusolver")    # graph-safe potrf (no host sync)
    ordered = sorted(range(len(plan.graph.tasks)), key=lambda i: (plan.start[i], i))
    order = []
    for i in ordered:
        parts = plan.graph.tasks[i].name.split("_")
        order.append((parts[0].lower(), [int(x) for x in parts[1:]]))
    a = torch.from_numpy(entry["a"]).to(device)
    backup = a.reshape(t, b, t, b).permute(0, 2, 1, 3).contiguous()
    tiles = backup.clone()
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)

    def result_error() -> float:
        lower = tiles.permute(0, 2, 1, 3).reshape(n, n).tril().cpu().numpy()
        ref = entry["reference"]
        return float(np.abs(lower - ref).max() / np.abs(ref).max())

    def eager():
        tiles.copy_(backup)
        sync()
        start = time.perf_counter()
        tiled_launch(torch, tiles, order)
        sync()
        return time.perf_counter() - start
    eager_times = [eager() for _ in range(4)][1:]
    out = {"n": n, "b": b, "tasks": len(order), "device": device, "eager_one_thread_s": min(eager_times),
           "eager_all_s": eager_times, "eager_max_rel_error": result_error()}
    if device != "cuda":
        return out
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            tiles.copy_(backup)
            tiled_launch(torch, tiles, order)
    torch.cuda.current_stream().wait_stream(side)
    sync()
    graph = torch.cuda.CUDAGraph()
    tiles.copy_(backup)
    sync()
    t_capture = time.perf_counter()
    with torch.cuda.graph(graph):
        tiled_launch(torch, tiles, order)
    sync()
    out["capture_s"] = time.perf_counter() - t_capture
    replays = []
    for _ in range(6):
        tiles.copy_(backup)
        sync()
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start = time.perf_counter()
        begin.record()
        graph.replay()
        end.record()
        sync()
        replays.append((begin.elapsed_time(end) / 1e3, time.perf_counter() - start))
    out["graph_replay_s"] = min(r[0] for r in replays[1:])
    out["graph_replay_wall_s"] = min(r[1] for r in replays[1:])
    out["graph_all_s"] = [r[0] for r in replays]
    out["graph_max_rel_error"] = result_error()
    ag = torch.from_numpy(entry["a"]).cuda()

    def call():
        torch.linalg.cholesky(ag)
        sync()
    out["torch_cholesky_gpu_s"], _ = median_time(call, 7, warm=2)
    out["preferred_linalg_library"] = str(torch.backends.cuda.preferred_linalg_library())
    return out
