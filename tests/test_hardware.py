import math

import pytest

from hetlab.models import hardware as H
from hetlab.tasks import Task, execution_time


@pytest.mark.parametrize("e", [e for e in H.ENGINES if e.datasheet], ids=lambda e: f"{e.chip}-{e.precision}-{e.engine}")
def test_formula_reproduces_every_printed_datasheet_peak(e):
    # the datasheet rounds to 3 significant figures (9.746 -> 9.7, 311.9 -> 312)
    assert e.peak == pytest.approx(e.datasheet, rel=0.01)


def test_epyc_7763_fp64_at_base_clock_by_hand():
    e = H.entry("EPYC 7763", "FP64")
    assert e.flops_per_cycle == 16                     # 2 FMA pipes x 4 FP64 lanes x 2
    assert e.peak == pytest.approx(64 * 2.45e9 * 16)   # 2.5088e12
    assert H.entry("EPYC 7763", "FP32").peak == pytest.approx(2 * e.peak)


def test_same_precision_ratios():
    fp64 = H.entry("A100", "FP64").peak / H.entry("EPYC 7763", "FP64").peak
    fp32 = H.entry("A100", "FP32").peak / H.entry("EPYC 7763", "FP32").peak
    assert 3.5 < fp64 < 4.5 and 3.5 < fp32 < 4.5      # ~4x at the same precision, not two orders


def test_memory_bandwidths():
    assert H.memory("A100 40GB HBM2").bandwidth == 1555e9
    assert H.memory("A100 80GB HBM2e").bandwidth == 2039e9
    assert H.memory("EPYC 7763 DDR4").bandwidth == pytest.approx(204.8e9)   # 8 channels x 25.6 GB/s


def test_systolic_array_peak_matches_tpu_v1():
    # 65,536 cells x 2 ops x 0.7 GHz = 91.75e12; Jouppi et al. 2017 print "92 TOPS"
    assert H.systolic_peak(256, 256, 0.7e9) == pytest.approx(92e12, rel=0.005)


def test_systolic_utilisation():
    assert H.systolic_utilisation(512, 256, 128, 128) == 1.0
    assert H.systolic_utilisation(1, 1024, 128, 128) == pytest.approx(1 / 128)   # elementwise: one row
    assert H.systolic_utilisation(130, 128, 128, 128) == pytest.approx(130 / 256)


def test_specialised_kitchen_npu_is_fast_on_matmul_and_conv():
    cpu, gpu, npu = H.specialised_kitchen()
    for op in ("matmul", "conv"):
        dish = Task(op, 30, op=op)
        assert execution_time(dish, npu) < execution_time(dish, cpu)
        assert npu.speed_for(op) > npu.speed
    control = Task("c", 30, op="control")
    assert min(H.specialised_kitchen(), key=lambda d: execution_time(control, d)).kind == "CPU"


@pytest.mark.parametrize("call, exc", [
    (lambda: H.flops_per_cycle(0, 4), ValueError),
    (lambda: H.flops_per_cycle(2, 4.0), TypeError),
    (lambda: H.peak_flops(64, -1, 16), ValueError),
    (lambda: H.peak_flops(64, math.inf, 16), ValueError),
    (lambda: H.peak_flops(True, 1e9, 16), TypeError),
    (lambda: H.entry("A100", "FP8"), ValueError),
    (lambda: H.memory("SRAM"), ValueError),
    (lambda: H.systolic_peak(0, 4, 1e9), ValueError),
    (lambda: H.systolic_utilisation(1, 1, 0, 4), ValueError),
])
def test_bad_inputs(call, exc):
    with pytest.raises(exc):
        call()
