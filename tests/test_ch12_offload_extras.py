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
