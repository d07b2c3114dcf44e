"""Chapter 6 extras: the all-reduce scaling formulas and data-parallel overlap."""

import numpy as np
import pytest


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


def test_amdahl_with_allreduce_peaks_where_the_formula_says():

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
