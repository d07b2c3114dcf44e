"""Library additions for chapters 4 and 12: grain levels, the rounds model."""
import pytest

from hetlab.models import granularity as G


def test_grain_levels_ratio_falls_with_level():
    ratios = [lv.ratio for lv in G.GRAIN_LEVELS]
    assert [lv.level for lv in G.GRAIN_LEVELS] == ["任务级", "算子级", "指令级"]
    assert ratios[0] > ratios[1] > 1 > ratios[2]


def test_rounds_model_multiple_of_p():
    # equal tasks on P = 2: N = 3 leaves a device idle in round 2, N = 4 does not
    t3 = G.total_time_on(3, 0.040, 10e-6, 2, model="rounds")
    t4 = G.total_time_on(4, 0.040, 10e-6, 2, model="rounds")
    assert t3 == pytest.approx(3e-5 + 2 * 0.040 / 3) and t4 == pytest.approx(4e-5 + 0.020)
    assert t3 > t4
