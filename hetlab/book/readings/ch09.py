"""Chapter 9 (optimisation): what the balance and workflow widgets say about a run."""
from __future__ import annotations

from collections.abc import Sequence

from hetlab._validate import check_int, check_nonnegative, check_positive, check_sequence, check_str, describe

__all__ = ["balance_reading", "workflow_reading"]


def balance_reading(tasks: int, spread: float, rows: Sequence[tuple[str, float, float]]) -> str:
    """One line: for ``tasks`` tasks of size spread ``spread``, each policy's ``(label, imbalance, makespan)``.

    >>> balance_reading(20, 1.0, [("分块", 0.431, 9.39), ("LPT", 0.018, 6.68)])
    '20 个任务，大小悬殊程度 σ = 1.00：分块 不均衡度 0.431、完工 9.39；LPT 不均衡度 0.018、完工 6.68'
    """
    tasks = check_int("tasks", tasks, low=1)
    spread = check_nonnegative("spread", spread)
    parts = []
    for row in check_sequence("rows", rows):
        if not isinstance(row, (tuple, list)) or len(row) != 3:
            raise TypeError(f"rows must hold (label, imbalance, makespan) triples, got {describe(row)}")
        label, imbalance, makespan = row
        parts.append(f"{check_str('label', label)} 不均衡度 {check_nonnegative('imbalance', imbalance):.3f}、"
                     f"完工 {check_nonnegative('makespan', makespan):.2f}")
    return f"{tasks} 个任务，大小悬殊程度 σ = {spread:.2f}：" + "；".join(parts)


def workflow_reading(policy: str, workflow: str, bandwidth: float, seed: int, *, makespan: float, bound: float,
                     critical_path: float, area: float, imbalance: float) -> str:
    """One line: a policy's makespan on one workflow instance against the lower bound and both its terms.

    >>> text = workflow_reading("HEFT", "Epigenomics", 100, 0, makespan=455.0, bound=357.0, critical_path=236.0,
    ...                         area=357.0, imbalance=0.2)
    >>> for part in text.split("；"):
    ...     print(part)
    HEFT，Epigenomics 实例 0，带宽 100 MB/s：完工时间 455 秒
    下界 357 秒 = max(关键路径 236，总工作量/总速度 357)
    超出下界 27.5%
    负载不均衡度 0.20
    """
    policy, workflow = check_str("policy", policy), check_str("workflow", workflow)
    bandwidth = check_positive("bandwidth", bandwidth)
    seed = check_int("seed", seed, low=0)
    makespan, bound = check_nonnegative("makespan", makespan), check_positive("bound", bound)
    cp, area = check_nonnegative("critical_path", critical_path), check_nonnegative("area", area)
    imbalance = check_nonnegative("imbalance", imbalance)
    return (f"{policy}，{workflow} 实例 {seed}，带宽 {bandwidth:g} MB/s：完工时间 {makespan:.0f} 秒；"
            f"下界 {bound:.0f} 秒 = max(关键路径 {cp:.0f}，总工作量/总速度 {area:.0f})；"
            f"超出下界 {makespan / bound - 1:.1%}；负载不均衡度 {imbalance:.2f}")
