"""hetlab.book.readings.ch04: the Chinese derivation of N*, the load sentence, and the readings of the U-curve
measured on this machine (prediction before the run, the fit of exercise 4.2)."""
import pytest

from hetlab.book import reference
from hetlab.book.readings.ch04 import derivation, fit_lines, load_note, u_sweep_lines
from hetlab.real.experiments import SweepReading


def test_load_note_says_busy_only_above_the_threshold():
    assert "基本空闲" in load_note(0.1) and "在忙别的事" in load_note(0.8) and "不报告负载" in load_note(None)
    with pytest.raises(ValueError, match="load"):
        load_note(-1.0)


def test_chinese_derivation_keeps_the_sympy_result():
    d = derivation()
    assert [label for label, _ in d.steps][0] == "总耗时"
    assert all(any("\u4e00" <= ch <= "\u9fff" for ch in label) for label, _ in d.steps)
    assert d.at(10_000, 1.0) == {"N_star": 100.0, "T_min": 200.0}
    assert "总耗时" in d.latex()


def _sweep(seconds):
    return SweepReading(512, 0.05, (1, 16, 32, 64, 128, 512), seconds)


def test_u_sweep_lines_read_the_valley_against_the_prediction():
    # Os = 50 us: N* = sqrt(0.05 / 50e-6) = 31.6, T(N*) = 2 sqrt(0.05 * 50e-6) = 3.16 ms
    near = u_sweep_lines(_sweep((0.0503, 0.0040, 0.0033, 0.0036, 0.0070, 0.0260)), 50e-6)
    assert "最快的是 N = 32" in near and "预测 N* = 32，T = 3.16 ms" in near and "预测落在谷底之内" in near
    assert "N = 512 时 26.0 ms（最快的 7.9 倍）" in near
    far = u_sweep_lines(_sweep((0.0503, 0.0040, 0.0036, 0.0036, 0.0030, 0.0260)), 50e-6)
    assert "最快的是 N = 128" in far and "相差 4.0 倍" in far and "再跑一次" in far
    stored = reference.load("h200")
    text = u_sweep_lines(_sweep((0.0503, 0.0040, 0.0033, 0.0036, 0.0070, 0.0260)), 50e-6, reference=stored)
    assert text.splitlines()[1].startswith("参照（H200")
    with pytest.raises(ValueError, match="round_trip"):
        u_sweep_lines(_sweep((0.05, 0.004, 0.003, 0.004, 0.007, 0.026)), 0.0)
    with pytest.raises(TypeError, match="sweep"):
        u_sweep_lines({"counts": (1,)}, 50e-6)


def test_fit_lines_compare_the_fitted_optimum_with_the_fastest_count():
    assert "相差 1.1 倍（不到 2 倍）" in fit_lines(49.0, 43.0, 48, 27e-6, 21e-6)
    far = fit_lines(49.0, 20.0, 64, 125e-6, 21e-6)
    assert "相差 3.2 倍" in far and "谷底很平" in far
    with pytest.raises(ValueError, match="os_fit"):
        fit_lines(49.0, 43.0, 48, -1.0, 21e-6)


def test_u_sweep_lines_blame_the_calibration_when_it_is_off_the_right_arm():
    # Os = 150 us: N* = sqrt(0.05 / 150e-6) = 18.3, the fastest is N = 64 (3.5x apart). The right arm's slope
    # by hand: ((7.0 - 50/512) - (2.5 - 50/64)) ms / (512 - 64) = 5.1836 ms / 448 = 11.6 us; 150 / 11.57 = 13.0
    high = u_sweep_lines(_sweep((0.0503, 0.0040, 0.0033, 0.0025, 0.0030, 0.0070)), 150e-6)
    assert "每多一份 11.6 µs" in high and "偏在标定" in high and "右臂斜率的 13.0 倍" in high
    assert "N* 偏小" in high and "再跑一次" not in high
    # Os = 4 us: N* = 111.8, the fastest is N = 16 (7.0x apart); slope ((30 - 50/512) - (4 - 50/16)) ms / 496
    # = 29.027 ms / 496 = 58.5 us, so the calibration is 4 / 58.5 = 0.07 of it: N* too large
    low = u_sweep_lines(_sweep((0.0503, 0.0040, 0.0045, 0.0060, 0.0090, 0.0300)), 4e-6)
    assert "相差 7.0 倍" in low and "每多一份 58.5 µs" in low and "只有右臂斜率的 0.07" in low
    assert "N* 偏大" in low
    # the fastest count is the largest: no right arm, so no slope line and the flat-valley verdict
    none = u_sweep_lines(_sweep((0.0503, 0.0040, 0.0036, 0.0036, 0.0030, 0.0020)), 50e-6)
    assert "右臂" not in none and "再跑一次" in none
