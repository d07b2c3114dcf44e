import pytest

from hetlab.real import measure


def test_pool_timings_are_positive_and_bounded():
    t = measure.time_pools(jobs=2, size=20_000, workers=2)
    assert min(t.serial, t.threads, t.processes) > 0
    assert "线程池" in t.text() and "进程池" in t.text()


def test_split_matmul_returns_one_time_per_piece_count():
    times = measure.split_matmul(n=64, pieces=(1, 8, 64), repeat=1)
    assert list(times) == [1, 8, 64] and all(v > 0 for v in times.values())


def test_measurements_refuse_unbounded_requests():
    with pytest.raises(ValueError, match="size must be in"):
        measure.time_pools(size=10**9)
    with pytest.raises(ValueError, match="pieces must be in"):
        measure.split_matmul(n=8, pieces=(16,))
    assert measure.dispatch_overhead(tasks=50) > 0


def test_load_per_cpu_divides_the_one_minute_load_by_the_usable_cpus(monkeypatch):
    monkeypatch.setattr(measure.os, "getloadavg", lambda: (6.0, 1.0, 1.0))
    monkeypatch.setattr(measure, "cpu_count", lambda: 4)
    assert measure.load_per_cpu() == 1.5


def test_load_per_cpu_is_none_where_there_is_no_load_average(monkeypatch):
    monkeypatch.delattr(measure.os, "getloadavg")
    assert measure.load_per_cpu() is None
