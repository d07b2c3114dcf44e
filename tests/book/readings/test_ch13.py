"""Chapter 13's whiteboard readout on gradient buckets (hetlab.book.readings.ch13)."""
import pytest

from hetlab.book.readings import ch13 as readings


def test_bucket_readout_says_whether_the_link_keeps_up():
    # default 14 us per hop: 50 MB of 3 GB is 60 buckets; 1.764 ms latency + 1.969 ms bytes = 3.73 ms per bucket
    # < 0.3 s / 60 = 5 ms
    keeps = readings.bucket_readout(50)
    assert keeps.startswith("桶 50 MB（60 个）") and "链路跟得上" in keeps and "3.73 ms" in keeps
    # 12.5 MB: 240 buckets of 2.26 ms, one every 1.25 ms: the link falls behind, 1.25 + 240 x 2.256 - 300 = 242.7
    # ms show, more than the 119.9 ms without buckets
    behind = readings.bucket_readout(12.5)
    assert "链路跟不上" in behind and "242.73 ms" in behind and "不分桶露出 119.9 ms" in behind
    # one bucket: nothing overlaps; the best bucket is reported whatever the chosen size
    assert readings.bucket_readout(3000).startswith("不分桶（一个 3,000 MB 的桶）")
    assert all("最好的桶约 29.1 MB（103 个）" in line for line in (keeps, behind))
    # the old 10 us per hop, passed explicitly: 25 MB buckets keep up (1.26 + 0.98 = 2.24 ms < 2.5 ms)
    assert "链路跟得上" in readings.bucket_readout(25, latency_us=10.0)


@pytest.mark.parametrize("kwargs, match", [({"bucket_mb": 0}, "bucket_mb"), ({"bucket_mb": 1e-9}, "bucket_mb"),
                                           ({"grad_gb": -1}, "grad_gb"), ({"bandwidth_gbs": 0}, "bandwidth_gbs"),
                                           ({"latency_us": -1}, "latency_us"), ({"backward_s": -1}, "backward_s")])
def test_bucket_readout_rejects_bad_inputs(kwargs, match):
    args = {"bucket_mb": 25.0, **kwargs}
    with pytest.raises((ValueError, TypeError), match=match):
        readings.bucket_readout(**args)
