"""hetlab.book.demo (chapter 11's kitchen where a preference really changes the run time) and
hetlab.book._article_program (the seed article's program, which chapter 11 prints and runs)."""
import pytest

from hetlab import schedulers as S
from hetlab.book.demo import preference_kitchen
from hetlab.devices import kitchen
from hetlab.workloads import ARTICLE_TASKS, article_tasks


def test_factor_one_is_the_plain_kitchen():
    graph, cooks = preference_kitchen(1)
    for name in ("article_demo", "by_affinity", "eft", "lpt", "optimal"):
        assert S.POLICIES[name](graph, cooks).makespan == pytest.approx(
            S.POLICIES[name](article_tasks(), kitchen()).makespan)


def test_preferred_cook_is_factor_times_faster():
    graph, cooks = preference_kitchen(3)
    for task, (work, kind) in zip(graph.tasks, ARTICLE_TASKS):
        for cook in cooks:
            factor = 3.0 if cook.kind == kind else 1.0
            assert work / cook.speed_for(task.op) == pytest.approx(work / (factor * cook.speed))


def test_by_affinity_catches_up_as_the_preference_grows():
    # By hand at f = 4: by affinity puts 36 units on the CPU (36/40 = 0.9), 38 on the GPU (38/80),
    # 40 on the NPU (40/60): makespan 0.9.
    graph, cooks = preference_kitchen(4)
    assert S.by_affinity(graph, cooks).makespan == pytest.approx(0.9)
    gaps = []
    for f in (1, 2, 3, 4):
        graph, cooks = preference_kitchen(f)
        best = S.POLICIES["optimal"](graph, cooks).makespan
        gaps.append(S.by_affinity(graph, cooks).makespan / best)
        # The proof of 11.5 does not depend on run times: the demo never re-routes.
        assert S.article_demo(graph, cooks).info["preference_reroutes"] == 0
    assert gaps == sorted(gaps, reverse=True)


@pytest.mark.parametrize("bad, exc", [(0.5, ValueError), (0, ValueError), ("2", TypeError), (float("nan"), ValueError)])
def test_preference_kitchen_rejects_bad_factors(bad, exc):
    with pytest.raises(exc, match="factor"):
        preference_kitchen(bad)


def test_article_program_agrees_with_the_library(capsys):
    from hetlab.book import _article_program as A

    assert A.parallel_time(A.TASKS, A.DEVICES) == S.article_demo(article_tasks(), kitchen()).makespan
    assert A.serial_time(A.TASKS) == pytest.approx(11.4)     # 114 units on the CPU at speed 10
    A.main()
    assert "加速比: 4.27x" in capsys.readouterr().out          # the article's printed line
