"""Speed-up and efficiency when the devices differ: which serial baseline, and what "N" means.

On identical devices ``S = T_serial / T_parallel`` and ``E = S / N`` need no further words. On a
heterogeneous set the serial time depends on the device it runs on. With the slowest device as
the baseline, S can exceed the device count (the kitchen's CPU, GPU and NPU have speeds 10, 20 and
15, so their combined capacity is 4.5 CPUs) and ``E = S / N`` then exceeds 1, which only says the
baseline was slow. A fair efficiency divides by the devices' *capacity in baseline units*,

    C_b = sum_j T_serial(b) / T_serial(j)        (= sum_j speed_j / speed_b for plain work / speed),

so ``E_b = S_b / C_b = (T_serial(b) / T_parallel) / C_b``, which is at most 1 for any schedule of
independent tasks and equals ``lower_bound / T_parallel``: the same number for every baseline.
See Hennessy & Patterson (Computer Architecture, 6th ed., 2017) on choosing baselines honestly.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from hetlab import schedulers as S
from hetlab._validate import check_fields, check_instance
from hetlab.schedule import Schedule

__all__ = ["BaselineRow", "baseline_table", "report_zh"]


@dataclass(frozen=True)
class BaselineRow:
    """Figures of one schedule measured against the serial run on device ``base_device``."""

    base_device: str
    serial_time: float
    speedup: float
    naive_efficiency: float      # S / N
    capacity: float              # C_b, the devices' capacity in units of the baseline device
    efficiency: float            # S / C_b

    def __post_init__(self) -> None:
        check_fields(self)


def baseline_table(schedule: Schedule) -> list[BaselineRow]:
    """One :class:`BaselineRow` per device of ``schedule`` used as the serial baseline (the schedule's
    own tasks, run one after another on that device)."""
    check_instance("schedule", schedule, Schedule)
    g, devs = schedule.graph, schedule.devices
    if schedule.makespan <= 0:
        raise ValueError("schedule must have a positive makespan")
    serial = {d.name: S.serial(g, devs, device=d.name).makespan for d in devs}
    if not all(math.isfinite(t) and t > 0 for t in serial.values()):
        raise ValueError("schedule must be of tasks every device can run, with positive work")
    rows = []
    for d in devs:
        base = serial[d.name]
        capacity = sum(base / t for t in serial.values())
        s = base / schedule.makespan
        rows.append(BaselineRow(d.name, base, s, s / len(devs), capacity, s / capacity))
    return rows


def report_zh(schedule: Schedule) -> str:
    """:func:`baseline_table` of ``schedule`` as an aligned Chinese table."""
    rows = baseline_table(schedule)
    lines = ["串行基线   T_serial   加速比 S   S/N     容量 C   S/C"]
    for r in rows:
        lines.append(f"{r.base_device:<9} {r.serial_time:8.2f} {r.speedup:9.2f}x {r.naive_efficiency:7.2f}"
                     f" {r.capacity:8.2f} {r.efficiency:6.2f}")
    return "\n".join(lines)
