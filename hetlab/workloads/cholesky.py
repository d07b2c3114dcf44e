"""Tiled Cholesky factorisation as a task graph (Buttari, Langou, Kurzak & Dongarra 2009).

An ``n x n`` symmetric positive definite matrix cut into ``T x T`` tiles of ``b x b`` (``T = n / b``) is
factored ``A = L L^T`` by four tile kernels. Step ``k`` runs ``POTRF_k`` (factor diagonal tile k),
``TRSM_i_k`` for ``i > k`` (solve the tiles below it), ``SYRK_i_k`` (update diagonal tile i) and
``GEMM_i_j_k`` for ``k < j < i`` (update tile (i, j)). An edge runs from the last task that wrote a tile to
each task that reads or overwrites it next, so the graph holds exactly the true dependencies:
``T + T(T-1) + T(T-1)(T-2)/6`` tasks.

Run times come from per-operation cost tables, seconds per tile kernel on each device kind (e.g. measured
on one CPU thread and on the GPU); a transfer between a CPU and a GPU costs the GPU link's latency, the time
to copy one tile.

>>> g = cholesky_graph(3)
>>> len(g.tasks), len(g.edges), g.tasks[0].name, g.tasks[-1].name
(10, 12, 'POTRF_0', 'POTRF_2')
>>> task_counts(12)["total"]
364
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from hetlab._validate import check_int, check_nonnegative, describe
from hetlab.devices import Device, Link, check_devices
from hetlab.tasks import Task, TaskGraph

__all__ = ["OPS", "FLOPS", "task_counts", "tile_count", "cholesky_graph", "cholesky_devices", "CholeskyCase",
           "predict_makespans"]

#: The four tile kernels, in the order a step runs them.
OPS = ("potrf", "trsm", "syrk", "gemm")
#: Floating-point operations of each kernel on b x b tiles, in units of b^3 (LAPACK working notes counts).
FLOPS = {"potrf": 1 / 3, "trsm": 1.0, "syrk": 1.0, "gemm": 2.0}
#: Largest tile count (T = 60 gives 37,820 tasks: a graph the schedulers handle in seconds).
MAX_TILES = 60


def tile_count(n: int, b: int) -> int:
    """Tiles per side, ``n / b``, for a matrix of order ``n`` cut into ``b x b`` tiles (``b`` divides ``n``).

    >>> tile_count(3072, 256)
    12
    """
    n = check_int("n", n, low=1)
    b = check_int("b", b, low=1, high=n)
    if n % b:
        raise ValueError(f"b must divide n = {n}, got b = {b} (n / b = {n / b:g})")
    if n // b > MAX_TILES:
        raise ValueError(f"n / b must be at most {MAX_TILES} tiles per side, got n = {n}, b = {b} ({n // b})")
    return n // b


def task_counts(tiles: int) -> dict[str, int]:
    """Tasks of each kernel for ``tiles`` tiles per side, and their total.

    >>> task_counts(8)
    {'potrf': 8, 'trsm': 28, 'syrk': 28, 'gemm': 56, 'total': 120}
    """
    t = check_int("tiles", tiles, low=1, high=MAX_TILES)
    counts = {"potrf": t, "trsm": t * (t - 1) // 2, "syrk": t * (t - 1) // 2, "gemm": t * (t - 1) * (t - 2) // 6}
    counts["total"] = sum(counts.values())
    return counts


def _structure(tiles: int) -> tuple[list[tuple[str, str]], list[tuple[str, str]], dict[str, int]]:
    """(name, op) of every task in step order, the dependency edges (last writer -> next user), and for each task
    that is the first to use a tile of the matrix, how many such tiles it uses (each tile has one first user)."""
    tasks: list[tuple[str, str]] = []
    edges: list[tuple[str, str]] = []
    writer: dict[tuple[int, int], str] = {}
    first: dict[str, int] = {}

    def use(name: str, reads: Sequence[tuple[int, int]], writes: tuple[int, int]) -> None:
        for tile in (*reads, writes):     # the writers of distinct tiles are distinct tasks: no edge twice
            if tile in writer:
                edges.append((writer[tile], name))
            else:                         # nobody wrote it yet: the matrix's own tile
                first[name] = first.get(name, 0) + 1
        writer[writes] = name

    for k in range(tiles):
        tasks.append((f"POTRF_{k}", "potrf"))
        use(f"POTRF_{k}", (), (k, k))
        for i in range(k + 1, tiles):
            tasks.append((f"TRSM_{i}_{k}", "trsm"))
            use(f"TRSM_{i}_{k}", [(k, k)], (i, k))
        for i in range(k + 1, tiles):
            tasks.append((f"SYRK_{i}_{k}", "syrk"))
            use(f"SYRK_{i}_{k}", [(i, k)], (i, i))
            for j in range(k + 1, i):
                tasks.append((f"GEMM_{i}_{j}_{k}", "gemm"))
                use(f"GEMM_{i}_{j}_{k}", [(i, k), (j, k)], (i, j))
    return tasks, edges, first


def _check_costs(op_costs, kinds: set[str]) -> dict[str, dict[str, float]]:
    if not isinstance(op_costs, Mapping):
        raise TypeError(f"op_costs must map each of {list(OPS)} to {{device kind: seconds}}, got "
                        f"{describe(op_costs)}")
    costs = {}
    for op in OPS:
        row = op_costs.get(op)
        if not isinstance(row, Mapping):
            raise ValueError(f"op_costs must give {op!r} a mapping of device kind to seconds, got {describe(row)}")
        missing = sorted(kinds - set(row))
        if missing:
            raise ValueError(f"op_costs[{op!r}] must give a time for every device kind {sorted(kinds)}, "
                             f"missing {missing}")
        costs[op] = {kind: check_nonnegative(f"op_costs[{op!r}][{kind!r}]", row[kind]) for kind in kinds}
    return costs


def cholesky_graph(tiles: int, op_costs: Mapping[str, Mapping[str, float]] | None = None,
                   devices: Sequence[Device] | None = None) -> TaskGraph:
    """The tiled-Cholesky DAG for ``tiles`` tiles per side.

    Without ``op_costs`` each task's ``work`` is its kernel's flop count in units of ``b^3`` (:data:`FLOPS`).
    With ``op_costs`` (``{op: {device kind: seconds}}``, e.g. ``{"gemm": {"CPU": 7e-4, "GPU": 6e-5}, ...}``) and
    ``devices``, each task runs ``op_costs[op][device.kind]`` seconds on each device. Edges carry no data:
    a transfer costs the link latency of the devices (see :func:`cholesky_devices`).

    >>> from hetlab.schedulers import heft
    >>> costs = {op: {"CPU": 4.0, "GPU": 1.0} for op in OPS}
    >>> devices = cholesky_devices(2, tile_copy_s=0.5)
    >>> heft(cholesky_graph(2, costs, devices), devices).makespan
    4.0
    """
    tiles = check_int("tiles", tiles, low=1, high=MAX_TILES)
    if (op_costs is None) != (devices is None):
        raise ValueError("op_costs and devices go together: give both (run times in seconds) or neither "
                         "(work in flop units)")
    names, edges, _ = _structure(tiles)
    if op_costs is None:
        tasks = [Task(name, FLOPS[op], op=op) for name, op in names]
    else:
        devices = check_devices(devices)
        costs = _check_costs(op_costs, {d.kind for d in devices})
        tasks = [Task(name, FLOPS[op], op=op, times={d.name: costs[op][d.kind] for d in devices})
                 for name, op in names]
    return TaskGraph(tasks, edges)


def cholesky_devices(cpu_workers: int, *, gpu: bool = True, tile_copy_s: float = 0.0) -> list[Device]:
    """One ``GPU`` (if ``gpu``) and ``cpu_workers`` CPU workers ``CPU0, CPU1, ...``: the machine the stored
    readings ran on, one Python thread per device. Moving a tile between the GPU and a CPU worker costs
    ``tile_copy_s``; CPU workers share memory, so moving a tile between two of them is free.

    >>> [d.name for d in cholesky_devices(2)]
    ['GPU', 'CPU0', 'CPU1']
    """
    cpu_workers = check_int("cpu_workers", cpu_workers, low=0, high=1000)
    if not isinstance(gpu, bool):
        raise TypeError(f"gpu must be True or False, got {describe(gpu)}")
    tile_copy_s = check_nonnegative("tile_copy_s", tile_copy_s)
    if not gpu and cpu_workers == 0:
        raise ValueError("cpu_workers must be at least 1 when gpu is False (no device left), got 0")
    devices = [Device("GPU", "GPU", link=Link(latency=tile_copy_s))] if gpu else []
    return devices + [Device(f"CPU{i}", "CPU") for i in range(cpu_workers)]


@dataclass(frozen=True)
class CholeskyCase:
    """One measured Cholesky configuration: matrix order ``n``, tile size ``b``, the per-tile kernel times
    ``op_costs`` (``{op: {"CPU": one-thread seconds, "GPU": seconds}}``), the time ``tile_copy_s`` to copy
    one tile between the host and the GPU, and where the matrix is when the clock starts: ``inputs_on_host``
    (hetlab's executor, :func:`hetlab.real.hybrid.factor`: every tile in host memory, copied to the GPU by the
    first GPU task that uses it, inside the timed run) or already on the GPU (the executor of the readings
    ``h200-2026-12-04``, whose GPU-only traces show no such copy).

    >>> case = CholeskyCase(1024, 256, {op: {"CPU": 1e-3, "GPU": 1e-4} for op in OPS}, 5e-5, inputs_on_host=True)
    >>> case.tiles, len(case.graph(case.devices(2)).tasks), sum(case.host_inputs().values())   # 4 x 5 / 2 tiles
    (4, 20, 10)
    """

    n: int
    b: int
    op_costs: Mapping[str, Mapping[str, float]] = field(hash=False)
    tile_copy_s: float = 0.0
    inputs_on_host: bool = False

    def __post_init__(self) -> None:
        tile_count(self.n, self.b)
        costs = _check_costs(self.op_costs, {"CPU", "GPU"})
        object.__setattr__(self, "op_costs", MappingProxyType({op: MappingProxyType(c) for op, c in costs.items()}))
        object.__setattr__(self, "tile_copy_s", check_nonnegative("tile_copy_s", self.tile_copy_s))
        if not isinstance(self.inputs_on_host, bool):
            raise TypeError(f"inputs_on_host must be True or False, got {describe(self.inputs_on_host)}")

    def host_inputs(self) -> dict[str, int]:
        """How many matrix tiles each task is the first to use, if the matrix starts in host memory (the
        ``host_inputs`` of :func:`~hetlab.models.host.simulate_host`); empty if it starts on the GPU."""
        return dict(_structure(self.tiles)[2]) if self.inputs_on_host else {}

    @property
    def tiles(self) -> int:
        """Tiles per side, ``n / b``."""
        return self.n // self.b

    def devices(self, cpu_workers: int, *, gpu: bool = True) -> list[Device]:
        """The GPU (if ``gpu``) and ``cpu_workers`` CPU workers, with this case's tile copy time."""
        return cholesky_devices(cpu_workers, gpu=gpu, tile_copy_s=self.tile_copy_s)

    def graph(self, devices: Sequence[Device], *, cpu_scale: float = 1.0, gpu_extra_s: float = 0.0) -> TaskGraph:
        """The task graph with this case's run times on ``devices``; ``cpu_scale`` and ``gpu_extra_s`` give a
        planner's adjusted beliefs (CPU times times a factor, GPU times plus a constant)."""
        scale = check_nonnegative("cpu_scale", cpu_scale)
        extra = check_nonnegative("gpu_extra_s", gpu_extra_s)
        costs = {op: {"CPU": c["CPU"] * scale, "GPU": c["GPU"] + extra} for op, c in self.op_costs.items()}
        return cholesky_graph(self.tiles, costs, devices)


def predict_makespans(case: CholeskyCase, workers: Sequence[int], profile=None) -> dict:
    """Predicted makespans (seconds) of the plans the stored readings ran, and of a dispatch-aware plan:
    ``{"gpu_only": s, "cpu<W>": {"cpu_only": s, "hybrid_heft": s, "hybrid_dispatch_aware": s}, ...}``.

    Each plan (HEFT on the case's own costs, or :func:`~hetlab.schedulers.host_aware.host_aware`) is run through
    :func:`~hetlab.models.host.simulate_host` with ``profile`` (default: the H200 profile of 2026-12-04), the
    first copy of each tile to the GPU included when the case's matrix starts in host memory.
    Nothing measured on the run itself enters: only the case and the machine profile.
    """
    from hetlab.models.host import HostProfile, load_profile, simulate_host
    from hetlab.schedulers.heft import heft
    from hetlab.schedulers.host_aware import host_aware

    if not isinstance(case, CholeskyCase):
        raise TypeError(f"case must be a CholeskyCase, got {describe(case)}")
    profile = load_profile() if profile is None else profile
    if not isinstance(profile, HostProfile):
        raise TypeError(f"profile must be a HostProfile (see hetlab.models.host.load_profile), got {describe(profile)}")
    if isinstance(workers, (str, bytes)) or not isinstance(workers, Sequence):
        raise TypeError(f"workers must be a sequence of CPU worker counts, got {describe(workers)}")
    counts = [check_int("a worker count in workers", w, low=1, high=1000) for w in workers]
    if not counts:
        raise ValueError("workers must list at least one CPU worker count, got none")

    copies = case.host_inputs()

    def predicted(devices: list[Device], plan_policy) -> float:
        return simulate_host(plan_policy(case.graph(devices), devices), profile, host_inputs=copies).makespan

    out: dict = {"gpu_only": predicted(case.devices(0), heft)}
    for w in counts:
        out[f"cpu{w}"] = {
            "cpu_only": predicted(case.devices(w, gpu=False), heft),
            "hybrid_heft": predicted(case.devices(w), heft),
            "hybrid_dispatch_aware": host_aware(case.graph(case.devices(w)), case.devices(w), profile=profile,
                                                host_inputs=copies).info["predicted"].makespan,
        }
    return out
