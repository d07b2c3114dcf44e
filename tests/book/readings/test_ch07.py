"""Chapter 7's reader-side lab verdict, on hand-made runs whose verdicts follow from the arithmetic."""
import random

import pytest

from hetlab.book.readings.ch07 import CPU_RATIO_BAND, thread_lab_report
from hetlab.real.measure import ThreadScaling

NOT_OVERHEAD = "e 不能当程序的开销来读"


def _run(shares, walls, counts=(1, 2, 4)):
    """A run whose pools used ``shares`` CPUs over ``walls`` seconds (CPU time = share x wall)."""
    return ThreadScaling(dict(zip(counts, walls)), {n: s * w for n, s, w in zip(counts, shares, walls)}, True, 7)


def test_free_cores_speed_up_follows_the_cpus_obtained():
    # two free cores: 2 and 4 threads both finish in half the time on 2 CPUs -> S = 2 = share ratio
    text = thread_lab_report(ThreadScaling({1: 2.0, 2: 1.0, 4: 1.0}, {1: 2.0, 2: 2.0, 4: 2.0}, True, 5), 2)
    assert "0.333" in text                  # e(S = 2, N = 4) = (1/2 - 1/4) / (1 - 1/4) by hand
    assert "1 到 2 个线程时上升，2 到 4 个线程时持平（e 从 0.000 升到 0.333）" in text
    assert "2 个线程已用满 2 个 CPU" in text and "这一步 e 的上升来自线程多于 CPU" in text
    assert "不超过 2 个线程时用满了 CPU" in text and "测不出多花的 CPU 时间" in text    # load unknown: no idle claim
    assert "只用上" not in text


def test_idle_two_cpus_one_two_two_with_real_numbers():
    # idle 2-CPU machine, 1000 / 505 / 510 ms with the pools using 1 / 2 / 2 CPUs
    text = thread_lab_report(_run((1, 2, 2), (1.0, 0.505, 0.51)), 2, 0.05)
    assert "0.347" in text                  # e(S = 1000/510, N = 4) = (510/1000 - 1/4) / (3/4) by hand
    assert "2 到 4 个线程时持平（e 从 0.010 升到 0.347）" in text and "不是程序的开销" in text
    assert "一分钟平均负载（指数平均）0.1" in text
    # CPU_1 / CPU_N = 1 / (2 x 0.505) = 99.0% and 1 / (2 x 0.51) = 98.0%: 2% more CPU time, below 5%
    assert "与单线程相差不到 5%" in text and "测不出" not in text


def test_e_falling_while_the_share_is_flat_is_not_called_a_rise():
    # review ch07-6: share flat at 0.5 CPU (pinned, busy) while T falls 2.0 -> 1.6 -> 1.2 s; by hand
    # e(2) = (1.6/2 - 1/2) / (1/2) = 0.600 and e(4) = (1.2/2 - 1/4) / (3/4) = 0.467: e falls
    text = thread_lab_report(_run((0.5, 0.5, 0.5), (2.0, 1.6, 1.2)), 1, 5.7)
    assert "2 到 4 个线程时持平（e 从 0.600 降到 0.467）" in text
    assert "不再增加" not in text and "e 的上升" not in text and "已用满" not in text


def test_e_flat_at_one_is_not_called_a_rise():
    # a fully serialised job: wall = CPU = 50 ms for 1, 2 and 4 threads -> S = 1, e = 1 at every N
    text = thread_lab_report(ThreadScaling({1: 0.05, 2: 0.05, 4: 0.05}, {1: 0.05, 2: 0.05, 4: 0.05}, True, 7), 2)
    assert "2 到 4 个线程时持平（e 持平于 1.000）" in text and "e 的上升" not in text
    assert "2 个线程只用上 1.00 个 CPU、4 个线程只用上 1.00 个 CPU" in text and NOT_OVERHEAD in text


@pytest.mark.parametrize("load", [None, 0.05, 3.0])
def test_a_low_share_is_never_read_as_the_programs_overhead(load):
    # review ch07-9: the one-minute load average lags a program started seconds before, so even at load 0.05 a
    # low share is not blamed on the GIL: busy neighbour and waiting thread look the same in these numbers
    text = thread_lab_report(ThreadScaling({1: 0.05, 2: 0.05}, {1: 0.05, 2: 0.05}, True, 7), 2, load)
    assert NOT_OVERHEAD in text and "用满" not in text
    assert "多半是线程在等" not in text and "分不出是哪一种" in text


def test_an_idle_run_names_every_pool_outside_five_percent_even_below_the_band():
    # review ch07-9: idle, 2 threads at 62.5% (SMT siblings: 2 / 3.2) and 4 threads at 113.6% (2 / 1.76 CPU s)
    # (4 threads: 1.76 CPU s over 0.95 s = 1.85 CPUs, not short of the 2; ratio (2 / 0.95) / 1.85 = 113.6%)
    run = ThreadScaling({1: 2.0, 2: 1.6, 4: 0.95}, {1: 2.0, 2: 3.2, 4: 1.76}, True, 5)
    text = thread_lab_report(run, 2, 0.1)
    assert "2 个线程多花了约 60%" in text and "4 个线程少花了约 12%" in text     # 3.2 / 2 - 1; 1 - 1.76 / 2
    assert "低到" not in text                                                  # the ratio is not printed twice
    assert "相差不到 5%" not in text and "可以当" not in text


def test_shares_up_then_down_speak_of_each_step():
    # review ch07-6: shares 0.63 -> 0.87 of one thread's, pinned to 1 CPU; wall = 2 s / share ratio
    text = thread_lab_report(_run((1.0, 0.63, 0.87), (2.0, 2.0 / 0.63, 2.0 / 0.87)), 1, 5.7)
    assert "份额之比 1.00 → 0.63 → 0.87）：1 到 2 个线程时下降，2 到 4 个线程时上升" in text
    assert "不再增加" not in text and "已用满" not in text
    # e(2) = (1/0.63 - 1/2) / (1/2) = 2.175, e(4) = (1/0.87 - 1/4) / (3/4) = 1.199 by hand: e falls
    assert "e 从 2.175 降到 1.199" in text


def test_pinned_busy_run_from_the_review():
    # review ch07-6 live run: shares 1.00 -> 0.75 -> 0.90; T 1.0 / 0.92 / 0.87 s
    text = thread_lab_report(_run((1.0, 0.75, 0.90), (1.0, 0.92, 0.87)), 1, 5.7)
    # e(2) = (0.92 - 1/2) / (1/2) = 0.840, e(4) = (0.87 - 1/4) / (3/4) = 0.827 by hand
    assert "1 到 2 个线程时下降，2 到 4 个线程时上升（e 从 0.840 降到 0.827）" in text
    assert "不再增加" not in text and "e 的上升" not in text
    assert "你可用 1 个 CPU；整台机器的一分钟平均负载（指数平均）5.7" in text


def test_a_flat_busy_step_with_t_still_falling_claims_no_stall():
    # review ch07-6: 1 -> 1.88 -> 1.88 CPUs, T 1000 / 533 / 444 ms; the table's e rises 0.066 -> 0.259
    text = thread_lab_report(_run((1.0, 1.88, 1.88), (1.0, 0.533, 0.444)), 2, 3.0)
    assert "2 到 4 个线程时持平（e 从 0.066 升到 0.259）" in text  # (0.533-0.5)/0.5, (0.444-0.25)/0.75
    assert "不再下降" not in text and "T_4" not in text


def test_busy_core_share_is_named_not_blamed_on_the_program():
    # one core shared with a busy loop: 1 thread gets 1/2 of it, 2 threads 2/3 -> S = 4/3 with no parallelism
    text = thread_lab_report(ThreadScaling({1: 4.0, 2: 3.0}, {1: 2.0, 2: 2.0}, True, 5), 2, load=1.5)
    assert "0.500" in text                  # e(S = 4/3, N = 2) = (3/4 - 1/2) / (1/2)
    assert "1 个线程只用上 0.50 个 CPU、2 个线程只用上 0.67 个 CPU" in text
    assert NOT_OVERHEAD in text and "1 到 2 个线程时上升" in text and "分不出是哪一种" in text


@pytest.mark.parametrize("ratio", [0.77, 1.25])
def test_the_run_to_run_spread_is_not_read_as_a_verdict(ratio):
    # 13 reruns on the busy 2-CPU build machine spread CPU_1 / CPU_N over 77%-125%: neither end may be diagnosed
    assert CPU_RATIO_BAND[0] < 0.77 and CPU_RATIO_BAND[1] > 1.25
    text = thread_lab_report(ThreadScaling({1: 2.0, 2: 1.0}, {1: 2.0, 2: 2.0 / ratio}, True, 7), 2)
    assert "互相拖慢" not in text and "受了干扰" not in text and "都在 70%–130%" in text
    assert "摆动" not in text               # the band's origin is stated once, in the chapter's prose


def test_threads_slowing_each_other_show_as_cpu_time_ratio():
    # SMT siblings: 2 threads on 2 logical CPUs, each 0.625 as fast -> 1.6 s wall, 3.2 CPU s: 2 / 3.2 = 62%
    text = thread_lab_report(ThreadScaling({1: 2.0, 2: 1.6}, {1: 2.0, 2: 3.2}, True, 5), 2)
    assert "低到 62.5%（< 70%）" in text and "互相拖慢" in text and "测不出" not in text


def test_unlimited_blas_is_flagged_and_bad_runs_refused():
    run = ThreadScaling({1: 2.0, 2: 1.0}, {1: 2.0, 2: 2.0}, False, 5)
    assert "未限定" in thread_lab_report(run, 2) and "不可信" in thread_lab_report(run, 2)
    with pytest.raises(ValueError, match="run"):
        thread_lab_report(ThreadScaling({2: 1.0}, {2: 2.0}, True, 1), 2)
    with pytest.raises(ValueError, match="cpus"):
        thread_lab_report(run, 0)


def test_less_cpu_for_the_same_work_is_read_as_a_disturbed_run():
    # 2 threads: wall halves but only 1.5 CPU s are spent for 2 CPU s of work -> 2 / 1.5 = 133%
    text = thread_lab_report(ThreadScaling({1: 2.0, 2: 1.0}, {1: 2.0, 2: 1.5}, True, 7), 2)
    assert "高到 133.3%（> 130%）" in text and "受了干扰" in text


@pytest.mark.parametrize("ratio, outside", [(1.3004, False), (1.3006, True), (0.6996, False), (0.6994, True)])
def test_the_band_edge_is_judged_on_the_printed_value(ratio, outside):
    # review ch07-5: 130.04% prints "130.0%", which is not beyond 130%; 130.06% prints "130.1%", which is
    text = thread_lab_report(ThreadScaling({1: 2.0, 2: 1.0}, {1: 2.0, 2: 2.0 / ratio}, True, 7), 2)
    assert ("都在 70%–130%" in text) == (not outside)
    assert f"{ratio:.1%}" in text           # the table prints the same one-decimal value


def test_the_verdict_is_short():
    text = thread_lab_report(_run((0.83, 0.99, 0.84), (0.061, 0.0454, 0.0542)), 2, 6.4)
    assert len(text.splitlines()) <= 2 + 3 + 4   # header, column names, 3 rows, at most 4 verdict lines


@pytest.mark.parametrize("walls, pct", [((1.0, 0.602, 0.61), 22), ((1.0, 0.685, 0.69), 38)])
def test_an_idle_machine_reports_the_extra_cpu_time_inside_the_band(walls, pct):
    # review ch07-7: idle, shares 1 -> 2 -> 2, 1 CPU s of work. The 4-thread pool spends the most CPU time:
    # 2 x 0.61 = 1.22 s (ratio 82.0%, 22% more); 2 x 0.69 = 1.38 s (ratio 72.5%, 38% more) -- both in the band
    text = thread_lab_report(_run((1, 2, 2), walls), 2, 0.05)
    assert "都在 70%–130%" not in text
    assert f"4 个线程多花了约 {pct}% 的 CPU 时间" in text and "测不出" not in text
    busy = thread_lab_report(_run((1, 2, 2), walls), 2, 2.8)
    assert "测不出多花的 CPU 时间" in busy and "多花了约" not in busy


def test_a_disturbed_run_is_only_told_to_rerun():
    # review ch07-7: busy 1 -> 1.90 -> 1.90 with 2 threads spending 1 / 1.316 of the 1-thread CPU time
    wall2 = 1 / (1.90 * 1.316)               # CPU_2 = 1.90 x wall2, CPU_1 = 1 -> ratio 131.6%
    text = thread_lab_report(_run((1, 1.90, 1.90), (1.0, wall2, 1.0 / 1.90)), 2, 2.8)
    assert "高到 131.6%（> 130%）" in text and "重跑" in text and "可以当" not in text


@pytest.mark.parametrize("neighbours, e", [(1, "0.500"), (3, "0.250")])
def test_busy_fair_share_gives_e_one_over_l_plus_one(neighbours, e):
    # cell 54: L CPU-bound neighbours share 2 CPUs fairly with the pool, each thread gets 2 / (L + N) CPU,
    # so S = N (L + 1) / (L + N) and Karp-Flatt's e = 1 / (L + 1) at every N -- above the idle 0 at N = 2
    shares = [n * 2 / (neighbours + n) for n in (1, 2, 4)]
    text = thread_lab_report(_run(shares, [1 / s for s in shares]), 2, neighbours + 2.0)
    assert f"（e 持平于 {e}）" in text and "测不出多花的 CPU 时间" in text


def test_idle_less_cpu_time_is_reported_not_called_within_5_percent():
    # review ch07-8, idle record: 1 CPU s of work; 2 x 0.435 = 0.87 s (114.9%), 2 x 0.44 = 0.88 s (113.6%):
    # 13% and 12% LESS CPU time than 1 thread, S = 1 / 0.435 = 2.30 > 2 threads, so e < 0
    text = thread_lab_report(_run((1, 2, 2), (1.0, 0.435, 0.44)), 2, 0.05)
    assert "114.9%" in text and "113.6%" in text
    assert "相差不到 5%" not in text and "2 个线程少花了约 13%、4 个线程少花了约 12%" in text
    assert "重跑" in text and "可以当" not in text


def test_busy_negative_e_inside_the_band_is_a_disturbed_run():
    # review ch07-8, busy record: shares 1 -> 1.90 -> 1.90, 1000 / 476 / 480 ms: ratio 1 / (1.9 x 0.476) = 110.6%
    # (in the band) but S = 1000 / 476 = 2.10 > 2 threads, e = (0.476 - 0.5) / 0.5 = -0.048
    text = thread_lab_report(_run((1, 1.90, 1.90), (1.0, 0.476, 0.48)), 2, 2.8)
    assert "110.6%" in text and "-0.048" in text
    assert "2 个线程的 S 超过线程数（e 为负）：测量受了干扰，重跑" in text and "可以当" not in text


def _table(text, rows):
    """The printed ratios (as fractions) and e values of the report's ``rows`` table rows."""
    ratios, es = [], []
    for line in text.splitlines()[2:2 + rows]:
        cells = line.split()
        ratios.append(float(cells[5].rstrip("%")) / 100)
        if len(cells) == 7:
            es.append(float(cells[6]))
    return ratios, es


def test_the_verdict_never_contradicts_its_own_table():
    # property over many hand-built records: the verdict's sentences are checked against the printed table only
    rng = random.Random(7)
    for _ in range(3000):
        cpus = rng.choice((1, 2, 4))
        counts = rng.choice(((1, 2), (1, 2, 4), (1, 2, 4, 8)))
        shares = [rng.uniform(0.3, min(n, cpus) * 1.05) for n in counts]
        walls = [1.0] + [rng.uniform(0.8, 1.3) / (shares[i] / shares[0]) * rng.choice((1, rng.uniform(0.6, 1.5)))
                         for i in range(1, len(counts))]
        load = rng.choice((None, rng.uniform(0, 0.5), rng.uniform(0.5, 8)))
        text = thread_lab_report(_run(shares, walls, counts), cpus, load)
        ratios, es = _table(text, len(counts))
        assert len(ratios) == len(counts) and len(es) == len(counts) - 1
        if any(round(abs(r - 1), 4) > 0.05 for r in ratios):   # printed to 0.1%, so no float slack
            assert "相差不到 5%" not in text, text
        # e within 0.01 below zero is S a hair above N (rounding of one run), not a disturbed run (review ch07-10)
        if any(e < -0.01 for e in es) or any(not 0.70 <= r <= 1.30 for r in ratios):
            assert "可以当" not in text, text
        if any(e < -0.01 for e in es):
            assert "重跑" in text, text
        if "重跑" in text:
            assert "已用满" not in text, text
        if shares[0] < 0.95:
            assert "几乎空闲" not in text, text
        assert not ("几乎空闲" in text and "只用上" in text), text     # review ch07-11: never both


def test_a_just_loaded_machine_is_not_called_idle():
    # review ch07-10: a busy loop started seconds ago, the load average still 0.3, but one thread got 0.42 CPU
    text = thread_lab_report(_run((0.42, 0.70, 0.80), (1.0, 0.62, 0.55)), 2, 0.3)
    assert "几乎空闲" not in text and "测不出多花的 CPU 时间" in text


def test_a_rerun_verdict_does_not_first_read_e():
    # review ch07-10: a run that ends in 重跑 does not also say "已用满 ... 不是程序的开销"
    text = thread_lab_report(_run((1.0, 2.0, 2.0), (1.0, 0.49, 0.60), (1, 2, 4)), 2, 3.0)
    assert "重跑" in text and "已用满" not in text


def test_one_neighbour_on_two_cpus_is_not_an_idle_machine():
    # review ch07-11: with one busy neighbour (L = 1) a single thread still gets a whole CPU, but 2 threads get
    # 2 x 2 / (1 + 2) = 1.33 CPUs: the run is not idle even at load 0.3, and says nothing of hyper-threading
    text = thread_lab_report(_run((1.0, 4 / 3, 4 / 3), (1.0, 0.75 * 1.09, 0.75)), 2, 0.3)
    assert "几乎空闲" not in text and "只用上 1.33 个 CPU" in text and "超线程" not in text
