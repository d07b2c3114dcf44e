"""Speed-up, efficiency and utilisation of a schedule: against which baseline, and what "N" means.

On identical devices ``S = T_serial / T_parallel`` and ``E = S / N`` need no further words. On a heterogeneous
set the serial time depends on the device it runs on. With the slowest device as the baseline, S can exceed
the device count (the kitchen's CPU, GPU and NPU have speeds 10, 20 and 15, so together they are 4.5 CPUs)
and ``E = S / N`` then exceeds 1, which only says the baseline was slow. A fair efficiency divides by the
devices' **capacity** in units of the baseline device ``b``,

    C_b = sum_j T_serial(b) / T_serial(j)        (= sum_j v_j / v_b when a task's time is work / speed),

so ``E_b = S_b / C_b``, which is at most 1 for independent tasks and the same number for every baseline
(:func:`capacity`, :func:`baseline_table`; :func:`hetero_metrics` reads one schedule against the slowest and
the fastest device). Mean utilisation ``U = sum_i b_i / (N T_N)`` counts a busy second of a slow CPU the same
as one of the GPU, so on mixed devices ``U`` and ``E`` differ; weighting each device's busy time by its speed
gives ``E`` back. See Hennessy & Patterson (Computer Architecture, 6th ed., 2017) on choosing baselines honestly.

On identical devices (:func:`device_sweep`) the busy time sums to ``T_1`` whatever the schedule, so
``U = T_1 / (N T_N) = E``: mean utilisation *is* the efficiency. Adding devices to a fixed job raises
throughput and lowers utilisation; the conflict starts near ``N = T_1 / t_max`` (:func:`conflict_start`).
:func:`batch_latency` is the same trade on one device: bigger batches, more throughput, longer latency.

The Chinese tables that chapters print from these numbers are in :mod:`hetlab.book.readings`.

>>> from hetlab.devices import kitchen
>>> from hetlab.schedulers import lpt
>>> from hetlab.tasks import independent_tasks
>>> rows = baseline_table(lpt(independent_tasks([45.0, 45.0, 45.0]), kitchen()))
>>> [(r.base_device, r.capacity, round(r.efficiency, 3)) for r in rows]
[('CPU', 4.5, 0.667), ('GPU', 2.25, 0.667), ('NPU', 3.0, 0.667)]
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from hetlab._validate import check_callable, check_fields, check_instance, check_int, check_positive, check_sequence
from hetlab.devices import Device, check_devices, identical
from hetlab.schedule import Schedule
from hetlab.schedulers import lpt
from hetlab.tasks import Task, TaskGraph, _as_graph, cost_matrix, total_work

__all__ = ["capacity", "BaselineRow", "baseline_table", "HeteroMetrics", "hetero_metrics", "SweepRow",
           "device_sweep", "conflict_start", "BatchPoint", "batch_latency"]

#: A scheduling policy, ``policy(graph, devices) -> Schedule`` (e.g. :func:`hetlab.schedulers.lpt`).
Policy = Callable[..., Schedule]


def _serial_times(graph: TaskGraph, devices: Sequence[Device]) -> np.ndarray:
    """``T_serial(j)``: every task one after another on device ``j`` (no transfers on one device)."""
    times = cost_matrix(graph, devices).sum(axis=0)
    if not (np.all(np.isfinite(times)) and np.all(times > 0)):
        raise ValueError("graph must hold positive work that every device can run (a serial baseline on each)")
    return times


def capacity(graph: TaskGraph | Sequence[Task], devices: Sequence[Device], baseline: str) -> float:
    """The devices' capacity in units of the device named ``baseline``: ``C_b = sum_j T_serial(b) / T_serial(j)``,
    the best speed-up over ``baseline`` that all of them together allow on ``graph``'s work.

    >>> from hetlab.devices import kitchen
    >>> from hetlab.tasks import independent_tasks
    >>> capacity(independent_tasks([10.0, 20.0]), kitchen(), "CPU")     # (10 + 20 + 15) / 10
    4.5

    See also :func:`baseline_table`.
    """
    g = _as_graph(graph, "graph")
    devs = check_devices(devices)
    names = [d.name for d in devs]
    if not isinstance(baseline, str) or baseline not in names:
        raise ValueError(f"baseline must be one of the device names {names}, got {baseline!r}")
    times = _serial_times(g, devs)
    return float(np.sum(times[names.index(baseline)] / times))


@dataclass(frozen=True)
class BaselineRow:
    """Figures of one schedule measured against the serial run on device ``base_device``.

    >>> row = BaselineRow("CPU", serial_time=13.5, speedup=2.25, naive_efficiency=0.75, capacity=4.5, efficiency=0.5)
    >>> row.speedup / row.capacity == row.efficiency       # a makespan of 6 against 13.5 on the CPU alone
    True
    """

    base_device: str
    serial_time: float
    speedup: float
    naive_efficiency: float      # S / N
    capacity: float              # C_b, the devices' capacity in units of the baseline device
    efficiency: float            # S / C_b

    def __post_init__(self) -> None:
        check_fields(self)


def baseline_table(schedule: Schedule) -> list[BaselineRow]:
    """One :class:`BaselineRow` per device of ``schedule`` used as the serial baseline (the schedule's own
    tasks, run one after another on that device): speed-up, ``S / N``, capacity and ``E = S / C``.

    >>> from hetlab.devices import kitchen
    >>> from hetlab.schedulers import lpt
    >>> from hetlab.tasks import independent_tasks
    >>> cpu, gpu, _ = baseline_table(lpt(independent_tasks([45.0, 45.0, 45.0]), kitchen()))
    >>> round(cpu.speedup, 2), round(cpu.naive_efficiency, 2), round(gpu.naive_efficiency, 2)   # S/N > 1 on a CPU
    (3.0, 1.0, 0.5)

    See also :func:`capacity`; :meth:`hetlab.schedule.Schedule.speedup` for a baseline you choose.
    """
    check_instance("schedule", schedule, Schedule)
    if schedule.makespan <= 0:
        raise ValueError("schedule must have a positive makespan")
    devs = schedule.devices
    times = _serial_times(schedule.graph, devs)
    rows = []
    for d, base in zip(devs, times):
        cap = float(np.sum(base / times))
        s = float(base / schedule.makespan)
        rows.append(BaselineRow(d.name, float(base), s, s / len(devs), cap, s / cap))
    return rows


@dataclass(frozen=True)
class HeteroMetrics:
    """One schedule on mixed devices read against the slowest and the fastest device. Times in the task
    graph's time unit; ``busy`` and ``speeds`` per device, in the order of ``devices``.

    >>> m = HeteroMetrics(makespan=2.0, t_slowest=9.0, t_fastest=3.0, n_devices=2, capacity=1.5, utilisation=0.75,
    ...                   busy=(2.0, 1.0), speeds=(3.0, 1.0))
    >>> m.speedup_vs_slowest, m.speedup_vs_fastest, m.weighted_efficiency, m.speed_weighted_utilisation
    (4.5, 1.5, 1.0, 0.875)
    """

    makespan: float
    t_slowest: float          # serial time on the slowest device (e.g. one CPU)
    t_fastest: float          # serial time on the fastest device (e.g. the GPU)
    n_devices: int
    capacity: float           # C against the fastest device: the best possible speed-up over it
    utilisation: float        # mean busy share sum b_i / (N T_N)
    busy: tuple[float, ...] = ()      # b_i, busy time of each device
    speeds: tuple[float, ...] = ()    # v_i

    def __post_init__(self) -> None:
        check_fields(self)
        for name in ("busy", "speeds"):
            values = check_sequence(name, getattr(self, name), empty=True)
            if len(values) != self.n_devices or not all(
                    isinstance(v, float) and math.isfinite(v) and v >= 0 for v in values):
                raise ValueError(f"{name} must hold one finite float >= 0 per device (n_devices = {self.n_devices}), "
                                 f"got {values!r:.80}")
        if self.makespan <= 0 or self.capacity <= 0 or not sum(self.speeds) > 0:
            raise ValueError(f"makespan, capacity and the speeds must be positive, got makespan={self.makespan!r}, "
                             f"capacity={self.capacity!r}, speeds={self.speeds!r:.60}")

    @property
    def speed_weighted_utilisation(self) -> float:
        """``sum_i v_i b_i / (T_N sum_i v_i)``: equals ``weighted_efficiency`` (both are the work done over
        the work the machine could have done in ``T_N``)."""
        return sum(v * b for v, b in zip(self.speeds, self.busy)) / (self.makespan * sum(self.speeds))

    @property
    def speedup_vs_slowest(self) -> float:
        return self.t_slowest / self.makespan

    @property
    def speedup_vs_fastest(self) -> float:
        return self.t_fastest / self.makespan

    @property
    def naive_efficiency_slowest(self) -> float:
        """``S / N`` with the slow baseline: can exceed 1, which is why it misleads."""
        return self.speedup_vs_slowest / self.n_devices

    @property
    def naive_efficiency_fastest(self) -> float:
        return self.speedup_vs_fastest / self.n_devices

    @property
    def weighted_efficiency(self) -> float:
        """``E = S / C`` against the fastest device: the same for every baseline, at most 1."""
        return self.speedup_vs_fastest / self.capacity


def hetero_metrics(graph: TaskGraph | Sequence[Task], devices: Sequence[Device],
                   policy: Policy = lpt) -> HeteroMetrics:
    """Schedule the independent tasks of ``graph`` on ``devices`` with ``policy`` (a scheduling function such as
    :func:`hetlab.schedulers.lpt`) and read the result against both baselines: ``S`` and the naive ``S / N``,
    the capacity, ``E = S / C`` and the mean utilisation. Devices must have no affinity factors (speed alone
    sets a task's time, so "slowest" and "fastest" mean something).

    >>> from hetlab.devices import Device
    >>> from hetlab.tasks import independent_tasks
    >>> mixed = [Device("GPU", "GPU", 10.0)] + [Device(f"CPU{i}", "CPU", 2.0) for i in range(4)]
    >>> m = hetero_metrics(independent_tasks([9.0, 9.0]), mixed)       # 18 units of work: 1.8 s on the GPU
    >>> round(m.speedup_vs_slowest, 2), round(m.naive_efficiency_slowest, 2), round(m.capacity, 2)
    (5.0, 1.0, 1.8)

    See also :func:`baseline_table` (every device as the baseline).
    """
    g = _as_graph(graph, "graph")
    devs = check_devices(devices)
    check_callable("policy", policy)
    if any(d.affinity for d in devs):
        raise ValueError("devices must have no affinity factors (speed alone sets a task's time)")
    sched = policy(g, devs)
    if not isinstance(sched, Schedule):
        raise TypeError(f"policy must return a Schedule, got {type(sched).__name__}")
    rows = baseline_table(sched.validate())
    slow = max(rows, key=lambda r: r.serial_time)
    fast = min(rows, key=lambda r: r.serial_time)
    return HeteroMetrics(makespan=float(sched.makespan), t_slowest=slow.serial_time, t_fastest=fast.serial_time,
                         n_devices=len(devs), capacity=fast.capacity,
                         utilisation=float(sched.busy.sum() / (len(devs) * sched.makespan)),
                         busy=tuple(float(b) for b in sched.busy), speeds=tuple(float(d.speed) for d in devs))


@dataclass(frozen=True)
class SweepRow:
    """One device count of :func:`device_sweep`: makespan ``T_N``, throughput ``tasks / T_N``, speed-up
    ``T_1 / T_N``, mean utilisation, efficiency ``S / N`` and the idle-to-busy ratio ``(1 - U) / U``.

    >>> SweepRow(2, makespan=50.0, throughput=0.08, speedup=1.6, utilisation=0.8, efficiency=0.8, idle_busy=0.25)
    SweepRow(n_devices=2, makespan=50.0, throughput=0.08, speedup=1.6, utilisation=0.8, efficiency=0.8, idle_busy=0.25)
    """

    n_devices: int
    makespan: float
    throughput: float
    speedup: float
    utilisation: float
    efficiency: float
    idle_busy: float

    def __post_init__(self) -> None:
        check_fields(self, allow_inf=("idle_busy",))


def device_sweep(graph: TaskGraph | Sequence[Task], counts: Iterable[int] = (1, 2, 4, 8), *, speed: float = 10.0,
                 policy: Policy = lpt) -> list[SweepRow]:
    """One :class:`SweepRow` per device count in ``counts``: the tasks of ``graph`` scheduled by ``policy`` on
    that many identical devices of ``speed``. Once ``N`` passes the job's parallelism (``T_N`` reaches the
    largest task), throughput stops rising while utilisation keeps falling as ``1 / N``.

    >>> from hetlab.tasks import independent_tasks
    >>> rows = device_sweep(independent_tasks([50.0, 10.0, 10.0, 10.0]), [1, 2, 4], speed=1.0)
    >>> [(r.n_devices, r.makespan, round(r.utilisation, 2)) for r in rows]   # the 50 caps the makespan from N = 2
    [(1, 80.0, 1.0), (2, 50.0, 0.8), (4, 50.0, 0.4)]

    See also :func:`conflict_start`.
    """
    g = _as_graph(graph, "graph")
    if not g.tasks:
        raise ValueError("graph must hold at least one task")
    speed = check_positive("speed", speed, high=1e12)
    if speed < 1e-9:
        raise ValueError(f"speed must be in [1e-09, 1e+12], got {speed!r}")
    check_callable("policy", policy)
    counts = [check_int("counts", n, low=1, high=1024) for n in check_sequence("counts", counts, limit=64)]
    t1 = float(_serial_times(g, identical(1, speed))[0])
    rows = []
    for n in counts:
        s = policy(g, identical(n, speed))
        u = min(float(s.utilisation.mean()), 1.0)     # rounding can put a full schedule a hair above 1
        rows.append(SweepRow(n, s.makespan, len(g.tasks) / s.makespan, t1 / s.makespan, u, t1 / s.makespan / n,
                             max(1 - u, 0.0) / u if u > 0 else float("inf")))
    return rows


def conflict_start(graph: TaskGraph | Sequence[Task]) -> float:
    """Device count where the throughput/utilisation conflict starts on identical devices: ``T_1 / t_max``.

    The makespan obeys ``T_N >= max(T_1 / N, t_max)`` (``T_1``: total work, ``t_max``: the largest task, both
    on one device; the speed cancels). Below ``N = T_1 / t_max`` the first bound rules and throughput grows
    about linearly; above it the largest task rules, so extra devices add only a little throughput (LPT
    packing) while utilisation falls, until the makespan reaches ``t_max`` and throughput stops rising.

    >>> from hetlab.tasks import independent_tasks
    >>> conflict_start(independent_tasks([4.0, 1.0, 1.0, 2.0]))
    2.0
    """
    g = _as_graph(graph, "graph")
    works = [t.work for t in g.tasks]
    if not works or max(works) <= 0:
        raise ValueError(f"graph must contain a task with positive work, got works={works!r}")
    return total_work(g) / max(works)


@dataclass(frozen=True)
class BatchPoint:
    """One batch size: ``latency`` is the time from a request's start to its answer (all requests of the
    batch answer together), ``throughput`` requests per time unit.

    >>> BatchPoint(batch=8, latency=16.0, throughput=0.5)
    BatchPoint(batch=8, latency=16.0, throughput=0.5)
    """

    batch: int
    latency: float
    throughput: float

    def __post_init__(self) -> None:
        check_fields(self)


def batch_latency(batch_sizes: Sequence[int] = (1, 4, 16, 64), setup: float = 8.0,
                  per_item: float = 1.0) -> list[BatchPoint]:
    """Latency versus throughput when a device serves requests in batches.

    A batch of ``b`` requests costs ``setup + b * per_item`` (``setup``: fixed cost per batch, e.g. a kernel
    launch and reading the weights once; ``per_item``: extra cost per request). Every request of the batch
    waits for the whole batch, so its latency is ``setup + b * per_item`` (not counting the time spent
    waiting for the batch to fill), and the device finishes ``b / (setup + b * per_item)`` requests per
    time unit. Larger batches raise throughput towards ``1 / per_item`` and raise latency linearly.

    >>> [(p.batch, p.latency, round(p.throughput, 3)) for p in batch_latency([1, 8], 8.0, 1.0)]
    [(1, 9.0, 0.111), (8, 16.0, 0.5)]
    """
    setup = check_positive("setup", setup)
    per_item = check_positive("per_item", per_item)
    if isinstance(batch_sizes, (str, bytes)) or not isinstance(batch_sizes, Sequence):
        raise TypeError(f"batch_sizes must be a sequence of integers >= 1, got {batch_sizes!r}")
    sizes = list(batch_sizes)
    if len(sizes) > 10_000:
        raise ValueError(f"batch_sizes must have at most 10000 entries, got {len(sizes)}")
    if not sizes:
        raise ValueError("batch_sizes must not be empty")
    out = []
    for b in sizes:
        if isinstance(b, bool) or not isinstance(b, int) or not 1 <= b <= 10**9:
            raise ValueError(f"batch_sizes entries must be integers in [1, 1e9], got {b!r}")
        t = setup + b * per_item
        out.append(BatchPoint(batch=b, latency=t, throughput=b / t))
    return out
