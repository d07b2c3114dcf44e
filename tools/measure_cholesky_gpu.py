"""Measure the tiled Cholesky on a real CPU + CUDA GPU machine, for a hold-out check of the host model.

Usage (on a machine with torch and a CUDA GPU): ``PYTHONPATH=. python3 tools/measure_cholesky_gpu.py OUT_DIR``;
without CUDA it runs the same code with :class:`~hetlab.real.hybrid.StandInGPU` (``--quick`` for tiny sizes, a
dry run). For each configuration ``(n, b)`` it writes ``OUT_DIR/n<n>_b<b>.json`` in the format of
``hetlab/data/readings/h200-2026-12-04/h200_hetero.json`` (section ``hetero``):

1. per-tile kernel costs (``op_costs``: ``cpu1_s`` one CPU thread, ``gpu_s`` the GPU with a synchronise, the
   median of repeated calls through the executor's own backends) and ``tile_copy_s`` (the mean of one tile's
   host-to-device and device-to-host copy);
2. real runs by :func:`hetlab.real.hybrid.factor`, each plan 3 times (best kept, all recorded): GPU-only,
   and for each CPU worker count W (section ``cpuW``): CPU-only, hybrid HEFT, and the dispatch-aware plan of
   :func:`hetlab.schedulers.host_aware.host_aware` (profile ``h200-2026-12-04``); the trace
   ``[task, device, start, end]`` of each best GPU-only and hybrid run; ``torch.linalg.cholesky`` on the
   whole matrix (GPU, and CPU with all threads);
3. ``cuda_graph.json``: the GPU-only plan launched from one thread without synchronising (eager), and captured
   once as a CUDA graph and replayed, against the library call.

Every section is guarded (an error is recorded, the rest goes on), files are rewritten after every section, and
no section starts once 80% of ``--budget`` seconds have passed. The predictions are made elsewhere, from the
inputs alone (``python -m hetlab predict-cholesky FILE``); this script only measures.
"""
from __future__ import annotations

import argparse
import faulthandler
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import traceback
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hetlab.models.host import load_profile  # noqa: E402
from hetlab.real.hybrid import NumpyCPU, StandInGPU, TorchCUDA, cuda_available, factor  # noqa: E402
from hetlab.real.readings import case_of  # noqa: E402
from hetlab.schedulers.heft import heft  # noqa: E402
from hetlab.schedulers.host_aware import host_aware  # noqa: E402
from hetlab.workloads.cholesky import OPS  # noqa: E402

PROFILE = "h200-2026-12-04"
#: (n, b, CPU worker counts), in the order they are measured; the last repeats the stored h200_hetero.json case.
CONFIGS = [(4096, 256, [4, 2, 6, 12]), (8192, 512, [4, 2, 6, 12]), (3072, 256, [4, 2, 6, 12, 8, 15])]
QUICK = [(512, 128, [2, 1]), (768, 128, [2])]
REPS = 3
T0 = time.perf_counter()


class Budget:
    def __init__(self, seconds: float):
        self.seconds = seconds

    def left(self) -> bool:
        """Whether a new section may start (less than 80% of the budget used)."""
        return time.perf_counter() - T0 < 0.8 * self.seconds


def log(msg: str) -> None:
    print(f"[{time.perf_counter() - T0:7.1f} s] {msg}", flush=True)


def write(path: Path, data) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)


def guarded(record: dict, key: str, fn, *args):
    """Run one section; on failure record the error under ``record['errors'][key]`` and go on."""
    start = time.perf_counter()
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001 - one failed section must not lose the others
        record.setdefault("errors", {})[key] = f"{type(exc).__name__}: {exc}"
        log(f"ERROR in {key}: {type(exc).__name__}: {exc}\n{traceback.format_exc()}")
        return None
    finally:
        record.setdefault("_seconds", {})[key] = round(time.perf_counter() - start, 2)


def environment(gpu) -> dict:
    from threadpoolctl import threadpool_info

    env = {"date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "python": platform.python_version(),
           "numpy": np.__version__, "cpus": os.cpu_count(), "switch_interval_s": sys.getswitchinterval(),
           "cpu_backend": "numpy, one BLAS thread per worker (threadpoolctl)",
           "blas": [{k: i.get(k) for k in ("internal_api", "version", "num_threads")} for i in threadpool_info()],
           "gpu_backend": type(gpu).__name__}
    try:
        env["cpu_model"] = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                                if line.startswith("model name"))
    except (OSError, StopIteration):
        env["cpu_model"] = platform.processor()
    if isinstance(gpu, TorchCUDA):
        import torch

        props = torch.cuda.get_device_properties(0)
        env.update(torch=torch.__version__, cuda=torch.version.cuda, gpu=props.name, sms=props.multi_processor_count,
                   gpu_mem_gb=round(props.total_memory / 2**30, 1), torch_threads=torch.get_num_threads())
        try:
            env["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                           capture_output=True, text=True, timeout=20).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            pass
    return env


def spd_matrix(n: int, seed: int = 0) -> np.ndarray:
    """Symmetric, entries of the off-diagonal part in [0, 1), n on the diagonal: positive definite by Gershgorin."""
    r = np.random.default_rng(seed).random((n, n))
    a = (r + r.T) / 2
    a[np.diag_indices(n)] += n
    return a


def _median_time(fn, reps: int, warm: int = 2) -> tuple[float, float]:
    for _ in range(warm):
        fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), min(times)


def op_costs(b: int, gpu) -> tuple[dict, dict]:
    """Per-tile kernel costs through the executor's backends, and one tile's copy times."""
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(1)
    m = rng.random((b, b))
    spd = m @ m.T + b * np.eye(b)
    low = np.linalg.cholesky(spd)
    tiles = {"potrf": [spd], "trsm": [low, rng.random((b, b))], "syrk": [rng.random((b, b)), spd],
             "gemm": [rng.random((b, b)) for _ in range(3)]}
    cpu, reps_cpu = NumpyCPU(), (20 if b <= 256 else 10)
    costs = {}
    for op in OPS:
        with threadpool_limits(1, user_api="blas"):
            cpu_med, cpu_min = _median_time(lambda name=op: cpu.run(name, tiles[name]), reps_cpu)
        on_gpu = [gpu.put(t) for t in tiles[op]]
        gpu.synchronize()

        def once(args=on_gpu, name=op):
            gpu.run(name, args)
            gpu.synchronize()
        gpu_med, gpu_min = _median_time(once, 30, warm=5)
        costs[op] = {"cpu1_s": cpu_med, "gpu_s": gpu_med, "cpu1_min_s": cpu_min, "gpu_min_s": gpu_min}
    tile = rng.random((b, b))
    on_gpu = gpu.put(tile)

    def h2d():
        gpu.put(tile)
        gpu.synchronize()
    h2d_s, _ = _median_time(h2d, 30, warm=5)
    d2h_s, _ = _median_time(lambda: gpu.get(on_gpu), 30, warm=5)
    return costs, {"h2d_s": h2d_s, "d2h_s": d2h_s}


def library_cholesky(a: np.ndarray, gpu) -> dict:
    out = {}
    if isinstance(gpu, TorchCUDA):
        import torch

        ag = torch.from_numpy(a).cuda()

        def call():
            torch.linalg.cholesky(ag)
            torch.cuda.synchronize()
        out["torch_cholesky_gpu_s"], out["torch_cholesky_gpu_min_s"] = _median_time(call, 7, warm=2)
        ac = torch.from_numpy(a)
        out["torch_cholesky_cpu_s"], _ = _median_time(lambda: torch.linalg.cholesky(ac), 2, warm=1)
        out["torch_threads"] = torch.get_num_threads()
        del ag
    return out


def backends(devices, gpu) -> dict:
    return {d.name: (gpu if d.kind == "GPU" else NumpyCPU()) for d in devices}


def execute(plan, a: np.ndarray, b: int, gpu, reference: np.ndarray, extra: dict | None = None) -> dict:
    """Run ``plan`` REPS times; the best run's makespan and trace, every makespan, the factor's error."""
    from threadpoolctl import threadpool_limits

    kinds = {}
    for j in plan.device_of:
        kind = plan.devices[j].kind
        kinds[kind] = kinds.get(kind, 0) + 1
    runs, error = [], None
    with threadpool_limits(1, user_api="blas"):
        for rep in range(REPS):
            lower, run = factor(plan, a, b, backends(plan.devices, gpu))
            if rep == 0:
                error = float(np.abs(lower - reference).max() / np.abs(reference).max())
            runs.append(run)
            del lower
    best = min(runs, key=lambda r: r.wall_time)
    s = best.schedule
    trace = [[s.graph.tasks[i].name, s.devices[s.device_of[i]].name, float(s.start[i]), float(s.end[i])]
             for i in range(len(s.graph.tasks))]
    return {"simulated_s": plan.makespan, "measured_s": best.wall_time, "all_s": [r.wall_time for r in runs],
            "tasks_per_kind": kinds, "max_rel_error": error, "trace": trace, **(extra or {})}


def measure_config(n: int, b: int, workers: list[int], gpu, out: Path, env: dict, budget: Budget,
                   graphs: dict) -> None:
    name = f"n{n}_b{b}"
    path = out / f"{name}.json"
    record: dict = {"env": env}
    sec: dict = {"n": n, "b": b}
    record["hetero"] = sec
    log(f"{name}: matrix, op costs")
    a = spd_matrix(n)
    got = guarded(record, "op_costs", op_costs, b, gpu)
    if got is None:
        write(path, record)
        return
    sec["op_costs"], sec["tile_copy"] = got
    sec["tile_copy_s"] = (got[1]["h2d_s"] + got[1]["d2h_s"]) / 2
    sec["cpu_backend"] = env.get("cpu_backend")
    lib = guarded(record, "library", library_cholesky, a, gpu) or {}
    sec.update(lib)
    write(path, record)
    start = time.perf_counter()
    reference = np.linalg.cholesky(a)
    sec["numpy_cholesky_all_threads_s"] = time.perf_counter() - start     # one call, the first
    case, _ = case_of({**{k: sec[k] for k in ("n", "b", "op_costs", "tile_copy_s")}, "cpu1": {}})
    profile = load_profile(PROFILE)
    graphs[name] = {"n": n, "b": b, "a": a, "reference": reference, "case": case}
    gpu_devices = case.devices(0)
    gpu_plan = heft(case.graph(gpu_devices), gpu_devices)
    graphs[name]["gpu_plan"] = gpu_plan
    log(f"{name}: GPU-only")
    sec["gpu_only"] = guarded(record, "gpu_only", execute, gpu_plan, a, b, gpu, reference)
    write(path, record)
    if sec["gpu_only"]:
        log(f"{name}: gpu_only {sec['gpu_only']['measured_s'] * 1e3:.1f} ms")
    for w in workers:
        if not budget.left():
            record.setdefault("skipped", []).append(f"cpu{w}: time budget")
            continue
        part: dict = {}
        sec[f"cpu{w}"] = part
        cpu_devices = case.devices(w, gpu=False)
        part["cpu_only"] = guarded(record, f"cpu{w}.cpu_only", lambda d=cpu_devices: execute(
            heft(case.graph(d), d), a, b, gpu, reference))
        write(path, record)
        devices = case.devices(w)
        part["hybrid_heft"] = guarded(record, f"cpu{w}.hybrid_heft", lambda d=devices: execute(
            heft(case.graph(d), d), a, b, gpu, reference))
        write(path, record)

        def aware(d=devices):
            plan = host_aware(case.graph(d), d, profile=profile)
            return execute(plan, a, b, gpu, reference, {
                "cpu_workers_used": plan.info["cpu_workers"], "profile": PROFILE,
                "predicted_s_on_device": plan.info["predicted"].makespan,
                "candidates_predicted_s": {str(u): s for u, s in plan.info["candidates"].items()}})
        part["hybrid_dispatch_aware"] = guarded(record, f"cpu{w}.hybrid_dispatch_aware", aware)
        write(path, record)
        ms = {k: (v["measured_s"] * 1e3 if v else None) for k, v in part.items()}
        log(f"{name}: cpu{w} " + ", ".join(f"{k} {v:.1f} ms" if v else f"{k} failed" for k, v in ms.items()))


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


def cuda_graph(entry: dict) -> dict:
    """Eager single-thread launch and CUDA-graph replay of the GPU-only plan, against the library call."""
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
    out["torch_cholesky_gpu_s"], _ = _median_time(call, 7, warm=2)
    out["preferred_linalg_library"] = str(torch.backends.cuda.preferred_linalg_library())
    return out


def summary(out: Path) -> None:
    """One line per configuration and plan: the best measured makespan (ms)."""
    for path in sorted(out.glob("n*_b*.json")):
        sec = json.loads(path.read_text())["hetero"]
        parts = [f"gpu_only {sec['gpu_only']['measured_s'] * 1e3:.1f}" if sec.get("gpu_only") else "gpu_only -"]
        for key in sorted((k for k in sec if k[3:].isdigit()), key=lambda k: int(k[3:])):
            nan = float("nan")
            got = {p: (v["measured_s"] * 1e3 if v else nan) for p, v in sec[key].items()}
            used = (sec[key].get("hybrid_dispatch_aware") or {}).get("cpu_workers_used")
            parts.append(f"{key}: cpu {got.get('cpu_only', nan):.1f} heft {got.get('hybrid_heft', nan):.1f}"
                         f" aware {got.get('hybrid_dispatch_aware', nan):.1f} (u={used})")
        lib = sec.get("torch_cholesky_gpu_s")
        log(f"SUMMARY {path.stem} ms: " + "; ".join(parts) + (f"; library {lib * 1e3:.2f}" if lib else ""))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", nargs="?", default=os.environ.get("OUT", "measure_out"))
    parser.add_argument("--budget", type=float, default=330.0, help="seconds; no section starts after 80%%")
    parser.add_argument("--quick", action="store_true", help="tiny sizes (a dry run)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    budget = Budget(args.budget)
    faulthandler.dump_traceback_later(1.2 * args.budget, exit=True)    # a hang: say where, and stop
    gpu = TorchCUDA() if cuda_available() else StandInGPU(launch_s=60e-6, hold_s=20e-6)
    env = guarded({}, "environment", environment, gpu) or {"cpu_backend": "numpy"}
    log(f"environment: {json.dumps({k: v for k, v in env.items() if k != 'blas'})}")
    graphs: dict = {}
    top: dict = {"env": env}
    for n, b, workers in (QUICK if args.quick else CONFIGS):
        if not budget.left():
            top.setdefault("skipped", []).append(f"n{n}_b{b}: time budget")
            continue
        guarded(top, f"n{n}_b{b}", measure_config, n, b, workers, gpu, out, env, budget, graphs)
    try:
        import torch  # noqa: F401
        have_torch = True
    except ImportError:
        have_torch = False
    results = {}
    top["cuda_graph"] = results
    for name, entry in graphs.items():
        if not have_torch or not budget.left():
            top.setdefault("skipped", []).append(f"cuda_graph {name}: {'no torch' if not have_torch else 'budget'}")
            continue
        results[name] = guarded(top, f"cuda_graph.{name}", cuda_graph, entry)
        write(out / "cuda_graph.json", top)
        log(f"cuda graph {name}: {json.dumps({k: v for k, v in (results[name] or {}).items() if 'all' not in k})}")
    write(out / "cuda_graph.json", top)
    try:
        summary(out)
    except Exception as exc:  # noqa: BLE001 - the files are written; the summary is a convenience
        log(f"summary failed: {exc}")
    log(f"done in {time.perf_counter() - T0:.1f} s; files: {sorted(p.name for p in out.iterdir())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
