"""hetlab.tasks: tasks and task graphs, run times, the critical path, generators, splitting a task."""
import math

import numpy as np
import pytest

from hetlab.devices import Device, Link, kitchen
from hetlab.tasks import (
    CycleError,
    Task,
    TaskGraph,
    as_graph,
    assigned_costs,
    comm_matrices,
    cost_matrix,
    critical_path,
    execution_time,
    independent_tasks,
    random_dag,
    split_longest_critical_task,
    split_task,
    total_work,
)


def test_split_task_divides_work_and_data():
    g = TaskGraph([Task("s", 1.0), Task("a", 8.0), Task("b", 2.0)], [("s", "a", 6.0), ("a", "b", 4.0)])
    h = split_task(g, "a", 2)
    assert [t.name for t in h.tasks] == ["s", "a#0", "a#1", "b"]
    assert total_work(h) == total_work(g)
    assert h.edges[("s", "a#1")] == 3.0 and h.edges[("a#0", "b")] == 2.0
    assert len(split_task(g, "a", 1)) == 3


def test_split_task_divides_explicit_times_too():
    g = TaskGraph([Task("a", 8.0, times={"X": 4.0, "Y": 2.0})])
    assert split_task(g, g.task("a"), 2).task("a#1").times == {"X": 2.0, "Y": 1.0}


def test_split_task_validates():
    g = TaskGraph([Task("a", 8.0)])
    with pytest.raises(ValueError, match="task must be a task"):
        split_task(g, "z", 2)
    with pytest.raises(ValueError, match="k"):
        split_task(g, "a", 0)
    with pytest.raises(TypeError, match="k must be an integer"):
        split_task(g, "a", 2.5)
    with pytest.raises(TypeError, match="task must be a task name"):
        split_task(g, 3, 2)
    with pytest.raises(ValueError, match="already belong"):
        split_task(TaskGraph([Task("a"), Task("a#1")]), "a", 2)
    with pytest.raises(ValueError, match="at least one task"):
        split_longest_critical_task(TaskGraph([]), kitchen())


# --- graphs: construction, order, the critical path --------------------------------------------------------------

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
    with pytest.raises(ValueError, match="graph must hold at least one task"):
        as_graph([], name="graph")
    with pytest.raises(TypeError, match="single Task"):
        as_graph(Task("a"))


def test_topological_order_and_critical_path():
    g = TaskGraph([Task("a", 2), Task("b", 3), Task("c", 1), Task("d", 4)], [("a", "c"), ("b", "c"), ("c", "d")])
    assert g.topological_order() == ["a", "b", "c", "d"]
    assert critical_path(g) == (8.0, ["b", "c", "d"])


def test_critical_path_with_devices_weighs_each_task_by_its_fastest_run_time():
    # a matmul chain on the kitchen with affinity: the GPU runs matmul at 40, control at 10 (the CPU: 20)
    g = TaskGraph([Task("m", 40.0, op="matmul"), Task("c", 20.0, op="control")], [("m", "c", 99.0)])
    length, path = critical_path(g, kitchen(affinity=True))
    assert path == ["m", "c"] and length == pytest.approx(40.0 / 40.0 + 20.0 / 20.0)   # edges cost nothing here


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


# --- run times: per task, per device, per assignment; moving data ------------------------------------------------

def test_run_times_by_hand():
    cpu, gpu, npu = kitchen(affinity=True)
    assert execution_time(Task("k", 30.0, op="conv"), npu) == pytest.approx(30.0 / 30.0)     # speciality: 2 x 15
    assert execution_time(Task("x", times={"GPU": 4.0}), gpu) == 4.0
    assert execution_time(Task("x", times={"GPU": 4.0}), cpu) == math.inf                    # cannot run there
    g = independent_tasks([10.0, 30.0])
    np.testing.assert_allclose(cost_matrix(g, kitchen()), [[1.0, 0.5, 10 / 15], [3.0, 1.5, 2.0]])
    np.testing.assert_allclose(assigned_costs(g, kitchen(), [1, 2]), [0.5, 2.0])
    with pytest.raises(ValueError, match="device_of must hold device indices"):
        assigned_costs(g, kitchen(), [0, 3])


def test_comm_matrices_agree_with_transfer_time():
    from hetlab.devices import transfer_time

    devs = [Device("A", link=Link(1e-3, 10.0)), Device("B", link=Link(1e-5, 100.0)), Device("C")]
    latency, inverse = comm_matrices(devs)
    for a in range(3):
        for b in range(3):
            assert latency[a, b] + 7.0 * inverse[a, b] == pytest.approx(transfer_time(devs[a], devs[b], 7.0))


def test_independent_tasks_names_sort_and_total_work_adds_up():
    g = independent_tasks([1.0] * 11, prefix="J")
    assert [t.name for t in g.tasks] == sorted(t.name for t in g.tasks) and g.tasks[-1].name == "J10"
    assert total_work(g) == 11.0
    with pytest.raises(ValueError, match="kinds must have one entry per task"):
        independent_tasks([1.0, 2.0], kinds=["GPU"])


def test_random_dags_are_seeded_and_acyclic_by_construction():
    a, b = random_dag(200, mean_degree=3.0, seed=5), random_dag(200, mean_degree=3.0, seed=5)
    assert a.edges == b.edges and [t.work for t in a.tasks] == [t.work for t in b.tasks]
    assert all(a.index[src] < a.index[dst] for src, dst in a.edges)          # edges go forward only
    assert random_dag(200, mean_degree=3.0, seed=6).edges != a.edges


def test_huge_random_dags_are_refused_at_once():
    with pytest.raises(ValueError, match=r"n must be in \[1, 1000000\], got 1000000000"):
        random_dag(10**9)
    with pytest.raises(ValueError, match="mean_degree must be in"):
        random_dag(10, mean_degree=1e300)
    with pytest.raises(ValueError, match="work must be"):
        random_dag(10, work=(5.0, 1.0))
