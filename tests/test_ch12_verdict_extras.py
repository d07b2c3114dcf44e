"""Chapter 12: split_verdict must not read a slow N = 1 pool outlier as a 2x speed-up or a bathtub."""
from hetlab.book import misconceptions as M


def test_split_verdict_flags_slow_n1_outlier():
    text = M.split_verdict((1, 2, 4, 16, 600), (21.56, 11.17, 10.10, 13.49, 56.97),
                           (11.71, 12.39, 11.04, 14.48, 68.22), (0.02, 0.031, 0.046, 0.132, 10.18), 2, 1.89, " ms")
    assert "离群" in text
    assert "接近理想" not in text and "远不到" in text
    assert "不是浴缸" in text and "呈“浴缸形”" not in text


def test_split_verdict_consistent_n1_is_unchanged():
    text = M.split_verdict((1, 2, 4), (3.0, 1.6, 2.0), (3.0, 3.1, 3.4), (0.01, 0.02, 0.04), 2, 0.1)
    assert "离群" not in text and "接近理想" in text and "浴缸形" in text
