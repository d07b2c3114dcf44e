"""Chapters 9 and 11: task splitting and the new views (CPOP's ablation options: tests/lib/schedulers/test_cpop.py)."""
import matplotlib
import pytest

from hetlab import schedulers as S
from hetlab.devices import Link, kitchen
from hetlab.schedulers.restructure import split_longest_critical_task, split_task
from hetlab.tasks import Task, TaskGraph, critical_path, total_work

matplotlib.use("Agg")


def test_split_task_divides_work_and_data():
    g = TaskGraph([Task("s", 1.0), Task("a", 8.0), Task("b", 2.0)], [("s", "a", 6.0), ("a", "b", 4.0)])
    h = split_task(g, "a", 2)
    assert [t.name for t in h.tasks] == ["s", "a#0", "a#1", "b"]
    assert total_work(h) == total_work(g)
    assert h.edges[("s", "a#1")] == 3.0 and h.edges[("a#0", "b")] == 2.0
    assert len(split_task(g, "a", 1)) == 3


def test_split_task_validates():
    g = TaskGraph([Task("a", 8.0)])
    with pytest.raises(ValueError, match="task must be a task"):
        split_task(g, "z", 2)
    with pytest.raises(ValueError, match="k"):
        split_task(g, "a", 0)
    with pytest.raises(TypeError, match="k must be an integer"):
        split_task(g, "a", 2.5)


def test_splitting_epigenomics_first_task_shortens_the_critical_path():
    from hetlab.workloads.workflows import workflow

    epi, shop = workflow("epigenomics", 60, seed=0), kitchen(link=Link(0.0, 100.0))
    g, name = split_longest_critical_task(epi, shop, 4)
    assert name.startswith("fastqSplit")
    assert critical_path(g, shop)[0] < critical_path(epi, shop)[0] - 300
    assert S.heft(g, shop).makespan < S.heft(epi, shop).makespan


def test_chapter_views():
    from hetlab.book.views import ch09, ch11

    assert "LPT 不均衡度 0.018" in ch09.balance_readout(1.0)
    with pytest.raises(ValueError, match="spread"):
        ch09.balance_readout(5.0)
    assert "| LPT | 2.600 |" in ch11.policy_table()
    assert set(ch11.POLICY_DEFINITIONS) == set(ch11.NAMES)
    fig = ch11.demo_gantts()
    assert len(fig.axes) == 6
    with pytest.raises(ValueError, match="policies"):
        ch11.demo_gantts(("nope",))
    assert len(ch09.workflow_gantts().axes) == 2


def test_article_program_agrees_with_the_library(capsys):
    from hetlab.book import _article_program as A
    from hetlab.workloads import article_tasks

    assert A.parallel_time(A.TASKS, A.DEVICES) == S.article_demo(article_tasks(), kitchen()).makespan
    assert A.serial_time(A.TASKS) == pytest.approx(11.4)
    A.main()
    assert "加速比: 4.27x" in capsys.readouterr().out
