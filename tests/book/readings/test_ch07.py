"""Chapter 7's reader-side lab verdict, on hand-made runs whose verdicts follow from the arithmetic."""
import pytest

from hetlab.book.readings.ch07 import CPU_RATIO_BAND, thread_lab_report
from hetlab.real.measure import ThreadScaling

NO_OVERHEAD = "不能说程序没有并行开销"


def test_free_cores_speed_up_follows_the_cpus_obtained():
    # two free cores: 2 and 4 threads both finish in half the time on 2 CPUs -> S = 2 = share ratio
    run = ThreadScaling({1: 2.0, 2: 1.0, 4: 1.0}, {1: 2.0, 2: 2.0, 4: 2.0}, True, 5)
    text = thread_lab_report(run, 2)
    assert "0.333" in text                  # e(S = 2, N = 4) = (1/2 - 1/4) / (1 - 1/4) by hand
    assert "线程用满了可用的 CPU" in text and "S 跟着它走" in text
    assert "明显少于" not in text and "忽高忽低" not in text and "e 大于 1" not in text
    # review ch07-5: shares 1 -> 2 -> 2 rose, then stayed at the 2 CPUs; e(4) = 1/3 is 4 threads on 2 CPUs
    assert "1.00 → 2.00 → 2.00：1 到 2 个线程时上升、2 到 4 个线程时持平" in text
    assert "用上的 CPU 越多" not in text
    assert "从 2 个线程起用上的 CPU 不再增加" in text and "T_4 不再下降" in text
    assert "e 的上升来自线程多于用上的 CPU（可用的 2 个 CPU 已用满），不是程序的开销" in text
    assert "不超过 2 个线程时，墙钟的 S 和 e 可以当" in text and "多于 2 个线程时的 e 来自线程多于 CPU" in text


def test_idle_two_cpus_one_two_two_with_real_numbers():
    # review ch07-5's idle run: T = 1000 / 505 / 510 ms, CPU 1.00 / 2.00 / 2.00 (shares 1 -> 2 -> 2) at load 0.05
    run = ThreadScaling({1: 1.0, 2: 0.505, 4: 0.510}, {1: 1.0, 2: 1.01, 4: 1.02}, True, 7)
    text = thread_lab_report(run, 2, 0.05)
    assert "0.347" in text                  # e(S = 1000/510, N = 4) = (510/1000 - 1/4) / (3/4) by hand
    assert "2 到 4 个线程时持平" in text and "用上的 CPU 越多" not in text and "不是程序的开销" in text
    assert "墙钟的 S 和 e 可以当这个程序在这台机器上的并行表现来读。" not in text


@pytest.mark.parametrize("load", [None, 0.1])
def test_a_gil_serialised_run_is_not_called_overhead_free(load):
    # a fully serialised job on 2 idle CPUs: wall = CPU = 50 ms for 1, 2 and 4 threads -> S = 1, e = 1,
    # CPU-time ratio 100% -- the ratio cannot see the waiting, so the verdict must not clear the program
    run = ThreadScaling({1: 0.05, 2: 0.05, 4: 0.05}, {1: 0.05, 2: 0.05, 4: 0.05}, True, 7)
    text = thread_lab_report(run, 2, load)
    assert "1.000" in text                  # e(S = 1, N) = (1 - 1/N) / (1 - 1/N)
    assert "2 个线程只用了 1.00 个、4 个线程只用了 1.00 个" in text
    assert "线程在等（GIL" in text and NO_OVERHEAD in text and "几乎没变" in text
    assert "线程用满了" not in text and "忽高忽低" not in text and "互相拖慢" not in text
    assert ("多半是线程自己在等" in text) == (load is not None)


def test_busy_core_share_is_named_not_blamed_on_the_program():
    # one core shared with a busy loop: 1 thread gets 1/2 of it, 2 threads 2/3 -> S = 4/3 with no parallelism
    run = ThreadScaling({1: 4.0, 2: 3.0}, {1: 2.0, 2: 2.0}, True, 5)
    text = thread_lab_report(run, 2, load=1.5)
    assert "0.500" in text                  # e(S = 4/3, N = 2) = (3/4 - 1/2) / (1/2)
    assert "只用了 0.50 个 CPU" in text and "2 个线程只用了 0.67 个" in text
    assert NO_OVERHEAD in text and "1.5 个可运行的任务" in text and "用上的 CPU 越多" in text
    assert "多半是线程自己在等" not in text  # the machine was busy: no guess which it was


def test_fewer_cpus_with_more_threads_and_e_above_one_are_said_so():
    # the 2-thread pool got half the CPU of the single thread and took twice as long: S = 1/2,
    # e = (2 - 1/2) / (1 - 1/2) = 3 > 1, which the report must read as "slower than one thread"
    run = ThreadScaling({1: 1.0, 2: 2.0}, {1: 0.5, 2: 0.5}, True, 7)
    text = thread_lab_report(run, 2)
    assert "3.000" in text and "e 大于 1 表示多线程反而比单线程慢（S < 1）：2 个线程" in text
    assert "反而越少" in text and NO_OVERHEAD in text


def test_flat_and_mixed_shares_are_told_apart():
    # share ratios 1.03 and 1.06 (1 CPU s each, wall 2 s / share): both steps under 5%, flat
    flat = ThreadScaling({1: 2.0, 2: 2.0 / 1.03, 4: 2.0 / 1.06}, {1: 1.0, 2: 1.0, 4: 1.0}, True, 7)
    text = thread_lab_report(flat, 2)
    assert "几乎没变" in text and "忽高忽低" not in text
    # share ratios 1.3 and 0.8 (1 CPU s each, walls 2 / (2/1.3) / (2/0.8) s): one up, one down
    mixed = ThreadScaling({1: 2.0, 2: 2.0 / 1.3, 4: 2.0 / 0.8}, {1: 1.0, 2: 1.0, 4: 1.0}, True, 7)
    assert "忽高忽低" in thread_lab_report(mixed, 2)


@pytest.mark.parametrize("shares, word", [((1.14, 1.21), "越多"), ((1.10, 0.88), "忽高忽低"), ((0.9, 0.68), "反而越少"),
                                          ((1.0, 0.68), "时持平、2 到 4 个线程时下降"), ((1.44, 1.13), "忽高忽低"),
                                          ((0.63, 0.87), "忽高忽低")])
def test_shares_are_described_by_their_sequence(shares, word):
    # review ch07-4: 1.00 -> 1.14 -> 1.21 rises steadily and 1.00 -> 0.68 never rises, so neither is
    # "up and down"; 1.44 -> 1.13 and 0.63 -> 0.87 do go both ways. 1 CPU s per pool, wall = 2 s / share.
    run = ThreadScaling({1: 2.0, 2: 2.0 / shares[0], 4: 2.0 / shares[1]}, {1: 1.0, 2: 1.0, 4: 1.0}, True, 7)
    text = thread_lab_report(run, 2)
    assert f"份额之比 1.00 → {shares[0]:.2f} → {shares[1]:.2f}：" in text
    assert word in text and ("忽高忽低" in text) == (word == "忽高忽低")


def test_the_load_is_labelled_as_the_whole_machine_over_the_usable_cpus():
    # pinned to 1 CPU, load_per_cpu divides the whole machine's load by that one CPU: the header says so
    run = ThreadScaling({1: 2.0, 2: 2.0}, {1: 2.0, 2: 2.0}, True, 7)
    assert "整台机器的负载，按这 1 个 CPU 折算，每个 CPU 平均 10.0 个" in thread_lab_report(run, 1, 10.0)


@pytest.mark.parametrize("ratio", [0.77, 1.25])
def test_the_run_to_run_spread_is_not_read_as_a_verdict(ratio):
    # 13 reruns on the busy 2-CPU build machine spread CPU_1 / CPU_N over 77%-125%: neither end may be diagnosed
    assert CPU_RATIO_BAND[0] < 0.77 and CPU_RATIO_BAND[1] > 1.25
    run = ThreadScaling({1: 2.0, 2: 1.0}, {1: 2.0, 2: 2.0 / ratio}, True, 7)
    text = thread_lab_report(run, 2)
    assert "互相拖慢" not in text and "受了干扰" not in text
    assert "忙碌共享机器上重跑的摆动" in text  # the verdict says whose spread the band is


def test_threads_slowing_each_other_show_as_cpu_time_ratio():
    # SMT siblings: 2 threads on 2 logical CPUs, each 0.625 as fast -> 1.6 s wall, 3.2 CPU s: 2 / 3.2 = 62%
    run = ThreadScaling({1: 2.0, 2: 1.6}, {1: 2.0, 2: 3.2}, True, 5)
    text = thread_lab_report(run, 2)
    assert "低到 62.5%" in text and "互相拖慢" in text and "S 跟着它走" not in text


def test_unlimited_blas_is_flagged_and_bad_runs_refused():
    run = ThreadScaling({1: 2.0, 2: 1.0}, {1: 2.0, 2: 2.0}, False, 5)
    assert "未限定" in thread_lab_report(run, 2) and "不可信" in thread_lab_report(run, 2)
    with pytest.raises(ValueError, match="run"):
        thread_lab_report(ThreadScaling({2: 1.0}, {2: 2.0}, True, 1), 2)
    with pytest.raises(ValueError, match="cpus"):
        thread_lab_report(run, 0)


def test_less_cpu_for_the_same_work_is_read_as_a_disturbed_run():
    # 2 threads: wall halves but only 1.5 CPU s are spent for 2 CPU s of work -> 2 / 1.5 = 133%
    run = ThreadScaling({1: 2.0, 2: 1.0}, {1: 2.0, 2: 1.5}, True, 7)
    text = thread_lab_report(run, 2)
    assert "高到 133.3%" in text and "超出了 70%–130%" in text and "受了干扰" in text


@pytest.mark.parametrize("ratio, outside", [(1.3004, False), (1.3006, True), (0.6996, False), (0.6994, True)])
def test_the_band_edge_is_judged_on_the_printed_value(ratio, outside):
    # review ch07-5: 130.04% prints "130.0%", which is not beyond 130%; 130.06% prints "130.1%", which is
    run = ThreadScaling({1: 2.0, 2: 1.0}, {1: 2.0, 2: 2.0 / ratio}, True, 7)
    text = thread_lab_report(run, 2)
    assert ("超出了" in text) == outside
    assert "130.0%，超出" not in text and "70.0%，超出" not in text
    assert f"{ratio:.1%}" in text           # the table prints the same one-decimal value
