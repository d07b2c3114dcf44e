"""Calibration of this machine, before any experiment: the figures a prediction may use.

How many CPUs this process may use (:func:`cpu_count`, container quotas included), how fast the
pure-Python loop runs (:func:`loop_rate`), what one dispatch to a pool costs (:func:`dispatch_overhead`;
:func:`round_trips` for the spread of one process-pool round trip), and the FP64 matrix-product
rate (:func:`calibrate`). Every function caps its own run time (a few seconds at most) and returns
plain numbers; the chapters print them in cells marked
``NBVAL_IGNORE_OUTPUT`` because they differ from machine to machine.
"""
from __future__ import annotations

import math
import os
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hetlab._validate import (
    check_bool,
    check_choice,
    check_int,
    check_nonnegative,
    check_positive,
    check_sequence,
)
from hetlab.real.execute import MAX_LOOP, Sleep, busy_loop, queued_tasks, run_graph, task_gaps
from hetlab.tasks import TaskGraph

__all__ = ["cpu_count", "load_per_cpu", "loop_rate", "dispatch_overhead", "round_trips", "handovers", "calibrate",
           "thread_scaling",
           "ThreadScaling", "gpu_copy_launch"]


def _workers(workers) -> int:
    """``None``: one per usable CPU; otherwise an integer in [1, 64] (0 is an error, not the default)."""
    return cpu_count() if workers is None else check_int("workers", workers, low=1, high=64)


def cpu_count() -> int:
    """CPUs this process may use: the CPUs it may run on (``os.sched_getaffinity``, e.g. after
    ``taskset -c 0``), capped by a container's CPU quota (cgroup v2 ``cpu.max`` or v1
    ``cpu.cfs_quota_us``, rounded up): on Binder, Docker or Kubernetes the affinity lists every core
    of the host, the quota is what the container may use."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    quota = _cgroup_quota()
    return max(1, min(cpus, math.ceil(quota))) if quota is not None else cpus


def _cgroup_quota() -> float | None:
    """CPUs the container's quota allows (may be fractional), or None without a quota."""
    for path, parse in (("/sys/fs/cgroup/cpu.max", lambda t: t.split()),
                        ("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", lambda t: [t.strip(), _read(
                            "/sys/fs/cgroup/cpu/cpu.cfs_period_us") or "100000"])):
        text = _read(path)
        if text is None:
            continue
        try:
            quota, period = parse(text)[:2]
            if quota in ("max", "-1"):
                return None
            value = float(quota) / float(period)
        except (ValueError, IndexError):
            return None
        return value if value > 0 else None
    return None


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text()
    except OSError:
        return None


def _blas_threads() -> int | None:
    """Threads numpy's BLAS may use for one matrix product (threadpoolctl), or None if it cannot tell."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return None
    counts = [info.get("num_threads") for info in threadpool_info() if info.get("user_api") == "blas"]
    return max(counts) if counts else None


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


def round_trips(batches: int = 9, tasks: int = 40, workers: int | None = None, *,
                pause: float = 0.0) -> tuple[tuple[float, ...], ...]:
    """Seconds of single process-pool round trips (submit an empty function, wait for its result, submit
    the next), each timed on its own: ``batches`` batches of ``tasks`` trips, one tuple per batch in the order
    measured. Each batch runs in a fresh pool (started before the clock), so the batches differ as separate
    runs do, not only as moments of one pool. Timing trips one by one keeps the typical trip apart from the
    rare trip that waited for a core: the median of all trips is the typical round trip, and the spread of the
    batches' medians is how far it wanders from run to run (A1.4's graph pays 40).

    ``pause`` (seconds, at most 0.1): the parent sleeps this long before each trip (untimed), so the worker
    and the parent have both been idle, as they are when a task is released after its predecessor ran that
    long; waking them is part of the trip. ``pause=0`` (default): the trips back to back, both kept awake.

    >>> trips = round_trips(batches=3, tasks=5, workers=1)
    >>> [len(b) for b in trips] == [5, 5, 5] and all(0 < t < 1 for b in trips for t in b)
    True
    >>> len(round_trips(batches=3, tasks=2, workers=1, pause=0.002))
    3
    """
    batches = check_int("batches", batches, low=3, high=101)
    tasks = check_int("tasks", tasks, low=1, high=10_000)
    pause = check_nonnegative("pause", pause, high=0.1)
    workers = _workers(workers)
    out = []
    for _ in range(batches):
        with ProcessPoolExecutor(workers) as pool:
            list(pool.map(int, range(workers)))
            times = []
            for _ in range(tasks):
                if pause:
                    time.sleep(pause)
                t = time.perf_counter()
                pool.submit(int).result()
                times.append(time.perf_counter() - t)
            out.append(tuple(times))
    return tuple(out)


def handovers(graphs, workers: int | None = None, *,
              seconds_per_unit: float = 1e-3) -> dict[str, tuple[tuple[float, ...], ...]]:
    """The hand-overs of :func:`~hetlab.real.execute.run_graph`'s process pool, calibrated by running each of
    ``graphs`` once (a fresh pool of ``workers`` workers each; every task waits its work times
    ``seconds_per_unit`` seconds, :class:`~hetlab.real.execute.Sleep`) before a run of the same executor:

    - ``"released"``: the gaps (:func:`~hetlab.real.execute.task_gaps`) of the tasks whose worker was idle when
      they became ready (:func:`~hetlab.real.execute.queued_tasks` False; a worker's first task included, as
      the simulation charges it the same way);
    - ``"queued"``: the gaps of the tasks that became ready while their worker was still busy;
    - ``"stretch"``: each task's measured length minus its set wait.

    One tuple of seconds per graph for each (a graph may have no task of a kind: an empty tuple). Calibrate on
    graphs like the one to be predicted -- the same generator, other seeds -- so that the hand-overs are paid
    under the same conditions (task lengths, how many tasks finish at once), never on the run itself.

    >>> from hetlab.tasks import Task, TaskGraph
    >>> chain = TaskGraph([Task("a", 1.0), Task("b", 1.0)], [("a", "b")])
    >>> h = handovers([chain, chain, chain], workers=1)
    >>> sorted(h), [len(b) for b in h["released"]], [len(b) for b in h["stretch"]]
    (['queued', 'released', 'stretch'], [2, 2, 2], [2, 2, 2])
    """
    workers = _workers(workers)
    seconds_per_unit = check_positive("seconds_per_unit", seconds_per_unit, high=1.0)
    graphs = check_sequence("graphs", graphs)
    if len(graphs) < 3 or not all(isinstance(g, TaskGraph) for g in graphs):
        raise TypeError(f"graphs must be at least 3 TaskGraphs (one pool run each), got {len(graphs)} items of "
                        f"types {sorted({type(g).__name__ for g in graphs})}")
    if sum(len(g.tasks) for g in graphs) > 2000 or any(t.work * seconds_per_unit > 0.1 for g in graphs
                                                          for t in g.tasks):
        raise ValueError("graphs must hold at most 2000 tasks in all, each waiting at most 0.1 s "
                         f"(work x seconds_per_unit), got {sum(len(g.tasks) for g in graphs)} tasks")
    out: dict[str, list] = {"released": [], "queued": [], "stretch": []}
    for graph in graphs:
        waits = np.array([t.work * seconds_per_unit for t in graph.tasks])
        bodies = {t.name: Sleep(float(w)) for t, w in zip(graph.tasks, waits)}
        run = run_graph(graph, bodies, executor="process", workers=workers).schedule
        gaps, queued = task_gaps(run), queued_tasks(run)
        out["released"].append(tuple(float(x) for x in gaps[~queued]))
        out["queued"].append(tuple(float(x) for x in gaps[queued]))
        out["stretch"].append(tuple(float(x) for x in (run.end - run.start) - waits))
    return {k: tuple(v) for k, v in out.items()}


def loop_rate(seconds: float = 0.05, *, repeat: int = 3, statistic: str = "best") -> float:
    """Steps per CPU second of the pure-Python loop that :func:`hetlab.real.execute.busy_loop` and
    :func:`hetlab.real.execute.run_plan` run, measured for about ``seconds`` of this thread's CPU time per
    timing (``time.thread_time``): a loop sized from it needs that many CPU seconds however busy the machine
    is, because time spent waiting for a core is not counted.

    ``statistic="best"`` (default): the fastest of ``repeat`` timings, so a momentary interruption does
    not slow every task sized from it. ``statistic="median"``: one untimed warm-up run, then the median
    of ``repeat`` timings -- the typical rate, neither the luckiest nor the unluckiest timing, for
    predictions that should not lean either way on a noisy machine."""
    seconds = check_positive("seconds", seconds, high=2.0)
    repeat = check_int("repeat", repeat, low=1, high=15)
    check_choice("statistic", statistic, ("best", "median"))
    n = 20_000
    while True:
        t = time.thread_time()
        busy_loop(n)
        took = time.thread_time() - t
        if took >= seconds / 3 or n >= MAX_LOOP // 2:
            break
        n = min(MAX_LOOP // 2, n * 2)
    # For the median the sizing runs above were the warm-up; for the best, the last of them counts.
    times = [took] if statistic == "best" else []
    while len(times) < repeat:
        t = time.thread_time()
        busy_loop(n)
        times.append(time.thread_time() - t)
    # a CPU clock coarser than the loop would give 0: the floor keeps the rate finite
    return n / max(min(times) if statistic == "best" else float(np.median(times)), 1e-9)


def calibrate(*, cache: bool = True, refresh: bool = False) -> dict:
    """Measure this machine once (about two seconds) and cache the figures per machine.

    Returns ``{"machine", "cpus", "blas_threads", "matmul_gflops", "thread_overhead_s", "process_overhead_s",
    "gpu"}`` (``matmul_gflops``: FP64, 512 x 512, with ``blas_threads`` BLAS threads; the two overheads are the
    least of three pipelined :func:`dispatch_overhead` runs);
    ``gpu`` is a dict of throughput and host-to-device figures when torch with CUDA or cupy is
    importable and sees a GPU, else ``{"available": False, "reason": ...}`` (use the presets).
    Cache: ``$XDG_CACHE_HOME/hetlab/calibration-<host>.json``.
    """
    import json
    import platform

    cache = check_bool("cache", cache)
    refresh = check_bool("refresh", refresh)
    np.ones((2, 2)) @ np.ones((2, 2))                   # BLAS loaded, so that its thread count is known
    blas = _blas_threads()
    machine = f"{platform.node()}-{platform.machine()}-{cpu_count()}cpu-blas{blas}-numpy{np.__version__}"
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hetlab"
    path = base / f"calibration-{platform.node() or 'host'}.json"
    if cache and not refresh and path.exists():
        try:
            data = json.loads(path.read_text())
            if data.get("machine") == machine:
                return data
        except (OSError, ValueError):
            pass
    data = {"machine": machine, "cpus": cpu_count(), "blas_threads": blas, "matmul_gflops": _matmul_gflops(),
            # the least of three: a burst of load inflates one reading, not the cost of a dispatch
            "thread_overhead_s": min(dispatch_overhead(1000) for _ in range(3)),
            "process_overhead_s": min(dispatch_overhead(200, executor="process") for _ in range(3)),
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


@dataclass(frozen=True)
class ThreadScaling:
    """One fixed job timed on thread pools of several sizes (:func:`thread_scaling`): ``wall[n]`` and
    ``cpu[n]`` are the seconds of the median round (by wall time) of ``rounds`` interleaved rounds of the pool
    with ``n`` threads;
    ``blas_limited`` says whether BLAS was held to one thread (without threadpoolctl it is not, and the
    one-thread baseline may already use several cores)."""
    wall: dict[int, float]
    cpu: dict[int, float]
    blas_limited: bool
    rounds: int

    def __post_init__(self):
        for name in ("wall", "cpu"):
            times = getattr(self, name)
            if not isinstance(times, dict) or not times:
                raise TypeError(f"{name} must be a non-empty dict {{threads: seconds}}, got {times!r}")
            for n, t in times.items():
                check_int(f"{name} key", n, low=1, high=64)
                check_positive(f"{name}[{n}]", t)
        if set(self.wall) != set(self.cpu):
            raise ValueError(f"wall and cpu must time the same thread counts, got {sorted(self.wall)} "
                             f"and {sorted(self.cpu)}")
        check_bool("blas_limited", self.blas_limited)
        check_int("rounds", self.rounds, low=1, high=15)

    def share(self, n: int) -> float:
        """CPU seconds per wall second of the ``n``-thread pool: the CPUs it used. A busy neighbour, too few
        cores and a thread that waits (for the GIL, a lock, a serial part) all keep it below ``n`` alike.

        >>> ThreadScaling({1: 2.0, 2: 1.0}, {1: 2.0, 2: 2.0}, True, 1).share(2)
        2.0
        """
        if not isinstance(n, int) or isinstance(n, bool) or n not in self.wall:
            raise ValueError(f"n must be one of the timed thread counts {sorted(self.wall)}, got {n!r}")
        return self.cpu[n] / self.wall[n]


def thread_scaling(counts=(1, 2, 4), *, blocks: int = 96, size: int = 160, repeat: int = 7) -> ThreadScaling:
    """Wall and CPU seconds of one fixed job, ``blocks`` FP64 products ``a @ a @ a`` of ``size`` x ``size``
    matrices, run on a thread pool of each size in ``counts``. The rounds are interleaved (1, 2, 4, 1, 2, 4,
    ...), so every pool size meets the same background load, and each size keeps its median round of
    ``repeat`` (wall and CPU time of that same round). numpy releases the GIL during a product and BLAS is
    held to one thread (threadpoolctl, where installed; ``blas_limited`` says so), so the pool's threads are
    the only parallelism. The input of Karp-Flatt on the reader's machine (chapter 7): ``T_1 = wall[1]``;
    ``cpu[n] / wall[n]`` is the CPUs the pool used: on a busy machine it changes with the number of threads,
    and the wall-time speed-up follows it; waiting threads use none, so it cannot tell waiting from neighbours.
    """
    counts = tuple(check_int("counts", n, low=1, high=64) for n in check_sequence("counts", counts))
    blocks = check_int("blocks", blocks, low=1, high=10_000)
    size = check_int("size", size, low=1, high=1_000)
    repeat = check_int("repeat", repeat, low=1, high=15)
    mats = [np.random.default_rng(i).random((size, size)) for i in range(blocks)]
    try:
        from threadpoolctl import threadpool_limits
        limit = threadpool_limits(1)        # one BLAS thread per product: the pool alone decides the parallelism
    except ImportError:
        limit = None
    pools = {n: ThreadPoolExecutor(n) for n in set(counts)}
    try:
        for n, pool in pools.items():
            list(pool.map(int, range(n)))                 # threads started before any clock starts
        times: dict[int, list[tuple[float, float]]] = {n: [] for n in counts}
        for _ in range(repeat):
            for n in counts:
                wall, cpu = time.perf_counter(), time.process_time()
                list(pools[n].map(lambda a: a @ a @ a, mats))
                # a run always uses some CPU: the floor only guards against a coarse process clock
                times[n].append((time.perf_counter() - wall, max(time.process_time() - cpu, 1e-9)))
        # the round with the median wall time, CPU time from the same round: a consistent pair
        mid = {n: sorted(t)[(len(t) - 1) // 2] for n, t in times.items()}
        return ThreadScaling({n: w for n, (w, _) in mid.items()}, {n: c for n, (_, c) in mid.items()},
                             limit is not None, repeat)
    finally:
        for pool in pools.values():
            pool.shutdown()
        if limit is not None:
            limit.restore_original_limits()


def gpu_copy_launch(*, repeat: int = 30) -> dict:
    """This machine's CUDA GPU measured the way chapter 6 quotes the stored H200 readings: the fastest of
    ``repeat`` pinned host-to-device copies of 4 KiB and of 64 MiB (a two-point alpha-beta fit) and of one
    tiny kernel launched and synchronised. Returns ``{"available": True, "name", "copy_4k_s", "alpha_s",
    "bandwidth", "launch_sync_s"}`` (seconds, bytes/s), or ``{"available": False, "reason"}`` without torch or
    a CUDA device (the chapters then print the stored readings alone)."""
    repeat = check_int("repeat", repeat, low=1, high=1_000)
    try:
        import torch
    except ImportError:
        return {"available": False, "reason": "torch is not installed"}
    if not torch.cuda.is_available():
        return {"available": False, "reason": "torch sees no CUDA device"}

    def fastest(work) -> float:
        best = math.inf
        for _ in range(repeat):
            torch.cuda.synchronize()
            t = time.perf_counter()
            work()
            torch.cuda.synchronize()
            best = min(best, time.perf_counter() - t)
        return best

    small, big = 4 * 2**10, 64 * 2**20
    copies = {}
    for n in (small, big):
        src = torch.empty(n, dtype=torch.uint8).pin_memory()
        dst = torch.empty(n, dtype=torch.uint8, device="cuda")
        copies[n] = fastest(lambda dst=dst, src=src: dst.copy_(src, non_blocking=True))
    bandwidth = (big - small) / (copies[big] - copies[small])
    x = torch.zeros(1, device="cuda")
    return {"available": True, "name": torch.cuda.get_device_name(0), "copy_4k_s": copies[small],
            "alpha_s": copies[small] - small / bandwidth, "bandwidth": bandwidth,
            "launch_sync_s": fastest(lambda: x.add_(1.0))}
