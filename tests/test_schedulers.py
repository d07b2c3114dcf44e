import itertools
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hetlab import schedulers as S
from hetlab.book.demo import article_tasks, compare_policies, heft_paper_example
from hetlab.devices import Device, Link, identical, kitchen
from hetlab.schedule import Placement, Schedule, ScheduleError, from_placements
from hetlab.tasks import CycleError, Task, TaskGraph, critical_path, independent_tasks

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import article_demo as article  # noqa: E402  the article's code (hetlab.book._article_program)

HEURISTICS = ["article demo", "earliest free", "round-robin", "block", "by affinity", "EFT", "LPT",
              "work stealing", "HEFT"]
GRAPH_POLICIES = [p for p in HEURISTICS if p != "article demo"]


# --- random instances ----------------------------------------------------------------------------

@st.composite
def devices_strategy(draw, max_devices=4, latency=True):
    m = draw(st.integers(1, max_devices))
    speeds = draw(st.lists(st.sampled_from([1.0, 2.0, 3.0, 5.0]), min_size=m, max_size=m))
    kinds = ["CPU", "GPU", "NPU", "GPU"]
    bandwidth = draw(st.sampled_from([math.inf, 1.0, 4.0]))
    latencies = [0.0, 0.5] if latency else [0.0]
    return [Device(f"D{j}", kinds[j], s, link=Link(draw(st.sampled_from(latencies)), bandwidth))
            for j, s in enumerate(speeds)]


@st.composite
def graph_strategy(draw, max_tasks=9, edges=True, data=True):
    n = draw(st.integers(1, max_tasks))
    works = draw(st.lists(st.integers(1, 20), min_size=n, max_size=n))
    kinds = draw(st.lists(st.sampled_from([None, "CPU", "GPU", "NPU"]), min_size=n, max_size=n))
    tasks = [Task(f"t{i}", float(w), k) for i, (w, k) in enumerate(zip(works, kinds))]
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
    chosen = []
    if edges and pairs:
        chosen = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=min(len(pairs), 12)))
    amounts = draw(st.lists(st.integers(0, 6), min_size=len(chosen), max_size=len(chosen))) if data else []
    es = [(f"t{a}", f"t{b}", float(amounts[k]) if data else 0.0) for k, (a, b) in enumerate(chosen)]
    return TaskGraph(tasks, es)


fast = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])


@fast
@given(graph_strategy(), devices_strategy())
def test_every_policy_returns_a_valid_schedule_above_the_lower_bound(graph, devices):
    bound = S.lower_bound(graph, devices)
    total_speed = sum(d.speed for d in devices)
    path, _ = critical_path(graph, devices)
    assert bound >= max(path, graph.work.sum() / total_speed) - 1e-9
    for name in GRAPH_POLICIES:
        s = S.POLICIES[name](graph, devices).validate()
        assert s.makespan >= bound - 1e-9, name


@fast
@given(graph_strategy(data=False), devices_strategy(latency=False))
def test_earliest_finish_policies_never_lose_to_serial_without_transfers(graph, devices):
    # Placing a task where it finishes first is never worse than appending it to a fixed
    # device, so by induction these policies beat running everything on any one device.
    for device in devices:
        serial = S.serial(graph, devices, device=device.name).validate()
        assert serial.makespan == pytest.approx(graph.work.sum() / device.speed)
        for name in ("EFT", "LPT", "HEFT"):
            assert S.POLICIES[name](graph, devices).makespan <= serial.makespan + 1e-9, name


def test_static_round_robin_can_lose_to_serial_on_the_fast_device():
    devices = [Device("fast", speed=100.0), Device("slow", speed=1.0)]
    tasks = independent_tasks([1.0, 1.0])
    assert S.round_robin(tasks, devices).makespan == pytest.approx(1.0)
    assert S.serial(tasks, devices, device="fast").makespan == pytest.approx(0.02)


@settings(derandomize=True, database=None, max_examples=40, deadline=None)
@given(graph_strategy(max_tasks=6), devices_strategy(max_devices=3))
def test_no_heuristic_beats_the_exact_optimum(graph, devices):
    best = S.optimal(graph, devices).validate()
    for name in GRAPH_POLICIES:
        assert S.POLICIES[name](graph, devices).makespan >= best.makespan - 1e-9, name
    assert best.makespan >= S.lower_bound(graph, devices) - 1e-9


def _brute_force_independent(graph, devices):
    costs = np.array([[t.work / d.speed for d in devices] for t in graph.tasks])
    best = math.inf
    for assignment in itertools.product(range(len(devices)), repeat=len(graph.tasks)):
        loads = np.zeros(len(devices))
        for i, j in enumerate(assignment):
            loads[j] += costs[i, j]
        best = min(best, loads.max())
    return best


def _brute_force_dag(graph, devices):
    # Every order consistent with the dependencies, every assignment, each task as early as possible.
    names = [t.name for t in graph.tasks]
    best = math.inf
    for perm in itertools.permutations(range(len(names))):
        pos = {i: k for k, i in enumerate(perm)}
        if any(pos[graph.index[a]] > pos[graph.index[b]] for a, b in graph.edges):
            continue
        for assignment in itertools.product(range(len(devices)), repeat=len(names)):
            seqs = {d.name: [] for d in devices}
            for i in perm:
                seqs[devices[assignment[i]].name].append(names[i])
            best = min(best, S.execute_plan(graph, devices, seqs).makespan)
    return best


@settings(derandomize=True, database=None, max_examples=30, deadline=None)
@given(graph_strategy(max_tasks=6, edges=False), devices_strategy(max_devices=3))
def test_optimal_matches_brute_force_on_independent_tasks(graph, devices):
    assert S.optimal(graph, devices).makespan == pytest.approx(_brute_force_independent(graph, devices))


@settings(derandomize=True, database=None, max_examples=15, deadline=None)
@given(graph_strategy(max_tasks=4), devices_strategy(max_devices=2))
def test_optimal_matches_brute_force_on_task_graphs(graph, devices):
    assert S.optimal(graph, devices).makespan == pytest.approx(_brute_force_dag(graph, devices))


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


# --- the article's demo ---------------------------------------------------------------------------

def test_article_demo_numbers_match_the_article():
    report = compare_policies()
    assert f"{report.serial:.2f}" == "11.40"
    assert f"{report.parallel:.2f}" == "2.67"
    assert f"{report.speedup:.2f}" == "4.27"
    assert report.schedules["article demo"].info["preference_reroutes"] == 0


@settings(derandomize=True, database=None, max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 40), st.sampled_from(["CPU", "GPU", "NPU"])), min_size=1, max_size=40),
       st.lists(st.integers(1, 30), min_size=3, max_size=3))
def test_article_demo_and_earliest_free_equal_the_articles_own_code(tasks, speeds):
    devices = {"CPU": speeds[0], "GPU": speeds[1], "NPU": speeds[2]}
    expected = article.parallel_time(tasks, devices)
    graph = TaskGraph(Task(f"t{i}", w, k) for i, (w, k) in enumerate(tasks))
    devs = [Device(n, n, s) for n, s in devices.items()]
    demo = S.article_demo(graph, devs).validate()
    assert demo.makespan == pytest.approx(expected, rel=1e-12)
    assert demo.info["preference_reroutes"] == 0
    assert S.earliest_free(graph, devs).validate().makespan == pytest.approx(expected, rel=1e-12)


def test_optimal_beats_the_demo_on_the_article_tasks():
    tasks, devices = article_tasks(), kitchen()
    best = S.optimal(tasks, devices).validate()
    assert best.makespan == pytest.approx(2.55)   # loads 25.5/10, 51/20, 37.5/15 -> max 2.55
    assert best.makespan >= S.lower_bound(tasks, devices) == pytest.approx(114 / 45)


# --- HEFT on the published example -----------------------------------------------------------------

def test_heft_reproduces_topcuoglu_2002_worked_example():
    graph, devices = heft_paper_example()
    s = S.heft(graph, devices).validate()
    published_ranks = {"n1": 108.000, "n2": 77.000, "n3": 80.000, "n4": 80.000, "n5": 69.000, "n6": 63.333,
                       "n7": 42.667, "n8": 35.667, "n9": 44.333, "n10": 14.667}
    for name, rank in published_ranks.items():
        assert s.info["upward_rank"][name] == pytest.approx(rank, abs=1e-3)
    assert s.makespan == 80
    assert s.placement("n1") == Placement("n1", "P3", 0, 9)
    assert s.placement("n10") == Placement("n10", "P2", 73, 80)
    assert S.optimal(graph, devices).validate().makespan <= 80


# --- work stealing ---------------------------------------------------------------------------------

def test_work_stealing_balances_a_skewed_start_and_logs_each_steal():
    graph, devices = independent_tasks([1.0] * 40), identical(4)
    s = S.work_stealing(graph, devices, steal_latency=0.1, initial="first", seed=3).validate()
    assert s.info["steals"] == sum(1 for e in s.log if e.task is not None) > 0
    for event in s.log:
        if event.task is not None:
            assert s.placement(event.task).device == event.thief
            assert event.victim == "D0"
            assert s.placement(event.task).start >= event.time - 1e-12
    assert s.makespan < 40 / 2   # far better than D0 alone


def test_work_stealing_needs_no_steals_when_already_balanced():
    s = S.work_stealing(independent_tasks([1.0] * 8), identical(4), steal_latency=0.5)
    assert s.info["steals"] == 0 and s.makespan == 2


def test_work_stealing_is_deterministic_given_a_seed():
    graph = independent_tasks(np.arange(1, 61) % 7 + 1.0)
    runs = [S.work_stealing(graph, kitchen(), steal_latency=0.05, initial="first", seed=k) for k in (1, 1, 2)]
    assert np.array_equal(runs[0].device_of, runs[1].device_of) and runs[0].log == runs[1].log
    assert runs[0].log != runs[2].log


@fast
@given(graph_strategy(), devices_strategy(), st.sampled_from([0.0, 0.3]), st.sampled_from(["round_robin", "first"]))
def test_work_stealing_on_task_graphs_validates(graph, devices, latency, initial):
    S.work_stealing(graph, devices, steal_latency=latency, initial=initial).validate()


# --- graphs and schedule validation -----------------------------------------------------------------

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


def _two_tasks():
    g = TaskGraph([Task("a", 2), Task("b", 2)], [("a", "b", 3.0)])
    return g, [Device("X", link=Link(0, 1.0)), Device("Y", link=Link(0, 1.0))]


def test_validate_catches_overlap_missing_transfer_and_wrong_duration():
    g, devices = _two_tasks()
    ok = from_placements(g, devices, [Placement("a", "X", 0, 2), Placement("b", "Y", 5, 7)])
    ok.validate()
    with pytest.raises(ScheduleError, match="input from 'a' arrives at 5"):
        from_placements(g, devices, [Placement("a", "X", 0, 2), Placement("b", "Y", 4, 6)]).validate()
    with pytest.raises(ScheduleError, match="overlap on X"):
        Schedule(TaskGraph([Task("a", 2), Task("b", 2)]), devices, [0, 0], [0, 1], [2, 3]).validate()
    with pytest.raises(ScheduleError, match="runs 1 on X, but its run time there is 2"):
        from_placements(g, devices, [Placement("a", "X", 0, 1), Placement("b", "X", 1, 3)]).validate()
    with pytest.raises(ScheduleError, match="not placed"):
        from_placements(g, devices, [Placement("a", "X", 0, 2)])
    with pytest.raises(ScheduleError, match="placed twice"):
        from_placements(g, devices, [Placement("a", "X", 0, 2), Placement("a", "X", 0, 2)])


def test_schedule_metrics():
    g = independent_tasks([4.0, 2.0, 2.0])
    s = S.execute_plan(g, identical(2), {"D0": ["T0"], "D1": ["T1", "T2"]})
    assert s.makespan == 4 and list(s.busy) == [4, 4] and s.imbalance == 0
    base = S.serial(g, identical(2))
    assert s.speedup(base) == 2 and s.efficiency(base) == 1
    assert s.tasks_on("D1") == ["T1", "T2"]


def test_execute_plan_reports_a_deadlock():
    g = TaskGraph([Task("a"), Task("b")], [("a", "b")])
    with pytest.raises(ValueError, match="deadlocks"):
        S.execute_plan(g, identical(1), {"D0": ["b", "a"]})


def test_same_device_edges_cost_nothing_cross_device_edges_cost_the_transfer():
    g, devices = _two_tasks()
    same = S.execute_plan(g, devices, {"X": ["a", "b"]})
    apart = S.execute_plan(g, devices, {"X": ["a"], "Y": ["b"]})
    assert same.makespan == 4 and apart.makespan == 7


@settings(derandomize=True, database=None, max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=1, max_size=300), st.lists(st.integers(1, 4), min_size=1, max_size=9))
def test_compiled_earliest_free_equals_the_python_path(works, speeds):
    from hetlab.schedulers import _kernels

    if _kernels.earliest_free_kernel() is None:
        pytest.skip("numba not installed (hetlab[fast]); the compiled path is unavailable")
    graph = independent_tasks([float(w) for w in works])   # small integers: many exact ties
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


# --- issue 11: correctness regressions ---------------------------------------------------------------

def test_heft_with_a_zero_duration_task_never_overlaps():
    # Issue 11, item 1: a zero-length slot inserted before a later one left the slot ends unsorted and
    # the gap search skipped b's slot, putting c on [0, 2] over b's [0, 3]. One device, work 3 + 2.
    graph = TaskGraph([Task("a", 0.0), Task("b", 3.0), Task("c", 2.0)], [("a", "b")])
    s = S.heft(graph, identical(1)).validate()
    assert s.makespan == 5.0   # one device: the sum of the run times, no idle time is needed
    best = S.optimal(graph, identical(1)).validate()
    assert best.makespan == 5.0


def test_heft_with_a_zero_cost_entry_node_stays_feasible_on_random_dags():
    # The common trick of a zero-cost super source in front of every root (issue 11, item 1).
    from hetlab.tasks import random_dag

    for seed in range(20):
        g = random_dag(30, seed=seed)
        roots = [t.name for t in g.tasks if not any(dst == t.name for _, dst in g.edges)]
        graph = TaskGraph([Task("entry", 0.0), *g.tasks], [*((a, b, d) for (a, b), d in g.edges.items()),
                                                          *(("entry", r, 0.0) for r in roots)])
        devices = [Device(f"P{j}", speed=s, link=Link(0.1, 4.0)) for j, s in enumerate([1.0, 2.0, 3.0])]
        S.heft(graph, devices).validate()


def test_validate_accepts_zero_duration_tasks_touching_or_inside_others():
    # Issue 11, item 2: an instant is not an interval, so it cannot overlap anything.
    s = S.work_stealing([Task("a", 1.0), Task("z", 0.0)], identical(1)).validate()
    assert s.makespan == 1.0
    g = TaskGraph([Task("a", 2.0), Task("z", 0.0), Task("y", 0.0)])
    Schedule(g, identical(1), [0, 0, 0], [0.0, 1.0, 2.0], [2.0, 1.0, 2.0]).validate()   # inside, at the end
    Schedule(g, identical(1), [0, 0, 0], [0.0, 0.0, 0.0], [2.0, 0.0, 0.0]).validate()   # two instants at 0
    overlapping = Schedule(TaskGraph([Task("a", 2.0), Task("z", 0.0), Task("b", 2.0)]), identical(1),
                           [0, 0, 0], [0.0, 1.0, 1.0], [2.0, 1.0, 3.0])
    with pytest.raises(ScheduleError, match="'a' and 'b' overlap on D0"):   # positive runs still may not
        overlapping.validate()


def test_optimal_never_returns_an_infeasible_incumbent(monkeypatch):
    # Issue 11, item 1: optimal starts from HEFT's makespan; an infeasible HEFT schedule must not win.
    from hetlab.schedulers import exact

    graph = TaskGraph([Task("a", 0.0), Task("b", 3.0), Task("c", 2.0)], [("a", "b")])
    bogus = Schedule(graph, identical(1), [0, 0, 0], [0.0, 0.0, 0.0], [0.0, 3.0, 2.0], "HEFT")  # b, c overlap
    monkeypatch.setattr(exact, "heft", lambda g, d: bogus)
    best = S.optimal(graph, identical(1)).validate()
    assert best.makespan == 5.0


def test_a_task_placed_on_a_device_that_cannot_run_it_is_a_clear_error():
    # Issue 11, item 3: start nan / end inf before. 'b' has no time for D1, where the demo puts it.
    tasks = [Task("a", times={"D0": 1.0}), Task("b", times={"D0": 1.0})]
    with pytest.raises(ValueError, match="task 'b' on device 'D1', which cannot run it"):
        S.article_demo(tasks, identical(2))
    with pytest.raises(ValueError, match="task 'a' on device 'D1', which cannot run it"):
        S.execute_plan([Task("a", times={"D0": 1.0})], identical(2), {"D1": ["a"]})


def test_run_times_beyond_the_float_range_are_refused_not_inf_or_nan():
    # Issue 11, item 4: work 1e308 on speed 1e-10 is 1e318, above the largest float (1.8e308).
    huge = [Task("a", 1e308), Task("b", 1e308)]
    slow = [Device("x", speed=1e-10)]
    for policy in S.POLICIES.values():
        with pytest.raises(ValueError, match="task 'a' with work 1e\\+308 on device 'x'"):
            policy(huge, slow)
    with pytest.raises(ValueError, match="task 'a'"):
        S.upward_rank(huge, slow)
    # Each run time fits (1e308) but two in a chain sum past the float range: refused as a whole.
    chain = TaskGraph(huge, [("a", "b")])
    for policy in (S.heft, S.eft, S.lower_bound, S.upward_rank):
        with pytest.raises(ValueError, match="add up to inf, above 1e\\+300"):
            policy(chain, [Device("x", speed=1.0)])
    # Large but representable magnitudes give exact, finite answers: 1e298 + 1e298 on one device.
    s = S.heft(chain, [Device("x", speed=1e10)]).validate()
    assert s.makespan == pytest.approx(2e298) and math.isfinite(s.info["upward_rank"]["a"])


# --- issue 11: the bad-input contract of tasks, schedule and schedulers ----------------------------------

def test_duplicate_edges_are_rejected_not_last_wins():
    with pytest.raises(ValueError, match=r"\('a', 'b'\) appears twice"):
        TaskGraph([Task("a"), Task("b")], [("a", "b", 1.0), ("a", "b", 5.0)])


def test_schedule_device_indices_must_be_whole_numbers_in_range():
    g = TaskGraph([Task("a"), Task("b")])
    with pytest.raises(ValueError, match="device_of must hold whole device indices, got 0.9"):
        Schedule(g, identical(2), [0.9, 1.9], [0.0, 0.0], [1.0, 1.0])
    with pytest.raises(ValueError, match=r"device_of must hold device indices in \[0, 1\], got 2"):
        Schedule(g, identical(2), [0, 2], [0.0, 0.0], [1.0, 1.0])
    with pytest.raises(TypeError, match="device_of must hold integers"):
        Schedule(g, identical(2), [True, False], [0.0, 0.0], [1.0, 1.0])
    assert list(Schedule(g, identical(2), [0.0, 1.0], [0.0, 0.0], [1.0, 1.0]).device_of) == [0, 1]


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


def test_validate_rejects_a_nan_or_absurd_tolerance():
    s = S.heft(independent_tasks([1.0, 2.0]), identical(1))
    for rtol in (math.nan, -1.0, math.inf, 1.0):
        with pytest.raises(ValueError, match=r"rtol must be in \[0, 1\), got "):
            s.validate(rtol=rtol)
    # An overlapping schedule is not waved through by any accepted tolerance.
    bad = Schedule(independent_tasks([2.0, 2.0]), identical(1), [0, 0], [0.0, 1.0], [2.0, 3.0])
    with pytest.raises(ScheduleError, match="overlap"):
        bad.validate(rtol=0.1)


@pytest.mark.parametrize("graph", [None, 3, "abc", {"a": 1}, [1, 2], Task("a")])
def test_a_graph_that_is_not_a_graph_is_a_type_error_naming_graph(graph):
    for policy in (*S.POLICIES.values(), S.lower_bound, S.upward_rank):
        with pytest.raises(TypeError, match="graph must be a TaskGraph or a sequence of Task"):
            policy(graph, identical(2))


def test_empty_graphs_are_refused_by_the_schedulers():
    for policy in S.POLICIES.values():
        with pytest.raises(ValueError, match="graph must hold at least one task"):
            policy([], identical(2))
    with pytest.raises(ValueError, match="work must hold at least one number"):
        independent_tasks([])


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
    with pytest.raises(TypeError, match="sequences must map device names"):
        S.execute_plan(independent_tasks([1.0]), identical(2), ["T0"])
    with pytest.raises(ValueError, match="sequences must place every task once, task 'T1' is in no sequence"):
        S.execute_plan(independent_tasks([1.0, 1.0]), identical(2), {"D0": ["T0"]})


def test_option_types_are_checked():
    g, d = independent_tasks([1.0, 2.0]), identical(2)
    with pytest.raises(TypeError, match="compiled must be True, False or None"):
        S.earliest_free(g, d, compiled="yes")
    with pytest.raises(ValueError, match="node_limit must be in"):
        S.optimal(g, d, node_limit=0)
    with pytest.raises(TypeError, match="seed must be an integer"):
        S.work_stealing(g, d, seed=1.5)
    with pytest.raises(ValueError, match="seed must be in"):
        S.work_stealing(g, d, seed=-1)


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


def test_optimal_on_a_12_task_dag_answers_or_refuses_within_its_node_budget():
    # Issue 11, item 13: a 12-task DAG took 1.43M search nodes (57 s) under the old default limit of 2M.
    # Now the default budget is a few seconds of search and the bounds are tighter; counted in nodes, not seconds.
    from hetlab.schedulers import exact
    from hetlab.tasks import random_dag

    assert exact.NODE_LIMIT <= 250_000
    graph, devices = random_dag(12, mean_degree=1.5, data=(0.0, 5.0), seed=2), kitchen(link=Link(0.1, 10.0))
    best = S.optimal(graph, devices).validate()
    assert best.info["nodes"] <= 60_000        # 122,978 nodes before the equal-start rule and per-device bound
    for name in ("EFT", "LPT", "HEFT", "CPOP", "work stealing"):
        assert S.POLICIES[name](graph, devices).makespan >= best.makespan * (1 - 1e-12), name
    with pytest.raises(ValueError, match="optimal exceeded node_limit=1000 search nodes"):
        S.optimal(graph, devices, node_limit=1000)
