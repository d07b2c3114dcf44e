"""Chapter 13's whiteboard readout on gradient buckets (hetlab.book.readings.ch13)."""
import pytest

from hetlab.book.readings import ch13 as readings


def test_bucket_readout_says_whether_the_link_keeps_up():
    # 25 MB of 3 GB: 120 buckets; 1.26 ms latency + 0.98 ms bytes = 2.24 ms per bucket < 0.3 s / 120 = 2.5 ms
    keeps = readings.bucket_readout(25)
    assert keeps.startswith("桶 25 MB（120 个）") and "链路跟得上" in keeps and "2.24 ms" in keeps
    # 12.5 MB: 240 buckets of 1.75 ms, one every 1.25 ms: the link falls behind and more shows than without buckets
    behind = readings.bucket_readout(12.5)
    assert "链路跟不上" in behind and "121.77 ms" in behind and "不分桶露出 119.4 ms" in behind
    # one bucket: nothing overlaps; the best bucket is reported whatever the chosen size
    assert readings.bucket_readout(3000).startswith("不分桶（一个 3,000 MB 的桶）")
    assert all("最好的桶约 20.8 MB（144 个）" in line for line in (keeps, behind))


@pytest.mark.parametrize("kwargs, match", [({"bucket_mb": 0}, "bucket_mb"), ({"bucket_mb": 1e-9}, "bucket_mb"),
                                           ({"grad_gb": -1}, "grad_gb"), ({"bandwidth_gbs": 0}, "bandwidth_gbs"),
                                           ({"latency_us": -1}, "latency_us"), ({"backward_s": -1}, "backward_s")])
def test_bucket_readout_rejects_bad_inputs(kwargs, match):
    args = {"bucket_mb": 25.0, **kwargs}
    with pytest.raises((ValueError, TypeError), match=match):
        readings.bucket_readout(**args)
