"""CPOP (Topcuoglu, Hariri & Wu, IEEE TPDS 2002): the paper's example, its ablation options, properties any
schedule has, and equality with the straightforward CPOP the gap-list engine replaced (issue 19, item 9)."""
import bisect
import heapq
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from properties.strategies import instances

from hetlab import schedulers as S
from hetlab.devices import Device, Link, identical, kitchen
from hetlab.tasks import Task, TaskGraph, comm_matrices, cost_matrix, independent_tasks, random_dag
from hetlab.workloads import heft_paper_example


@pytest.fixture(scope="module")
def paper():
    graph, procs = heft_paper_example()
    return graph, procs, S.cpop(graph, procs).validate()


def test_reproduces_the_papers_schedule_length_86(paper):
    # The paper's Fig. 4(b): CPOP schedules its ten-task example in 86 time units (HEFT: 80).
    _, _, s = paper
    assert s.makespan == pytest.approx(86.0)


def test_critical_path_and_its_processor_match_the_paper(paper):
    # |CP| = rank_u(n1) = 108 (the HEFT paper's Table); the path n1 -> n2 -> n9 -> n10 runs in
    # 14+13+18+21 = 66 on P1, 16+19+12+7 = 54 on P2 and 9+18+20+16 = 63 on P3, so P2 is chosen.
    _, _, s = paper
    assert s.info["critical_path"] == ["n1", "n2", "n9", "n10"]
    assert s.info["cp_device"] == "P2"
    assert all(s.placement(t).device == "P2" for t in s.info["critical_path"])
    for name in s.info["critical_path"]:
        assert s.info["priority"][name] == pytest.approx(108.0)
    assert max(s.info["priority"].values()) == pytest.approx(108.0)


def test_downward_ranks_by_hand(paper):
    graph, procs, _ = paper
    rd = S.downward_rank(graph, procs)
    mean = {1: 13.0, 2: 50 / 3, 3: 43 / 3}     # mean run times of n1, n2, n3 over P1..P3
    assert rd["n1"] == 0.0                      # the entry task
    assert rd["n2"] == pytest.approx(0 + mean[1] + 18)          # 31
    assert rd["n3"] == pytest.approx(0 + mean[1] + 12)          # 25
    assert rd["n7"] == pytest.approx(rd["n3"] + mean[3] + 23)   # 62.333
    # rank_d(n9) = max over n2, n4, n5 (31 + 50/3 + 16, 22 + 38/3 + 23, 24 + 35/3 + 13) = 63.667
    assert rd["n9"] == pytest.approx(max(31 + 50 / 3 + 16, 22 + 38 / 3 + 23, 24 + 35 / 3 + 13))


def test_a_chain_runs_entirely_on_the_device_fastest_for_it():
    # A chain is its own critical path: all of it goes to the device with the smallest total, 2 + 2 + 2 = 6.
    procs = [Device("A", "CPU", link=Link(0.0, 1.0)), Device("B", "GPU", link=Link(0.0, 1.0))]
    chain = TaskGraph([Task("x", times={"A": 1, "B": 2}), Task("y", times={"A": 5, "B": 2}),
                       Task("z", times={"A": 1, "B": 2})], [("x", "y", 100), ("y", "z", 100)])
    s = S.cpop(chain, procs).validate()
    assert s.info["cp_device"] == "B" and s.makespan == pytest.approx(6.0)


def test_falls_back_when_no_device_runs_the_whole_critical_path():
    procs = [Device("A", "CPU"), Device("B", "GPU")]
    chain = TaskGraph([Task("x", times={"A": 1}), Task("y", times={"B": 3})], [("x", "y")])
    s = S.cpop(chain, procs).validate()
    assert s.info["cp_device"] is None
    assert (s.placement("x").device, s.placement("y").device) == ("A", "B") and s.makespan == 4.0


@pytest.mark.parametrize("seed", range(6))
def test_random_graphs_valid_deterministic_and_above_the_lower_bound(seed):
    graph = random_dag(30, mean_degree=2.0, data=(0.0, 3.0), seed=seed)
    devices = kitchen(link=Link(0.1, 10.0))
    s = S.cpop(graph, devices).validate()
    assert s.makespan >= S.lower_bound(graph, devices) - 1e-9
    assert S.cpop(graph, devices).makespan == s.makespan
    cp = s.info["critical_path"]
    assert {s.placement(t).device for t in cp} == {s.info["cp_device"]}


def test_independent_tasks_and_empty_graph():
    s = S.cpop([Task("a", 10), Task("b", 10)], identical(2, speed=10.0)).validate()
    assert s.makespan == pytest.approx(1.0)        # one task per device
    with pytest.raises(ValueError, match="graph must hold at least one task"):   # empty input (issue 11 contract)
        S.cpop([], kitchen())
    assert "cpop" in S.POLICIES


@pytest.mark.parametrize("graph, devices, error", [(5, kitchen(), TypeError), ([], [], ValueError),
                                                   ([Task("a", 1)], 3, TypeError)])
def test_rejects_bad_inputs_naming_the_parameter(graph, devices, error):
    with pytest.raises(error, match="graph|devices"):
        S.cpop(graph, devices)


# --- ablation options (chapter 9) ------------------------------------------------------------------------

def test_cpop_defaults_are_the_papers_cpop():
    graph, procs = heft_paper_example()
    assert S.cpop(graph, procs).makespan == 86
    assert S.cpop(graph, procs, order="rank_u+rank_d", pin=True).makespan == 86


def test_cpop_without_pinning_and_with_upward_order_is_heft():
    graph, procs = heft_paper_example()
    s = S.cpop(graph, procs, order="rank_u", pin=False)
    assert s.makespan == pytest.approx(S.heft(graph, procs).makespan)


def test_cpop_rejects_bad_options():
    graph, procs = heft_paper_example()
    with pytest.raises(ValueError, match="order must be"):
        S.cpop(graph, procs, order="rank_d")
    with pytest.raises(TypeError, match="pin must be"):
        S.cpop(graph, procs, pin=1)


# --- issue 19: every magnitude, and the engine shared with HEFT ------------------------------------------

def _scaled(graph, k):
    return TaskGraph([Task(t.name, times={d: v * k for d, v in t.times.items()}) for t in graph.tasks],
                     {e: data * k for e, data in graph.edges.items()})


@pytest.mark.parametrize("k", [1e-12, 1e-6, 1e6, 1e12])
def test_the_papers_critical_path_at_every_scale(k):
    # Scaling every time and transfer by k scales every rank by k: the same path, processor and schedule.
    # (Before: an absolute 1e-9 floor put n8 on the path at k = 1e-12, and the schedule grew to 94 k.)
    graph, procs = heft_paper_example()
    s = S.cpop(_scaled(graph, k), procs).validate()
    assert s.info["critical_path"] == ["n1", "n2", "n9", "n10"] and s.info["cp_device"] == "P2"
    assert s.makespan == pytest.approx(86 * k, rel=1e-12)


def reference_cpop(graph, devices, order="rank_u+rank_d", pin=True):
    """CPOP as before issue 19: a linear scan of each device's sorted busy slots for the earliest gap.
    Ranks, the critical path and its processor come from the public results, not from hetlab's internals."""
    costs = cost_matrix(graph, devices)
    latency, inverse = comm_matrices(devices)
    info = S.cpop(graph, devices, order=order, pin=pin).info
    names = [t.name for t in graph.tasks]
    key = {"rank_u+rank_d": info["priority"], "rank_u": info["upward_rank"]}[order]
    priority = np.array([key[name] for name in names])
    cp_device = [d.name for d in devices].index(info["cp_device"]) if info["cp_device"] else -1
    on_path = {graph.index[t] for t in info["critical_path"]} if cp_device >= 0 and pin else set()
    n, m = len(names), len(devices)
    device_of, start, end = np.full(n, -1), np.zeros(n), np.zeros(n)
    slots_start, slots_end = [[] for _ in range(m)], [[] for _ in range(m)]
    missing = [len(p) for p in graph.preds]
    ready = [(-priority[i], i) for i in range(n) if missing[i] == 0]
    heapq.heapify(ready)
    while ready:
        _, i = heapq.heappop(ready)
        arrive = np.zeros(m)
        if graph.preds[i]:
            p = np.asarray(graph.preds[i])
            d = device_of[p]
            data = np.asarray(graph.pred_data[i])
            arrive = (end[p][:, None] + latency[d] + data[:, None] * inverse[d]).max(axis=0)
        best_finish, j, s = math.inf, -1, 0.0
        for dev in ([cp_device] if i in on_path else range(m)):
            c = costs[i, dev]
            if not math.isfinite(c):
                continue
            t = _earliest_gap(slots_start[dev], slots_end[dev], float(arrive[dev]), c)
            if t + c < best_finish:
                best_finish, j, s = t + c, dev, t
        if costs[i, j] > 0:
            k = bisect.bisect_left(slots_start[j], s)
            slots_start[j].insert(k, s)
            slots_end[j].insert(k, s + costs[i, j])
        device_of[i], start[i], end[i] = j, s, s + costs[i, j]
        for k in graph.succs[i]:
            missing[k] -= 1
            if missing[k] == 0:
                heapq.heappush(ready, (-priority[k], k))
    return device_of, start, end


def _earliest_gap(starts, ends, ready, duration):
    k = bisect.bisect_right(ends, ready)
    t = ready
    for a, b in zip(starts[k:], ends[k:]):
        if t + duration <= a:
            return t
        if b > t:
            t = b
    return t


def assert_same(graph, devices, **options):
    s = S.cpop(graph, devices, **options)
    device_of, start, end = reference_cpop(graph, devices, **options)
    assert np.array_equal(s.device_of, device_of)
    assert np.array_equal(s.start, start) and np.array_equal(s.end, end)
    return s.validate()


def test_the_paper_example_is_the_reference_schedule():
    assert assert_same(*heft_paper_example()).makespan == 86


@settings(derandomize=True, database=None, deadline=None, max_examples=150,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(instances(max_tasks=12, max_devices=4), st.sampled_from([{}, {"order": "rank_u"}, {"pin": False}]))
def test_equal_to_the_reference_on_random_instances(instance, options):
    # Zero-duration tasks, zero-data edges, devices that cannot run some tasks, links, magnitudes 1e-3..1e200.
    # (Not compared: times whose sum loses a whole run time in rounding; there the reference overlapped tasks.)
    graph, devices, _ = instance
    assert_same(graph, devices, **options)


@pytest.mark.parametrize("seed", range(4))
def test_equal_to_the_reference_on_random_dags_with_links(seed):
    rng = np.random.default_rng(seed)
    devices = [Device(f"P{j}", speed=float(s), link=Link(float(lat), float(bw)))
               for j, (s, lat, bw) in enumerate(zip(rng.uniform(1, 4, 5), rng.choice([0.0, 0.5], 5),
                                                     rng.uniform(2, 20, 5)))]
    assert_same(random_dag(300, mean_degree=2.5, data=(0.0, 10.0), seed=seed), devices)


@settings(derandomize=True, database=None, deadline=None, max_examples=60)
@given(st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0, 7.0]), min_size=1, max_size=40),
       st.lists(st.sampled_from([1.0, 2.0, 3.0]), min_size=1, max_size=6))
def test_independent_tasks_are_scheduled_as_heft_does(works, speeds):
    # rank_d is 0 without edges, so the priority is HEFT's rank; the critical path is the first task taken and
    # its processor the device where it finishes first. Many equal works exercise the tie-breaking.
    graph = independent_tasks(works)
    devices = [Device(f"D{j}", speed=s) for j, s in enumerate(speeds)]
    cpop, heft = S.cpop(graph, devices).validate(), S.heft(graph, devices)
    assert np.array_equal(cpop.device_of, heft.device_of) and np.array_equal(cpop.start, heft.start)
    device_of, start, _ = reference_cpop(graph, devices)
    assert np.array_equal(cpop.device_of, device_of) and np.array_equal(cpop.start, start)
