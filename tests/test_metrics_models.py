"""Baselines on heterogeneous devices and device sweeps."""
import numpy as np
import pytest

from hetlab import device_sweep as D
from hetlab import metrics as B
from hetlab import schedulers as S
from hetlab.devices import kitchen
from hetlab.tasks import independent_tasks
from hetlab.workloads import skewed_tasks


def test_kitchen_capacity_by_hand():
    # speeds 10, 20, 15: in CPU units 1 + 2 + 1.5 = 4.5; in GPU units 0.5 + 1 + 0.75 = 2.25
    rows = B.baseline_table(S.lpt(independent_tasks([45.0] * 3), kitchen()))
    cap = {r.base_device: r.capacity for r in rows}
    assert cap["CPU"] == pytest.approx(4.5) and cap["GPU"] == pytest.approx(2.25)


def test_fair_efficiency_is_the_same_for_every_baseline_and_at_most_one():
    s = S.eft(skewed_tasks(20, seed=4), kitchen())
    rows = B.baseline_table(s)
    eff = [r.efficiency for r in rows]
    assert np.allclose(eff, eff[0]) and eff[0] <= 1 + 1e-12
    assert eff[0] == pytest.approx(S.lower_bound(s.graph, s.devices) / s.makespan)
    assert max(r.naive_efficiency for r in rows) > min(r.naive_efficiency for r in rows)


def test_sweep_utilisation_equals_efficiency_and_throughput_rises():
    rows = D.device_sweep(skewed_tasks(32, spread=0.5, seed=1), [1, 2, 4, 8, 16, 32])
    assert all(r.utilisation == pytest.approx(r.efficiency) for r in rows)
    assert rows[0].utilisation == pytest.approx(1.0)
    assert all(b.throughput >= a.throughput - 1e-9 for a, b in zip(rows, rows[1:]))
    assert rows[-1].utilisation < rows[2].utilisation
    for r in rows:
        assert r.idle_busy == pytest.approx((1 - r.utilisation) / r.utilisation)


def test_sweep_hits_the_largest_task():
    g = independent_tasks([50.0, 10.0, 10.0, 10.0])       # one task is half the work
    rows = D.device_sweep(g, [2, 4, 8], speed=1.0)
    assert all(r.makespan == pytest.approx(50.0) for r in rows)   # no schedule beats the largest task
    assert rows[-1].utilisation == pytest.approx(80 / (8 * 50))


@pytest.mark.parametrize("call, message", [
    (lambda: D.device_sweep(skewed_tasks(3), [0]), "counts"),
    (lambda: D.device_sweep(skewed_tasks(3), [2], policy="nope"), "policy"),
    (lambda: B.baseline_table("x"), "schedule"),
])
def test_bad_input(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()
