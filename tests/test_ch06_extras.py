"""Chapter 6 extras: data-parallel overlap."""

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
