"""hetlab.schedulers.bounds: the lower bound, work and span, Brent's bound, peak width and the staged bound."""
import math

import pytest

from hetlab import schedulers as S
from hetlab.devices import Link, identical, kitchen
from hetlab.schedulers import bounds as WS
from hetlab.tasks import Task, TaskGraph, independent_tasks, random_dag, split_task
from hetlab.workloads import article_tasks, heft_paper_example


def fork_join():
    # a(1) -> b(4), c(2), d(3) -> e(1): W = 11, D = 1 + 4 + 1 = 6 (by hand)
    tasks = [Task("a", 1), Task("b", 4), Task("c", 2), Task("d", 3), Task("e", 1)]
    edges = [("a", x) for x in "bcd"] + [(x, "e") for x in "bcd"]
    return TaskGraph(tasks, edges)


def test_lower_bound_of_the_article_is_the_area():
    # 114 units of work on speeds 10 + 20 + 15: no schedule beats 114 / 45; the longest dish, 25 on the GPU, 1.25
    assert S.lower_bound(article_tasks(), kitchen()) == pytest.approx(114 / 45)


def test_lower_bound_sees_the_critical_path():
    chain = TaskGraph([Task("x", 2), Task("y", 5), Task("z", 3)], [("x", "y"), ("y", "z")])
    assert S.lower_bound(chain, identical(4)) == 10.0      # the chain; the area is only 10 / 4


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


def _dish():
    return TaskGraph([Task("wash", 1), Task("cut", 4), Task("marinate", 2), Task("stock", 3), Task("plate", 1)],
                     [("wash", x) for x in ("cut", "marinate", "stock")] +
                     [(x, "plate") for x in ("cut", "marinate", "stock")])


def test_peak_width_of_the_dish_is_three_while_average_is_below_two():
    g = _dish()
    assert WS.peak_width(g) == 3
    assert WS.parallelism(g) == pytest.approx(11 / 6)


def test_peak_width_of_a_chain_and_of_independent_tasks():
    chain = TaskGraph([Task("a", 2), Task("b", 5)], [("a", "b")])
    assert WS.peak_width(chain) == 1
    assert WS.peak_width([Task("a", 1), Task("b", 2), Task("c", 0)]) == 2     # empty task occupies no moment


@pytest.mark.parametrize("seed", range(6))
def test_a_greedy_schedule_reaches_the_span_with_peak_width_devices(seed):
    g = random_dag(14, mean_degree=1.5, work=(1.0, 9.0), data=(0.0, 0.0), seed=seed)
    p = WS.peak_width(g)
    assert S.central_queue(g, identical(p, speed=1.0)).makespan == pytest.approx(WS.span(g))
    assert p >= WS.parallelism(g) - 1e-9           # the peak is at least the average


GREEDY_ON_INDEPENDENT = ["article_demo", "earliest_free", "eft", "lpt", "heft"]


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


@pytest.mark.parametrize("policy", sorted(set(S.POLICIES) - {"article_demo"}))   # the demo takes no edges
def test_no_policy_beats_the_work_span_lower_bound_on_dags(policy):
    for seed in range(3):
        g = random_dag(10, mean_degree=1.5, data=(0.0, 0.0), seed=seed)
        for p in (2, 3):
            s = S.POLICIES[policy](g, identical(p)).validate()
            assert s.makespan >= WS.bounds(g, p).lower - 1e-9, (policy, seed, p)


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


# --- the staged bound -----------------------------------------------------------------------------------

def test_serial_stages_peel_a_diamond_completely():
    # a and b must both finish before c: {a, b} is a stage of its own, then c; nothing is left for a tail
    g = TaskGraph([Task(n, 1.0) for n in "sabct"], [("s", "a"), ("s", "b"), ("a", "c"), ("b", "c"), ("c", "t")])
    b = WS.staged_bound(g, identical(2))
    assert b.head == (("s",), ("a", "b"), ("c",)) and b.tail == ()


def test_serial_stages_stop_at_parallel_lanes():
    g = TaskGraph([Task(n, 1.0) for n in "sabcdt"],
                  [("s", "a"), ("s", "b"), ("a", "c"), ("b", "d"), ("c", "t"), ("d", "t")])
    b = WS.staged_bound(g, identical(2))
    assert (b.head, b.tail) == ((("s",),), (("t",),))


def test_split_head_is_one_stage_of_pieces():
    g = TaskGraph([Task("s", 8.0), Task("a", 1.0), Task("b", 1.0)], [("s", "a"), ("s", "b")])
    b = WS.staged_bound(split_task(g, "s", 4), identical(2))
    assert b.head == (("s#0", "s#1", "s#2", "s#3"),) and b.tail == ()


def test_staged_bound_by_hand():
    # s (work 20) then a..d (10 each) on two devices of speed 10: s alone takes 2 (one device idle),
    # then the area 40 / 20 = 2; the plain bound is max(CP 2 + 1, area 60 / 20) = 3
    g = TaskGraph([Task("s", 20.0)] + [Task(n, 10.0) for n in "abcd"], [("s", n) for n in "abcd"])
    two = identical(2, speed=10.0)
    b = WS.staged_bound(g, two)
    assert b.head == (("s",),) and b.tail == ()
    assert b.head_time == pytest.approx(2.0) and b.middle == pytest.approx(2.0) and b.total == pytest.approx(4.0)
    assert S.lower_bound(g, two) == pytest.approx(3.0)
    assert S.optimal(g, two).makespan == pytest.approx(b.total)


def test_staged_bound_never_exceeds_the_optimum_and_never_undercuts_the_plain_bound():
    devices = kitchen(link=Link(0.0, 10.0))
    for seed in range(6):
        g = random_dag(9, mean_degree=1.2, seed=seed)
        b = WS.staged_bound(g, devices)
        assert S.lower_bound(g, devices) - 1e-9 <= b.total <= S.optimal(g, devices).makespan + 1e-9
    graph, procs = heft_paper_example()
    assert WS.staged_bound(graph, procs).total <= S.optimal(graph, procs).makespan + 1e-9


def test_staged_bound_validates():
    with pytest.raises(ValueError, match="at least one task"):
        WS.staged_bound(TaskGraph([]), identical(2))
    with pytest.raises(TypeError):
        WS.staged_bound(TaskGraph([Task("a", 1.0)]), "GPU")
