"""Chapter 7's reader-side lab verdict, on hand-made runs whose verdicts follow from the arithmetic."""
import pytest

from hetlab.book.readings.ch07 import thread_lab_report
from hetlab.real.measure import ThreadScaling


def test_free_cores_speed_up_follows_the_cpus_obtained():
    # two free cores: 2 and 4 threads both finish in half the time on 2 CPUs -> S = 2 = share ratio
    run = ThreadScaling({1: 2.0, 2: 1.0, 4: 1.0}, {1: 2.0, 2: 2.0, 4: 2.0}, True, 5)
    text = thread_lab_report(run, 2)
    assert "0.333" in text                  # e(S = 2, N = 4) = (1/2 - 1/4) / (1 - 1/4) by hand
    assert "相差都不到 15%" in text and "明显少于" not in text and "抢核" not in text


def test_busy_core_share_is_named_not_blamed_on_the_program():
    # one core shared with a busy loop: 1 thread gets 1/2 of it, 2 threads 2/3 -> S = 4/3 with no parallelism
    run = ThreadScaling({1: 4.0, 2: 3.0}, {1: 2.0, 2: 2.0}, True, 5)
    text = thread_lab_report(run, 2, load=1.5)
    assert "0.500" in text                  # e(S = 4/3, N = 2) = (3/4 - 1/2) / (1/2)
    assert "只拿到 0.50 个 CPU" in text and "2 个线程只有 0.67 个" in text
    assert "相差都不到 15%" in text and "1.5 个可运行的任务" in text and "抢到的份额越大" in text


def test_fewer_cpus_with_more_threads_is_said_so():
    # the 2-thread pool got half the CPU of the single thread and took twice as long: the share, not the program
    run = ThreadScaling({1: 1.0, 2: 2.0}, {1: 0.5, 2: 0.5}, True, 7)
    text = thread_lab_report(run, 2)
    assert "反而越少" in text and "相差都不到 15%" in text and "抢到的份额越大" not in text


def test_threads_slowing_each_other_show_as_efficiency_per_cpu():
    # SMT siblings: 2 threads on 2 logical CPUs, each 0.625 as fast -> 1.6 s wall, 3.2 CPU s
    run = ThreadScaling({1: 2.0, 2: 1.6}, {1: 2.0, 2: 3.2}, True, 5)
    assert "低到 62%" in thread_lab_report(run, 2)


def test_unlimited_blas_is_flagged_and_bad_runs_refused():
    run = ThreadScaling({1: 2.0, 2: 1.0}, {1: 2.0, 2: 2.0}, False, 5)
    assert "未限定" in thread_lab_report(run, 2) and "不可信" in thread_lab_report(run, 2)
    with pytest.raises(ValueError, match="run"):
        thread_lab_report(ThreadScaling({2: 1.0}, {2: 2.0}, True, 1), 2)
    with pytest.raises(ValueError, match="cpus"):
        thread_lab_report(run, 0)


def test_less_cpu_for_the_same_work_is_read_as_a_disturbed_run():
    # 2 threads: wall halves but only 1.5 CPU s are spent for 2 CPU s of work -> 2 / 1.5 = 133% per CPU
    run = ThreadScaling({1: 2.0, 2: 1.0}, {1: 2.0, 2: 1.5}, True, 7)
    text = thread_lab_report(run, 2)
    assert "高到 133%" in text and "不能当程序的开销读" in text
