"""Granularity readings: the Chinese derivation of N* and the measured-overhead reading
(hetlab.book.readings.granularity)."""
import pytest

from hetlab.book.readings.granularity import derivation, overhead_reading


def test_chinese_derivation_keeps_the_sympy_result():
    d = derivation()
    assert [label for label, _ in d.steps][0] == "总耗时"
    assert all(any("\u4e00" <= ch <= "\u9fff" for ch in label) for label, _ in d.steps)
    assert d.at(10_000, 1.0) == {"N_star": 100.0, "T_min": 200.0}
    assert "总耗时" in d.latex()


def test_overhead_reading_branches():
    assert "量级一致" in overhead_reading(13e-6, 110e-6)
    assert "机器在忙" in overhead_reading(86e-6, 1043e-6, busy=True)
    assert "更小" in overhead_reading(3e-6, 30e-6)
    assert "差距比上表小" in overhead_reading(100e-6, 150e-6)
    with pytest.raises(ValueError, match="thread"):
        overhead_reading(0.0, 1e-4)
