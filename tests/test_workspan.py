import math

import pytest

from hetlab import schedulers as S
from hetlab.devices import Device, Link, identical
from hetlab.schedulers import bounds as WS
from hetlab.tasks import Task, TaskGraph, independent_tasks, random_dag


def fork_join():
    # a(1) -> b(4), c(2), d(3) -> e(1): W = 11, D = 1 + 4 + 1 = 6 (by hand)
    tasks = [Task("a", 1), Task("b", 4), Task("c", 2), Task("d", 3), Task("e", 1)]
    edges = [("a", x) for x in "bcd"] + [(x, "e") for x in "bcd"]
    return TaskGraph(tasks, edges)


def test_work_span_and_brent_bound_by_hand():
    g = fork_join()
    assert WS.work(g) == 11 and WS.span(g) == 6
    assert WS.parallelism(g) == pytest.approx(11 / 6)
    assert WS.brent_bound(g, 2) == pytest.approx(11 / 2 + 6)
    # at speed 2 every time halves
    assert WS.work(g, speed=2) == 5.5 and WS.span(g, speed=2) == 3
    b = WS.bounds(g, 4)
    assert (b.lower, b.upper) == (6, pytest.approx(11 / 4 + 6))


def test_chain_has_no_parallelism_and_independent_tasks_span_is_the_longest():
    chain = TaskGraph([Task("x", 2), Task("y", 5), Task("z", 3)], [("x", "y"), ("y", "z")])
    assert WS.work(chain) == WS.span(chain) == 10 and WS.parallelism(chain) == 1
    flat = independent_tasks([2, 5, 3])
    assert WS.span(flat) == 5 and WS.work(flat) == 10


def test_greedy_on_one_device_takes_the_work_and_on_many_devices_the_span():
    for seed in range(5):
        g = random_dag(30, seed=seed)
        one = WS.greedy(g, identical(1)).validate()
        assert one.makespan == pytest.approx(WS.work(g))
        # with a device per task nothing ever waits for a device: an as-soon-as-possible schedule
        many = WS.greedy(g, identical(30)).validate()
        assert many.makespan == pytest.approx(WS.span(g))


def test_grahams_worst_case_is_reached():
    # p(p-1) unit tasks then one task of length p, listed last: greedy finishes the unit tasks at
    # p-1, then runs the long one: 2p - 1, while the optimum is p and W/P + D = p + p = 2p.
    for p in (2, 3, 5):
        g = independent_tasks([1.0] * (p * (p - 1)) + [float(p)])
        s = WS.greedy(g, identical(p)).validate()
        assert s.makespan == pytest.approx(2 * p - 1)
        assert s.makespan <= WS.brent_bound(g, p)
        assert S.lpt(g, identical(p)).makespan == pytest.approx(p)   # longest first reaches the optimum


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("p", [1, 2, 3, 7])
def test_greedy_respects_both_bounds_on_random_dags(seed, p):
    g = random_dag(40, mean_degree=2.0, seed=seed)
    s = WS.greedy(g, identical(p)).validate()
    b = WS.bounds(g, p)
    assert b.lower - 1e-9 <= s.makespan <= b.upper + 1e-9


GREEDY_ON_INDEPENDENT = ["article demo", "earliest free", "EFT", "LPT", "HEFT"]


@pytest.mark.parametrize("policy", sorted(S.POLICIES))
@pytest.mark.parametrize("p", [2, 3, 5])
def test_every_policy_respects_the_lower_bound_and_greedy_ones_the_upper(policy, p):
    for seed in range(3):
        g = independent_tasks([1 + (7 * k + seed) % 9 for k in range(11)])
        devices = identical(p, speed=2.0)
        s = S.POLICIES[policy](g, devices).validate()
        b = WS.bounds(g, p, speed=2.0)
        assert s.makespan >= b.lower - 1e-9, policy
        if policy in GREEDY_ON_INDEPENDENT:
            assert s.makespan <= b.upper + 1e-9, policy


def test_bad_inputs_name_the_parameter():
    g = fork_join()
    with pytest.raises(ValueError, match="n_devices must be in"):
        WS.brent_bound(g, 0)
    with pytest.raises(TypeError, match="n_devices must be an integer"):
        WS.bounds(g, True)
    with pytest.raises(TypeError, match="n_devices must be an integer"):
        WS.brent_bound(g, 2.5)
    with pytest.raises(ValueError, match="speed"):
        WS.work(g, speed=math.nan)
    with pytest.raises(ValueError, match="speed"):
        WS.span(g, speed=-1)
    with pytest.raises(ValueError, match="at least one task"):
        WS.work(TaskGraph([]))
    with pytest.raises(TypeError, match="graph must be"):
        WS.work("abc")
    with pytest.raises(ValueError, match="times or op"):
        WS.span([Task("m", 3, op="matmul")])
    slow = [Device("A", link=Link(latency=1.0)), Device("B", link=Link(latency=1.0))]
    with pytest.raises(ValueError, match="free links"):
        WS.greedy(g, slow)


@pytest.mark.parametrize("policy", sorted(set(S.POLICIES) - {"article demo"}))   # the demo takes no edges
def test_no_policy_beats_the_work_span_lower_bound_on_dags(policy):
    for seed in range(3):
        g = random_dag(10, mean_degree=1.5, data=(0.0, 0.0), seed=seed)
        for p in (2, 3):
            s = S.POLICIES[policy](g, identical(p)).validate()
            assert s.makespan >= WS.bounds(g, p).lower - 1e-9, (policy, seed, p)
