"""Tests for the chapter-12 additions: interleaved pool repeats, the overhead reading."""
import pytest

from hetlab.real import measure


def test_time_pools_repeated_shape():
    rounds = measure.time_pools_repeated(jobs=2, size=1000, workers=2, repeats=2)
    assert len(rounds) == 2 and all(r.jobs == 2 and r.workers == 2 for r in rounds)
    with pytest.raises(ValueError, match="repeats"):
        measure.time_pools_repeated(repeats=0)
    with pytest.raises(ValueError, match="loop steps"):
        measure.time_pools_repeated(jobs=64, size=5_000_000, repeats=10)


def test_overhead_reading_zh_branches():
    from hetlab.models import granularity as G
    assert "量级一致" in G.overhead_reading_zh(13e-6, 110e-6)
    assert "机器在忙" in G.overhead_reading_zh(86e-6, 1043e-6, busy=True)
    assert "更小" in G.overhead_reading_zh(3e-6, 30e-6)
    assert "差距比上表小" in G.overhead_reading_zh(100e-6, 150e-6)
    with pytest.raises(ValueError, match="thread"):
        G.overhead_reading_zh(0.0, 1e-4)
