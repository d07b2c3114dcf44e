"""hetlab.schedule: the Schedule result type, its figures of merit and validate()."""
import math

import pytest

from hetlab import schedulers as S
from hetlab.devices import Device, Link, identical
from hetlab.schedule import Placement, Schedule, ScheduleError, from_placements
from hetlab.tasks import Task, TaskGraph, independent_tasks


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


def test_schedule_device_indices_must_be_whole_numbers_in_range():
    g = TaskGraph([Task("a"), Task("b")])
    with pytest.raises(ValueError, match="device_of must hold whole device indices, got 0.9"):
        Schedule(g, identical(2), [0.9, 1.9], [0.0, 0.0], [1.0, 1.0])
    with pytest.raises(ValueError, match=r"device_of must hold device indices in \[0, 1\], got 2"):
        Schedule(g, identical(2), [0, 2], [0.0, 0.0], [1.0, 1.0])
    with pytest.raises(TypeError, match="device_of must hold integers"):
        Schedule(g, identical(2), [True, False], [0.0, 0.0], [1.0, 1.0])
    assert list(Schedule(g, identical(2), [0.0, 1.0], [0.0, 0.0], [1.0, 1.0]).device_of) == [0, 1]


def test_validate_rejects_a_nan_or_absurd_tolerance():
    s = S.heft(independent_tasks([1.0, 2.0]), identical(1))
    for rtol in (math.nan, -1.0, math.inf, 1.0):
        with pytest.raises(ValueError, match=r"rtol must be in \[0, 1\), got "):
            s.validate(rtol=rtol)
    # An overlapping schedule is not waved through by any accepted tolerance.
    bad = Schedule(independent_tasks([2.0, 2.0]), identical(1), [0, 0], [0.0, 1.0], [2.0, 3.0])
    with pytest.raises(ScheduleError, match="overlap"):
        bad.validate(rtol=0.1)


# --- issue 19, item 7: the tolerance is local to the quantities compared -----------------------------------

def test_one_long_task_elsewhere_does_not_hide_an_overlap():
    # Review reproduction 8: with rtol x max(end) = 1e-9 x 1e12 = 1000, a 0.5 overlap of two 1-long tasks passed.
    bad = Schedule(TaskGraph([Task("a", 1.0), Task("b", 1.0), Task("huge", 1e12)]), identical(2),
                   [0, 0, 1], [0.0, 0.5, 0.0], [1.0, 1.5, 1e12])
    with pytest.raises(ScheduleError, match=r"'a' and 'b' overlap on D0: \[0, 1\] and \[0.5, 1.5\]"):
        bad.validate()


def test_one_long_task_elsewhere_does_not_hide_an_early_start():
    # b needs a's 500 data units over a unit-bandwidth link: it may start at 1 + 500 = 501, not at 1.
    devices = [Device(f"D{j}", link=Link(0.0, 1.0)) for j in range(3)]
    graph = TaskGraph([Task("a", 1.0), Task("b", 1.0), Task("huge", 1e12)], [("a", "b", 500.0)])
    bad = Schedule(graph, devices, [0, 1, 2], [0.0, 1.0, 0.0], [1.0, 2.0, 1e12])
    with pytest.raises(ScheduleError, match="'b' starts at 1 before its input from 'a' arrives at 501"):
        bad.validate()
    Schedule(graph, devices, [0, 1, 2], [0.0, 501.0, 0.0], [1.0, 502.0, 1e12]).validate()


def test_one_long_task_elsewhere_does_not_hide_a_wrong_run_time():
    bad = Schedule(TaskGraph([Task("a", 1.0), Task("huge", 3e10)]), identical(2), [0, 1], [0.0, 0.0], [11.0, 3e10])
    with pytest.raises(ScheduleError, match="'a' runs 11 on D0, but its run time there is 1"):
        bad.validate()


def test_validate_allows_the_rounding_of_large_times_and_rtol_of_each_run():
    # At 1e12 the float spacing is 2**-13 (1.2e-4): a 1e-3 task there ends a few spacings later, whatever the rest.
    start = 1e12
    g = TaskGraph([Task("first", start), Task("small", 1e-3)])
    Schedule(g, identical(1), [0, 0], [0.0, start], [start, start + 1e-3]).validate()
    # rtol is relative to each run: 1e-10 off a run time of 1 passes at rtol 1e-9, 1e-8 off does not.
    g = independent_tasks([1.0])
    Schedule(g, identical(1), [0], [0.0], [1.0 + 1e-10]).validate()
    with pytest.raises(ScheduleError, match="runs 1 on D0"):
        Schedule(g, identical(1), [0], [0.0], [1.0 + 1e-8]).validate()
    Schedule(g, identical(1), [0], [0.0], [1.0 + 1e-8]).validate(rtol=1e-7)


def test_a_read_only_sequence_is_kept_as_the_log():
    # Work stealing hands a lazy sequence of events; a list becomes a tuple; a string is no log.
    g = independent_tasks([1.0])
    assert Schedule(g, identical(1), [0], [0.0], [1.0], log=["x"]).log == ("x",)
    lazy = range(3)
    assert Schedule(g, identical(1), [0], [0.0], [1.0], log=lazy).log is lazy
    with pytest.raises(TypeError, match="log must be a tuple of policy events"):
        Schedule(g, identical(1), [0], [0.0], [1.0], log="steals")


def test_a_task_on_a_device_that_cannot_run_it_is_refused_whatever_the_tolerance():
    # 'a' has a time for D0 only. (With a tolerance of rtol times the run time, rtol x inf must not wave it through.)
    s = Schedule(TaskGraph([Task("a", times={"D0": 1.0})]), identical(2), [1], [0.0], [1.0])
    for rtol in (0.0, 1e-9, 0.5):
        with pytest.raises(ScheduleError, match="'a' is on D1, which cannot run it"):
            s.validate(rtol=rtol)
    s.validate(check_durations=False)     # a measured run is not checked against run times


def test_unknown_names_are_errors_that_say_which_name():
    s = S.heft(independent_tasks([1.0, 2.0]), identical(2))
    with pytest.raises(ValueError, match="task must name a task of the graph .* got 'zz'"):
        s.placement("zz")
    with pytest.raises(KeyError):   # still a KeyError for code that looks names up
        s.graph.task("zz")
    with pytest.raises(ValueError, match=r"device must be one of \['D0', 'D1'\], got 'GPU'"):
        s.tasks_on("GPU")
