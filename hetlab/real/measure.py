"""Short, bounded measurements on this machine, for the chapters that compare models with reality.

Every function caps its own run time (a few seconds at most) and returns plain numbers;
the chapters print them in cells marked ``NBVAL_IGNORE_OUTPUT`` because they differ
from machine to machine.
"""
from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hetlab._validate import (
    as_float_array,
    check_bool,
    check_choice,
    check_fields,
    check_int,
    check_nonnegative,
    check_positive,
    check_sequence,
    describe,
)
from hetlab.devices import Device

__all__ = ["busy_loop", "PoolTiming", "time_pools", "split_matmul", "dispatch_overhead", "cpu_count", "load_per_cpu",
           "fit_overhead", "granularity_sweep", "calibrate", "calibrated_cpu", "Spin", "Sleep", "loop_rate",
           "GPU_PRESET"]


#: Largest busy_loop, and the most busy-loop steps one time_pools call runs (serially, then twice on pools).
MAX_LOOP = 10_000_000
#: Most floating-point operations one split_matmul call may run (a few seconds on a laptop core).
MAX_MATMUL_FLOP = 5e10


def _workers(workers) -> int:
    """``None``: one per usable CPU; otherwise an integer in [1, 64] (0 is an error, not the default)."""
    return cpu_count() if workers is None else check_int("workers", workers, low=1, high=64)


def cpu_count() -> int:
    """CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def load_per_cpu() -> float | None:
    """Runnable processes per usable CPU over the last minute (the 1-minute load average divided by
    :func:`cpu_count`), or ``None`` where the system does not report a load average (Windows).

    Above about 1, a measured run shares its cores with other work and takes longer than any model that
    assumes whole cores; the chapters print this next to every timing they compare with a simulation.
    """
    try:
        one_minute = os.getloadavg()[0]
    except (AttributeError, OSError):
        return None
    return one_minute / cpu_count()


def busy_loop(n: int) -> int:
    """A CPU-bound pure-Python function: holds the GIL the whole time. At most 10 million steps
    (about a second), so that no call runs for minutes."""
    n = check_int("n", n, low=0, high=MAX_LOOP)
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


@dataclass(frozen=True)
class PoolTiming:
    """Wall-clock seconds for the same jobs run serially, on threads and on processes."""

    jobs: int
    workers: int
    serial: float
    threads: float
    processes: float

    def __post_init__(self) -> None:
        check_fields(self)
        for name in ("jobs", "workers"):
            check_int(name, getattr(self, name), low=1)
        for name in ("threads", "processes"):
            check_positive(name, getattr(self, name))

    def text(self) -> str:
        return (f"{self.jobs} 个任务，{self.workers} 个工作者：串行 {self.serial:.3f} 秒，"
                f"线程池 {self.threads:.3f} 秒（{self.serial / self.threads:.2f}x），"
                f"进程池 {self.processes:.3f} 秒（{self.serial / self.processes:.2f}x）")


def time_pools(jobs: int = 8, size: int = 300_000, workers: int | None = None) -> PoolTiming:
    """Run ``jobs`` calls of :func:`busy_loop` serially, on a thread pool and on a process pool."""
    jobs = check_int("jobs", jobs, low=1, high=64)
    size = check_int("size", size, low=1, high=5_000_000)
    workers = _workers(workers)
    if jobs * size > MAX_LOOP:
        raise ValueError(f"jobs x size must be at most {MAX_LOOP:,} loop steps (each is run three times), got "
                         f"jobs={jobs} x size={size:,} = {jobs * size:,}")
    t = time.perf_counter()
    for _ in range(jobs):
        busy_loop(size)
    serial = time.perf_counter() - t
    with ThreadPoolExecutor(workers) as pool:
        t = time.perf_counter()
        list(pool.map(busy_loop, [size] * jobs))
        threads = time.perf_counter() - t
    with ProcessPoolExecutor(workers) as pool:
        list(pool.map(busy_loop, [1] * workers))  # start the workers before timing
        t = time.perf_counter()
        list(pool.map(busy_loop, [size] * jobs))
        processes = time.perf_counter() - t
    return PoolTiming(jobs, workers, serial, threads, processes)


def time_pools_repeated(jobs: int = 8, size: int = 300_000, workers: int | None = None,
                        repeats: int = 3) -> list[PoolTiming]:
    """Like :func:`time_pools`, but ``repeats`` rounds, each timing serial, threads and processes
    one after another (interleaved), so drift in the machine's load hits all three alike. The
    process pool is started once, before any timing. Returns one :class:`PoolTiming` per round."""
    jobs = check_int("jobs", jobs, low=1, high=64)
    size = check_int("size", size, low=1, high=5_000_000)
    repeats = check_int("repeats", repeats, low=1, high=10)
    workers = _workers(workers)
    if jobs * size * repeats > MAX_LOOP:
        raise ValueError(f"jobs x size x repeats must be at most {MAX_LOOP:,} loop steps (each is run three "
                         f"times), got jobs={jobs} x size={size:,} x repeats={repeats} = {jobs * size * repeats:,}")
    rounds: list[PoolTiming] = []
    with ThreadPoolExecutor(workers) as tpool, ProcessPoolExecutor(workers) as ppool:
        list(ppool.map(busy_loop, [1] * workers))  # start the workers before timing
        for _ in range(repeats):
            t = time.perf_counter()
            for _ in range(jobs):
                busy_loop(size)
            serial = time.perf_counter() - t
            t = time.perf_counter()
            list(tpool.map(busy_loop, [size] * jobs))
            threads = time.perf_counter() - t
            t = time.perf_counter()
            list(ppool.map(busy_loop, [size] * jobs))
            processes = time.perf_counter() - t
            rounds.append(PoolTiming(jobs, workers, serial, threads, processes))
    return rounds


def split_matmul(n: int = 1000, pieces=(1, 4, 16, 64, 256, 1000), workers: int | None = None,
                 repeat: int = 3) -> dict[int, float]:
    """Seconds to compute an ``n x n`` matrix product split into row blocks, one pool task per
    block, for each piece count (best of ``repeat``). numpy releases the GIL inside the product,
    so threads do run in parallel here; what grows with the piece count is the per-task overhead."""
    n = check_int("n", n, low=1, high=4096)
    repeat = check_int("repeat", repeat, low=1, high=10)
    pieces = [check_int("pieces", k, low=1, high=n) for k in check_sequence("pieces", pieces)]
    workers = _workers(workers)
    flop = 2.0 * n ** 3 * len(pieces) * repeat
    if flop > MAX_MATMUL_FLOP:
        raise ValueError(f"n={n}, {len(pieces)} pieces and repeat={repeat} need {flop:.3g} FLOP; at most "
                         f"{MAX_MATMUL_FLOP:.0e} (a few seconds): lower n, the piece counts or repeat")
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n)), rng.random((n, n))
    out: dict[int, float] = {}
    with ThreadPoolExecutor(workers) as pool:
        for k in pieces:
            blocks = np.array_split(np.arange(n), k)
            best = np.inf
            for _ in range(repeat):
                t = time.perf_counter()
                parts = list(pool.map(lambda rows: a[rows[0]:rows[-1] + 1] @ b, blocks))
                np.concatenate(parts)
                best = min(best, time.perf_counter() - t)
            out[k] = best
    return out


def dispatch_overhead(tasks: int = 2000, workers: int | None = None, executor: str = "thread", *,
                      pipelined: bool = True) -> float:
    """Seconds per task of submitting an empty function to a pool (``"thread"`` or ``"process"``)
    and collecting it; a process pool's workers are started before the clock starts.

    ``pipelined=True``: submit all ``tasks`` back to back, then wait for them (throughput: the cost
    per task when dispatch overlaps execution). ``pipelined=False``: submit one, wait for it, repeat
    (the round-trip latency of one task)."""
    tasks = check_int("tasks", tasks, low=1, high=20_000)
    check_choice("executor", executor, ("thread", "process"))
    pipelined = check_bool("pipelined", pipelined)
    workers = _workers(workers)
    with (ThreadPoolExecutor if executor == "thread" else ProcessPoolExecutor)(workers) as pool:
        list(pool.map(int, range(workers)))
        t = time.perf_counter()
        if pipelined:
            for f in [pool.submit(int) for _ in range(tasks)]:
                f.result()
        else:
            for _ in range(tasks):
                pool.submit(int).result()
        return (time.perf_counter() - t) / tasks


def fit_overhead(task_counts, seconds, workers: int | None = None, *, relative: bool = False) -> tuple[float, float]:
    """Least-squares fit of ``T(N) = N * Os + W / N`` to measured times; returns ``(Os, W)``.

    The book's model gives every task its own processor. On a pool of ``workers`` processors,
    N equal tasks run in ``ceil(N / workers)`` waves, so the work term becomes
    ``W * ceil(N / workers) / N``. Either way the model is linear in (Os, W): an ordinary
    least-squares solve. ``relative=True`` minimises relative errors (each row weighted by
    1 / measured time), so that the longest runs do not dominate the fit.
    """
    relative = check_bool("relative", relative)
    n = as_float_array("task_counts", task_counts, low=1.0, finite=True, integer=True)
    t = as_float_array("seconds", seconds, low=0.0, finite=True)
    if n.ndim != 1 or n.size < 2:
        raise ValueError(f"task_counts must be a 1-D sequence of at least 2 counts, got shape {n.shape}")
    if t.shape != n.shape:
        raise ValueError(f"task_counts and seconds must have the same length, got shapes {n.shape} and {t.shape}")
    if np.unique(n).size < 2:
        raise ValueError("task_counts must hold at least two different counts: one count cannot separate Os from W")
    waves = np.ones_like(n) if workers is None else np.ceil(n / check_int("workers", workers, low=1, high=4096))
    design = np.column_stack([n, waves / n])
    if relative:
        if (t <= 0).any():
            raise ValueError("seconds must all be positive for a relative fit (each row is divided by its time)")
        design, t = design / t[:, None], np.ones_like(t)
    os_, w = _nonnegative_fit(design, t)
    if not (np.isfinite(os_) and np.isfinite(w)):
        raise ValueError("task_counts and seconds are too large to fit: rescale them")
    return float(os_), float(w)


def _nonnegative_fit(design: np.ndarray, t: np.ndarray) -> tuple[float, float]:
    """Least squares with both coefficients >= 0 (a negative overhead or work is not a machine): the
    unconstrained fit if it is non-negative, else the best fit with one coefficient held at zero."""
    with np.errstate(all="ignore"):
        scale = np.abs(design).max(axis=0)
        scale[scale == 0] = 1.0
        coef, *_ = np.linalg.lstsq(design / scale, t, rcond=None)
        coef = coef / scale
        if (coef >= 0).all():
            return float(coef[0]), float(coef[1])
        best = None
        for k in (0, 1):
            col = design[:, k]
            c = max(0.0, float(col @ t) / float(col @ col)) if col @ col > 0 else 0.0
            resid = float(((t - c * col) ** 2).sum())
            if best is None or resid < best[0]:
                best = (resid, k, c)
        _, k, c = best
        return (c, 0.0) if k == 0 else (0.0, c)


def _spin(seconds: float) -> float:
    """Busy-wait for ``seconds`` of CPU work (a task of known size for granularity sweeps)."""
    end = time.perf_counter() + seconds
    x = 0.0
    while time.perf_counter() < end:
        x += 1.0
    return x


def granularity_sweep(total_seconds: float = 0.4, task_counts=(1, 2, 4, 8, 16, 64, 256, 1024),
                      executor: str = "process", workers: int | None = None, *, repeat: int = 1) -> dict[int, float]:
    """Split ``total_seconds`` of CPU work into N equal tasks on a real pool; wall time for each N
    (the median of ``repeat`` runs, the counts interleaved so that a burst of load hits all of them).

    The work per task is a busy-wait, so ``W`` is known; fit ``Os`` with :func:`fit_overhead`.
    """
    repeat = check_int("repeat", repeat, low=1, high=9)
    from hetlab.real.execute import run_graph
    from hetlab.tasks import independent_tasks

    total_seconds = check_positive("total_seconds", total_seconds, high=2.0)
    counts = [check_int("task_counts", n, low=1, high=4096) for n in check_sequence("task_counts", task_counts)]
    if len(counts) > 32:
        raise ValueError(f"task_counts must list at most 32 counts, got {len(counts)}")
    check_choice("executor", executor, ("process", "thread"))
    workers = _workers(workers)
    runs: dict[int, list[float]] = {n: [] for n in counts}
    for _ in range(repeat):
        for n in counts:
            graph = independent_tasks([1.0] * n)
            share = total_seconds / n
            run = run_graph(graph, {t.name: Spin(share) for t in graph.tasks}, executor=executor, workers=workers)
            runs[n].append(run.wall_time)
    return {n: float(np.median(v)) for n, v in runs.items()}


@dataclass(frozen=True)
class Spin:
    """A picklable task body that keeps one CPU busy for ``seconds`` (inputs are ignored)."""

    seconds: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "seconds", check_nonnegative("seconds", self.seconds, high=10.0))

    def __call__(self, *inputs) -> float:
        return _spin(self.seconds)


@dataclass(frozen=True)
class Sleep:
    """A picklable task body that waits ``seconds`` in ``time.sleep`` (inputs are ignored): it lasts as
    long as a :class:`Spin` of the same ``seconds`` but releases the GIL (and the core) while it waits."""

    seconds: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "seconds", check_nonnegative("seconds", self.seconds, high=10.0))

    def __call__(self, *inputs) -> float:
        time.sleep(self.seconds)
        return self.seconds


def loop_rate(seconds: float = 0.05, *, repeat: int = 3, statistic: str = "best") -> float:
    """Steps per second of the pure-Python loop that :func:`busy_loop` and
    :func:`hetlab.real.execute.run_plan` run, measured for about ``seconds`` per timing.

    ``statistic="best"`` (default): the fastest of ``repeat`` timings, so a momentary interruption does
    not slow every task sized from it. ``statistic="median"``: one untimed warm-up run, then the median
    of ``repeat`` timings -- the typical rate, neither the luckiest nor the unluckiest timing, for
    predictions that should not lean either way on a noisy machine."""
    seconds = check_positive("seconds", seconds, high=2.0)
    repeat = check_int("repeat", repeat, low=1, high=15)
    check_choice("statistic", statistic, ("best", "median"))
    n = 20_000
    while True:
        t = time.perf_counter()
        busy_loop(n)
        took = time.perf_counter() - t
        if took >= seconds / 3 or n >= MAX_LOOP // 2:
            break
        n = min(MAX_LOOP // 2, n * 2)
    # For the median the sizing runs above were the warm-up; for the best, the last of them counts.
    times = [took] if statistic == "best" else []
    while len(times) < repeat:
        t = time.perf_counter()
        busy_loop(n)
        times.append(time.perf_counter() - t)
    return n / (min(times) if statistic == "best" else float(np.median(times)))


def calibrate(*, cache: bool = True, refresh: bool = False) -> dict:
    """Measure this machine once (about two seconds) and cache the figures per machine.

    Returns ``{"machine", "cpus", "matmul_gflops", "thread_overhead_s", "process_overhead_s", "gpu"}``;
    ``gpu`` is a dict of throughput and host-to-device figures when torch with CUDA or cupy is
    importable and sees a GPU, else ``{"available": False, "reason": ...}`` (use the presets).
    Cache: ``$XDG_CACHE_HOME/hetlab/calibration-<host>.json``.
    """
    import json
    import platform

    cache = check_bool("cache", cache)
    refresh = check_bool("refresh", refresh)
    machine = f"{platform.node()}-{platform.machine()}-{cpu_count()}cpu-numpy{np.__version__}"
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hetlab"
    path = base / f"calibration-{platform.node() or 'host'}.json"
    if cache and not refresh and path.exists():
        try:
            data = json.loads(path.read_text())
            if data.get("machine") == machine:
                return data
        except (OSError, ValueError):
            pass
    data = {"machine": machine, "cpus": cpu_count(), "matmul_gflops": _matmul_gflops(),
            "thread_overhead_s": dispatch_overhead(2000),
            "process_overhead_s": dispatch_overhead(200, executor="process"),
            "gpu": _gpu_figures()}
    if cache:
        base.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=1))
    return data


def _matmul_gflops(n: int = 512, budget: float = 0.5) -> float:
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n)), rng.random((n, n))
    a @ b
    runs, start = 0, time.perf_counter()
    while time.perf_counter() - start < budget:
        a @ b
        runs += 1
    return 2 * n**3 * runs / (time.perf_counter() - start) / 1e9


def _gpu_figures() -> dict:
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None and torch.cuda.is_available():
        dev = torch.device("cuda")
        x = torch.rand(2048, 2048, device=dev)
        torch.cuda.synchronize()
        start, runs = time.perf_counter(), 0
        while time.perf_counter() - start < 0.5:
            x @ x
            runs += 1
        torch.cuda.synchronize()
        tflops = 2 * 2048**3 * runs / (time.perf_counter() - start) / 1e12
        host = torch.rand(64 * 2**20 // 4)
        small = torch.rand(1)
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(20):
            small.to(dev)
        torch.cuda.synchronize()
        latency = (time.perf_counter() - start) / 20
        start = time.perf_counter()
        host.to(dev)
        torch.cuda.synchronize()
        bandwidth = host.numel() * 4 / (time.perf_counter() - start) / 1e9
        return {"available": True, "library": "torch", "name": torch.cuda.get_device_name(0),
                "matmul_tflops": tflops, "h2d_latency_s": latency, "h2d_gbps": bandwidth}
    try:
        import cupy  # noqa: F401
    except ImportError:
        return {"available": False, "reason": "no torch with CUDA and no cupy importable: using the presets"}
    return {"available": False, "reason": "cupy is importable but GPU timing uses torch only: using the presets"}


def calibrated_cpu(data: dict | None = None) -> Device:
    """A CPU Device whose speed is this machine's measured matmul rate (GFLOP per second)."""
    from collections.abc import Mapping

    data = calibrate() if data is None else data
    if not isinstance(data, Mapping) or "matmul_gflops" not in data or "cpus" not in data:
        raise TypeError(f"data must be calibrate()'s dict with 'matmul_gflops' and 'cpus', got {describe(data)}")
    try:
        speed = check_positive("matmul_gflops", data["matmul_gflops"])
        check_int("cpus", data["cpus"], low=1)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"data: {exc}") from None
    return Device("CPU (measured)", "CPU", speed)


#: Preset accelerator figures used when no GPU can be measured (an A100-class card, NVIDIA data sheet):
#: FP64 and FP32 matmul peaks (TFLOP/s, non-tensor-core), host-to-device copy over PCIe 4 x16 (achieved
#: GB/s) and the fixed cost of launching one copy (s).
GPU_PRESET = {"name": "A100 preset", "fp64_tflops": 9.7, "fp32_tflops": 19.5, "h2d_gbps": 25.0,
              "launch_s": 10e-6}
