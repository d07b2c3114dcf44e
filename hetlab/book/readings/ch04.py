"""Chapter 4 (granularity): readings of a timing taken on this machine.

:func:`load_note` says whether the machine was busy while a measurement ran (chapter 12's readings use it too):
a busy shared machine makes every timing slower and noisier, so the chapter prints the load next to the numbers.
"""
from __future__ import annotations

from hetlab._validate import check_nonnegative

__all__ = ["BUSY", "load_note"]

#: Runnable processes per CPU (:func:`hetlab.real.measure.load_per_cpu`) above which a timing is flagged as
#: taken on a busy machine.
BUSY = 0.5


def load_note(load: float | None = None) -> str:
    """One sentence on the machine's load, in runnable processes per CPU (``None``: the system reports none).

    >>> load_note(0.1)
    '测量时机器基本空闲（每个 CPU 平均 0.10 个可运行进程）。'
    """
    if load is None:
        return "（本系统不报告负载，无法判断机器是否空闲。）"
    lo = check_nonnegative("load", load, high=1e6)
    if lo > BUSY:
        return (f"注意：测量时每个 CPU 平均有 {lo:.2f} 个可运行进程，机器在忙别的事，"
                "这次的数字会偏慢、偏乱；在空闲时重跑一次再下结论。")
    return f"测量时机器基本空闲（每个 CPU 平均 {lo:.2f} 个可运行进程）。"
