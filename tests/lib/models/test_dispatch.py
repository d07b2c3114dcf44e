"""hetlab.models.dispatch: the central queue that pays a dispatch cost per decision, against the static plan."""
import pytest

import hetlab
from hetlab import schedulers as S
from hetlab.devices import kitchen
from hetlab.models import dispatch as DC
from hetlab.models import dynamics as R
from hetlab.workloads import skewed_tasks


def _orders():
    return skewed_tasks(24, spread=0.8, seed=7), kitchen()


def test_zero_overhead_is_the_dynamic_queue_of_compare_under_variance():
    g, d = _orders()
    run = R.compare_under_variance(g, d, noise=0.3, seed=0)
    a = R.actual_graph(g, d, noise=0.3, seed=0)
    s = S.central_queue(a, d, order=R.largest_first(g, d), overhead=0.0)
    assert s.makespan == run.dynamic.makespan


def test_overhead_delays_every_task_and_validates():
    g, d = _orders()
    base = S.central_queue(g, d, overhead=0.0)
    slow = S.central_queue(g, d, overhead=0.1).validate()
    assert slow.makespan > base.makespan
    assert slow.makespan <= base.makespan + 0.1 * len(g.tasks)


def test_the_crossing_moves_right_with_overhead():
    g, d = _orders()
    grid = [round(0.05 * k, 2) for k in range(21)]
    crossings = [DC.crossing_noise(DC.overhead_sweep(g, d, overhead=o, noises=grid, seeds=10)) for o in (0.0, 0.1)]
    assert all(c is not None for c in crossings) and crossings[0] < crossings[1]
    point = DC.overhead_sweep(g, d, overhead=0.0, noises=[0.0], seeds=3)[0]
    assert point.gap == pytest.approx(point.static - point.dynamic) and point.seeds == 3


def test_seeds_validation():
    g, d = _orders()
    with pytest.raises(ValueError):
        DC.overhead_sweep(g, d, overhead=0.0, noises=[0.1], seeds=0)


def test_decision_counts_fast_device_decides_most():
    orders, devices = _orders()
    zero = DC.decision_counts(orders, devices, overhead=0.0)
    assert zero.delay == 0 and sum(zero.decisions) == 24
    d = DC.decision_counts(orders, devices, overhead=0.02)
    # the GPU (fastest) decides most, more than its n/m = 8 share; each device pays its own decisions
    assert max(d.base_decisions) == d.base_decisions[1] > 8
    with pytest.raises(ValueError, match="overhead"):
        DC.decision_counts(orders, devices, overhead=-1)


def test_crossing_noise_interpolates_between_grid_points():
    pts = [DC.OverheadPoint(0.0, 1.0, 1.2, 0, 1), DC.OverheadPoint(0.1, 1.0, 1.1, 0, 1),
           DC.OverheadPoint(0.2, 1.3, 1.0, 1, 1)]
    assert abs(DC.crossing_noise(pts) - (0.1 + 0.1 * 0.1 / 0.4)) < 1e-12
    assert DC.crossing_noise(pts[:2]) is None and DC.crossing_noise([]) is None
    assert DC.crossing_noise(pts[2:]) == 0.2
    with pytest.raises(TypeError, match="points"):
        DC.crossing_noise([1.0])


def test_capacity_bound_holds_and_reduces_to_lower_bound():
    g, d = _orders()
    zero = DC.decision_counts(g, d, overhead=0.0)
    assert DC.capacity_bound(g, d, decisions=zero.decisions) == pytest.approx(S.lower_bound(g, d))
    for overhead in (0.02, 0.05, 0.1, 0.5):
        c = DC.decision_counts(g, d, overhead=overhead)
        bound = DC.capacity_bound(g, d, decisions=c.decisions, overhead=overhead)
        assert bound <= c.makespan + 1e-9
        speeds = [x.speed for x in d]
        expected = (hetlab.total_work(g) + overhead * sum(s * n for s, n in zip(speeds, c.decisions))) / sum(speeds)
        assert bound == pytest.approx(expected)


def test_capacity_bound_default_decisions():
    g, d = _orders()
    c = DC.decision_counts(g, d, overhead=0.1)
    assert DC.capacity_bound(g, d, overhead=0.1) == DC.capacity_bound(g, d, decisions=c.decisions, overhead=0.1)


def test_capacity_bound_rejects_bad_input():
    g, d = _orders()
    with pytest.raises(ValueError, match="decisions"):
        DC.capacity_bound(g, d, decisions=[1, 2])
    with pytest.raises(ValueError, match="decisions"):
        DC.capacity_bound(g, d, decisions=[1, 2, 3])
    with pytest.raises(ValueError, match="decisions"):
        DC.capacity_bound(g, d, decisions=[-1, 20, 5])
    with pytest.raises(TypeError, match="decisions"):
        DC.capacity_bound(g, d, decisions=[1.5, 20, 2.5])
    with pytest.raises(ValueError, match="overhead"):
        DC.capacity_bound(g, d, decisions=[8, 8, 8], overhead=-1.0)
    timed = hetlab.TaskGraph([hetlab.Task("a", 1.0, times={"CPU": 1.0, "GPU": 5.0, "NPU": 1.0})])
    with pytest.raises(ValueError, match="work / speed"):
        DC.capacity_bound(timed, d, decisions=[1, 0, 0])
