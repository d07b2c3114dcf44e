"""Chapter 12: verdict wording follows the direction of the data."""
from hetlab.book import misconceptions as m


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
