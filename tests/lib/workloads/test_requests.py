"""Request streams for the serving simulation (hetlab.workloads.requests)."""
import numpy as np
import pytest

from hetlab.workloads import requests as R


def test_workload_is_seeded_and_bursty():
    a, b = R.bursty_requests(5, 100, seed=3), R.bursty_requests(5, 100, seed=3)
    assert np.array_equal(a.arrivals, b.arrivals) and np.array_equal(a.output, b.output)
    assert (a.prompt >= 1).all() and (np.diff(a.arrivals) >= 0).all()


def test_workload_rejects_bad_sizes():
    with pytest.raises(ValueError, match="rate"):
        R.bursty_requests(-1, 10)
    with pytest.raises(ValueError, match="at most"):
        R.bursty_requests(1e6, 1e6)
    with pytest.raises(ValueError, match="every"):
        R.skewed_requests(4, every=0)


def test_bursty_arrivals_are_seeded_sorted_and_near_the_expected_rate():
    a = R.bursty_arrivals(100, 200.0, burst_factor=10, burst_share=0.1, seed=4)
    assert np.all(np.diff(a) >= 0) and a.min() >= 0 and a.max() < 200
    assert np.array_equal(a, R.bursty_arrivals(100, 200.0, burst_factor=10, burst_share=0.1, seed=4))
    expected = 100 * (0.9 + 0.1 * 10) * 200
    assert abs(a.size - expected) < 0.15 * expected
    with pytest.raises(ValueError, match="burst_share must be in"):
        R.bursty_arrivals(1, 1, burst_share=1.0)


@pytest.mark.parametrize("call, name", [
    (lambda: R.bursty_arrivals(1e12, 1e12), "rate"),                           # was a MemoryError
    (lambda: R.bursty_arrivals(5.0, 2.0, seed=-1), "seed"),                    # numpy's message named no parameter
    (lambda: R.bursty_arrivals(5.0, 2.0, mean_burst=1e-300), "mean_burst"),
])
def test_bad_arrival_input_is_refused_by_name(call, name):
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    assert name in str(info.value)
