"""Run a plan for real on CPU worker threads and a GPU, one Python thread per device, and record the trace.

:func:`run_on_devices` executes a plan (a :class:`~hetlab.schedule.Schedule`: which device runs each task and
in what order) the way the stored H200 readings were taken: each device has a thread that runs its tasks in
the plan's order; a task starts when its inputs are done; a GPU task is followed by a synchronise (or not,
with ``synchronize=False``). The measured start and end of every task come back as a Schedule, so the run's
Gantt chart sits beside the plan's and beside :func:`~hetlab.models.host.simulate_host`'s prediction.

A device's work goes through a backend:

- :class:`NumpyCPU`: numpy in the worker's thread (set one BLAS thread per worker, e.g. with threadpoolctl,
  to measure one core per worker); its TRSM is a blocked triangular solve (matrix products around small solves);
- :class:`TorchCPU`: PyTorch on the CPU with one intra-op thread, as the CPU tiles of the stored H200 readings
  ``h200-2026-12-04`` ran (torch's triangular solve, Cholesky and matrix product), when torch is installed;
- :class:`TorchCUDA`: PyTorch on a CUDA device, when torch with CUDA is installed (``pip install hetlab[gpu]``);
  nothing else in hetlab needs torch;
- :class:`StandInGPU`: numpy plus an injected launch cost, for tests and machines without a GPU: each kernel
  first holds the interpreter for ``hold_s`` (Python work, as a framework's dispatch does), then waits
  ``launch_s`` without it (as a launch and a synchronise do).

:func:`factor` runs a tiled Cholesky plan (:mod:`hetlab.workloads.cholesky`) and returns the factor ``L``.

>>> import numpy as np
>>> from hetlab.schedulers import heft
>>> from hetlab.workloads.cholesky import OPS, cholesky_devices, cholesky_graph
>>> devices = cholesky_devices(2)
>>> plan = heft(cholesky_graph(3, {op: {"CPU": 2.0, "GPU": 1.0} for op in OPS}, devices), devices)
>>> a = np.eye(12) * 12 + 1.0
>>> L, run = factor(plan, a, 4, {"GPU": StandInGPU(launch_s=1e-4), "CPU0": NumpyCPU(), "CPU1": NumpyCPU()})
>>> bool(np.allclose(L @ L.T, a)), run.schedule.validate(check_durations=False).policy
(True, 'measured')
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hetlab._validate import check_bool, check_choice, check_instance, check_int, check_nonnegative, check_str, describe
from hetlab.devices import Device
from hetlab.schedule import Schedule

__all__ = ["ARITY", "NumpyCPU", "TorchCPU", "StandInGPU", "TorchCUDA", "cuda_available", "HybridRun",
           "run_on_devices", "factor"]

#: Longest a device's thread waits for one input before it gives up (a plan that cannot finish).
WAIT_LIMIT_S = 600.0
#: Largest diagonal block :func:`_trsm` solves directly; above it, it splits and updates by matrix products.
_TRSM_LEAF = 64


def _potrf(a):
    return np.linalg.cholesky(a)


def _trsm(l_kk, a_ik):
    """X with X L_kk^T = A_ik for lower-triangular L_kk, by blocks: X1 L11^T = A1, then
    X2 L22^T = A2 - X1 L21^T. A general solve (LU, ~8/3 b^3 flops here) costs several times a triangular
    solve (b^3), and numpy has no triangular solver; products do most of the work, small solves the rest."""
    order = l_kk.shape[0]
    if order <= _TRSM_LEAF:
        return np.linalg.solve(l_kk, a_ik.T).T
    h = order // 2
    x1 = _trsm(l_kk[:h, :h], a_ik[:, :h])
    x2 = _trsm(l_kk[h:, h:], a_ik[:, h:] - x1 @ l_kk[h:, :h].T)
    return np.hstack([x1, x2])


def _syrk(a_ik, a_ii):
    return a_ii - a_ik @ a_ik.T


def _gemm(a_ik, a_jk, a_ij):
    return a_ij - a_ik @ a_jk.T


_NUMPY_KERNELS = {"potrf": _potrf, "trsm": _trsm, "syrk": _syrk, "gemm": _gemm}
#: Tiles each kernel reads, in the order :meth:`NumpyCPU.run` takes them.
ARITY = {"potrf": 1, "trsm": 2, "syrk": 2, "gemm": 3}


def _check_tile(name: str, tile) -> np.ndarray:
    if not isinstance(tile, np.ndarray) or tile.ndim != 2 or tile.dtype.kind not in "fiu":
        raise TypeError(f"{name} must be a 2-D numpy array of numbers, got {describe(tile)}")
    return tile


def _check_kernel(op, tiles) -> None:
    check_choice("op", op, tuple(ARITY))
    if isinstance(tiles, (str, bytes)) or not isinstance(tiles, (list, tuple)) or len(tiles) != ARITY[op]:
        raise ValueError(f"tiles must be a list of the {ARITY[op]} tile(s) {op} reads, got {describe(tiles)}")


def _torch_kernel(torch, op: str, tiles):
    """Tile kernel ``op`` on torch tensors (CPU or GPU alike): the new tile."""
    if op == "potrf":
        return torch.linalg.cholesky(tiles[0])
    if op == "trsm":
        return torch.linalg.solve_triangular(tiles[0], tiles[1].T, upper=False).T
    if op == "syrk":
        return tiles[1] - tiles[0] @ tiles[0].T
    return tiles[2] - tiles[0] @ tiles[1].T     # gemm


class NumpyCPU:
    """A CPU worker: tile kernels in numpy, in the calling thread; tiles live in host memory."""

    kind = "CPU"

    def put(self, tile: np.ndarray) -> np.ndarray:
        """A tile from host memory onto this device (host memory already: no copy)."""
        return _check_tile("tile", tile)

    def get(self, tile: np.ndarray) -> np.ndarray:
        """A tile of this device in host memory."""
        return _check_tile("tile", tile)

    def run(self, op: str, tiles: Sequence[np.ndarray]) -> np.ndarray:
        """Run tile kernel ``op`` (``"potrf"``, ``"trsm"``, ``"syrk"`` or ``"gemm"``) on ``tiles`` (the
        :data:`ARITY` tiles it reads) and return the new tile.

        >>> NumpyCPU().run("syrk", [np.ones((2, 2)), np.eye(2) * 3]).tolist()
        [[1.0, -2.0], [-2.0, 1.0]]
        """
        _check_kernel(op, tiles)
        return _NUMPY_KERNELS[op](*(_check_tile(f"tiles[{k}]", t) for k, t in enumerate(tiles)))

    def synchronize(self) -> None:
        """Nothing runs asynchronously on a CPU worker."""


class TorchCPU:
    """A CPU worker computing its tiles with PyTorch on the CPU, in the calling thread: ``torch.linalg.cholesky``,
    ``torch.linalg.solve_triangular`` and matrix products in fp64, as the CPU tiles of the readings
    ``h200-2026-12-04`` were computed. Needs torch (the CPU wheel is enough); nothing else in hetlab does.

    ``threads`` sets torch's intra-op thread count, which is one setting for the whole process
    (``torch.set_num_threads``): with 1, each worker computes on its own thread only. A tile is a CPU tensor
    that shares memory with the numpy array it came from (``torch.from_numpy``: no copy). The example is skipped
    by the doctests, which run without torch and must not change the process's thread count:

    >>> cpu = TorchCPU()                                                           # doctest: +SKIP
    >>> cpu.get(cpu.run("syrk", [cpu.put(np.ones((2, 2))), cpu.put(np.eye(2) * 3)])).tolist()  # doctest: +SKIP
    [[1.0, -2.0], [-2.0, 1.0]]
    """

    kind = "CPU"

    def __init__(self, threads: int = 1):
        self.threads = check_int("threads", threads, low=1, high=1024)
        try:
            import torch
        except ImportError:
            raise ValueError("TorchCPU needs torch (pip install torch, the CPU wheel is enough); none found") \
                from None
        self._torch = torch
        torch.set_num_threads(self.threads)

    def _tensor(self, name: str, tile):
        if not isinstance(tile, self._torch.Tensor) or tile.ndim != 2 or tile.device.type != "cpu":
            raise TypeError(f"{name} must be a 2-D CPU tensor (see put()), got {describe(tile)}")
        return tile

    def put(self, tile: np.ndarray):
        """A host tile as a CPU tensor (the same memory)."""
        return self._torch.from_numpy(np.ascontiguousarray(_check_tile("tile", tile)))

    def get(self, tile) -> np.ndarray:
        """A tile of this worker as a numpy array (the same memory)."""
        return self._tensor("tile", tile).numpy()

    def run(self, op: str, tiles: Sequence):
        """Run tile kernel ``op`` on CPU tensors ``tiles`` (the :data:`ARITY` tiles it reads) and return the
        new tile."""
        _check_kernel(op, tiles)
        return _torch_kernel(self._torch, op, [self._tensor(f"tiles[{k}]", t) for k, t in enumerate(tiles)])

    def synchronize(self) -> None:
        """Nothing runs asynchronously on a CPU worker."""


class StandInGPU(NumpyCPU):
    """A launch-bound GPU without a GPU: numpy kernels, each after holding the interpreter for ``hold_s``
    (a Python loop, as a framework's dispatch does) and waiting ``launch_s`` without it (``time.sleep``).
    Tiles are copied in and out, as to a device's own memory."""

    kind = "GPU"

    def __init__(self, launch_s: float = 60e-6, hold_s: float = 0.0):
        self.launch_s = check_nonnegative("launch_s", launch_s, high=1.0)
        self.hold_s = check_nonnegative("hold_s", hold_s, high=1.0)

    def put(self, tile: np.ndarray) -> np.ndarray:
        """A copy of a host tile in this device's memory."""
        return np.array(_check_tile("tile", tile), copy=True)

    def get(self, tile: np.ndarray) -> np.ndarray:
        """A copy of this device's tile in host memory."""
        return np.array(_check_tile("tile", tile), copy=True)

    def run(self, op: str, tiles: Sequence[np.ndarray]) -> np.ndarray:
        """Hold the interpreter ``hold_s``, wait ``launch_s`` without it, then run the kernel."""
        _check_kernel(op, tiles)
        end = time.perf_counter() + self.hold_s
        while time.perf_counter() < end:      # Python work: the interpreter is held
            pass
        if self.launch_s:
            time.sleep(self.launch_s)         # a launch and its wait: the interpreter is free
        return super().run(op, tiles)


def cuda_available() -> bool:
    """Whether torch is installed and sees a CUDA device (torch is imported only here and in TorchCUDA)."""
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


class TorchCUDA:
    """A CUDA GPU through PyTorch (fp64 tile kernels); needs ``pip install hetlab[gpu]`` and a CUDA device."""

    kind = "GPU"

    def __init__(self, device: str = "cuda"):
        check_str("device", device)
        if not cuda_available():
            raise ValueError("TorchCUDA needs torch with a CUDA device (pip install 'hetlab[gpu]'); none found")
        import torch

        self._torch = torch
        self.device = torch.device(device)

    def put(self, tile: np.ndarray):
        """Copy a host tile to the GPU."""
        return self._torch.from_numpy(np.ascontiguousarray(_check_tile("tile", tile))).to(self.device)

    def get(self, tile) -> np.ndarray:
        """Copy a GPU tile to host memory."""
        return tile.cpu().numpy()

    def run(self, op: str, tiles: Sequence):
        """Launch tile kernel ``op`` on GPU tiles (asynchronous: see :meth:`synchronize`)."""
        _check_kernel(op, tiles)
        return _torch_kernel(self._torch, op, tiles)

    def synchronize(self) -> None:
        """Wait until the GPU has run every kernel launched so far."""
        self._torch.cuda.synchronize(self.device)


@dataclass(frozen=True)
class HybridRun:
    """The measured run: ``schedule`` (start and end of every task, seconds from the run's start, on the plan's
    devices) and ``wall_time`` (seconds from the first task's start to the last one's end, threads joined)."""

    schedule: Schedule
    wall_time: float

    def __post_init__(self) -> None:
        check_instance("schedule", self.schedule, Schedule)
        object.__setattr__(self, "wall_time", check_nonnegative("wall_time", self.wall_time))


def _check_backends(plan: Schedule, backends: Mapping[str, Any]) -> None:
    if not isinstance(backends, Mapping):
        raise TypeError(f"backends must map each device name of the plan to a backend, got {describe(backends)}")
    for d in plan.devices:
        backend = backends.get(d.name)
        if backend is None:
            raise ValueError(f"backends must give a backend for every device of the plan; missing {d.name!r}")
        for method in ("run", "put", "get", "synchronize"):
            if not callable(getattr(backend, method, None)):
                raise TypeError(f"backends[{d.name!r}] must have a {method}() method, got {describe(backend)}")


def run_on_devices(plan: Schedule, bodies: Mapping[str, Callable[[Any], None]], backends: Mapping[str, Any], *,
                   synchronize: bool = True) -> HybridRun:
    """Execute ``plan`` for real: one thread per device runs its tasks in the plan's order.

    ``bodies[task](backend)`` does a task's work with its device's backend (from ``backends``, keyed by device
    name); a task starts once all its predecessors have ended. With ``synchronize`` a GPU task's end is taken
    after ``backend.synchronize()``. An exception in any task stops every thread and is raised again here.
    """
    check_instance("plan", plan, Schedule)
    check_bool("synchronize", synchronize)
    _check_backends(plan, backends)
    g = plan.graph
    if not isinstance(bodies, Mapping):
        raise TypeError(f"bodies must map every task name to a callable, got {describe(bodies)}")
    missing = [t.name for t in g.tasks if not callable(bodies.get(t.name))]
    if missing:
        raise ValueError(f"bodies must map every task to a callable; missing {missing[:5]}")
    n = len(g.tasks)
    done = [threading.Event() for _ in range(n)]
    start, end = [0.0] * n, [0.0] * n
    failure: list[BaseException] = []
    order = np.lexsort((np.arange(n), plan.start)).tolist()
    queues = [[i for i in order if plan.device_of[i] == j] for j in range(len(plan.devices))]
    t0 = time.perf_counter()

    def work(j: int) -> None:
        backend = backends[plan.devices[j].name]
        try:
            for i in queues[j]:
                for p in g.preds[i]:
                    if not done[p].wait(WAIT_LIMIT_S) or failure:
                        if not failure:
                            failure.append(ValueError(f"plan cannot finish: {g.tasks[i].name!r} on "
                                                      f"{plan.devices[j].name!r} waited {WAIT_LIMIT_S:g} s"))
                        return
                start[i] = time.perf_counter() - t0
                bodies[g.tasks[i].name](backend)
                if synchronize:
                    backend.synchronize()
                end[i] = time.perf_counter() - t0
                done[i].set()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread below
            failure.append(exc)
            for event in done:         # wake every waiting thread: they see the failure and stop
                event.set()

    threads = [threading.Thread(target=work, args=(j,), daemon=True) for j in range(len(plan.devices))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failure:
        raise failure[0]
    devices = [Device(d.name, d.kind) for d in plan.devices]   # measured: copies are inside the tasks
    schedule = Schedule(g, devices, plan.device_of, start, end, "measured",
                        info={"synchronize": synchronize, "plan_makespan": plan.makespan})
    return HybridRun(schedule, float(max(end, default=0.0)))


def factor(plan: Schedule, matrix: np.ndarray, b: int, backends: Mapping[str, Any], *,
           synchronize: bool = True) -> tuple[np.ndarray, HybridRun]:
    """Factor the symmetric positive definite ``matrix`` by the tiled-Cholesky ``plan`` (tiles of ``b x b``,
    task names as in :func:`~hetlab.workloads.cholesky.cholesky_graph`); return ``(L, run)``.

    A tile lives where its last writer ran. Every tile starts in host memory (the timed run includes the copy of
    each tile to the GPU by the first GPU task that uses it: :attr:`CholeskyCase.inputs_on_host
    <hetlab.workloads.cholesky.CholeskyCase>`); a task whose input lives on a device of another kind, or on a CPU
    worker of another backend class, copies it (through host memory, as numpy) inside the task.
    """
    check_instance("plan", plan, Schedule)
    b = check_int("b", b, low=1)
    a = _check_tile("matrix", matrix).astype(float)
    if a.shape[0] != a.shape[1] or a.shape[0] % b or not np.isfinite(a).all():
        raise ValueError(f"matrix must be square, finite, with b = {b} dividing its order, got shape {a.shape}")
    tiles = a.shape[0] // b
    if len(plan.graph.tasks) != tiles + tiles * (tiles - 1) + tiles * (tiles - 1) * (tiles - 2) // 6:
        raise ValueError(f"plan must be a tiled-Cholesky plan for {tiles} x {tiles} tiles, got "
                         f"{len(plan.graph.tasks)} tasks")
    _check_backends(plan, backends)
    host = {(i, j): a[i * b:(i + 1) * b, j * b:(j + 1) * b].copy() for i in range(tiles) for j in range(i + 1)}
    store: dict[tuple[int, int], tuple[Any, Any]] = {key: (tile, None) for key, tile in host.items()}

    def fetch(key, backend):
        value, owner = store[key]
        if owner is backend or (owner is not None and owner.kind == backend.kind == "CPU"
                                and type(owner) is type(backend)):
            return value                       # already here, or in the host memory CPU workers share
        return backend.put(value if owner is None else owner.get(value))

    def body(op: str, reads: list, writes: tuple[int, int]):
        def run(backend) -> None:
            store[writes] = (backend.run(op, [fetch(key, backend) for key in reads]), backend)
        return run

    bodies = {}
    for task in plan.graph.tasks:
        parts = task.name.split("_")
        op, idx = parts[0].lower(), [int(x) for x in parts[1:]]
        if op == "potrf":
            k = idx[0]
            bodies[task.name] = body(op, [(k, k)], (k, k))
        elif op == "trsm":
            i, k = idx
            bodies[task.name] = body(op, [(k, k), (i, k)], (i, k))
        elif op == "syrk":
            i, k = idx
            bodies[task.name] = body(op, [(i, k), (i, i)], (i, i))
        else:
            i, j, k = idx
            bodies[task.name] = body(op, [(i, k), (j, k), (i, j)], (i, j))
    run = run_on_devices(plan, bodies, backends, synchronize=synchronize)
    lower = np.zeros_like(a)
    for (i, j), (value, owner) in store.items():
        tile = value if owner is None else owner.get(value)
        lower[i * b:(i + 1) * b, j * b:(j + 1) * b] = np.tril(tile) if i == j else tile
    return lower, run
