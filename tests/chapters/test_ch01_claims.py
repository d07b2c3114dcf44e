"""Claims of chapter 1 (01-visual-demo) that rest on a seed or on a tie rule, checked beyond the one case shown."""
import pytest

from hetlab import schedulers as S
from hetlab.devices import kitchen
from hetlab.workloads import article_tasks, skewed_tasks


def earliest_free(works, speeds):
    """The chapter's function, as printed in section 1.2 (ties to the lower device number)."""
    free = [0.0] * len(speeds)
    plan = []
    for w in works:
        j = min(range(len(speeds)), key=lambda k: (free[k], k))
        plan.append((j, free[j]))
        free[j] += w / speeds[j]
    return plan


def test_the_chapters_function_is_the_demo_scheduler():
    dishes, cooks = article_tasks(), kitchen()
    demo = S.article_demo(dishes, cooks)
    plan = earliest_free([t.work for t in dishes.tasks], [d.speed for d in cooks])
    assert plan == list(zip(demo.device_of.tolist(), demo.start.tolist()))
    # by hand: CPU 1.0 + 0.8 + 0.6 = 2.4, GPU 1.0 + 0.6 + 0.9 = 2.5, NPU 1.0 + 5/3
    assert demo.makespan == pytest.approx(1 + 25 / 15)


def test_ties_to_the_fastest_cook_end_at_three():
    """The 深入一点 box: the same rule with ties to the fastest cook (the library's engine) ends at 3.00.
    By hand: at 0 GPU takes t0 (0.5), NPU t1 (1.33), CPU t2 (1.5); GPU then t3 (0.9), t4 (1.5); t5 (25) goes
    to NPU, free first at 4/3, and ends at 4/3 + 25/15 = 3."""
    assert S.earliest_free(article_tasks(), kitchen()).makespan == pytest.approx(3.0)


def test_seed_one_is_neither_the_best_nor_the_worst_of_twenty():
    """Section 1.4 shows seed 1 at sigma = 0.5; uneven dishes always stay below 4x (mean < max)."""
    ratios = [sum(g.work) / max(g.work) for g in (skewed_tasks(4, spread=0.5, seed=k) for k in range(20))]
    assert all(r < 4 for r in ratios)
    assert min(ratios) < ratios[1] < max(ratios)
