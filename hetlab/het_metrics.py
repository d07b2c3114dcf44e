"""Speed-up and efficiency when the devices are not identical (chapter 7).

On identical devices ``S = T_1 / T_N`` and ``E = S / N`` are unambiguous. On a CPU + GPU machine the
baseline ``T_1`` depends on *which* device runs the serial job, and ``E = S / N`` stops meaning "share of
the capacity used". Two fixes, both computed here:

- name the baseline device, and quote ``S`` against the **fastest** device (a CPU baseline inflates S);
- the speed-weighted efficiency ``E_w = T_fast / (T_N * sum_i v_i / v_fast)``: the speed-up over the
  fastest device divided by the best speed-up the machine's total speed allows.

Mean utilisation ``U = sum_i b_i / (N T_N)`` counts a busy second of a slow CPU the same as a busy second
of the GPU, so on mixed devices ``U`` and ``E`` differ; weighting each device's busy time by its speed,
``sum_i v_i b_i / (T_N sum_i v_i)``, gives ``E_w`` back.

Assumptions: independent tasks; a task of work ``w`` runs ``w / v`` on a device of speed ``v`` (no
affinity, no transfers); ``T_1`` on a device is the total work divided by its speed.

>>> from hetlab.devices import Device
>>> devs = [Device("GPU", "GPU", 10.0)] + [Device(f"CPU{i}", "CPU", 2.0) for i in range(4)]
>>> round(speed_weighted_efficiency(18.0, 10.0, devs), 3)
1.0
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hetlab._validate import check_positive
from hetlab.devices import Device, check_devices
from hetlab.tasks import Task, TaskGraph, as_graph, total_work

# HeteroMetrics and BatchPoint: result types, built by hetero_metrics and batch_latency
__all__ = ["speed_weighted_efficiency", "hetero_metrics", "conflict_start", "batch_latency"]


def speed_weighted_efficiency(t_fast: float, makespan: float, devices: Sequence[Device]) -> float:
    """``E_w = t_fast / (makespan * sum_i v_i / v_fast)`` over the speeds ``v_i`` of ``devices``.

    ``t_fast``: serial time on the fastest device; ``makespan``: time on all devices. ``E_w = 1`` when
    the machine finishes as fast as its total speed allows.
    """
    t_fast = check_positive("t_fast", t_fast)
    makespan = check_positive("makespan", makespan)
    v = [d.speed for d in check_devices(devices)]
    return t_fast / (makespan * sum(v) / max(v))


@dataclass(frozen=True)
class HeteroMetrics:
    """Metrics of one schedule on mixed devices. Times in the task graph's time unit."""

    makespan: float
    t_slowest: float          # serial time on the slowest device (e.g. one CPU)
    t_fastest: float          # serial time on the fastest device (e.g. the GPU)
    n_devices: int
    capacity: float           # sum_i v_i / v_fast: best possible speed-up over the fastest device
    utilisation: float        # mean busy share sum b_i / (N T_N)
    busy: tuple[float, ...] = ()      # b_i, busy time of each device
    speeds: tuple[float, ...] = ()    # v_i

    @property
    def speed_weighted_utilisation(self) -> float:
        """``sum_i v_i b_i / (T_N sum_i v_i)``: equals ``weighted_efficiency`` (both are work done over
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
        return self.speedup_vs_fastest / self.capacity


def hetero_metrics(graph: TaskGraph | Sequence[Task], devices: Sequence[Device],
                   policy: str = "LPT") -> HeteroMetrics:
    """Schedule independent tasks on ``devices`` with ``policy`` (a key of ``schedulers.POLICIES``) and
    report both baselines, the naive ``S/N``, the speed-weighted ``E_w`` and the mean utilisation."""
    from hetlab import schedulers as S

    try:
        graph = as_graph(graph)
    except (TypeError, ValueError) as err:
        raise type(err)(f"graph: {err}") from None
    devices = check_devices(devices)
    if not isinstance(policy, str) or policy not in S.POLICIES:
        raise ValueError(f"policy must be one of {sorted(S.POLICIES)}, got {policy!r}")
    if any(d.affinity for d in devices):
        raise ValueError("devices must have no affinity factors (speed alone sets a task's time)")
    sched = S.POLICIES[policy](graph, devices).validate()
    work = total_work(graph)
    speeds = [d.speed for d in devices]
    return HeteroMetrics(makespan=float(sched.makespan), t_slowest=work / min(speeds), t_fastest=work / max(speeds),
                         n_devices=len(devices), capacity=sum(speeds) / max(speeds),
                         utilisation=float(sched.busy.sum() / (len(devices) * sched.makespan)),
                         busy=tuple(float(b) for b in sched.busy), speeds=tuple(float(v) for v in speeds))


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
    try:
        graph = as_graph(graph)
    except (TypeError, ValueError) as err:
        raise type(err)(f"graph: {err}") from None
    works = [t.work for t in graph.tasks]
    if not works or max(works) <= 0:
        raise ValueError(f"graph must contain a task with positive work, got works={works!r}")
    return total_work(graph) / max(works)


@dataclass(frozen=True)
class BatchPoint:
    """One batch size: ``latency`` is the time from a request's start to its answer (all requests of the
    batch answer together), ``throughput`` requests per time unit."""

    batch: int
    latency: float
    throughput: float


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
