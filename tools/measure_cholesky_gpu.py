"""Measure the tiled Cholesky on a real CPU + CUDA GPU machine, for a hold-out check of the host model.

Usage (on a machine with torch and a CUDA GPU): ``PYTHONPATH=. python3 tools/measure_cholesky_gpu.py OUT_DIR``;
without CUDA it runs the same code with :class:`~hetlab.real.hybrid.StandInGPU` (``--quick`` for tiny sizes, a
dry run). CPU tiles: :class:`~hetlab.real.hybrid.TorchCPU` (one thread, as in the calibration readings
``h200-2026-12-04``) when torch is installed, else :class:`~hetlab.real.hybrid.NumpyCPU` with one BLAS thread
(``--cpu`` chooses). For each configuration ``(n, b)`` it writes ``OUT_DIR/n<n>_b<b>.json`` in the format of
``hetlab/data/readings/h200-2026-12-04/h200_hetero.json`` (section ``hetero``), with ``inputs_on_host: true``
(the executor starts with every tile in host memory):

1. per-tile kernel costs (``op_costs``: ``cpu1_s`` one CPU thread, ``gpu_s`` the GPU with a synchronise, the
   median of repeated calls through the executor's own backends), ``tile_copy_s`` (the mean of one tile's
   host-to-device and device-to-host copy, repeated on one tile) and ``tile_copy.h2d_first_s`` (the median
   first copy of distinct tiles freshly cut from the matrix, as the executor's first copies are);
2. real runs by :func:`hetlab.real.hybrid.factor`: for each CPU worker count W (section ``cpuW``) the plans
   GPU-only, CPU-only, hybrid HEFT and the dispatch-aware plan of :func:`hetlab.schedulers.host_aware.host_aware`
   (profile ``h200-2026-12-04``), run in turn, 3 rounds (so drift and noise fall on every plan alike);
   ``measured_s`` is the median, ``best_s`` the fastest, ``all_s`` every run; GPU-only collects one run per
   round of every W. A dispatch-aware plan identical to another plan is not run again: it records
   ``same_plan_as``. The trace ``[task, device, start, end]`` of the median run of each plan but CPU-only;
   ``torch.linalg.cholesky`` on the whole matrix (GPU, and CPU with all threads);
3. with ``--graph``, ``cuda_graph.json``: the GPU-only plan launched from one thread without synchronising
   (eager), and captured once as a CUDA graph and replayed, against the library call.

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
from hetlab.real.hybrid import NumpyCPU, StandInGPU, TorchCPU, TorchCUDA, cuda_available, factor  # noqa: E402
from hetlab.real.readings import case_of  # noqa: E402
from hetlab.schedulers.heft import heft  # noqa: E402
from hetlab.schedulers.host_aware import host_aware  # noqa: E402
from hetlab.workloads.cholesky import OPS  # noqa: E402

PROFILE = "h200-2026-12-04"
#: (n, b, CPU worker counts), in the order they are measured; the first repeats the stored h200_hetero.json case.
CONFIGS = [(3072, 256, [4, 2, 6, 12, 8, 15]), (4096, 256, [4, 2, 6, 12]), (8192, 512, [4, 2, 6, 12])]
QUICK = [(512, 128, [2, 1]), (768, 128, [2])]
REPS = 3
#: Distinct tiles whose first copy to the GPU is timed.
FIRST_COPIES = 24
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


def environment(gpu, cpu_kind: str) -> dict:
    from threadpoolctl import threadpool_info

    env = {"date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "python": platform.python_version(),
           "numpy": np.__version__, "cpus": os.cpu_count(), "switch_interval_s": sys.getswitchinterval(),
           "cpu_backend": CPU_BACKENDS[cpu_kind],
           "blas": [{k: i.get(k) for k in ("internal_api", "version", "num_threads")} for i in threadpool_info()],
           "gpu_backend": type(gpu).__name__}
    try:
        env["cpu_model"] = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                                if line.startswith("model name"))
    except (OSError, StopIteration):
        env["cpu_model"] = platform.processor()
    if have_torch():
        import torch

        env["torch"] = torch.__version__
    if isinstance(gpu, TorchCUDA):
        import torch

        props = torch.cuda.get_device_properties(0)
        env.update(cuda=torch.version.cuda, gpu=props.name, sms=props.multi_processor_count,
                   gpu_mem_gb=round(props.total_memory / 2**30, 1))
        try:
            env["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                           capture_output=True, text=True, timeout=20).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            pass
    return env


#: What each --cpu choice computes CPU tiles with (recorded in env.cpu_backend).
CPU_BACKENDS = {"torch": "TorchCPU: torch on the CPU, one intra-op thread (torch.set_num_threads(1))",
                "numpy": "NumpyCPU: numpy, one BLAS thread per worker (threadpoolctl); blocked triangular TRSM"}


def have_torch() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def cpu_worker(kind: str):
    return TorchCPU(1) if kind == "torch" else NumpyCPU()


def one_blas_thread():
    """One BLAS thread for numpy's products (the NumpyCPU workers, and torch's CPU tiles if it uses the same
    library); a no-op context if threadpoolctl is missing."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        import contextlib
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


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


def op_costs(b: int, gpu, cpu_kind: str, a: np.ndarray) -> tuple[dict, dict]:
    """Per-tile kernel costs through the executor's backends, and the copy times of one tile: repeated on one tile
    (``h2d_s``, ``d2h_s``), and the first copy of each of several distinct tiles cut from ``a``."""
    rng = np.random.default_rng(1)
    m = rng.random((b, b))
    spd = m @ m.T + b * np.eye(b)
    low = np.linalg.cholesky(spd)
    tiles = {"potrf": [spd], "trsm": [low, rng.random((b, b))], "syrk": [rng.random((b, b)), spd],
             "gemm": [rng.random((b, b)) for _ in range(3)]}
    cpu, reps_cpu = cpu_worker(cpu_kind), (20 if b <= 256 else 10)
    costs = {}
    for op in OPS:
        on_cpu = [cpu.put(t) for t in tiles[op]]
        with one_blas_thread():
            cpu_med, cpu_min = _median_time(lambda name=op, args=on_cpu: cpu.run(name, args), reps_cpu)
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
    t = a.shape[0] // b
    keys = [(i, j) for i in range(t) for j in range(i + 1)][:FIRST_COPIES]
    fresh = [a[i * b:(i + 1) * b, j * b:(j + 1) * b].copy() for i, j in keys]   # as factor() cuts them
    kept, first = [], []
    for host_tile in fresh:
        start = time.perf_counter()
        kept.append(gpu.put(host_tile))
        gpu.synchronize()
        first.append(time.perf_counter() - start)
    return costs, {"h2d_s": h2d_s, "d2h_s": d2h_s, "h2d_first_s": statistics.median(first), "h2d_first_all_s": first}


def library_cholesky(a: np.ndarray, gpu) -> dict:
    out = {}
    if isinstance(gpu, TorchCUDA):
        import torch

        ag = torch.from_numpy(a).cuda()

        def call():
            torch.linalg.cholesky(ag)
            torch.cuda.synchronize()
        out["torch_cholesky_gpu_s"], out["torch_cholesky_gpu_min_s"] = _median_time(call, 7, warm=2)
        before = torch.get_num_threads()
        torch.set_num_threads(os.cpu_count() or 1)       # the library call on the whole CPU
        try:
            ac = torch.from_numpy(a)
            out["torch_cholesky_cpu_s"], _ = _median_time(lambda: torch.linalg.cholesky(ac), 2, warm=1)
            out["torch_threads"] = torch.get_num_threads()
        finally:
            torch.set_num_threads(before)
        del ag
    return out


def backends(devices, gpu, cpu_kind: str) -> dict:
    return {d.name: (gpu if d.kind == "GPU" else cpu_worker(cpu_kind)) for d in devices}


def run_once(plan, a: np.ndarray, b: int, gpu, cpu_kind: str, reference: np.ndarray | None):
    """One run of ``plan``: (makespan, trace, the factor's largest relative error if ``reference`` is given)."""
    with one_blas_thread():
        lower, run = factor(plan, a, b, backends(plan.devices, gpu, cpu_kind))
    error = None if reference is None else float(np.abs(lower - reference).max() / np.abs(reference).max())
    del lower
    s = run.schedule
    trace = [[s.graph.tasks[i].name, s.devices[s.device_of[i]].name, round(float(s.start[i]), 7),
              round(float(s.end[i]), 7)] for i in range(len(s.graph.tasks))]
    return run.wall_time, trace, error


def tally(plan) -> dict:
    kinds: dict = {}
    for j in plan.device_of:
        kind = plan.devices[j].kind
        kinds[kind] = kinds.get(kind, 0) + 1
    return kinds


def add_run(entry: dict, result, keep_trace: bool) -> None:
    """Record one run in ``entry``; ``measured_s`` is the median so far, the trace that of the run nearest it."""
    wall, trace, error = result
    entry.setdefault("all_s", []).append(wall)
    if error is not None:
        entry["max_rel_error"] = max(entry.get("max_rel_error", 0.0), error)
    runs = entry["all_s"]
    entry["measured_s"] = statistics.median(runs)
    entry["best_s"] = min(runs)
    if keep_trace:
        entry.setdefault("_traces", []).append(trace)
        nearest = min(range(len(runs)), key=lambda k: (abs(runs[k] - entry["measured_s"]), k))
        entry["trace"] = entry["_traces"][nearest]


def same_plan(p, q) -> bool:
    """Whether two plans put every task on the same device in the same order (the executor runs them alike)."""
    if p.device_of.tolist() != q.device_of.tolist():
        return False
    return all(p.tasks_on(d.name) == q.tasks_on(d.name) for d in p.devices)


def measure_config(n: int, b: int, workers: list[int], gpu, cpu_kind: str, out: Path, env: dict, budget: Budget,
                   graphs: dict) -> None:
    name = f"n{n}_b{b}"
    path = out / f"{name}.json"
    record: dict = {"env": env}
    sec: dict = {"n": n, "b": b}
    record["hetero"] = sec

    def save():
        clean = json.loads(json.dumps(record, default=str))
        for part in [clean["hetero"].get("gpu_only") or {}] + [
                v for k, w in clean["hetero"].items() if k[3:].isdigit() and isinstance(w, dict)
                for v in w.values() if isinstance(v, dict)]:
            part.pop("_traces", None)
        write(path, clean)

    log(f"{name}: matrix, op costs")
    a = spd_matrix(n)
    got = guarded(record, "op_costs", op_costs, b, gpu, cpu_kind, a)
    if got is None:
        save()
        return
    sec["op_costs"], sec["tile_copy"] = got
    sec["tile_copy_s"] = (got[1]["h2d_s"] + got[1]["d2h_s"]) / 2
    sec["inputs_on_host"] = True
    sec["cpu_backend"] = env.get("cpu_backend")
    sec["measured_s_is"] = "median of the runs in all_s (best_s: the fastest)"
    lib = guarded(record, "library", library_cholesky, a, gpu) or {}
    sec.update(lib)
    save()
    start = time.perf_counter()
    reference = np.linalg.cholesky(a)
    sec["numpy_cholesky_all_threads_s"] = time.perf_counter() - start     # one call, the first
    case, _ = case_of({**{k: sec[k] for k in ("n", "b", "op_costs", "tile_copy_s", "inputs_on_host")}, "cpu1": {}})
    profile = load_profile(PROFILE)
    copies = case.host_inputs()
    graphs[name] = {"n": n, "b": b, "a": a, "reference": reference, "case": case}
    gpu_devices = case.devices(0)
    gpu_plan = heft(case.graph(gpu_devices), gpu_devices)
    graphs[name]["gpu_plan"] = gpu_plan
    gpu_entry = sec["gpu_only"] = {"simulated_s": gpu_plan.makespan, "tasks_per_kind": tally(gpu_plan)}
    for w in workers:
        if not budget.left():
            record.setdefault("skipped", []).append(f"cpu{w}: time budget")
            continue
        part: dict = {}
        sec[f"cpu{w}"] = part
        plans = {}
        cpu_devices = case.devices(w, gpu=False)
        devices = case.devices(w)
        plans["cpu_only"] = guarded(record, f"cpu{w}.plan.cpu_only", lambda d=cpu_devices: heft(case.graph(d), d))
        plans["hybrid_heft"] = guarded(record, f"cpu{w}.plan.hybrid_heft", lambda d=devices: heft(case.graph(d), d))
        aware = guarded(record, f"cpu{w}.plan.aware", lambda d=devices: host_aware(
            case.graph(d), d, profile=profile, host_inputs=copies))
        if aware is not None:
            info = {"cpu_workers_used": aware.info["cpu_workers"], "profile": PROFILE,
                    "predicted_s_on_device": aware.info["predicted"].makespan,
                    "candidates_predicted_s": {str(u): s for u, s in aware.info["candidates"].items()},
                    "simulated_s": aware.makespan, "tasks_per_kind": tally(aware)}
            twin = "gpu_only" if aware.info["cpu_workers"] == 0 else next(
                (k for k in ("hybrid_heft",) if plans.get(k) is not None and same_plan(plans[k], aware)), None)
            if twin:
                info["same_plan_as"] = twin        # measured once, under its twin's name
            else:
                plans["hybrid_dispatch_aware"] = aware
            part["hybrid_dispatch_aware"] = info
        for key in ("cpu_only", "hybrid_heft"):
            if plans.get(key) is not None:
                part[key] = {"simulated_s": plans[key].makespan, "tasks_per_kind": tally(plans[key])}
        order = [("gpu_only", gpu_plan, gpu_entry)] + [(k, p, part[k]) for k, p in plans.items() if p is not None]
        for rep in range(REPS):
            if rep and not budget.left():
                record.setdefault("skipped", []).append(f"cpu{w}: rounds after {rep}: time budget")
                break
            for key, plan, entry in order:
                first = "all_s" not in entry
                got = guarded(record, f"cpu{w}.{key}.{rep}", run_once, plan, a, b, gpu, cpu_kind,
                              reference if first else None)
                if got is not None:
                    add_run(entry, got, keep_trace=key != "cpu_only")
        save()
        ms = {k: (v.get("measured_s", float("nan")) * 1e3) for k, v in part.items() if isinstance(v, dict)}
        log(f"{name}: cpu{w} gpu_only {gpu_entry.get('measured_s', float('nan')) * 1e3:.1f} ms (median so far); "
            + ", ".join(f"{k} {v:.1f} ms" for k, v in ms.items() if v == v)
            + f"; aware used {part.get('hybrid_dispatch_aware', {}).get('cpu_workers_used')} CPU"
            + f" ({part.get('hybrid_dispatch_aware', {}).get('same_plan_as', 'own plan')})")
    save()


def summary(out: Path) -> None:
    """One line per configuration and plan: the median measured makespan (ms) and its range."""
    def cell(entry) -> str:
        if not isinstance(entry, dict):
            return "-"
        if "same_plan_as" in entry:
            return f"= {entry['same_plan_as']}"
        if "all_s" not in entry:
            return "-"
        return f"{entry['measured_s'] * 1e3:.1f} [{min(entry['all_s']) * 1e3:.1f}-{max(entry['all_s']) * 1e3:.1f}]"

    for path in sorted(out.glob("n*_b*.json")):
        sec = json.loads(path.read_text())["hetero"]
        parts = [f"gpu_only {cell(sec.get('gpu_only'))} (n={len((sec.get('gpu_only') or {}).get('all_s', []))})"]
        for key in sorted((k for k in sec if k[3:].isdigit()), key=lambda k: int(k[3:])):
            row = sec[key]
            used = (row.get("hybrid_dispatch_aware") or {}).get("cpu_workers_used")
            parts.append(f"{key}: cpu {cell(row.get('cpu_only'))} heft {cell(row.get('hybrid_heft'))}"
                         f" aware {cell(row.get('hybrid_dispatch_aware'))} (u={used})")
        lib = sec.get("torch_cholesky_gpu_s")
        log(f"SUMMARY {path.stem} ms: " + "; ".join(parts) + (f"; library {lib * 1e3:.2f}" if lib else ""))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", nargs="?", default=os.environ.get("OUT", "measure_out"))
    parser.add_argument("--budget", type=float, default=150.0, help="seconds; no section starts after 80%%")
    parser.add_argument("--quick", action="store_true", help="tiny sizes (a dry run)")
    parser.add_argument("--cpu", choices=sorted(CPU_BACKENDS), default="torch" if have_torch() else "numpy",
                        help="what computes the CPU tiles (default: torch if installed)")
    parser.add_argument("--graph", action="store_true", help="also time the CUDA-graph replay (cuda_graph.json)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    budget = Budget(args.budget)
    faulthandler.dump_traceback_later(1.2 * args.budget, exit=True)    # a hang: say where, and stop
    gpu = TorchCUDA() if cuda_available() else StandInGPU(launch_s=60e-6, hold_s=20e-6)
    env = guarded({}, "environment", environment, gpu, args.cpu) or {"cpu_backend": CPU_BACKENDS[args.cpu]}
    log(f"environment: {json.dumps({k: v for k, v in env.items() if k != 'blas'})}")
    graphs: dict = {}
    top: dict = {"env": env}
    for n, b, workers in (QUICK if args.quick else CONFIGS):
        if not budget.left():
            top.setdefault("skipped", []).append(f"n{n}_b{b}: time budget")
            continue
        guarded(top, f"n{n}_b{b}", measure_config, n, b, workers, gpu, args.cpu, out, env, budget, graphs)
    if args.graph:
        from _cuda_graph import cuda_graph  # this script's folder is on sys.path (python tools/measure_...)

        results = {}
        top["cuda_graph"] = results
        for name, entry in graphs.items():
            if not have_torch() or not budget.left():
                top.setdefault("skipped", []).append(f"cuda_graph {name}: {'budget' if have_torch() else 'no torch'}")
                continue
            results[name] = guarded(top, f"cuda_graph.{name}", cuda_graph, entry, _median_time)
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
