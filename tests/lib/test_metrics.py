"""hetlab.metrics: baselines and capacity on mixed devices, device sweeps, the conflict start, batching.

Expected values are hand computations (the kitchen's speeds 10, 20, 15), identities that hold for any schedule
(E = lower_bound / T for every baseline), or a plain scan.
"""
import numpy as np
import pytest

from hetlab import metrics as M
from hetlab import schedulers as S
from hetlab.devices import Device, identical, kitchen
from hetlab.tasks import Task, independent_tasks
from hetlab.workloads import skewed_tasks


def _mixed():
    return [Device("GPU", "GPU", 10.0)] + [Device(f"CPU{i}", "CPU", 2.0) for i in range(4)]


# --- baselines and capacity on mixed devices ------------------------------------------------------------------------

def test_kitchen_capacity_by_hand():
    # speeds 10, 20, 15: in CPU units 1 + 2 + 1.5 = 4.5; in GPU units 0.5 + 1 + 0.75 = 2.25
    rows = M.baseline_table(S.lpt(independent_tasks([45.0] * 3), kitchen()))
    cap = {r.base_device: r.capacity for r in rows}
    assert cap["CPU"] == pytest.approx(4.5) and cap["GPU"] == pytest.approx(2.25)
    assert M.capacity(independent_tasks([45.0] * 3), kitchen(), "NPU") == pytest.approx(10 / 15 + 20 / 15 + 1)


def test_capacity_counts_affinity_through_the_serial_times():
    # the GPU is 4x a CPU on matmul and as fast on control: with one task of each, 10 work units each,
    # T_serial(CPU) = 1 + 1 = 2, T_serial(GPU) = 0.25 + 1 = 1.25, so C_CPU = 1 + 2 / 1.25 = 2.6
    tasks = [Task("m", 10.0, op="matmul"), Task("c", 10.0, op="control")]
    devs = [Device("CPU", "CPU", 10.0), Device("GPU", "GPU", 10.0, {"matmul": 4.0})]
    assert M.capacity(tasks, devs, "CPU") == pytest.approx(2.6)
    with pytest.raises(ValueError, match="baseline"):
        M.capacity(tasks, devs, "NPU")


def test_fair_efficiency_is_the_same_for_every_baseline_and_at_most_one():
    s = S.eft(skewed_tasks(20, seed=4), kitchen())
    rows = M.baseline_table(s)
    eff = [r.efficiency for r in rows]
    assert np.allclose(eff, eff[0]) and eff[0] <= 1 + 1e-12
    assert eff[0] == pytest.approx(S.lower_bound(s.graph, s.devices) / s.makespan)
    assert max(r.naive_efficiency for r in rows) > min(r.naive_efficiency for r in rows)


def test_hetero_metrics_baselines_and_identities():
    m = M.hetero_metrics(skewed_tasks(20, spread=0.5, seed=1), _mixed())
    assert m.speedup_vs_slowest == pytest.approx(5 * m.speedup_vs_fastest)      # GPU 10 against a CPU core 2
    assert m.naive_efficiency_slowest > 1 > m.weighted_efficiency > m.naive_efficiency_fastest
    assert m.capacity == pytest.approx(1.8)                                      # (10 + 4 * 2) / 10
    assert m.speed_weighted_utilisation == pytest.approx(m.weighted_efficiency)
    assert m.weighted_efficiency <= 1 + 1e-12


def test_identical_devices_all_efficiencies_agree():
    m = M.hetero_metrics(skewed_tasks(24, spread=0.5, seed=2), identical(4, 10.0))
    assert m.weighted_efficiency == pytest.approx(m.naive_efficiency_fastest) == pytest.approx(m.utilisation)


def test_hetero_metrics_takes_a_scheduling_function():
    jobs = skewed_tasks(12, seed=3)
    assert M.hetero_metrics(jobs, _mixed(), policy=S.eft).makespan == pytest.approx(S.eft(jobs, _mixed()).makespan)
    with pytest.raises(TypeError, match="policy"):
        M.hetero_metrics(jobs, _mixed(), policy="lpt")
    with pytest.raises(ValueError, match="affinity"):
        M.hetero_metrics(jobs, kitchen(affinity=True))


# --- identical devices: sweeps, the conflict start, batching --------------------------------------------------------

def test_sweep_utilisation_equals_efficiency_and_throughput_rises():
    rows = M.device_sweep(skewed_tasks(32, spread=0.5, seed=1), [1, 2, 4, 8, 16, 32])
    assert all(r.utilisation == pytest.approx(r.efficiency) for r in rows)
    assert rows[0].utilisation == pytest.approx(1.0)
    assert all(b.throughput >= a.throughput - 1e-9 for a, b in zip(rows, rows[1:]))
    assert rows[-1].utilisation < rows[2].utilisation
    for r in rows:
        assert r.idle_busy == pytest.approx((1 - r.utilisation) / r.utilisation)


def test_sweep_hits_the_largest_task():
    g = independent_tasks([50.0, 10.0, 10.0, 10.0])       # one task is half the work
    rows = M.device_sweep(g, [2, 4, 8], speed=1.0)
    assert all(r.makespan == pytest.approx(50.0) for r in rows)   # no schedule beats the largest task
    assert rows[-1].utilisation == pytest.approx(80 / (8 * 50))


def test_conflict_start_matches_sweep():
    jobs = skewed_tasks(32, spread=0.5, seed=1)
    n_star = M.conflict_start(jobs)
    assert n_star == pytest.approx(float(jobs.work.sum() / jobs.work.max()))
    rows = M.device_sweep(jobs, range(1, 33))
    t_max = jobs.work.max() / 10
    assert all(r.makespan > t_max + 1e-9 for r in rows if r.n_devices <= n_star)
    with pytest.raises(ValueError, match="graph"):
        M.conflict_start([])


def test_batch_latency_tradeoff():
    pts = M.batch_latency([1, 4, 16, 64], setup=8.0, per_item=1.0)
    assert [p.latency for p in pts] == [9.0, 12.0, 24.0, 72.0]
    thr = [p.throughput for p in pts]
    assert thr == sorted(thr) and thr[-1] < 1.0
    with pytest.raises(ValueError, match="batch_sizes"):
        M.batch_latency([0], 1.0, 1.0)
    with pytest.raises(ValueError, match="setup"):
        M.batch_latency([1], 0.0, 1.0)


@pytest.mark.parametrize("call, message", [
    (lambda: M.device_sweep(skewed_tasks(3), [0]), "counts"),
    (lambda: M.device_sweep(skewed_tasks(3), [2], policy="nope"), "policy"),
    (lambda: M.baseline_table("x"), "schedule"),
])
def test_bad_input(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()
