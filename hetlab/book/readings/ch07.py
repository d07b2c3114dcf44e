"""Chapter 7 (metrics): a schedule's speed-up and efficiency read against every serial baseline.

Chapters 5 and 11 print the same table for their own schedules.
"""
from __future__ import annotations

from hetlab.metrics import baseline_table
from hetlab.schedule import Schedule

__all__ = ["baseline_report"]


def baseline_report(schedule: Schedule) -> str:
    """:func:`hetlab.metrics.baseline_table` of ``schedule`` as an aligned table: one row per serial baseline,
    with ``T_serial``, the speed-up ``S``, the naive ``S/N``, the capacity ``C`` and the fair ``S/C``.

    >>> from hetlab.devices import kitchen
    >>> from hetlab.schedulers import lpt
    >>> from hetlab.tasks import independent_tasks
    >>> print(baseline_report(lpt(independent_tasks([45.0, 45.0, 45.0]), kitchen())))
    串行基线   T_serial   加速比 S   S/N     容量 C   S/C
    CPU          13.50      3.00x    1.00     4.50   0.67
    GPU           6.75      1.50x    0.50     2.25   0.67
    NPU           9.00      2.00x    0.67     3.00   0.67
    """
    rows = baseline_table(schedule)
    lines = ["串行基线   T_serial   加速比 S   S/N     容量 C   S/C"]
    for r in rows:
        lines.append(f"{r.base_device:<9} {r.serial_time:8.2f} {r.speedup:9.2f}x {r.naive_efficiency:7.2f}"
                     f" {r.capacity:8.2f} {r.efficiency:6.2f}")
    return "\n".join(lines)
