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
        assert 0 <= least <= most <= min(processes, cpus)
        assert (least == 0) == L.saturated(cpus, tenth / 10)       # a full machine: the most only
        # more other work never raises either bound
        if tenth:
            before = L.share_range(processes, cpus, (tenth - 1) / 10)
            assert least <= before[0] + 1e-12 and most <= before[1] + 1e-12


def test_the_build_vms_spinner_readings_fall_in_the_range():
    # two processes on the 2-vCPU build VM with one spinner: 1.06-1.21 measured (review ch12-19 read 1.18)
    least, most = L.share_range(2, 2, 1.0)
    assert (least, round(most, 2)) == (1.0, 1.33)
    assert L.share_range(2, 2, 0.15)[0] == pytest.approx(1.7)        # a program busy 15 % of one CPU


@pytest.mark.parametrize("processes, cpus", [(1, 1), (2, 2), (3, 2), (4, 16), (16, 4)])
@pytest.mark.parametrize("extra", [0, 1, 3, 10])
def test_more_competing_threads_than_cpus_stay_inside_the_range_read_from_a_full_machine(processes, cpus, extra):
    # review ch12-20 #1: k >= C CPU-bound threads keep every CPU busy, so idle time reads busy = C for any k;
    # the pool's fair share C N_p / (N_p + k) then falls anywhere below the most, and the range must hold it
    competing = cpus + extra
    busy = float(cpus)                          # what the sample reads, whatever k is
    assert L.saturated(cpus, busy)
    truth = min(processes, cpus * processes / (processes + competing))
    least, most = L.share_range(processes, cpus, busy)
    assert least == 0 <= truth <= most == pytest.approx(L.fair_share(processes, cpus, busy))
    assert L.share_range(processes, cpus, busy - L.SATURATED / 2)[0] == 0     # a tick idle: still full


def test_saturated_is_within_two_ticks_of_every_cpu():
    assert L.saturated(2, 2.0) and L.saturated(2, 2 - L.SATURATED) and not L.saturated(2, 1.85)
    assert L.saturated(1, 1.0) and not L.saturated(16, 15.5) and not L.saturated(1, 0.0)
    with pytest.raises(ValueError, match="busy"):
        L.saturated(2, 2.5)


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


def test_busy_cpus_reads_a_full_machine_as_every_cpu_however_many_threads_wait(tmp_path, monkeypatch):
    # three spinners on two CPUs: no idle jiffy on either CPU; the sample reads 2.00, as two spinners would
    stat = tmp_path / "stat"
    stat.write_text(_stat((0, 0, 0, 100, 0, 0, 0, 0), (0, 0, 0, 100, 0, 0, 0, 0)))
    monkeypatch.setattr(L, "STAT", stat)
    monkeypatch.setattr(L.os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr("hetlab.real.measure.cpu_count", lambda: 2)
    later = _stat((19, 0, 1, 100, 0, 0, 0, 0), (20, 0, 0, 100, 0, 0, 0, 0))
    monkeypatch.setattr(L.time, "sleep", lambda s: stat.write_text(later))
    busy = L.busy_cpus(0.2)
    assert busy == pytest.approx(2.0) and L.saturated(2, busy) and L.share_range(2, 2, busy) == (0.0, 1.0)


def test_busy_cpus_is_none_without_proc_stat(tmp_path, monkeypatch):
    monkeypatch.setattr(L, "STAT", tmp_path / "missing")
    assert L.busy_cpus(0.01) is None
    with pytest.raises(ValueError, match="interval"):
        L.busy_cpus(2.0)


def test_busy_cpus_reads_this_machine():
    busy = L.busy_cpus(0.05)
    assert busy is None or 0 <= busy <= L.os.cpu_count()


def test_others_since_counts_the_machines_busy_jiffies_less_this_process_and_its_reaped_children(tmp_path,
                                                                                                monkeypatch):
    # review A1-22: what other programs did over a whole measurement, not in a sample before it
    stat = tmp_path / "stat"
    stat.write_text(_stat((0, 0, 0, 100, 0, 0, 0, 0), (0, 0, 0, 100, 0, 0, 0, 0)))
    monkeypatch.setattr(L, "STAT", stat)
    monkeypatch.setattr(L.os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(L.os, "sysconf", lambda name: 100)
    own = iter([2.0, 3.0])                  # this process (and its reaped pool workers) used 1 s = 100 jiffies
    monkeypatch.setattr(L, "_own_seconds", lambda: next(own))
    start = L.mark()
    assert start == L.CpuMark(frozenset({0, 1}), 0, 200, 2.0)
    # 200 jiffies of each CPU later: 150 busy on the two, 100 of them this process's: 50 of 400 others', 0.25 CPU
    stat.write_text(_stat((90, 0, 10, 200, 0, 0, 0, 0), (50, 0, 0, 250, 0, 0, 0, 0)))
    assert L.others_since(start) == pytest.approx(0.25)
    assert L.others_since(None) is None
    with pytest.raises(TypeError, match="start"):
        L.others_since((0, 200))
    with pytest.raises(ValueError, match="busy"):
        L.CpuMark(frozenset({0}), 30, 20, 0.0)


def test_others_since_sees_a_program_that_starts_after_the_mark():
    # a spinning process started after the mark (the case the 0.2 s sample before a pair cannot see) reads as
    # another program; other load on the machine only adds to it, hence a lower bound
    import subprocess
    import sys
    import time

    start = L.mark(machine=True)
    if start is None:
        pytest.skip("no /proc/stat: not Linux")
    spinner = subprocess.Popen([sys.executable, "-c", "import time\nt = time.time()\nwhile time.time() - t < 5: pass"])
    try:
        time.sleep(1.0)
        assert L.others_since(start) > 0.3
    finally:
        spinner.kill()
        spinner.wait()
