"""Barrier waits, lock contention and the expected-maximum model of the wait (hetlab.models.sync)."""
import math

import numpy as np
import pytest

from hetlab.models import sync


def test_barrier_wait_is_max_minus_each():
    run = sync.barrier_run(5, 7, noise=0.5, seed=1)
    assert np.allclose(run.waits, run.times.max(axis=1, keepdims=True) - run.times)
    assert (run.waits >= 0).all() and np.allclose(run.waits.min(axis=1), 0)


def test_barriers_cost_time_only_when_work_is_uneven():
    even = sync.barrier_run(4, 10, noise=0.0)
    assert even.total == pytest.approx(10.0) and even.idle_fraction == 0.0
    uneven = sync.barrier_run(4, 10, noise=0.4, seed=2)
    assert uneven.total >= uneven.total_without_barriers
    # idle share = total waits / (workers * total), by definition
    assert uneven.idle_fraction == pytest.approx(uneven.waits.sum() / (4 * uneven.total))


def test_lock_serialises_when_there_is_no_compute():
    run = sync.lock_run(4, 5, compute=0.0, critical=1.0, noise=0.0)
    assert run.makespan == pytest.approx(20.0)     # 4 * 5 sections, one at a time
    assert run.lock_busy == pytest.approx(1.0)


def test_no_critical_section_means_no_waiting():
    run = sync.lock_run(6, 10, compute=1.0, critical=0.0, noise=0.3, seed=4)
    assert run.total_wait == 0.0


def test_one_worker_never_waits():
    run = sync.lock_run(1, 10, compute=1.0, critical=0.5, noise=0.0)
    assert run.makespan == pytest.approx(15.0) and run.total_wait == 0.0


def test_throughput_never_exceeds_what_the_lock_can_serve():
    for n in (1, 4, 16, 64):
        run = sync.lock_run(n, 20, compute=1.0, critical=0.25, noise=0.3, seed=n)
        assert run.throughput <= 1 / 0.25 + 1e-9


def test_lock_speedups_saturate_near_the_ceiling():
    s = sync.lock_speedups(16, compute=1.0, critical=0.25, noise=0.0)
    assert s[0] == pytest.approx(1.0)
    # ceiling (compute + critical) / critical = 5; with 16 workers the lock is the bottleneck
    assert s[-1] == pytest.approx(5.0, rel=0.05)
    assert s[1] == pytest.approx(2.0, rel=0.01)   # two workers hardly collide (0.25 of 1.25)


@pytest.mark.parametrize("call, message", [
    (lambda: sync.barrier_run(0, 3), "workers"),
    (lambda: sync.barrier_run(2, 3, noise=float("nan")), "noise"),
    (lambda: sync.lock_run(2, 3, compute=0.0, critical=0.0), "compute"),
    (lambda: sync.lock_run(2, 3, critical=-1.0), "critical"),
    (lambda: sync.lock_run(True, 3), "workers"),
    (lambda: sync.lock_speedups(0), "max_workers"),
])
def test_bad_input(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def test_expected_max_normal_known_values():
    assert sync.expected_max_normal(1) == 0.0
    assert sync.expected_max_normal(2) == pytest.approx(1 / math.sqrt(math.pi))
    assert sync.expected_max_normal(3) == pytest.approx(1.5 / math.sqrt(math.pi))
    z = np.random.default_rng(0).standard_normal((200_000, 8)).max(axis=1).mean()
    assert sync.expected_max_normal(8) == pytest.approx(z, abs=0.01)


def test_prediction_matches_long_simulation():
    for n, s in ((2, 0.3), (8, 0.3), (32, 1.0)):
        run = sync.barrier_run(n, 20_000, noise=s, seed=1)
        assert sync.predicted_idle_fraction(n, s) == pytest.approx(run.idle_fraction, abs=0.01)


def test_estimate_is_below_exact_and_monotone():
    for n in (2, 8, 32):
        assert sync.predicted_idle_fraction(n, 0.3, exact=False) <= sync.predicted_idle_fraction(n, 0.3) + 1e-12
    values = [sync.predicted_idle_fraction(n, 0.3) for n in (1, 2, 8, 32)]
    assert values[0] == pytest.approx(0.0, abs=1e-9) and values == sorted(values)
    assert sync.predicted_idle_fraction(8, 0.0) == 0.0


def test_mean_idle_fraction_and_validation():
    mean, sd = sync.mean_idle_fraction(8, 20, noise=0.3, seeds=5)
    runs = [sync.barrier_run(8, 20, noise=0.3, seed=k).idle_fraction for k in range(5)]
    assert mean == pytest.approx(np.mean(runs)) and sd > 0
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError):
            sync.mean_idle_fraction(8, 20, noise=0.3, seeds=bad)
    with pytest.raises((ValueError, TypeError)):
        sync.predicted_idle_fraction(0, 0.3)
    with pytest.raises((ValueError, TypeError)):
        sync.predicted_idle_fraction(4, -1.0)
