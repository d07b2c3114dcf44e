"""Chapter 6 extras: the barrier-wait prediction (expected maximum of N)."""
import math

import numpy as np
import pytest

from hetlab.models import barrier as BM
from hetlab.models import sync


def test_expected_max_normal_known_values():
    assert BM.expected_max_normal(1) == 0.0
    assert BM.expected_max_normal(2) == pytest.approx(1 / math.sqrt(math.pi))
    assert BM.expected_max_normal(3) == pytest.approx(1.5 / math.sqrt(math.pi))
    z = np.random.default_rng(0).standard_normal((200_000, 8)).max(axis=1).mean()
    assert BM.expected_max_normal(8) == pytest.approx(z, abs=0.01)


def test_prediction_matches_long_simulation():
    for n, s in ((2, 0.3), (8, 0.3), (32, 1.0)):
        run = sync.barrier_run(n, 20_000, noise=s, seed=1)
        assert BM.predicted_idle_fraction(n, s) == pytest.approx(run.idle_fraction, abs=0.01)


def test_estimate_is_below_exact_and_monotone():
    for n in (2, 8, 32):
        assert BM.predicted_idle_fraction(n, 0.3, exact=False) <= BM.predicted_idle_fraction(n, 0.3) + 1e-12
    values = [BM.predicted_idle_fraction(n, 0.3) for n in (1, 2, 8, 32)]
    assert values[0] == pytest.approx(0.0, abs=1e-9) and values == sorted(values)
    assert BM.predicted_idle_fraction(8, 0.0) == 0.0


def test_mean_idle_fraction_and_validation():
    mean, sd = BM.mean_idle_fraction(8, 20, noise=0.3, seeds=5)
    runs = [sync.barrier_run(8, 20, noise=0.3, seed=k).idle_fraction for k in range(5)]
    assert mean == pytest.approx(np.mean(runs)) and sd > 0
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError):
            BM.mean_idle_fraction(8, 20, noise=0.3, seeds=bad)
    with pytest.raises((ValueError, TypeError)):
        BM.predicted_idle_fraction(0, 0.3)
    with pytest.raises((ValueError, TypeError)):
        BM.predicted_idle_fraction(4, -1.0)


def test_backward_share_default_unchanged_and_caps():
    from hetlab.models.simulators import data_parallel_step
    base = data_parallel_step(1.0, 64, grad_size=1.0, bandwidth=10.0, latency=1e-4, overlap=0.8)
    same = data_parallel_step(1.0, 64, grad_size=1.0, bandwidth=10.0, latency=1e-4, overlap=0.8, backward_share=1.0)
    capped = data_parallel_step(1.0, 64, grad_size=1.0, bandwidth=10.0, latency=1e-4, overlap=0.8, backward_share=2 / 3)
    assert base == same and capped > base
    from hetlab import ring_allreduce_time
    comm = ring_allreduce_time(64, 1.0, 10.0, 1e-4)
    assert capped == pytest.approx(1 / 64 + comm - (2 / 3) / 64, abs=1e-12)
    with pytest.raises(ValueError):
        data_parallel_step(1.0, 8, grad_size=1.0, bandwidth=10.0, overlap=0.5, backward_share=1.5)


def test_barrier_view_readout_mentions_prediction():
    import matplotlib
    matplotlib.use("Agg")
    from hetlab.book.views import ch06
    explorer = ch06.barrier()
    assert explorer is not None


def test_amdahl_with_allreduce_peaks_where_the_formula_says():
    import numpy as np

    from hetlab import comm_scaling as CS

    n = np.arange(1, 1025)
    s = CS.amdahl_with_allreduce(0.99, n)
    best = int(n[np.argmax(s)])
    assert abs(best - CS.peak_devices(0.99)) < 1.0
    assert s[0] == 1.0 and s[-1] < s.max() and np.all(s <= __import__("hetlab").amdahl(0.99, n) + 1e-12)
    assert CS.peak_devices(0.99, latency=1e-2) < CS.peak_devices(0.99)      # larger alpha: peak moves left
    assert CS.peak_devices(0.99, compute_time=0.1) == 1.0                     # comm never pays off
    with pytest.raises(ValueError, match="latency"):
        CS.amdahl_with_allreduce(0.9, 4, latency=-1.0)


def test_copy_compute_pipeline_hides_the_shorter_stage():
    from hetlab import comm_scaling as CS

    assert CS.copy_compute_pipeline(8, 1.0, 3.0) == (32.0, 4.0 + 7 * 3.0)
    assert CS.copy_compute_pipeline(1, 1.0, 3.0) == (4.0, 4.0)
    with pytest.raises(ValueError, match="batches"):
        CS.copy_compute_pipeline(0)
