"""The roofline model and kernel intensities (hetlab.models.roofline)."""
import math

import numpy as np
import pytest

from hetlab.models import roofline as R

PEAK, BW = 19.5e12, 1.555e12   # A100 40 GB: FP32 peak (datasheet) and HBM2 bandwidth (datasheet)


def test_ridge_point_is_where_the_two_roofs_meet():
    ridge = R.ridge_point(PEAK, BW)
    assert ridge == pytest.approx(19.5 / 1.555)                # 12.54 FLOP/byte by hand
    assert R.attainable(ridge, PEAK, BW) == pytest.approx(PEAK)
    assert R.attainable(ridge / 2, PEAK, BW) == pytest.approx(PEAK / 2)   # half the intensity, half the speed
    assert R.attainable(ridge * 10, PEAK, BW) == pytest.approx(PEAK)      # flat roof


def test_attainable_is_monotone_and_vectorised():
    i = np.logspace(-3, 3, 50)
    a = R.attainable(i, PEAK, BW)
    assert a.shape == i.shape and np.all(np.diff(a) >= 0) and a.max() == PEAK
    assert R.attainable(0, PEAK, BW) == 0.0


def test_kernel_intensities_by_hand():
    # c = a + b in FP32: 1 FLOP per element, 3 arrays of 4 bytes -> 1/12 FLOP/byte
    assert R.elementwise_intensity() == pytest.approx(1 / 12)
    # a*x + y (axpy) in FP64: 2 FLOPs, 3 arrays of 8 bytes -> 1/12
    assert R.elementwise_intensity(2, 3, 8) == pytest.approx(1 / 12)
    # 1024 x 1024 FP32 matmul: 2*1024^3 FLOPs over 3*1024^2*4 bytes = 2048/12
    assert R.matmul_intensity(1024) == pytest.approx(2048 / 12)
    assert R.memory_bound(R.elementwise_intensity(), PEAK, BW)
    assert not R.memory_bound(R.matmul_intensity(1024), PEAK, BW)
    assert R.memory_bound(R.matmul_intensity(8), PEAK, BW)          # tiny matmuls are memory-bound too


def test_kernel_time_takes_the_slower_of_compute_and_traffic():
    n = 2**26                        # a + b on 64 Mi FP32 elements: 768 MiB of traffic
    t = R.kernel_time(n, 12 * n, PEAK, BW)
    assert t == pytest.approx(12 * n / BW)
    assert R.kernel_time(2e12, 1.0, PEAK, BW) == pytest.approx(2e12 / PEAK)


@pytest.mark.parametrize("call, match", [
    (lambda: R.attainable(-1, PEAK, BW), "intensity"),
    (lambda: R.attainable(math.inf, PEAK, BW), "intensity"),
    (lambda: R.attainable([], PEAK, BW), "intensity"),
    (lambda: R.attainable(1, 0, BW), "peak"),
    (lambda: R.attainable(1, PEAK, math.nan), "bandwidth"),
    (lambda: R.ridge_point(PEAK, -1), "bandwidth"),
    (lambda: R.matmul_intensity(0), "n"),
    (lambda: R.elementwise_intensity(operands=0), "operands"),
    (lambda: R.kernel_time(math.inf, 1, PEAK, BW), "flops"),
    (lambda: R.kernel_time(-1, 1, PEAK, BW), "flops"),
])
def test_bad_values_raise_value_error_naming_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("call, match", [
    (lambda: R.attainable("1", PEAK, BW), "intensity"),
    (lambda: R.attainable(1, True, BW), "peak"),
    (lambda: R.matmul_intensity(2.0), "n"),
    (lambda: R.memory_bound([1, 2], PEAK, BW), "intensity"),
])
def test_bad_types_raise_type_error(call, match):
    with pytest.raises(TypeError, match=match):
        call()


def test_dense_layer_intensity():
    assert R.dense_layer_intensity(4096, 4096) == pytest.approx(2 * 4096**2 / (4096**2 + 2 * 4096))
    # a 1x1 convolution is a dense layer with batch = pixels; FP32 (4 bytes) quarters the intensity
    conv = R.dense_layer_intensity(64, 64, batch=3136)
    assert conv == pytest.approx(2 * 3136 * 64 * 64 / (64 * 64 + 2 * 3136 * 64))
    assert R.dense_layer_intensity(64, 64, batch=3136, bytes_per_value=4) == pytest.approx(conv / 4)
    with pytest.raises(ValueError, match="batch"):
        R.dense_layer_intensity(4, 4, batch=0)
    with pytest.raises(ValueError, match="bytes_per_value"):
        R.dense_layer_intensity(4, 4, bytes_per_value=0)


def test_llm_iteration_costs_follow_flops_and_bytes():
    c = R.llm_iteration_costs(13e9, layers=40, hidden=5120, peak_flops=312e12, mfu=0.5, bandwidth=2.039e12, mbu=0.6)
    assert math.isclose(c["prefill_per_token"], 2 * 13e9 / (0.5 * 312e12))          # 0.167 ms per token
    assert math.isclose(c["step_base"], 2 * 13e9 / (0.6 * 2.039e12))
    assert c["kv_bytes_per_token"] == 2 * 40 * 5120 * 2
    assert math.isclose(c["step_per_sequence"], c["kv_bytes_per_token"] * 250 / (0.6 * 2.039e12))
    assert c["kv_capacity"] == int((80e9 * 0.9 - 26e9) // c["kv_bytes_per_token"])
    # physically plausible: the implied prefill rate never exceeds the peak
    assert 2 * 13e9 / c["prefill_per_token"] <= 312e12


@pytest.mark.parametrize("kwargs, match", [({"mfu": 0.0}, "mfu"), ({"mfu": 1.5}, "mfu"), ({"mbu": 2}, "mbu"),
                                           ({"reserve": 1.0}, "reserve"), ({"memory": 20e9}, "memory"),
                                           ({"layers": 0}, "layers")])
def test_llm_iteration_costs_rejects_bad_inputs(kwargs, match):
    args = dict(layers=40, hidden=5120)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        R.llm_iteration_costs(13e9, **args)
