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


def test_preference_does_not_change_times_so_the_gpu_is_fastest_for_every_dish():
    """Section 1.1: preference is a label; times are w / v whatever the kind, so the GPU (speed 20) is the
    fastest cook for all 8 dishes, and t6 (prefers CPU) takes 18/20 = 0.90 on the GPU against 18/10 = 1.80."""
    import hetlab

    cooks = kitchen()
    for t in article_tasks().tasks:
        times = {d.name: hetlab.execution_time(t, d) for d in cooks}
        assert min(times, key=times.get) == "GPU"
        assert times["CPU"] == pytest.approx(t.work / 10)
    t6 = article_tasks().tasks[6]
    assert (hetlab.execution_time(t6, cooks[1]), hetlab.execution_time(t6, cooks[0])) == pytest.approx((0.9, 1.8))


def test_zero_one_leaves_about_62_gib_for_activations():
    """深入一点 of section 1.5: ZeRO-1 over 32 replicas keeps (2 + 2 + 12/32) B x 70e9 / 16 stages
    = 19.14e9 B = 17.8 GiB per card, leaving 80 - 17.8 = 62.2 GiB."""
    from hetlab.models.training import memory_per_device

    states = memory_per_device(70e9, dp=32, tp=1, pp=16, zero_stage=1, activations=False)["model_states"]
    assert states == pytest.approx((4 + 12 / 32) * 70e9 / 16)
    assert 80 - states / 2**30 == pytest.approx(62.2, abs=0.05)


def test_quiz_c01_5_key_is_the_gpu_baseline_ceiling():
    """c01-5: any schedule takes >= 114/45, the GPU alone 114/20, so the speed-up cannot exceed 45/20 = 2.25
    (the best schedule, 2.55, gives 2.24: a ceiling, which the stem now asks for)."""
    from hetlab.book import quiz

    q = quiz.question("c01-5")
    (letter,) = quiz.check("c01-5", "A").answer
    assert next(o for o in q.options if o.startswith(f"{letter}.")) == f"{letter}. {45 / 20:g} 倍"
    assert "不可能超过" in q.prompt
