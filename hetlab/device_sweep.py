"""How the metrics move when devices are added to a fixed job: throughput up, utilisation down.

For a fixed set of tasks scheduled on N identical devices (speed ``speed``) by a policy, each
:class:`SweepRow` holds the makespan ``T_N``, throughput ``tasks / T_N``, speed-up
``S = T_1 / T_N``, mean utilisation ``U = sum busy / (N T_N)``, efficiency ``E = S / N`` and the
idle-to-busy ratio ``(1 - U) / U`` (闲忙比). On identical devices with no overhead the busy time
sums to ``T_1`` whatever the schedule, so ``U = T_1 / (N T_N) = E``: mean utilisation *is* the
parallel efficiency. Once N passes the job's parallelism (``T_N`` reaches the largest task, a
granularity limit), throughput stops rising while U keeps falling as ``1 / N``.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hetlab import schedulers as S
from hetlab._validate import check_fields, check_int, check_positive, check_sequence
from hetlab.devices import identical
from hetlab.tasks import Task, TaskGraph, _as_graph

__all__ = ["SweepRow", "device_sweep", "sweep_table_zh"]


@dataclass(frozen=True)
class SweepRow:
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
                 policy: str = "LPT") -> list[SweepRow]:
    """One :class:`SweepRow` per device count in ``counts`` (policy: a name in ``schedulers.POLICIES``)."""
    g = _as_graph(graph, "graph")
    if not g.tasks:
        raise ValueError("graph must hold at least one task")
    speed = check_positive("speed", speed, high=1e12)
    if speed < 1e-9:
        raise ValueError(f"speed must be in [1e-09, 1e+12], got {speed!r}")
    if not isinstance(policy, str) or policy not in S.POLICIES or policy in ("optimal", "article demo"):
        raise ValueError(f"policy must be one of {sorted(set(S.POLICIES) - {'optimal', 'article demo'})}, "
                         f"got {policy!r}")
    counts = [check_int("counts", n, low=1, high=1024) for n in check_sequence("counts", counts, limit=64)]
    t1 = S.serial(g, identical(1, speed)).makespan
    if not 0 < t1 < float("inf"):
        raise ValueError(f"graph must hold a positive, finite amount of work, got serial time {t1!r}")
    rows = []
    for n in counts:
        s = S.POLICIES[policy](g, identical(n, speed))
        u = min(float(s.utilisation.mean()), 1.0)     # rounding can put a full schedule a hair above 1
        rows.append(SweepRow(n, s.makespan, len(g.tasks) / s.makespan, t1 / s.makespan, u, t1 / s.makespan / n,
                             max(1 - u, 0.0) / u if u > 0 else float("inf")))
    return rows


def sweep_table_zh(graph: TaskGraph | Sequence[Task], counts: Iterable[int] = (1, 2, 4, 8), *, speed: float = 10.0,
                   policy: str = "LPT") -> str:
    """:func:`device_sweep` (same arguments) as an aligned Chinese table."""
    rows = device_sweep(graph, counts, speed=speed, policy=policy)
    lines = ["设备数 N  完成时间  吞吐量(任务/单位时间)  加速比 S  平均利用率 U  效率 E=S/N  闲忙比"]
    for r in rows:
        lines.append(f"{r.n_devices:>6} {r.makespan:9.2f} {r.throughput:14.2f} {r.speedup:14.2f}x"
                     f" {r.utilisation:10.0%} {r.efficiency:11.0%} {r.idle_busy:9.2f}")
    return "\n".join(lines)
