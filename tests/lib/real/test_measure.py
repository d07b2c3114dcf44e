"""hetlab.real.measure: calibration of this machine (CPU count, loop rate, dispatch, matmul)."""
import pytest

from hetlab.real import measure


def test_cpu_count_is_the_affinity_capped_by_a_container_quota(monkeypatch):
    monkeypatch.setattr(measure.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3, 4, 5, 6, 7}, raising=False)
    monkeypatch.setattr(measure, "_cgroup_quota", lambda: None)
    assert measure.cpu_count() == 8
    monkeypatch.setattr(measure, "_cgroup_quota", lambda: 1.5)      # 150000 / 100000: two CPUs busy at most
    assert measure.cpu_count() == 2
    monkeypatch.setattr(measure, "_cgroup_quota", lambda: 32.0)     # a quota above the affinity does not add CPUs
    assert measure.cpu_count() == 8


@pytest.mark.parametrize("text, expected", [("max 100000\n", None), ("150000 100000\n", 1.5),
                                            ("400000 100000", 4.0), ("garbage", None)])
def test_cgroup_v2_quota_is_read_from_cpu_max(monkeypatch, text, expected):
    monkeypatch.setattr(measure, "_read", lambda path: text if path.endswith("cpu.max") else None)
    assert measure._cgroup_quota() == expected


def test_load_per_cpu_divides_the_one_minute_load_by_the_usable_cpus(monkeypatch):
    monkeypatch.setattr(measure.os, "getloadavg", lambda: (6.0, 1.0, 1.0))
    monkeypatch.setattr(measure, "cpu_count", lambda: 4)
    assert measure.load_per_cpu() == 1.5


def test_load_per_cpu_is_none_where_there_is_no_load_average(monkeypatch):
    monkeypatch.delattr(measure.os, "getloadavg")
    assert measure.load_per_cpu() is None


def test_dispatch_overhead_and_loop_rate_are_positive_and_validated():
    assert measure.dispatch_overhead(tasks=50) > 0
    assert measure.dispatch_overhead(50, workers=1, pipelined=False) > 0
    with pytest.raises(TypeError, match="pipelined"):
        measure.dispatch_overhead(5, pipelined="yes")
    assert measure.loop_rate(0.01) > 1e4
    assert measure.loop_rate(0.01, repeat=3, statistic="median") > 1e4
    with pytest.raises(ValueError, match="seconds"):
        measure.loop_rate(0.0)
    with pytest.raises(ValueError, match="statistic"):
        measure.loop_rate(0.01, statistic="mean")


def test_loop_rate_counts_cpu_seconds_not_wall_seconds(monkeypatch):
    """A busy machine stretches the wall clock, not the loop's CPU time: each timing of 20,000 steps takes 1 CPU
    second on the fake thread clock and 10 s on the fake wall clock, so the rate is 20,000 steps per second."""
    import itertools
    cpu, wall = itertools.count(0.0, 1.0), itertools.count(0.0, 10.0)
    monkeypatch.setattr(measure.time, "thread_time", lambda: next(cpu))
    monkeypatch.setattr(measure.time, "perf_counter", lambda: next(wall))
    monkeypatch.setattr(measure, "busy_loop", lambda n: None)
    assert measure.loop_rate(0.05) == 20_000
    assert measure.loop_rate(0.05, statistic="median") == 20_000


def test_calibration_is_cached_per_machine_and_names_its_blas_threads(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = measure.calibrate()
    assert first["matmul_gflops"] > 0 and first["process_overhead_s"] > 0
    assert first["gpu"]["available"] in (True, False)
    assert first["blas_threads"] is None or first["blas_threads"] >= 1
    assert measure.calibrate() == first                 # read back from the cache


def test_thread_scaling_times_the_same_job_on_each_pool_size():
    out = measure.thread_scaling((1, 2), blocks=4, size=16, repeat=3)
    assert sorted(out.wall) == sorted(out.cpu) == [1, 2] and out.rounds == 3
    assert all(wall > 0 for wall in out.wall.values()) and all(cpu >= 0 for cpu in out.cpu.values())
    assert out.share(2) == out.cpu[2] / out.wall[2]
    pytest.importorskip("threadpoolctl")
    assert out.blas_limited                 # installed here, so BLAS was held to one thread
    with pytest.raises(ValueError, match="counts"):
        measure.thread_scaling((0, 2))
    with pytest.raises(TypeError, match="blocks"):
        measure.thread_scaling((1,), blocks=2.5)


def test_thread_scaling_interleaves_the_rounds(monkeypatch):
    # every pool size meets the same background load only if the rounds alternate: record the order
    order = []
    real = measure.ThreadPoolExecutor

    class Recording(real):
        def map(self, fn, *its):
            if fn is not int:
                order.append(self._max_workers)
            return super().map(fn, *its)

    monkeypatch.setattr(measure, "ThreadPoolExecutor", Recording)
    measure.thread_scaling((1, 2, 4), blocks=2, size=4, repeat=2)
    assert order == [1, 2, 4, 1, 2, 4]


class _FakeClock:
    """A perf_counter that only moves when the fake GPU works: copies cost 5 us + bytes / 50 GB/s, a launch
    with its synchronise 10 us (the numbers the fit must give back)."""
    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        return self.now

    def process_time(self):
        return self.now


def _fake_torch(clock):
    import types

    class Tensor:
        def __init__(self, n):
            self.n = n

        def pin_memory(self):
            return self

        def copy_(self, src, non_blocking=False):
            clock.now += 5e-6 + src.n / 50e9
            return self

        def add_(self, value):
            clock.now += 10e-6
            return self

    cuda = types.SimpleNamespace(is_available=lambda: True, synchronize=lambda: None,
                                 get_device_name=lambda i=0: "Fake GPU")
    return types.SimpleNamespace(cuda=cuda, uint8="uint8", empty=lambda n, **kw: Tensor(n),
                                 zeros=lambda n, **kw: Tensor(n))


def test_gpu_copy_launch_fits_alpha_and_bandwidth_from_two_copies(monkeypatch):
    import sys
    import types
    clock = _FakeClock()
    monkeypatch.setitem(sys.modules, "torch", _fake_torch(clock))
    monkeypatch.setattr(measure, "time", types.SimpleNamespace(perf_counter=clock.perf_counter))
    got = measure.gpu_copy_launch(repeat=3)
    assert got["available"] and got["name"] == "Fake GPU"
    assert got["bandwidth"] == pytest.approx(50e9) and got["alpha_s"] == pytest.approx(5e-6)
    assert got["copy_4k_s"] == pytest.approx(5e-6 + 4096 / 50e9)
    assert got["launch_sync_s"] == pytest.approx(10e-6)


def test_gpu_copy_launch_says_why_it_cannot_measure(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "torch", None)          # import torch raises ImportError
    assert measure.gpu_copy_launch() == {"available": False, "reason": "torch is not installed"}
    with pytest.raises(ValueError, match="repeat"):
        measure.gpu_copy_launch(repeat=0)


def test_thread_scaling_record_refuses_inconsistent_times():
    with pytest.raises(ValueError, match="same thread counts"):
        measure.ThreadScaling({1: 1.0, 2: 0.5}, {1: 1.0}, True, 3)
    with pytest.raises(ValueError, match=r"cpu\[2\]"):
        measure.ThreadScaling({1: 1.0, 2: 0.5}, {1: 1.0, 2: 0.0}, True, 3)
    with pytest.raises(ValueError, match="n must be one of"):
        measure.ThreadScaling({1: 1.0}, {1: 1.0}, True, 3).share(4)


def test_round_trips_are_single_trips_per_batch_and_validated():
    trips = measure.round_trips(batches=3, tasks=4, workers=1)
    assert [len(b) for b in trips] == [4, 4, 4] and all(0 < t < 1 for b in trips for t in b)
    with pytest.raises(ValueError, match="batches"):
        measure.round_trips(batches=2)


def test_paused_round_trips_sleep_before_each_trip_outside_the_clock():
    # the pause is not timed: trips after a 20 ms pause are not 20 ms long, and the batches take at least the pauses
    import time

    t = time.perf_counter()
    trips = measure.round_trips(batches=3, tasks=3, workers=1, pause=0.02)
    assert time.perf_counter() - t >= 9 * 0.02 and [len(b) for b in trips] == [3, 3, 3]
    assert sorted(x for b in trips for x in b)[4] < 0.02          # the median trip: the pause is not in it
    with pytest.raises(ValueError, match="pause"):
        measure.round_trips(batches=3, tasks=1, workers=1, pause=-1e-3)
    with pytest.raises(ValueError, match="pause"):
        measure.round_trips(batches=3, tasks=1, workers=1, pause=0.5)
