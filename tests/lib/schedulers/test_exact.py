"""hetlab.schedulers.exact: the optimum by branch and bound, against brute force and every heuristic."""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from properties.strategies import devices_strategy, graph_strategy

from hetlab import schedulers as S
from hetlab.devices import Device, Link, identical, kitchen
from hetlab.schedule import Schedule
from hetlab.tasks import Task, TaskGraph, independent_tasks, random_dag
from hetlab.workloads import article_tasks

GRAPH_POLICIES = [S.earliest_free, S.round_robin, S.block, S.by_affinity, S.eft, S.lpt, S.work_stealing, S.heft,
                  S.cpop]


@settings(derandomize=True, database=None, max_examples=40, deadline=None)
@given(graph_strategy(max_tasks=6), devices_strategy(max_devices=3))
def test_no_heuristic_beats_the_exact_optimum(graph, devices):
    best = S.optimal(graph, devices).validate()
    for policy in GRAPH_POLICIES:
        assert policy(graph, devices).makespan >= best.makespan - 1e-9, policy.__name__
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


def test_optimal_beats_the_demo_on_the_article_tasks():
    tasks, devices = article_tasks(), kitchen()
    best = S.optimal(tasks, devices).validate()
    assert best.makespan == pytest.approx(2.55)   # loads 25.5/10, 51/20, 37.5/15 -> max 2.55
    assert best.makespan >= S.lower_bound(tasks, devices) == pytest.approx(114 / 45)


def test_optimal_never_returns_an_infeasible_incumbent(monkeypatch):
    # Issue 11, item 1: optimal starts from HEFT's makespan; an infeasible HEFT schedule must not win.
    from hetlab.schedulers import exact

    graph = TaskGraph([Task("a", 0.0), Task("b", 3.0), Task("c", 2.0)], [("a", "b")])
    bogus = Schedule(graph, identical(1), [0, 0, 0], [0.0, 0.0, 0.0], [0.0, 3.0, 2.0], "HEFT")  # b, c overlap
    monkeypatch.setattr(exact, "heft", lambda g, d: bogus)
    best = S.optimal(graph, identical(1)).validate()
    assert best.makespan == 5.0


def test_optimal_on_a_12_task_dag_answers_or_refuses_within_its_node_budget():
    # Issue 11, item 13: a 12-task DAG took 1.43M search nodes (57 s) under the old default limit of 2M.
    # Now the default budget is a few seconds of search and the bounds are tighter; counted in nodes, not seconds.
    from hetlab.schedulers import exact
    assert exact.NODE_LIMIT <= 250_000
    graph, devices = random_dag(12, mean_degree=1.5, data=(0.0, 5.0), seed=2), kitchen(link=Link(0.1, 10.0))
    best = S.optimal(graph, devices).validate()
    assert best.info["nodes"] <= 60_000        # 122,978 nodes before the equal-start rule and per-device bound
    for policy in (S.eft, S.lpt, S.heft, S.cpop, S.work_stealing):
        assert policy(graph, devices).makespan >= best.makespan * (1 - 1e-12), policy.__name__
    with pytest.raises(ValueError, match="optimal exceeded node_limit=1000 search nodes"):
        S.optimal(graph, devices, node_limit=1000)


# --- issue 19, item 10: the search is as deep as the graph, never the Python stack --------------------------

def test_1200_independent_tasks_on_one_device_do_not_overflow_the_stack():
    # Review reproduction 11: RecursionError at depth 1,000. One device runs all 1,200 unit tasks back to back.
    s = S.optimal(independent_tasks([1.0] * 1200), [Device("d")], max_tasks=1200).validate()
    assert s.makespan == 1200.0 and s.info["nodes"] == 1201     # one node per task plus the root


def test_a_3000_task_search_on_two_devices_finds_the_even_split():
    # 3,000 unit tasks on two identical devices: 1,500 each, the load bound, proved on one path of the search.
    s = S.optimal(independent_tasks([1.0] * 3000), identical(2), max_tasks=3000).validate()
    assert s.makespan == 1500.0


def test_a_1200_task_chain_is_searched_to_its_full_depth(monkeypatch):
    # With every heuristic's schedule replaced by a feasible one that idles between tasks (makespan 2 * 1200 - 1),
    # the search must walk the chain to its end: one option per level on one device, 1,200 levels, makespan 1200.
    from hetlab.schedulers import exact

    n = 1200
    chain = TaskGraph([Task(f"c{i}", 1.0) for i in range(n)], [(f"c{i}", f"c{i + 1}") for i in range(n - 1)])
    idle = Schedule(chain, identical(1), [0] * n, [2.0 * i for i in range(n)], [2.0 * i + 1 for i in range(n)])
    for name in ("lpt", "eft", "heft", "cpop"):
        monkeypatch.setattr(exact, name, lambda g, d: idle)
    s = S.optimal(chain, identical(1), max_tasks=n).validate()
    assert s.makespan == n and s.info["nodes"] == n + 1


def test_the_search_visits_the_nodes_of_a_recursive_search(monkeypatch):
    # Driving the same search generators by plain recursion (as the search ran before) visits the same nodes.
    from hetlab.schedulers import exact

    instances = [(random_dag(12, mean_degree=1.5, data=(0.0, 5.0), seed=2), kitchen(link=Link(0.1, 10.0))),
                 (independent_tasks(np.random.default_rng(5).integers(1, 20, 12).astype(float)), kitchen())]
    driven = [S.optimal(g, d) for g, d in instances]

    def recursive(search, root):
        for child in search(*root):
            recursive(search, child)

    monkeypatch.setattr(exact, "_depth_first", recursive)
    for schedule, (g, d) in zip(driven, instances):
        again = S.optimal(g, d)
        assert again.info["nodes"] == schedule.info["nodes"] > 1
        assert np.array_equal(again.start, schedule.start) and np.array_equal(again.device_of, schedule.device_of)


def test_options_are_checked():
    g, d = independent_tasks([1.0, 2.0]), identical(2)
    with pytest.raises(ValueError, match="node_limit must be in"):
        S.optimal(g, d, node_limit=0)
    with pytest.raises(ValueError, match="max_tasks"):
        S.optimal(independent_tasks([1.0] * 13), identical(2))
