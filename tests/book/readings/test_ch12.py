"""hetlab.book.readings.ch12: the readings of chapter 12's measured cells follow the direction of the data.

Each case is a measured table (archived runs included) whose right reading is decided by hand from the numbers.
"""
import pytest

from hetlab.book.readings import ch12 as m
from hetlab.book.readings.ch04 import load_note


def test_load_note_says_busy_only_above_the_threshold():
    assert "基本空闲" in load_note(0.1) and "在忙别的事" in load_note(0.8) and "不报告负载" in load_note(None)
    with pytest.raises(ValueError, match="load"):
        load_note(-1.0)


def test_split_verdict_slower_says_slower_not_machine_busy_when_idle():
    out = m.split_verdict((1, 2, 4), (13.70, 14.22, 8.17), (16.0, 16.1, 16.3), (0.3, 0.6, 1.2), 2, 0.33, " ms")
    assert "变慢" in out and "1/0." not in out
    assert "机器此刻很忙" not in out and "离群" in out
    assert "反而比“纯计算 + 派发”" in out and "测量波动" in out


def test_split_verdict_blames_busy_machine_only_when_busy():
    out = m.split_verdict((1, 2, 4), (10.0, 9.0, 9.5), (10.0, 10.0, 10.0), (0.1, 0.2, 0.4), 2, 2.0)
    assert "机器此刻很忙" in out
    idle = m.split_verdict((1, 2, 4), (10.0, 9.0, 9.5), (10.0, 10.0, 10.0), (0.1, 0.2, 0.4), 2, 0.1)
    assert "机器此刻很忙" not in idle


def test_split_verdict_speedup_wording():
    out = m.split_verdict((1, 2, 4), (3.0, 1.6, 2.0), (3.0, 3.1, 3.4), (0.01, 0.02, 0.04), 2, 0.1)
    assert "加速比 1.88x" in out and "接近理想" in out


def test_pool_spread_above_bound_is_noise():
    out = m.pool_spread_verdict((0.202, 0.281, 0.283), (0.25, 0.253, 0.26), (0.134, 0.138, 0.14), 2, 8, 0.3)
    assert "超过了模型上限" in out and "接近上限" not in out
    assert "1.46x" in out   # serial minimum / process median


def test_split_verdict_superlinear_is_noise():
    out = m.split_verdict((1, 2, 4), (47.35, 9.89, 15.11), (31.08, 11.01, 15.86), (0.08, 0.03, 0.05), 2, 1.8, " ms")
    assert "超过了理想的 2 倍" in out and "接近理想" not in out


def test_split_verdict_flags_slow_n1_outlier():
    text = m.split_verdict((1, 2, 4, 16, 600), (21.56, 11.17, 10.10, 13.49, 56.97),
                           (11.71, 12.39, 11.04, 14.48, 68.22), (0.02, 0.031, 0.046, 0.132, 10.18), 2, 1.89, " ms")
    assert "离群" in text
    assert "接近理想" not in text and "远不到" in text
    assert "不是浴缸" in text and "呈“浴缸形”" not in text


def test_split_verdict_consistent_n1_is_unchanged():
    text = m.split_verdict((1, 2, 4), (3.0, 1.6, 2.0), (3.0, 3.1, 3.4), (0.01, 0.02, 0.04), 2, 0.1)
    assert "离群" not in text and "接近理想" in text and "浴缸形" in text


def test_split_verdict_shapes():
    tub = m.split_verdict((1, 2, 4), (3.0, 1.6, 2.0), (3.0, 3.1, 3.4), (0.01, 0.02, 0.04), 2, 0.1)
    assert "浴缸" in tub and "接近理想" in tub and "计算本身变慢" in tub
    flat = m.split_verdict((1, 2, 4), (3.0, 2.9, 5.0), (3.0, 3.5, 5.0), (0.01, 0.02, 0.04), 2, 1.0)
    assert "不是浴缸" in flat and "远不到" in flat and "在忙" in flat
    with pytest.raises(ValueError, match="same length"):
        m.split_verdict((1, 2), (1.0,), (1.0, 2.0), (0.1, 0.2))


def test_split_verdict_counts_the_cores_used_and_hedges_a_slowdown():
    out = m.split_verdict((1, 2, 4), (12.0, 13.1, 15.1), (14.3, 15.7, 18.3), (0.04, 0.1, 0.3), 2, 0.37, " ms")
    assert "同时用上 1.20 个核" in out and "争抢内存带宽" in out and "没有真正空出来" in out


def test_split_verdict_slow_n1_reading_alone_makes_no_bathtub():
    # archived busy-machine run: pool(1) is 28 % above kernel + dispatch, just under the outlier bar
    out = m.split_verdict((1, 2, 4, 16, 600), (43.12, 35.53, 35.38, 49.96, 249.69), (33.38, 35.45, 49.47, 53.40, 267.0),
                          (0.185, 0.171, 0.225, 0.466, 28.8), 2, 1.69, " ms")
    assert "浴缸形" not in out and "不是浴缸" in out


def test_pool_spread_verdict_noise_only_when_overlapping():
    overlap = m.pool_spread_verdict((1.0, 1.1, 0.9), (1.05, 0.95, 1.0), (0.5, 0.6, 0.55), load=0.1)
    assert "波动之内" in overlap
    apart = m.pool_spread_verdict((1.4, 1.5, 1.45), (1.0, 1.05, 1.02), (0.7, 0.75, 0.72), load=0.1)
    assert "超出了重复测量的波动" in apart and "波动之内" not in apart
    slower = m.pool_spread_verdict((1.0, 1.02, 1.01), (1.3, 1.35, 1.32), (0.5, 0.52, 0.51), load=0.1)
    assert "比串行还慢" in slower
    with pytest.raises(ValueError, match="same length"):
        m.pool_spread_verdict((1.0,), (1.0, 1.0), (1.0,))
    with pytest.raises(ValueError, match="serial"):
        m.pool_spread_verdict((), (1.0,), (1.0,))
