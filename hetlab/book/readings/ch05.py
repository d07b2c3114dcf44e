"""Chapter 5 (runtime scheduling): the lines that read a static plan against the central queue."""
from __future__ import annotations

from hetlab._validate import check_instance
from hetlab.models.dynamics import LateOrdersRun, VarianceRun
from hetlab.plotting import pad

__all__ = ["variance_summary", "late_orders_summary"]


def variance_summary(run: VarianceRun) -> str:
    """Four aligned lines: the plan as estimated, the plan as executed, the central queue, the oracle.

    >>> from hetlab.devices import identical
    >>> from hetlab.models.dynamics import compare_under_variance
    >>> from hetlab.tasks import independent_tasks
    >>> print(variance_summary(compare_under_variance(independent_tasks([2, 2]), identical(2), noise=0.0)))
    静态计划（按估计，预期）       完工时间   2.00
    静态计划（实际执行）           完工时间   2.00
    中央队列（实际执行）           完工时间   2.00
    先知 LPT（事先知道实际耗时）   完工时间   2.00
    """
    check_instance("run", run, VarianceRun)
    rows = [("静态计划（按估计，预期）", run.planned), ("静态计划（实际执行）", run.static),
            ("中央队列（实际执行）", run.dynamic), ("先知 LPT（事先知道实际耗时）", run.oracle)]
    return "\n".join(f"{pad(name, 30)} 完工时间 {s.makespan:6.2f}" for name, s in rows)


def late_orders_summary(run: LateOrdersRun) -> str:
    """Three aligned lines: the plan of the known dishes, the static rule with the late dishes, the central queue.

    >>> from hetlab.devices import identical
    >>> from hetlab.models.dynamics import late_orders
    >>> from hetlab.tasks import independent_tasks
    >>> print(late_orders_summary(late_orders(independent_tasks([4, 4]), identical(2), count=2, work=2.0)))
    计划（只含开工前的菜）             完工时间   4.00
    静态：加菜轮流接在班表末尾         完工时间   6.00
    中央队列：谁空谁取已下单的最大一道 完工时间   6.00
    """
    check_instance("run", run, LateOrdersRun)
    static = "静态：加菜轮流接在班表末尾" if run.rule == "round-robin" else "静态：加菜按速度比例接在末尾"
    rows = [("计划（只含开工前的菜）", run.planned), (static, run.static),
            ("中央队列：谁空谁取已下单的最大一道", run.dynamic)]
    return "\n".join(f"{pad(name, 34)} 完工时间 {s.makespan:6.2f}" for name, s in rows)
