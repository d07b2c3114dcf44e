import math

import pytest

from hetlab import schedulers as S
from hetlab.devices import Device, identical
from hetlab.tasks import CycleError, Task, TaskGraph, critical_path, independent_tasks

# --- graphs -------------------------------------------------------------------------------------------

def test_cycle_error_names_the_cycle():
    tasks = [Task(x) for x in "abcd"]
    with pytest.raises(CycleError, match="b -> c -> d -> b|c -> d -> b -> c|d -> b -> c -> d"):
        TaskGraph(tasks, [("a", "b"), ("b", "c"), ("c", "d"), ("d", "b")])
    with pytest.raises(CycleError, match="a -> a"):
        TaskGraph(tasks, [("a", "a")])


def test_graph_rejects_bad_input():
    with pytest.raises(ValueError, match="unique"):
        TaskGraph([Task("a"), Task("a")])
    with pytest.raises(ValueError, match="unknown task 'z'"):
        TaskGraph([Task("a")], [("a", "z")])
    with pytest.raises(ValueError, match="work of task 'a' must be in"):
        Task("a", -1)
    with pytest.raises(ValueError, match="speed must be in"):
        Device("x", speed=0)
    with pytest.raises(ValueError, match="device names must be unique"):
        S.eft([Task("a")], [Device("x"), Device("x")])
    with pytest.raises(ValueError, match="cannot run on any"):
        S.eft([Task("a", times={"nope": 1.0})], [Device("x")])
    with pytest.raises(ValueError, match="max_tasks"):
        S.optimal(independent_tasks([1.0] * 13), identical(2))
    with pytest.raises(ValueError, match="steal_latency must be in"):
        S.work_stealing([Task("a")], identical(2), steal_latency=-1)


def test_topological_order_and_critical_path():
    g = TaskGraph([Task("a", 2), Task("b", 3), Task("c", 1), Task("d", 4)], [("a", "c"), ("b", "c"), ("c", "d")])
    assert g.topological_order() == ["a", "b", "c", "d"]
    assert critical_path(g) == (8.0, ["b", "c", "d"])


# --- issue 11: the bad-input contract of tasks, schedule and schedulers ----------------------------------

def test_duplicate_edges_are_rejected_not_last_wins():
    with pytest.raises(ValueError, match=r"\('a', 'b'\) appears twice"):
        TaskGraph([Task("a"), Task("b")], [("a", "b", 1.0), ("a", "b", 5.0)])


@pytest.mark.parametrize("bad", [math.nan, math.inf, -1.0, True, "1"])
def test_nan_inf_negative_or_non_numeric_work_times_and_data_are_rejected(bad):
    with pytest.raises((ValueError, TypeError), match="work of task 'a'"):
        Task("a", bad)
    with pytest.raises((ValueError, TypeError), match=r"data on edge \('a', 'b'\)"):
        TaskGraph([Task("a"), Task("b")], [("a", "b", bad)])
    if bad is not math.inf:   # inf time means "cannot run there"
        with pytest.raises((ValueError, TypeError), match=r"times\['D0'\] of task 'a'"):
            Task("a", times={"D0": bad, "D1": 1.0})


def test_huge_random_dags_are_refused_at_once():
    from hetlab.tasks import random_dag

    with pytest.raises(ValueError, match=r"n must be in \[1, 1000000\], got 1000000000"):
        random_dag(10**9)
    with pytest.raises(ValueError, match="mean_degree must be in"):
        random_dag(10, mean_degree=1e300)
    with pytest.raises(ValueError, match="work must be"):
        random_dag(10, work=(5.0, 1.0))


def test_unknown_names_are_errors_that_say_which_name():
    s = S.heft(independent_tasks([1.0, 2.0]), identical(2))
    with pytest.raises(ValueError, match="task must name a task of the graph .* got 'zz'"):
        s.placement("zz")
    with pytest.raises(KeyError):   # still a KeyError for code that looks names up
        s.graph.task("zz")
    with pytest.raises(ValueError, match=r"device must be one of \['D0', 'D1'\], got 'GPU'"):
        s.tasks_on("GPU")


def test_option_types_are_checked():
    g, d = independent_tasks([1.0, 2.0]), identical(2)
    with pytest.raises(ValueError, match="node_limit must be in"):
        S.optimal(g, d, node_limit=0)
    with pytest.raises(TypeError, match="seed must be an integer"):
        S.work_stealing(g, d, seed=1.5)
    with pytest.raises(ValueError, match="seed must be in"):
        S.work_stealing(g, d, seed=-1)

