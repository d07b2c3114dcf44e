import pytest

from hetlab import schedulers as S
from hetlab.devices import Device, identical
from hetlab.tasks import Task, independent_tasks


def test_policies_reject_bad_input():
    with pytest.raises(ValueError, match="device names must be unique"):
        S.eft([Task("a")], [Device("x"), Device("x")])
    with pytest.raises(ValueError, match="cannot run on any"):
        S.eft([Task("a", times={"nope": 1.0})], [Device("x")])
    with pytest.raises(ValueError, match="max_tasks"):
        S.optimal(independent_tasks([1.0] * 13), identical(2))
    with pytest.raises(ValueError, match="steal_latency must be in"):
        S.work_stealing([Task("a")], identical(2), steal_latency=-1)


# --- issue 11: the bad-input contract of tasks, schedule and schedulers ----------------------------------


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
