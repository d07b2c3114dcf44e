"""Chapter 11: the kitchen where a preference really changes the run time, and the new views."""
import matplotlib
import pytest

from hetlab import schedulers as S
from hetlab.book.demo import preference_kitchen
from hetlab.book.views import ch11
from hetlab.devices import kitchen
from hetlab.workloads import ARTICLE_TASKS, article_tasks

matplotlib.use("Agg")


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


def test_affinity_table_rows_and_validation():
    table = ch11.affinity_table((1, 4))
    lines = table.splitlines()
    assert len(lines) == 4
    assert lines[2].startswith("| 1× | 2.667 | 3.600 |")
    assert "| 0.900 | 0.900 |" in lines[3]
    with pytest.raises(ValueError, match="factors"):
        ch11.affinity_table(())
    with pytest.raises(TypeError, match="factors"):
        ch11.affinity_table(2)
    with pytest.raises(ValueError, match="factor"):
        ch11.affinity_table((0.5,))


def test_demo_gantts_has_one_legend_with_the_makespan_line():
    fig = ch11.demo_gantts()
    assert all(ax.get_legend() is None for ax in fig.axes)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any("完成时间" in x or "makespan" in x for x in labels)
    assert len(labels) == 4
    matplotlib.pyplot.close(fig)


def test_demo_gantts_drops_names_that_do_not_fit():
    # A narrow figure: the short bars (t3, t7 on the fast GPU) cannot hold their names.
    import matplotlib.pyplot as plt

    wide = ch11.demo_gantts(("lpt",), (40,))
    narrow_before = sum(len(ax.texts) for ax in wide.axes)
    wide.set_size_inches(2.0, 1.5)
    ch11._drop_clipped_labels(wide)
    assert sum(len(ax.texts) for ax in wide.axes) < narrow_before
    plt.close(wide)
