"""Granularity (chapter 4): the derivation of N* with Chinese step labels, and the reading of a measured
dispatch overhead against the table of typical magnitudes (:data:`hetlab.models.granularity.OVERHEADS`)."""
from __future__ import annotations

import dataclasses

import numpy as np

from hetlab._validate import check_positive
from hetlab.formulas import GranularityDerivation, derive_optimal_tasks

__all__ = ["derivation", "overhead_reading"]


def derivation() -> GranularityDerivation:
    """:func:`hetlab.formulas.derive_optimal_tasks` with its step labels in Chinese.

    >>> [label for label, _ in derivation().steps][:2]
    ['总耗时', '对 N 求一阶导数']
    """
    d = derive_optimal_tasks()
    labels = ["总耗时", "对 N 求一阶导数", "令导数为零，解出", "二阶导数",
              "在 N* 处为正，所以 N* 是极小值点", "最小总耗时"]
    if len(labels) != len(d.steps):
        raise RuntimeError(f"expected {len(labels)} derivation steps, got {len(d.steps)}")
    return dataclasses.replace(d, steps=[(zh, expr) for zh, (_, expr) in zip(labels, d.steps)])


def overhead_reading(thread: float, process: float, table_thread: float = 12e-6,
                        table_process: float = 120e-6, busy: bool = False) -> str:
    """Compare a measured thread-pool and process-pool dispatch overhead (seconds) with the
    table's typical idle-machine magnitudes (:data:`hetlab.models.granularity.OVERHEADS`), in absolute
    terms and as a ratio: two lines.

    >>> print(overhead_reading(13e-6, 110e-6).splitlines()[0])
    线程池 Os 是上表典型值（12 µs）的 1.1 倍，进程池是上表（120 µs）的 0.92 倍：与上表的量级一致。
    """
    t = check_positive("thread", thread, high=10.0)
    pr = check_positive("process", process, high=10.0)
    tt = check_positive("table_thread", table_thread, high=10.0)
    tp = check_positive("table_process", table_process, high=10.0)
    if not isinstance(busy, (bool, np.bool_)):
        raise TypeError(f"busy must be True or False, got {type(busy).__name__} {busy!r}")
    rt, rp = t / tt, pr / tp
    head = (f"线程池 Os 是上表典型值（{tt * 1e6:.0f} µs）的 {rt:.2g} 倍，"
            f"进程池是上表（{tp * 1e6:.0f} µs）的 {rp:.2g} 倍：")
    if max(rt, rp) <= 2.5 and min(rt, rp) >= 0.4:
        head += "与上表的量级一致。"
    elif min(rt, rp) > 2.5:
        head += ("都明显更大；测量时机器在忙（见下面的负载），派发者和工作者都在排队等核。"
                 if busy else "都明显更大；这台机器的派发比典型值慢，或测量时有别的程序短暂占用了核。")
    elif max(rt, rp) < 0.4:
        head += "都明显更小：这台机器比上表假设的典型机器快。"
    else:
        head += "一个在上表的量级内、一个偏离较多；偏离的那个受这次测量条件的影响更大。"
    ratio = pr / t
    tail = (f"进程池是线程池的 {ratio:.1f} 倍（上表约 {tp / tt:.0f} 倍）："
            + ("进程池明显更贵，与上表的结论相同。" if ratio >= 3 else
               "差距比上表小：机器忙时线程池的数字也会被拖大，空闲时重测一次。"))
    return head + "\n" + tail
