"""Chapter 9: the staged lower bound (serial head and tail stages + the middle's bound)."""
import pytest

from hetlab import schedulers as S
from hetlab.devices import Link, identical, kitchen
from hetlab.schedulers.restructure import serial_stages, split_longest_critical_task, staged_bound
from hetlab.tasks import Task, TaskGraph, random_dag
from hetlab.workloads import heft_paper_example
from hetlab.workloads.workflows import workflow


def test_serial_stages_peel_a_diamond_completely():
    # a and b must both finish before c: {a, b} is a stage of its own
    g = TaskGraph([Task(n, 1.0) for n in "sabct"], [("s", "a"), ("s", "b"), ("a", "c"), ("b", "c"), ("c", "t")])
    assert serial_stages(g) == ([["s"], ["a", "b"], ["c"]], [])


def test_serial_stages_stop_at_parallel_lanes():
    g = TaskGraph([Task(n, 1.0) for n in "sabcdt"],
                  [("s", "a"), ("s", "b"), ("a", "c"), ("b", "d"), ("c", "t"), ("d", "t")])
    assert serial_stages(g) == ([["s"]], [["t"]])


def test_split_head_is_one_stage_of_pieces():
    g = TaskGraph([Task("s", 8.0), Task("a", 1.0), Task("b", 1.0)], [("s", "a"), ("s", "b")])
    from hetlab.schedulers.restructure import split_task

    head, tail = serial_stages(split_task(g, "s", 4))
    assert head == [["s#0", "s#1", "s#2", "s#3"]] and tail == []


def test_staged_bound_by_hand():
    # s (work 20) then a..d (10 each) on two devices of speed 10: s alone takes 2 (one device idle),
    # then the area 40 / 20 = 2; the plain bound is max(CP 2 + 1, area 60 / 20) = 3
    g = TaskGraph([Task("s", 20.0)] + [Task(n, 10.0) for n in "abcd"], [("s", n) for n in "abcd"])
    two = identical(2, speed=10.0)
    b = staged_bound(g, two)
    assert b.head == (("s",),) and b.tail == ()
    assert b.head_time == pytest.approx(2.0) and b.middle == pytest.approx(2.0) and b.total == pytest.approx(4.0)
    assert S.lower_bound(g, two) == pytest.approx(3.0)
    assert S.optimal(g, two).makespan == pytest.approx(b.total)


def test_staged_bound_never_exceeds_the_optimum_and_never_undercuts_the_plain_bound():
    devices = kitchen(link=Link(0.0, 10.0))
    for seed in range(6):
        g = random_dag(9, mean_degree=1.2, seed=seed)
        b = staged_bound(g, devices)
        assert S.lower_bound(g, devices) - 1e-9 <= b.total <= S.optimal(g, devices).makespan + 1e-9
    graph, procs = heft_paper_example()
    assert staged_bound(graph, procs).total <= S.optimal(graph, procs).makespan + 1e-9


def test_epigenomics_head_and_tail_explain_heft():
    shop = kitchen(link=Link(0.0, 100.0))
    epi = workflow("epigenomics", 60, seed=0)
    b = staged_bound(epi, shop)
    assert b.head == (("fastqSplit_00000021",),) and len(b.tail) == 4
    assert b.head_time == pytest.approx(439.24, abs=0.01)
    assert b.total > S.lower_bound(epi, shop) + 100
    assert S.heft(epi, shop).makespan >= b.total - 1e-9
    assert S.heft(epi, shop).makespan / b.total < 1.01
    for k in (2, 3, 4, 8):
        g, _ = split_longest_critical_task(epi, shop, k)
        bk = staged_bound(g, shop)
        assert S.heft(g, shop).makespan >= bk.total - 1e-9
        assert len(bk.head) == 1 and len(bk.head[0]) == k


def test_staged_bound_validates():
    with pytest.raises(ValueError, match="at least one task"):
        staged_bound(TaskGraph([]), identical(2))
    with pytest.raises(TypeError):
        staged_bound(TaskGraph([Task("a", 1.0)]), "GPU")


def test_paper_table_dag_and_padding():
    import matplotlib

    matplotlib.use("Agg")
    from hetlab.book.views import ch09

    table = ch09.heft_paper_table()
    assert list(table.index) == [f"n{i}" for i in range(1, 11)]
    assert table.loc["n10", "平均耗时 w̄"] == pytest.approx(14.667, abs=1e-3)
    assert table.loc["n1", "后继（通信代价 c̄）"].startswith("n2（18）")
    assert len(ch09.heft_paper_dag().axes) == 1


def test_workflow_gantts_highlight():
    import matplotlib

    matplotlib.use("Agg")
    from hetlab.book.views import ch09

    fig = ch09.workflow_gantts("montage", ("HEFT",), 100, highlight="mProject_00000001")
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "mProject_00000001" in labels and any(t.startswith("完成时间") or "makespan" in t for t in labels)
    with pytest.raises(ValueError, match="highlight"):
        ch09.workflow_gantts("montage", ("HEFT",), 100, highlight="nope")
