"""hetlab.schedulers.list_scheduling: the greedy engine (central_queue, earliest_free), EFT, LPT, execute_plan."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetlab import schedulers as S
from hetlab.devices import Device, Link, identical, kitchen
from hetlab.schedulers import bounds as WS
from hetlab.tasks import Task, TaskGraph, independent_tasks, random_dag


def _names(s):
    return [s.devices[j].name for j in s.device_of]


# --- the engine's rule, by hand ------------------------------------------------------------------------

def test_devices_free_together_take_tasks_fastest_first():
    # All three cooks are free at 0: GPU (20) takes the first dish, NPU (15) the second, CPU (10) the third.
    s = S.central_queue(independent_tasks([10, 20, 15]), kitchen()).validate()
    assert _names(s) == ["GPU", "NPU", "CPU"]
    assert s.end.tolist() == pytest.approx([0.5, 20 / 15, 1.5])


def test_equally_fast_devices_take_tasks_in_listed_order():
    # B and C are both speed 2 and faster than A: B (listed first) takes T0, C takes T1, A takes T2 (0-4);
    # at 2, B and C are free again: B takes T3 (2-4).
    devices = [Device("A", speed=1.0), Device("B", speed=2.0), Device("C", speed=2.0)]
    s = S.central_queue(independent_tasks([4, 4, 4, 4]), devices).validate()
    assert _names(s) == ["B", "C", "A", "B"]
    assert s.start.tolist() == [0.0, 0.0, 0.0, 2.0] and s.makespan == 4.0


def test_list_takes_the_first_ready_task_of_the_list_and_fifo_the_one_ready_longest():
    # a(1) -> c(1); b(3) and d(1) free. At 0: D0 takes a, D1 takes b. At 1 D0 is free and c (ready since 1)
    # and d (ready since 0) wait. The list takes c (listed before d); the FIFO queue takes d.
    g = TaskGraph([Task("a", 1), Task("b", 3), Task("c", 1), Task("d", 1)], [("a", "c")])
    listed = S.central_queue(g, identical(2)).validate()
    fifo = S.central_queue(g, identical(2), ready="fifo").validate()
    assert (listed.placement("c").start, listed.placement("d").start) == (1.0, 2.0)
    assert (fifo.placement("d").start, fifo.placement("c").start) == (1.0, 2.0)


def test_order_sets_the_list_and_need_not_respect_dependencies():
    # With the list d, c, b, a on one device: d first, c waits for a, so b then a then c.
    g = TaskGraph([Task("a", 1), Task("b", 2), Task("c", 1), Task("d", 1)], [("a", "c")])
    s = S.central_queue(g, identical(1), order=["d", "c", "b", "a"]).validate()
    assert sorted(s.graph.tasks[i].name for i in np.argsort(s.start)) == ["a", "b", "c", "d"]
    assert [s.placement(t).start for t in "dbac"] == [0.0, 1.0, 3.0, 4.0]


def test_a_task_is_not_taken_before_it_is_released():
    # One device, T0 first in the list but ordered at 5: T1 runs 0-2, the device idles, T0 runs 5-7.
    s = S.central_queue(independent_tasks([2, 2]), identical(1), release={"T0": 5.0}).validate()
    assert (s.placement("T1").start, s.placement("T0").start, s.makespan) == (0.0, 5.0, 7.0)


def test_overhead_delays_each_task_and_is_not_busy_time():
    # Two devices, three unit tasks, 0.5 per decision: D0 and D1 run 0.5-1.5, D0 then decides and runs 2-3.
    s = S.central_queue(independent_tasks([1, 1, 1]), identical(2), overhead=0.5).validate()
    assert s.start.tolist() == [0.5, 0.5, 2.0] and s.makespan == 3.0
    assert s.busy.tolist() == [2.0, 1.0]


def test_a_task_taken_by_another_device_waits_for_its_data():
    # X (speed 2) takes b, Y (speed 1) takes a; both free at 1 when c is ready: X (faster) takes c, and a's
    # output crosses the link (latency 0.5): c runs 1.5-2.5 on X.
    devices = [Device("X", speed=2.0, link=Link(0.5)), Device("Y", speed=1.0, link=Link(0.5))]
    g = TaskGraph([Task("b", 2), Task("a", 1), Task("c", 2)], [("a", "c")])
    s = S.central_queue(g, devices).validate()
    assert _names(s) == ["X", "Y", "X"]
    assert (s.placement("c").start, s.makespan) == (1.5, 2.5)


def test_earliest_free_is_the_engine_with_its_defaults():
    for seed in range(5):
        g = random_dag(25, mean_degree=1.5, seed=seed)
        a, b = S.earliest_free(g, kitchen()), S.central_queue(g, kitchen())
        assert np.array_equal(a.device_of, b.device_of) and np.array_equal(a.start, b.start)
        assert (a.policy, b.policy) == ("earliest free", "central queue")


def test_engine_refuses_bad_options():
    g = TaskGraph([Task("a"), Task("b")], [("a", "b")])
    with pytest.raises(ValueError, match="ready must be one of 'list', 'fifo'"):
        S.central_queue(g, identical(2), ready="lifo")
    with pytest.raises(ValueError, match="order must list every task exactly once, 'b' is missing"):
        S.central_queue(g, identical(2), order=["a"])
    with pytest.raises(ValueError, match="order names unknown task 'z'"):
        S.central_queue(g, identical(2), order=["a", "z"])
    with pytest.raises(ValueError, match="release names unknown task 'z'"):
        S.central_queue(g, identical(2), release={"z": 1.0})
    with pytest.raises(ValueError, match=r"release\['a'\] must be in"):
        S.central_queue(g, identical(2), release={"a": -1.0})
    with pytest.raises(TypeError, match="release must map task names"):
        S.central_queue(g, identical(2), release=[1.0, 2.0])
    with pytest.raises(ValueError, match="overhead must be in"):
        S.central_queue(g, identical(2), overhead=-1.0)
    with pytest.raises(ValueError, match="overhead must be a number"):
        S.central_queue(g, identical(2), overhead=math.nan)
    with pytest.raises(ValueError, match="compiled=True: the numba kernel handles independent tasks"):
        S.central_queue(g, identical(2), compiled=True)
    timed = [Task("a", times={"D0": 1.0}), Task("b", times={"D0": 1.0})]
    with pytest.raises(ValueError, match="task 'a' cannot run on device 'D1'"):
        S.earliest_free(timed, identical(2))


# --- Graham's bound: any greedy schedule, either ready rule ---------------------------------------------

@pytest.mark.parametrize("ready", ["list", "fifo"])
@pytest.mark.parametrize("p", [1, 2, 3, 7])
def test_the_engine_respects_both_work_span_bounds_on_random_dags(ready, p):
    for seed in range(6):
        g = random_dag(40, mean_degree=2.0, seed=seed)
        s = S.central_queue(g, identical(p), ready=ready).validate()
        b = WS.bounds(g, p)
        assert b.lower - 1e-9 <= s.makespan <= b.upper + 1e-9


def test_one_device_takes_the_work_and_a_device_per_task_the_span():
    for seed in range(5):
        g = random_dag(30, seed=seed)
        assert S.earliest_free(g, identical(1)).validate().makespan == pytest.approx(WS.work(g))
        # with a device per task nothing ever waits for a device: an as-soon-as-possible schedule
        assert S.earliest_free(g, identical(30)).validate().makespan == pytest.approx(WS.span(g))


def test_grahams_worst_case_is_reached():
    # p(p-1) unit tasks then one task of length p, listed last: the greedy schedule finishes the unit tasks at
    # p-1, then runs the long one: 2p - 1, while the optimum is p and W/P + D = p + p = 2p.
    for p in (2, 3, 5):
        g = independent_tasks([1.0] * (p * (p - 1)) + [float(p)])
        s = S.earliest_free(g, identical(p)).validate()
        assert s.makespan == pytest.approx(2 * p - 1)
        assert s.makespan <= WS.brent_bound(g, p)
        assert S.lpt(g, identical(p)).makespan == pytest.approx(p)   # longest first reaches the optimum


# --- the compiled twin ----------------------------------------------------------------------------------

@settings(derandomize=True, database=None, max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=1, max_size=300), st.lists(st.integers(1, 4), min_size=1, max_size=9))
def test_compiled_earliest_free_equals_the_python_path(works, speeds):
    from hetlab.schedulers import _kernels

    if _kernels.earliest_free_kernel() is None:
        pytest.skip("numba not installed (hetlab[fast]); the compiled path is unavailable")
    graph = independent_tasks([float(w) for w in works])   # small integers, repeated speeds: many exact ties
    devices = [Device(f"D{j}", speed=float(s)) for j, s in enumerate(speeds)]
    fast, slow = S.earliest_free(graph, devices, compiled=True), S.earliest_free(graph, devices, compiled=False)
    assert np.array_equal(fast.device_of, slow.device_of) and np.array_equal(fast.start, slow.start)
    fast.validate()


def test_compiled_true_without_numba_says_how_to_get_it(monkeypatch):
    from hetlab.schedulers import _kernels

    monkeypatch.setattr(_kernels, "earliest_free_kernel", lambda: None)
    with pytest.raises(ImportError, match=r"hetlab\[fast\]"):
        S.earliest_free(independent_tasks([1.0]), identical(2), compiled=True)
    assert S.earliest_free(independent_tasks([1.0]), identical(2)).makespan == 1.0
    with pytest.raises(TypeError, match="compiled must be True or False"):
        S.earliest_free(independent_tasks([1.0]), identical(2), compiled="yes")


def test_auto_mode_uses_the_compiled_kernel_only_where_it_pays(monkeypatch):
    # Issue 11, item 12: in a fresh process importing numba and loading the kernel costs seconds, more than
    # the Python loop on 20,000 tasks. A stand-in kernel records when the automatic choice would call it.
    import importlib

    from hetlab.schedulers import _kernels

    ls = importlib.import_module("hetlab.schedulers.list_scheduling")
    calls = []

    def kernel(work, speeds):
        calls.append(len(work))
        return ls._earliest_free_python(work.tolist(), speeds.tolist())

    monkeypatch.setattr(_kernels, "earliest_free_kernel", lambda: kernel)
    monkeypatch.setattr(_kernels, "earliest_free_ready", lambda: False)
    monkeypatch.setattr(_kernels, "earliest_free_cached", lambda: False)
    n = S.COMPILED_FROM
    graph, devices = independent_tasks(np.arange(n) % 5 + 1.0), identical(4)
    S.earliest_free(graph, devices)
    assert calls == []                        # fresh process, nothing cached: never
    monkeypatch.setattr(_kernels, "earliest_free_cached", lambda: True)
    S.earliest_free(graph, devices)
    assert calls == []                        # cached, but far fewer tasks than FRESH_FROM
    monkeypatch.setattr(ls, "FRESH_FROM", n)
    S.earliest_free(graph, devices)
    assert calls == [n]                       # cached and large enough
    monkeypatch.setattr(ls, "FRESH_FROM", 10**9)
    monkeypatch.setattr(_kernels, "earliest_free_ready", lambda: True)
    S.earliest_free(graph, devices)
    assert calls == [n, n]                    # already loaded in this process: from COMPILED_FROM on
    S.earliest_free(independent_tasks([1.0] * 10), devices)
    assert calls == [n, n]                    # below COMPILED_FROM: the Python loop
    S.earliest_free(independent_tasks([1.0] * 10), devices, compiled=True)
    assert calls == [n, n, 10]                # asked for explicitly


# --- EFT and LPT ----------------------------------------------------------------------------------------

@settings(derandomize=True, database=None, max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 30), min_size=1, max_size=9), st.integers(1, 4))
def test_lpt_is_within_grahams_bound_on_identical_devices(works, m):
    graph, devices = independent_tasks(works), identical(m)
    best = S.optimal(graph, devices).makespan
    assert S.lpt(graph, devices).makespan <= (4 / 3 - 1 / (3 * m)) * best + 1e-9


def test_lpt_bound_is_tight_on_grahams_example():
    # 2m+1 jobs: two each of 2m-1, 2m-2, ..., m+1, and three of m. LPT gives 4m-1, the optimum 3m.
    m = 3
    works = [w for w in range(2 * m - 1, m, -1) for _ in range(2)] + [m, m, m]
    graph, devices = independent_tasks(works), identical(m)
    assert S.lpt(graph, devices).makespan == 4 * m - 1
    assert S.optimal(graph, devices).makespan == 3 * m


def test_eft_order_must_list_every_task_once_and_respect_dependencies():
    g = TaskGraph([Task("a"), Task("b"), Task("c")], [("a", "b")])
    with pytest.raises(ValueError, match="'b' comes before its predecessor 'a'"):
        S.eft(g, identical(2), order=["b", "a", "c"])
    with pytest.raises(ValueError, match="'c' is missing"):
        S.eft(g, identical(2), order=["a", "b"])
    with pytest.raises(ValueError, match="'a' appears twice"):
        S.eft(g, identical(2), order=["a", "a", "b", "c"])
    with pytest.raises(TypeError, match="order must be a sequence of task names"):
        S.eft(g, identical(2), order="abc")
    # c first, then a and b: c and a start at 0 on the two devices, b follows a on its device at 1.
    s = S.eft(g, identical(2), order=["c", "a", "b"]).validate()
    assert s.placement("c").start == 0 and s.placement("b").start == 1


# --- executing a fixed plan -----------------------------------------------------------------------------

def _two_tasks():
    g = TaskGraph([Task("a", 2), Task("b", 2)], [("a", "b", 3.0)])
    return g, [Device("X", link=Link(0, 1.0)), Device("Y", link=Link(0, 1.0))]


def test_execute_plan_reports_a_deadlock():
    g = TaskGraph([Task("a"), Task("b")], [("a", "b")])
    with pytest.raises(ValueError, match="deadlocks"):
        S.execute_plan(g, identical(1), {"D0": ["b", "a"]})


def test_same_device_edges_cost_nothing_cross_device_edges_cost_the_transfer():
    g, devices = _two_tasks()
    same = S.execute_plan(g, devices, {"X": ["a", "b"]})
    apart = S.execute_plan(g, devices, {"X": ["a"], "Y": ["b"]})
    assert same.makespan == 4 and apart.makespan == 7


def test_a_planned_task_waits_for_its_release():
    # D0 runs T0 (0-4) then T2, ordered at 5: 5-6; D1 runs T1 (0-1) and stays idle.
    s = S.execute_plan(independent_tasks([4, 1, 1]), identical(2), {"D0": ["T0", "T2"], "D1": ["T1"]},
                       release={"T2": 5.0}).validate()
    assert s.placement("T2").start == 5.0 and s.makespan == 6.0


def test_plans_name_what_is_wrong():
    with pytest.raises(TypeError, match="sequences must map device names"):
        S.execute_plan(independent_tasks([1.0]), identical(2), ["T0"])
    with pytest.raises(ValueError, match="sequences must place every task once, task 'T1' is in no sequence"):
        S.execute_plan(independent_tasks([1.0, 1.0]), identical(2), {"D0": ["T0"]})
    with pytest.raises(ValueError, match="task 'a' on device 'D1', which cannot run it"):
        S.execute_plan([Task("a", times={"D0": 1.0})], identical(2), {"D1": ["a"]})


def test_chapter_4s_over_decomposition_example():
    # Two devices: pieces [6, 2] finish at 6; the same work as [5, 1, 1, 1] at 5 (the idle device takes the
    # three small pieces while the other runs the 5); more devices than tasks leave some idle.
    two = identical(2)
    assert S.earliest_free(independent_tasks([6, 2]), two).makespan == 6.0
    assert S.earliest_free(independent_tasks([5, 1, 1, 1]), two).makespan == 5.0
    assert S.earliest_free(independent_tasks([1, 1, 1]), identical(8)).makespan == 1.0


def test_handover_charges_released_and_queued_tasks_apart_and_is_validated():
    from hetlab.devices import identical
    from hetlab.real.execute import queued_tasks
    from hetlab.schedulers import central_queue
    from hetlab.tasks import Task, TaskGraph

    # two workers, a -> c, b: a and b released at 0 (wait 1), c ready at 3 with worker 0 idle since 3 (released)
    g = TaskGraph([Task("a", 2.0), Task("b", 2.0), Task("c", 2.0)], [("a", "c")])
    two = central_queue(g, identical(2), ready="fifo", handover=(1.0, 0.1))
    assert two.start.tolist() == [1.0, 1.0, 4.0] and not queued_tasks(two).any()
    # one worker: b and c queue behind a (0.1 each after it frees); per-task waits are charged per task
    one = central_queue(g, identical(1), ready="fifo", handover=([1.0, 1.0, 1.0], [0.0, 0.25, 0.5]))
    assert one.start.tolist() == [1.0, 3.25, 5.75] and queued_tasks(one).tolist() == [False, True, True]
    # (0, 0) is no wait at all: the plain engine
    assert central_queue(g, identical(2), ready="fifo", handover=(0, 0)).start.tolist() == \
        central_queue(g, identical(2), ready="fifo").start.tolist()
    with pytest.raises(TypeError, match="handover"):
        central_queue(g, identical(2), handover=1.0)
    with pytest.raises(ValueError, match="handover released"):
        central_queue(g, identical(2), handover=(-1.0, 0.0))
    with pytest.raises(ValueError, match="one per task"):
        central_queue(g, identical(2), handover=([1.0], 0.0))
    with pytest.raises(ValueError, match="overhead and handover"):
        central_queue(g, identical(2), overhead=0.5, handover=(1.0, 0.1))
