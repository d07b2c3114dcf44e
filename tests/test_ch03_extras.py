"""Chapter 3 extras: TF32/INT8 tensor rows, vendor NPU peaks, offload times."""
import pytest

from hetlab.book.views import ch03
from hetlab.models import hardware as H


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


def test_peak_table_columns_align_in_display_width():
    lines = ch03.peak_table().splitlines()
    widths = {ch03._width(line) for line in lines}
    assert len(widths) == 1 and len(lines) == len(H.ENGINES) + 1


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


def test_dense_layer_intensity():
    assert H.dense_layer_intensity(4096, 4096) == pytest.approx(2 * 4096**2 / (4096**2 + 2 * 4096))
    # a 1x1 convolution is a dense layer with batch = pixels; FP32 (4 bytes) quarters the intensity
    conv = H.dense_layer_intensity(64, 64, batch=3136)
    assert conv == pytest.approx(2 * 3136 * 64 * 64 / (64 * 64 + 2 * 3136 * 64))
    assert H.dense_layer_intensity(64, 64, batch=3136, bytes_per_value=4) == pytest.approx(conv / 4)
    with pytest.raises(ValueError, match="batch"):
        H.dense_layer_intensity(4, 4, batch=0)
    with pytest.raises(ValueError, match="bytes_per_value"):
        H.dense_layer_intensity(4, 4, bytes_per_value=0)


def test_a100_resident_threads():
    assert H.A100_THREADS_PER_SM * H.entry("A100", "FP32").cores == 221_184


def test_static_figures_have_chinese_titles_and_units():
    from hetlab import plotting
    plotting.setup_notebook()
    ax = ch03.roofline_figure()
    assert "TFLOP/s" in ax.get_ylabel() and ax.get_xscale() == "log"
    assert len(ax.get_legend().get_texts()) == 5
    ax = ch03.peak_bars_figure()
    assert len(ax.patches) == 8 and "TFLOP/s" in ax.get_xlabel()


def test_gpu_occupancy_and_littles_law():
    import pytest as _pt

    from hetlab.models import hardware as _H
    o = _H.gpu_occupancy(10_000, 256)
    assert (o.blocks, o.sms_used, o.warps_per_used_sm, o.warp_slots) == (40, 40, 8.0, 64)
    o = _H.gpu_occupancy(10_000, 128)
    assert (o.blocks, o.sms_used, o.warps_per_used_sm) == (79, 79, 4.0)
    big = _H.gpu_occupancy(10**7, 256)
    assert big.sms_used == 108 and big.warps_per_used_sm == 64
    f = _H.bytes_in_flight(1555e9, 500e-9)
    assert f.total_bytes == _pt.approx(777_500) and f.per_sm_bytes == _pt.approx(777_500 / 108)
    assert f.warp_loads_per_sm == _pt.approx(777_500 / 108 / 128)
    with _pt.raises(ValueError, match="block_size"):
        _H.gpu_occupancy(100, 100)
    with _pt.raises(ValueError, match="latency_s"):
        _H.bytes_in_flight(1e9, 0.0)
