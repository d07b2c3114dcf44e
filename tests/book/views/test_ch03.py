"""Chapter 3's views (hetlab.book.views.ch03): the peak table, the explorers and the static figures."""
import pytest

from hetlab import plotting
from hetlab.book.views import ch03
from hetlab.models import hardware as H
from hetlab.real.readings import reading


def test_peak_table_columns_align_in_display_width():
    lines = ch03.peak_table().splitlines()
    widths = {plotting.display_width(line) for line in lines}
    assert len(widths) == 1 and len(lines) == len(H.ENGINES) + 1


def test_peak_bars_come_in_three_panels_that_never_mix_precisions():
    plotting.setup_notebook()
    fp64, fp32, tensor = ch03.peak_bars_figure()
    assert [len(ax.patches) for ax in (fp64, fp32, tensor)] == [3, 2, 3]     # every engine once
    assert all(ax.get_xscale() == "linear" for ax in (fp64, fp32, tensor))
    widths = sorted(round(p.get_width(), 2) for p in fp64.patches)
    assert widths == [2.51, 9.75, 19.49]          # EPYC 64 x 2.45 GHz x 16; A100 108 x 1.41 GHz x 64 and x 128
    assert "TFLOP/s" in tensor.get_xlabel()


def test_peak_explorer_reaches_the_a100_with_249_epyc_cores():
    # 9.746e12 / (2.45e9 x 16) = 248.6 cores: 249 give 1.00x the A100's FP64 vector peak, 3.89x the EPYC's 64
    explorer = ch03.peak_compute_explorer()
    text = explorer.update(cores=249, ghz=2.45, fma=2, lanes=4, precision="FP64")
    assert "9.76 TFLOP/s" in text and "EPYC 的 3.89 倍" in text and "1.00 倍" in text
    assert explorer.controls["ghz"].step == 0.01                 # 1.41 GHz (the A100's boost) is reachable
    assert "1.41 GHz" in explorer.update(cores=108, ghz=1.41, fma=4, lanes=8)
    assert explorer.axes.get_xscale() == "linear"


def test_roofline_figure_has_units_and_both_chips():
    plotting.setup_notebook()
    ax = ch03.roofline_figure()
    assert "TFLOP/s" in ax.get_ylabel() and ax.get_xscale() == "log"
    assert len(ax.get_legend().get_texts()) == 5


def test_offload_figure_crosses_one_at_the_breakeven_intensity():
    plotting.setup_notebook()
    ax = ch03.offload_figure()
    lines = [line for line in ax.get_lines() if len(line.get_xdata()) > 2]
    assert len(lines) == 4 and ax.get_xscale() == "log"
    x, y = lines[0].get_xdata(), lines[0].get_ydata()        # no fixed cost
    below = x[y < 1.0]
    # 12 bytes / 32 GB/s / (1/5.0176e12 - 1/19.4918e12) = 2533.9 FLOP per element
    assert 2400 < below.min() < 2700
    # the break-even is marked: a vertical line at 12 B x 211.16 FLOP/B = 2533.9 FLOP per element
    marks = [line for line in ax.get_lines() if len(line.get_xdata()) == 2 and line.get_xdata()[0] > 100]
    assert len(marks) == 1 and marks[0].get_xdata()[0] == pytest.approx(2533.9, abs=0.5)
    assert any("2,534" in text.get_text() for text in ax.texts)
    for small, large in zip(lines[1:], lines[2:]):           # n = 2^12, 2^16, 2^20 with 30 us each
        assert (small.get_ydata() >= large.get_ydata()).all()


def test_h200_one_core_matmul_from_the_stored_gemm_tiles():
    # 2 n^3 FLOP in the stored single-thread GEMM time of the Cholesky with n x n tiles
    cholesky = reading("h200")["cholesky"]
    for n, key in ((256, "n3072_b256"), (512, "n4096_b512")):
        seconds = cholesky[key]["op_costs"]["gemm"]["cpu1_s"]
        assert ch03.h200_one_core_matmul(n) == pytest.approx(2 * n**3 / seconds)
    assert 40e9 < ch03.h200_one_core_matmul(256) < ch03.h200_one_core_matmul(512) < 70e9
    with pytest.raises(ValueError, match="tile size"):
        ch03.h200_one_core_matmul(300)


def test_measured_roofline_figure_places_the_readers_point_and_the_stored_machine():
    plotting.setup_notebook()
    left, right = ch03.measured_roofline_figure(30e9, 20e9, 0.8e9, n=256)
    roof = left.get_lines()[0]
    assert roof.get_ydata().max() == pytest.approx(30.0)       # GFLOP/s: the measured matmul is the flat roof
    add = left.get_lines()[1]
    assert add.get_xdata()[0] == pytest.approx(1 / 24) and add.get_ydata()[0] == pytest.approx(0.8)
    measured = [line for line in right.get_lines() if line.get_marker() == "s"][0]
    assert max(measured.get_ydata()) == pytest.approx(60.4, abs=0.05)   # FP64 n = 4096 on the H200
    with pytest.raises(ValueError, match="bandwidth"):
        ch03.measured_roofline_figure(30e9, 0.0, 1e9)


def test_roofline_widget_reaches_the_elementwise_intensity_with_the_figure_3_3_markers():
    import math

    plotting.setup_notebook()
    explorer = ch03.roofline_explorer()
    # log10(1/12) = -1.079: a step of 0.01 lands within half a step of it (10**-1.08 = 0.0832)
    assert explorer.controls["log_intensity"].step <= 0.01
    explorer.update(log_intensity=round(math.log10(1 / 12), 2))
    assert "I = 0.0832" in explorer.text
    # the three kernels keep figure 3-3's shapes (circle, square, triangle) in the widget
    markers = [line.get_marker() for line in explorer.figure.axes[0].lines]
    assert [m for m in markers if m in ("o", "s", "^")][:3] == ["o", "s", "^"]
    legend = [t.get_text() for t in ch03.offload_figure().get_legend().get_texts()]
    assert sum("$2^{" in t for t in legend) == 3 and not any("= 2^" in t for t in legend)
