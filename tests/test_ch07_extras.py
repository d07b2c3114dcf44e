"""Chapter 7 extras: heterogeneous baselines and speed-weighted efficiency; chapter 7 static figures."""
import pytest

from hetlab import het_metrics as M
from hetlab.book.views import ch07
from hetlab.devices import Device, identical
from hetlab.workloads import skewed_tasks


def _mixed():
    return [Device("GPU", "GPU", 10.0)] + [Device(f"CPU{i}", "CPU", 2.0) for i in range(4)]


def test_weighted_efficiency_by_hand():
    assert M.speed_weighted_efficiency(18.0, 10.0, _mixed()) == pytest.approx(1.0)
    assert M.speed_weighted_efficiency(9.0, 10.0, _mixed()) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="devices"):
        M.speed_weighted_efficiency(1.0, 1.0, [])
    with pytest.raises(ValueError, match="makespan"):
        M.speed_weighted_efficiency(1.0, 0.0, _mixed())


def test_hetero_metrics_baselines_and_identities():
    m = M.hetero_metrics(skewed_tasks(20, spread=0.5, seed=1), _mixed())
    assert m.speedup_vs_slowest == pytest.approx(5 * m.speedup_vs_fastest)
    assert m.naive_efficiency_slowest > 1 > m.weighted_efficiency > m.naive_efficiency_fastest
    assert m.capacity == pytest.approx(1.8)
    assert m.speed_weighted_utilisation == pytest.approx(m.weighted_efficiency)
    assert m.weighted_efficiency <= 1 + 1e-12


def test_identical_devices_all_efficiencies_agree():
    m = M.hetero_metrics(skewed_tasks(24, spread=0.5, seed=2), identical(4, 10.0))
    assert m.weighted_efficiency == pytest.approx(m.naive_efficiency_fastest) == pytest.approx(m.utilisation)


def test_hetero_metrics_rejects_unknown_policy():
    with pytest.raises(ValueError, match="policy"):
        M.hetero_metrics(skewed_tasks(4, seed=1), _mixed(), policy="nope")


def test_static_figures_draw():
    import matplotlib.pyplot as plt
    for ax in (ch07.throughput_utilisation_figure(), ch07.split_figure(), ch07.efficiency_figure()):
        assert ax.get_title()
        plt.close(ax.figure)


def test_metrics_readout_when_still_rising():
    text = ch07.metrics().update(tasks=96, spread=0.5)
    assert "尚未走平" in text and "只剩" not in text


def test_conflict_start_matches_sweep():
    from hetlab import device_sweep as D
    jobs = skewed_tasks(32, spread=0.5, seed=1)
    n_star = M.conflict_start(jobs)
    assert n_star == pytest.approx(float(jobs.work.sum() / jobs.work.max()))
    rows = D.device_sweep(jobs, range(1, 33))
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
