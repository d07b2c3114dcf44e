"""Library additions for chapters 4 and 12: grain levels, greedy makespan, and chapter 12's verdicts."""
import pytest

from hetlab.book import misconceptions as M
from hetlab.models import granularity as G


def test_grain_levels_ratio_falls_with_level():
    ratios = [lv.ratio for lv in G.GRAIN_LEVELS]
    assert [lv.level for lv in G.GRAIN_LEVELS] == ["任务级", "算子级", "指令级"]
    assert ratios[0] > ratios[1] > 1 > ratios[2]


def test_greedy_makespan_over_decomposition():
    assert G.greedy_makespan([6, 2], 2) == 6.0
    assert G.greedy_makespan([5, 1, 1, 1], 2) == 5.0
    assert G.greedy_makespan([1, 1, 1], 8) == 1.0
    with pytest.raises(ValueError, match="times"):
        G.greedy_makespan([], 2)
    with pytest.raises(ValueError, match="P"):
        G.greedy_makespan([1.0], 0)


def test_rounds_model_multiple_of_p():
    # equal tasks on P = 2: N = 3 leaves a device idle in round 2, N = 4 does not
    t3 = G.total_time_on(3, 0.040, 10e-6, 2, model="rounds")
    t4 = G.total_time_on(4, 0.040, 10e-6, 2, model="rounds")
    assert t3 == pytest.approx(3e-5 + 2 * 0.040 / 3) and t4 == pytest.approx(4e-5 + 0.020)
    assert t3 > t4


def test_pool_verdict_branches():
    assert "接近上限" in M.pool_verdict(1.0, 1.0, 0.52, 2, 8, 0.1)
    busy = M.pool_verdict(1.0, 1.0, 1.25, 2, 8, 1.2)
    assert "没有快过串行" in busy and "很忙" in busy
    assert "开销盖过" in M.pool_verdict(1.0, 1.0, 1.25, 2, 8, 0.0)
    assert "只有 1 个可用核" in M.pool_verdict(1.0, 1.0, 1.0, 1, 8, None)
    with pytest.raises(ValueError, match="serial"):
        M.pool_verdict(0.0)


def test_split_verdict_shapes():
    tub = M.split_verdict((1, 2, 4), (3.0, 1.6, 2.0), (3.0, 3.1, 3.4), (0.01, 0.02, 0.04), 2, 0.1)
    assert "浴缸" in tub and "接近理想" in tub and "计算本身变慢" in tub
    flat = M.split_verdict((1, 2, 4), (3.0, 2.9, 5.0), (3.0, 3.5, 5.0), (0.01, 0.02, 0.04), 2, 1.0)
    assert "不是浴缸" in flat and "远不到" in flat and "在忙" in flat
    with pytest.raises(ValueError, match="same length"):
        M.split_verdict((1, 2), (1.0,), (1.0, 2.0), (0.1, 0.2))


def test_amdahl_p_for_and_round_trip():
    assert M.amdahl_p_for(7.5, 8) == pytest.approx(0.99047619)
    from hetlab import amdahl
    assert amdahl(M.amdahl_p_for(7.5, 8), 8) == pytest.approx(7.5)
    with pytest.raises(ValueError, match="speedup"):
        M.amdahl_p_for(9.0, 8)
    assert M.round_trip_us(2e6) == pytest.approx(180.0)
    with pytest.raises(ValueError, match="bandwidth"):
        M.round_trip_us(1.0, 0.0)


def test_pool_verdict_thread_noise_band():
    assert "与串行相当" in M.pool_verdict(1.0, 0.95, 0.52)
    assert "测量噪声" in M.pool_verdict(1.3, 1.0, 0.7)
    assert "不符合带 GIL" in M.pool_verdict(2.0, 1.0, 1.0)
