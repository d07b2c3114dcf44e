import math

import numpy as np
import pytest

from hetlab import amdahl
from hetlab.strong_scaling import best_device_count, speedup_with_allreduce, step_time


def test_without_communication_it_is_amdahls_law():
    n = np.array([1, 2, 8, 64, 1024])
    assert np.allclose(speedup_with_allreduce(0.9, n, grad_bytes=0, latency=0), amdahl(0.9, n))


def test_step_time_by_hand_at_1024_devices():
    # (1 - p) + p / N + 2 (N - 1) latency + 2 (N - 1) / N * S / B, with S = 0.5 GB, B = 25 GB/s, 20 us
    by_hand = 0.05 + 0.95 / 1024 + 2 * 1023 * 20e-6 + 2 * 1023 / 1024 * 0.5e9 / 25e9
    assert step_time(0.95, 1024) == pytest.approx(by_hand, rel=1e-12)
    assert step_time(0.95, 1) == 1.0          # one device needs no all-reduce


def test_best_count_matches_the_calculus_optimum():
    # T(N) = const + (p - 2S/B) / N + 2 latency N  =>  N* = sqrt((p - 2S/B) / (2 latency)) ~ 150.8
    n_star = math.sqrt((0.95 - 2 * 0.5e9 / 25e9) / (2 * 20e-6))
    assert best_device_count(0.95) in (math.floor(n_star), math.ceil(n_star))
    # past the optimum more devices make the step slower, which Amdahl's law never predicts
    assert speedup_with_allreduce(0.95, 1024) < speedup_with_allreduce(0.95, 151) < amdahl(0.95, 1024)


def test_no_latency_means_more_devices_never_hurt_when_compute_dominates():
    assert best_device_count(0.95, max_devices=512, latency=0) == 512


@pytest.mark.parametrize("kwargs, match", [
    (dict(p=1.5, n_devices=4), "p must be in"), (dict(p=0.9, n_devices=0), "n_devices"),
    (dict(p=0.9, n_devices=2.5), "n_devices must be whole"), (dict(p=float("nan"), n_devices=2), "p"),
    (dict(p=0.9, n_devices=2, bandwidth=0), "bandwidth"), (dict(p=0.9, n_devices=2, latency=-1), "latency"),
    (dict(p=0.9, n_devices=2, grad_bytes=float("inf")), "grad_bytes"),
])
def test_bad_input_names_the_parameter(kwargs, match):
    with pytest.raises(ValueError, match=match):
        step_time(**kwargs)


def test_best_device_count_checks_its_range():
    with pytest.raises(ValueError, match="max_devices must be in"):
        best_device_count(0.9, max_devices=0)
    with pytest.raises(TypeError, match="max_devices must be an integer"):
        best_device_count(0.9, max_devices=2.0)
