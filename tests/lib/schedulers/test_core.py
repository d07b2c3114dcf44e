"""hetlab.schedulers._core: the front door every policy shares (input checks, the float-range horizon) and the
fixed per-device queues the static policies run."""
import math

import pytest

from hetlab import schedulers as S
from hetlab.devices import Device, identical
from hetlab.tasks import Task, TaskGraph, independent_tasks


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


def test_fixed_queues_run_back_to_back_from_the_previous_end():
    # Issue 19, item 8: start = cumsum - duration rounds on its own and put a task an ulp before the previous
    # end (0.1 + 0.2 - 0.2 != 0.1). Here each start is the previous end, bit for bit.
    s = S.serial(independent_tasks([0.1, 0.2, 0.3]), identical(1))
    assert s.start.tolist() == [0.0, 0.1, 0.1 + 0.2] and s.end.tolist() == [0.1, 0.1 + 0.2, 0.1 + 0.2 + 0.3]
    s = S.round_robin(independent_tasks([1e290, 5.0, 1e-300, 7.0]), identical(2))
    assert s.start.tolist() == [0.0, 0.0, 1e290, 5.0] and s.end.tolist() == [1e290, 5.0, 1e290, 12.0]


def test_devices_must_have_unique_names_and_each_task_a_device_that_can_run_it():
    with pytest.raises(ValueError, match="device names must be unique"):
        S.eft([Task("a")], [Device("x"), Device("x")])
    with pytest.raises(ValueError, match="cannot run on any"):
        S.eft([Task("a", times={"nope": 1.0})], [Device("x")])
