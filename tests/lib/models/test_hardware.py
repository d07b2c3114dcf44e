"""Peaks, memories, systolic arrays, occupancy and SIMT divergence (hetlab.models.hardware)."""
import math

import pytest

from hetlab.models import hardware as H
from hetlab.models.hardware import WarpDivergence, warp_divergence
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
    assert H.memory("A100 80GB SXM HBM2e").bandwidth == 2039e9
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


def test_tf32_and_int8_tensor_rows_match_datasheet():
    assert H.entry("A100", "TF32", "tensor").peak == pytest.approx(156e12, rel=0.01)
    assert H.entry("A100", "INT8", "tensor").peak == pytest.approx(624e12, rel=0.01)


def test_npu_peaks_are_vendor_figures_with_precision_and_source():
    a17 = H.npu_peak("Apple A17 Pro Neural Engine")
    assert a17.value == 35e12 and "2023" in a17.source and a17.precision
    assert H.npu_peak("Qualcomm Snapdragon X Elite Hexagon NPU").value == 45e12
    with pytest.raises(ValueError, match="chip"):
        H.npu_peak("Snapdragon 8 Gen 3")


def test_offload_times_small_elementwise_kernel():
    t = H.offload_times(2**20)
    assert t["kernel"] == pytest.approx(12 * 2**20 / 1555e9)
    assert t["copy"] == pytest.approx(12 * 2**20 / 32e9)
    assert t["ratio"] == pytest.approx(1555 / 32)
    with pytest.raises(ValueError, match="n_elements"):
        H.offload_times(0)
    with pytest.raises(ValueError, match="link"):
        H.offload_times(10, link="A100 40GB HBM2")


def test_offload_latency_is_a_fixed_cost_so_only_small_kernels_feel_it():
    # copy = L + 12 n / 32 GB/s: the fixed 30 us adds 7.6% at 2^20 elements and 0.03% at 2^30
    for n in (2**12, 2**20, 2**30):
        plain, fixed = H.offload_times(n), H.offload_times(n, latency=30e-6)
        assert fixed["copy"] == pytest.approx(plain["copy"] + 30e-6)
        assert fixed["kernel"] == plain["kernel"]
    assert H.offload_times(2**12, latency=30e-6)["copy"] > 20 * H.offload_times(2**12)["copy"]
    with pytest.raises(ValueError, match="latency"):
        H.offload_times(10, latency=-1e-6)


def test_offload_breakeven_is_an_intensity_without_latency():
    # GPU wins when f (1/P_cpu - 1/P_gpu) > b / beta_link (both sides compute-bound there): for c = a + b's
    # 12 bytes per element, f* = 12 / 32e9 / (1/5.0176e12 - 1/19.4918e12) = 2533.6, whatever n is
    from hetlab.models.roofline import kernel_time

    cpu_p, cpu_b = H.entry("EPYC 7763", "FP32").peak, H.memory("EPYC 7763 DDR4").bandwidth

    def gpu_wins(n, f):
        t = H.offload_times(n, flops_per_element=f)
        return t["copy"] + t["kernel"] < kernel_time(n * f, 12 * n, cpu_p, cpu_b)

    for n in (2**10, 2**20, 2**30):
        assert not gpu_wins(n, 2533) and gpu_wins(n, 2534)


def test_h200_datasheet_figures():
    # NVIDIA H200 datasheet (SXM, dense): FP64 34, FP64 Tensor Core 67 TFLOPS
    assert (H.H200_FP64.value, H.H200_FP64_TENSOR.value) == (34e12, 67e12)
    assert H.H200_FP64.precision.startswith("FP64") and H.H200_FP64_TENSOR.precision.startswith("FP64")
    assert H.PCIE5_X16.bandwidth == 2 * H.memory("PCIe 4.0 x16").bandwidth     # twice the lane rate of Gen4


def test_tpu_v1_paper_figure_is_the_formula_rounded():
    assert H.systolic_peak(256, 256, 0.7e9) == pytest.approx(H.TPU_V1.value, rel=0.01)
    assert H.TPU_V1.precision == "INT8"


def test_dram_bandwidth_and_phone_lpddr5():
    assert H.dram_bandwidth(6400e6, 64) == pytest.approx(51.2e9)
    assert H.dram_bandwidth(3.2e9, 64) * 8 == pytest.approx(H.memory("EPYC 7763 DDR4").bandwidth)
    assert H.PHONE_LPDDR5.bandwidth == pytest.approx(51.2e9) and "JESD209-5" in H.PHONE_LPDDR5.source
    with pytest.raises(ValueError, match="bus_bits"):
        H.dram_bandwidth(6400e6, 12)
    with pytest.raises(ValueError, match="transfers_per_s"):
        H.dram_bandwidth(0, 64)


def test_a100_resident_threads():
    assert H.A100_THREADS_PER_SM * H.entry("A100", "FP32").cores == 221_184


def test_gpu_occupancy_and_littles_law():
    o = H.gpu_occupancy(10_000, 256)
    assert (o.blocks, o.sms_used, o.warps_per_used_sm, o.warp_slots) == (40, 40, 8.0, 64)
    o = H.gpu_occupancy(10_000, 128)
    assert (o.blocks, o.sms_used, o.warps_per_used_sm) == (79, 79, 4.0)
    big = H.gpu_occupancy(10**7, 256)
    assert big.sms_used == 108 and big.warps_per_used_sm == 64
    f = H.bytes_in_flight(1555e9, 500e-9)
    assert f.total_bytes == pytest.approx(777_500) and f.per_sm_bytes == pytest.approx(777_500 / 108)
    assert f.warp_loads_per_sm == pytest.approx(777_500 / 108 / 128)
    with pytest.raises(ValueError, match="block_size"):
        H.gpu_occupancy(100, 100)
    with pytest.raises(ValueError, match="latency_s"):
        H.bytes_in_flight(1e9, 0.0)


def test_divergent_warp_runs_both_sides_one_after_the_other():
    w = warp_divergence(8, 1.0, 1.0)
    assert w.time == 2.0
    assert w.utilisation == pytest.approx((8 + 24) / (32 * 2))      # 50 %
    assert w.idle_share == pytest.approx(0.5)
    w = warp_divergence(8, 3.0, 1.0)
    assert w.time == 4.0 and w.utilisation == pytest.approx((8 * 3 + 24) / (32 * 4))


@pytest.mark.parametrize("taken", [0, 32])
def test_uniform_warp_has_no_divergence(taken):
    w = warp_divergence(taken, 2.0, 5.0)
    assert w.utilisation == 1.0
    assert w.time == (2.0 if taken == 32 else 5.0)


def test_warp_divergence_validates():
    with pytest.raises(ValueError, match="taken"):
        warp_divergence(33, 1.0, 1.0)
    with pytest.raises(ValueError, match="if_time"):
        warp_divergence(4, -1.0, 1.0)
    with pytest.raises(TypeError, match="taken"):
        warp_divergence(4.5, 1.0, 1.0)


def test_warp_divergence_record_rejects_inconsistent_fields():
    assert WarpDivergence(8, 32, 1.0, 1.0, 2.0, 0.5).utilisation == 0.5
    with pytest.raises(ValueError, match="utilisation"):
        WarpDivergence(8, 32, 1.0, 1.0, 2.0, 0.9)
    with pytest.raises(ValueError, match="width"):
        WarpDivergence(8, 0, 1.0, 1.0, 2.0, 0.5)


def test_gpu_datasheets_agree_with_the_sm_layout_and_the_a100_entries():
    # H100 SXM: 132 SMs x 4 tensor cores x 512 dense FP16 FMA per clock x 2 FLOP at 1.83 GHz (H100 whitepaper, 2022)
    assert H.GPUS["H100 SXM"].bf16_flops == pytest.approx(132 * 4 * 512 * 2 * 1.83e9, rel=1e-3)
    # the datasheets print 1,979 TFLOPS with 2:4 sparsity; dense is half
    assert H.GPUS["H200 SXM"].bf16_flops == pytest.approx(1979e12 / 2, rel=1e-3)
    a100 = H.GPUS["A100 80GB SXM"]
    assert a100.bf16_flops == H.entry("A100", "FP16/BF16", "tensor").datasheet == 312e12
    assert a100.memory_bandwidth == H.memory("A100 80GB SXM HBM2e").bandwidth == 2.039e12
    # ridge points in FLOP per byte: 312 / 2.039, 989 / 3.35, 989 / 4.8
    assert [round(g.bf16_flops / g.memory_bandwidth) for g in H.GPUS.values()] == [153, 295, 206]


def test_gpu_datasheet_refuses_a_missing_figure():
    fields = dict(name="X", bf16_flops=1e15, memory=8e10, memory_bandwidth=3e12, nvlink_bandwidth=4.5e11, source="s")
    with pytest.raises(ValueError, match="memory_bandwidth"):
        H.GPUDatasheet(**{**fields, "memory_bandwidth": 0.0})
    with pytest.raises(TypeError, match="source"):
        H.GPUDatasheet(**{**fields, "source": ""})
