"""hetlab.real.cpu_load: the busy CPUs read from /proc/stat and the share a process pool can expect."""
import pytest

from hetlab.real import cpu_load as L


@pytest.mark.parametrize("processes, cpus, busy, expected", [
    (2, 2, 0.0, 2.0), (2, 2, 1.0, 4 / 3), (2, 2, 2.0, 1.0), (1, 1, 0.0, 1.0), (1, 1, 1.0, 0.5),
    (4, 8, 2.0, 4.0), (8, 2, 0.0, 2.0), (16, 4, 4.0, 16 * 4 / 20),
])
def test_fair_share_is_min_of_processes_and_an_equal_share_of_every_runnable_thread(processes, cpus, busy,
                                                                                      expected):
    assert L.fair_share(processes, cpus, busy) == pytest.approx(expected)


@pytest.mark.parametrize("processes, cpus", [(1, 1), (2, 2), (3, 2), (4, 16), (16, 4)])
def test_the_range_is_ordered_bounded_and_exact_on_an_idle_machine(processes, cpus):
    # idle: every process gets a CPU; with more processes than CPUs the crowded CPU's pair ends last
    assert L.share_range(processes, cpus, 0.0) == (processes / -(-processes // cpus), min(processes, cpus))
    for tenth in range(10 * cpus + 1):
        least, most = L.share_range(processes, cpus, tenth / 10)
        assert 0 < least <= most <= min(processes, cpus)
        # more other work never raises either bound
        if tenth:
            before = L.share_range(processes, cpus, (tenth - 1) / 10)
            assert least <= before[0] + 1e-12 and most <= before[1] + 1e-12


def test_the_build_vms_spinner_readings_fall_in_the_range():
    # two processes on the 2-vCPU build VM with one spinner: 1.06-1.21 measured (review ch12-19 read 1.18)
    least, most = L.share_range(2, 2, 1.0)
    assert (least, round(most, 2)) == (1.0, 1.33)
    assert L.share_range(2, 2, 0.15)[0] == pytest.approx(1.7)        # a program busy 15 % of one CPU


@pytest.mark.parametrize("kwargs, match", [
    (dict(processes=0, cpus=2, busy=0.0), "processes"), (dict(processes=2, cpus=0, busy=0.0), "cpus"),
    (dict(processes=2, cpus=2, busy=2.5), "busy"), (dict(processes=2, cpus=2, busy=float("nan")), "busy"),
])
def test_bad_inputs_name_the_parameter(kwargs, match):
    with pytest.raises(ValueError, match=match):
        L.share_range(**kwargs)


def _stat(cpu0, cpu1):
    return "".join(f"cpu{i} {' '.join(map(str, t))} 0 0\n" for i, t in enumerate((cpu0, cpu1)))


def test_busy_cpus_sums_the_busy_fraction_of_the_usable_cpus(tmp_path, monkeypatch):
    stat = tmp_path / "stat"
    # user nice system idle iowait irq softirq steal: cpu0 fully busy, cpu1 idle (iowait counts as idle)
    stat.write_text("cpu  0 0 0 0 0 0 0 0 0 0\n" + _stat((0, 0, 0, 100, 0, 0, 0, 0), (0, 0, 0, 100, 0, 0, 0, 0)))
    monkeypatch.setattr(L, "STAT", stat)
    monkeypatch.setattr(L.os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr("hetlab.real.measure.cpu_count", lambda: 2)
    later = _stat((80, 0, 10, 100, 0, 0, 0, 10), (5, 0, 0, 180, 15, 0, 0, 0))
    monkeypatch.setattr(L.time, "sleep", lambda s: stat.write_text(later))
    assert L.busy_cpus(0.2) == pytest.approx(1.05)          # (100 + 5) busy of 200 jiffies over 2 CPUs
    # pinned to cpu1 (taskset -c 1): only its line counts
    stat.write_text(_stat((0, 0, 0, 100, 0, 0, 0, 0), (0, 0, 0, 100, 0, 0, 0, 0)))
    monkeypatch.setattr(L.os, "sched_getaffinity", lambda pid: {1})
    monkeypatch.setattr("hetlab.real.measure.cpu_count", lambda: 1)
    assert L.busy_cpus(0.2) == pytest.approx(0.05)


def test_busy_cpus_is_none_without_proc_stat(tmp_path, monkeypatch):
    monkeypatch.setattr(L, "STAT", tmp_path / "missing")
    assert L.busy_cpus(0.01) is None
    with pytest.raises(ValueError, match="interval"):
        L.busy_cpus(2.0)


def test_busy_cpus_reads_this_machine():
    busy = L.busy_cpus(0.05)
    assert busy is None or 0 <= busy <= L.os.cpu_count()
