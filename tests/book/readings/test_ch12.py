"""hetlab.book.readings.ch12: every verdict of chapter 12's measured cells follows from the numbers it prints.

The readings are built by hand, so each right reading is decided by hand from the numbers.
"""
from dataclasses import replace

import pytest

from hetlab.book import reference
from hetlab.book.readings import ch12 as R
from hetlab.real.experiments import GilReading, Run
from hetlab.real.split_timing import SplitTiming


def gil(threads=0.5, processes=1.8, serial=1.0, cpus=2, waits=(0.2, 0.025)):
    """A GilReading whose runs have the given effective parallelism (CPU seconds over 1 s of wall time)."""
    return GilReading(cpus, 8, cpus, True, Run(1.0, serial), Run(1.0, threads), Run(1.0, processes),
                      Run(waits[0], 0.0), Run(waits[1], 0.0))


def test_thread_verdict_draws_the_line_at_one_core_plus_the_tolerance():
    assert "≤ 1 + 0.05" in R.thread_verdict(1.05) and "与 GIL 的预测相符" in R.thread_verdict(0.3)
    # without the contrast (processes stuck at one core) no mechanism is asserted (review ch12-4 #6)
    assert R.thread_verdict(0.8, shown=False) == "线程池 0.80 ≤ 1 + 0.05：与 GIL 的预测相符（这次还区分不了，见下）"
    assert "同一时刻至多一个在算" not in R.gil_lines(gil(threads=0.8, processes=0.9))
    assert "同一时刻至多一个在算" in R.gil_lines(gil(threads=0.8, processes=1.8))
    assert "> 1 + 0.05" in R.thread_verdict(1.06) and "没有 GIL" in R.thread_verdict(1.5)
    with pytest.raises(ValueError, match="parallelism"):
        R.thread_verdict(-0.1)


@pytest.mark.parametrize("par, cores, serial, words, absent", [
    (1.80, 2, 1.0, "1.80 > 1 + 0.30：几个进程真的同时", "1 + 0.05"),   # review ch12-8 #6: the margin applied
    # review ch12-7 #5: 1.10 clears 1 + 0.05 but not the contrast's margin max(0.3, 2 x |1 - 1.0|) = 0.30
    (1.10, 2, 1.0, "比 1 个核只多 0.10，不到判据 0.30", "真的同时"),
    # serial 0.80 widens the margin to 2 x 0.20 = 0.40: 1.35 is within it
    (1.35, 2, 0.80, "不到判据 0.40", "真的同时"),
    (0.95, 2, 0.99, "这次本机没有第二个空闲的核", "别的程序"),          # idle-looking, still one core
    (0.60, 2, 0.62, "只分到 0.62 个核，别的程序正在用 CPU", "真的同时"),
    (0.90, 1, 0.90, "只有 1 个可用 CPU", "真的同时"),
])
def test_process_verdict(par, cores, serial, words, absent):
    text = R.process_verdict(par, cores, serial)
    assert words in text and absent not in text and f"{par:.2f}" in text


def test_gil_lines_predict_first_then_read_each_run():
    text = R.gil_lines(gil(), reference=reference.load("build-vm"))
    lines = text.splitlines()
    assert lines[0].startswith("本机 2 个可用 CPU。运行前的预测：8 个线程 ≤ 1 个核（GIL），2 个进程 ≤ 2 个核")
    assert "一个接一个 1.00，8 个线程 0.50，2 个进程 1.80" in lines[1]
    assert "≤ 1 + 0.05" in lines[2] and "真的同时" in lines[3]
    assert "快 8.0 倍" in lines[4] and "对比出现了" in lines[5] and lines[6].startswith("参照 · ")
    busy = R.gil_lines(gil(threads=0.4, processes=0.5, serial=0.45))
    assert "没有超过 1 个核" in busy and "只分到 0.45 个核" in busy and "参照" not in busy
    slow_waits = R.gil_lines(gil(waits=(0.2, 0.3)))
    assert "并没有更快" in slow_waits and "用处" not in slow_waits
    with pytest.raises(TypeError, match="reading"):
        R.gil_lines("reading")


def split(kernel_last=4.0, dispatch_last=0.5, pool_one=1.0):
    # 2 workers; calibrated W = 1 s, Os = 1 ms: the prediction at N = 10 is 10 ms + 5 rounds x 0.1 s = 0.51 s;
    # the pool burned 1.0, 1.2 and 4.6 CPU seconds
    return SplitTiming(10, 2, 1, (1, 2, 10), (pool_one, 0.6, 2.0), (1.0, 1.1, kernel_last),
                       (0.01, 0.02, dispatch_last), w0=1.0, os0=1e-3, pool_cpu=(1.0, 1.2, 4.6))


def test_split_prediction_is_the_rounds_model_with_w_fixed():
    assert R.split_prediction(split()) == pytest.approx((1.001, 0.502, 0.51))


def test_split_lines_compare_the_computations_growth_with_the_dispatch():
    text = R.split_lines(split(), reference=reference.load("build-vm"), h200=reference.load("h200"))
    assert "N = 10 时纯计算是 N = 1 的 4.00 倍（多 3000.0 毫秒），派发共 500.0 毫秒" in text
    assert "主要来自计算本身变慢" in text
    assert "线程池实测 2000.0 毫秒，预测 510.0 毫秒，实测多 1490.0 毫秒" in text
    assert text.count("参照 · ") == 2 and "倍）——每多一份约 15 µs" in text
    # review ch12-20 #2: the idle reference's calibration and its dispatch column read alike (5.0 and 5.0 µs)
    ref = reference.load("build-vm").split
    assert (f"参照的标定：空任务派发 O_s = {ref.os0 * 1e6:.1f} µs（对照：派发一栏 N = {ref.pieces[-1]} 时每个任务 "
            f"{ref.dispatch[-1] / ref.pieces[-1] * 1e6:.1f} µs）") in text
    assert "N = 1 → 2：线程池 1000.0 → 600.0 毫秒，N = 1 没有等核；快 1.67 倍，2 个空闲的核上理想是 2 倍" in text
    flat = SplitTiming(10, 2, 1, (1, 2, 10), (1.0, 1.1, 2.0), (1.0, 1.1, 4.0), (0.01, 0.02, 0.5), w0=1.0, os0=1e-3)
    # 1.0 -> 1.1 s is 0.91 x: within 1 +- twice the 5 % noise floor, so no speed-up (nor slow-down) is read
    assert "没有明显更快（0.91 倍，在本次噪声 5% 的两倍以内）" in R.split_lines(flat)
    # review ch12-5 #3a: 8.4 -> 8.4 ms must not read "快 1.00 倍"
    same = SplitTiming(600, 2, 1, (1, 2), (8.4e-3, 8.38e-3), (8.4e-3, 8.4e-3), (1e-4, 1e-4), w0=8.4e-3, os0=5e-6)
    assert "没有明显更快（1.00 倍" in R.descent_line(same) and "快 1.00 倍" not in R.descent_line(same)
    # 1.0 -> 1.5 s: 0.67 x, beyond the band: slower, said so
    slow = SplitTiming(10, 2, 1, (1, 2, 10), (1.0, 1.5, 2.0), (1.0, 1.1, 4.0), (0.01, 0.02, 0.5), w0=1.0, os0=1e-3)
    assert "反而更慢（0.67 倍）" in R.descent_line(slow)
    # stored readings without the pool's CPU seconds: a dash in the table and no gap verdict
    assert "—" in R.split_lines(flat) and "预测 510.0 毫秒" not in R.split_lines(flat)
    one = SplitTiming(10, 1, 1, (1, 10), (1.0, 2.0), (1.0, 4.0), (0.01, 0.5), w0=1.0, os0=1e-3)
    assert "只有 1 个可用 CPU" in R.split_lines(one) and "N = 1 →" not in R.split_lines(one)
    dispatch_bound = R.split_lines(split(kernel_last=1.2, dispatch_last=0.5))
    assert "这次派发比计算的增量还大" in dispatch_bound and "主要来自计算本身" not in dispatch_bound
    with pytest.raises(TypeError, match="timing"):
        R.split_lines(None)


@pytest.mark.parametrize("threads, processes, cores, words, absent", [
    (0.60, 1.90, 2, "对比出现了", "出现不了"),                  # an idle two-core machine: 0.60 vs 1.90 cores
    (0.63, 0.49, 2, "这次对比出现不了", "对比出现了"),          # the stored busy run: no second free core
    (1.05, 1.29, 2, "对比很弱", "对比出现了"),                  # 0.29 above one core: under the margin 0.3
    (0.96, 1.08, 2, "对比很弱：进程池 1.08 只比 1 个核多 0.08，不到判据 0.30", "对比出现了"),  # review ch12-6 #4
    (1.05, 1.31, 2, "对比出现了", "很弱"),                      # 0.31 > 0.3, threads within the tolerance
    (0.90, 0.90, 1, "只有 1 个可用 CPU", "对比出现了"),
    (1.80, 1.90, 2, "都超过 1 个核", "对比出现了"),             # a free-threaded interpreter
])
def test_contrast_verdict_appears_only_when_the_process_pool_got_more_than_one_core(
        threads, processes, cores, words, absent):
    text = R.contrast_verdict(threads, processes, cores)
    assert words in text and absent not in text


def test_contrast_margin_grows_with_the_serial_runs_own_noise():
    # one thread alone read 0.8 cores: the run's noise is |1 - 0.8| = 0.2, the margin 2 x 0.2 = 0.4 > 0.3,
    # so 1.35 cores is a weak contrast and 1.45 a shown one
    assert R.contrast_verdict(0.7, 1.35, 2, serial=0.8).startswith("对比很弱") and "判据 0.40" in \
        R.contrast_verdict(0.7, 1.35, 2, serial=0.8)
    assert R.contrast_verdict(0.7, 1.45, 2, serial=0.8).startswith("对比出现了")
    assert "对比很弱" in R.gil_lines(gil(threads=0.96, processes=1.08, serial=1.0))


def test_the_process_line_and_the_contrast_line_use_the_same_margin():
    # review ch12-7 #5: processes 1.10 with serial 1.0: the contrast is "weak", so the process line must not
    # claim processes computing side by side
    text = R.gil_lines(gil(threads=0.96, processes=1.10))
    assert "对比很弱" in text and "真的同时" not in text
    assert "对比出现了" in R.gil_lines(gil()) and "真的同时" in R.gil_lines(gil())


def test_the_impossible_row_bound_allows_one_tick_per_thread_on_another_cpu():
    # review ch12-7 #6: 16 CPUs, N = 16 blocks x 2 BLAS threads: min(32, 16) = 16 threads can run elsewhere, so
    # the bound is 16 x 5 ms + 16 x 4 ms = 144 ms; one fixed tick would have flagged 120 ms (> 84 ms)
    def run(cpu):
        return SplitTiming(600, 16, 2, (1, 16), (10e-3, 5e-3), (9e-3, 10e-3), (0.1e-3, 0.2e-3), w0=9e-3,
                           os0=5e-6, pool_cpu=(10e-3, cpu))
    assert R._impossible_rows(run(120e-3)) == () and R._impossible_rows(run(150e-3)) == (16,)


def test_gil_lines_say_whether_the_contrast_could_appear():
    assert "对比出现了" in R.gil_lines(gil())                               # processes 1.8 > 1.05, threads 0.5
    busy = R.gil_lines(gil(threads=0.63, processes=0.49, serial=0.48), reference=reference.load("build-vm"))
    assert "这次对比出现不了" in busy and "区分不了有没有 GIL" in busy
    assert busy.splitlines()[-1].endswith("这份参照测时也没有空闲的核，对比同样没有出现")   # 0.56 <= 1.05


def test_split_lines_name_the_largest_dip_of_the_computation():
    # kernel 1.0, 1.1, 4.0 s rises everywhere; 1.0, 3.0, 2.0, 4.0 dips once, by 1 s between N = 2 and N = 10
    assert "纯计算一栏随 N 单调上涨" in R.split_lines(split())
    dip = SplitTiming(10, 2, 1, (1, 2, 10, 20), (1.0, 0.6, 2.0, 3.0), (1.0, 3.0, 2.0, 4.0),
                      (0.01, 0.02, 0.5, 0.6), w0=1.0, os0=1e-3)
    # the run's noise: w0 = kernel[0] = 1.0 s, so the floor 5 % holds; the 33 % fall exceeds twice that
    assert "N = 2 → 10 时从 3000.0 降到 2000.0 毫秒（回落 33%，超过本次噪声 5% 的两倍）——很可能是 BLAS" in \
        R.split_lines(dip)
    # a 4 % fall (1.00 -> 0.96 s) is within twice the 5 % floor: read as noise, no BLAS story
    small = SplitTiming(10, 2, 1, (1, 2, 10, 20), (1.0, 0.6, 2.0, 3.0), (1.0, 1.0, 0.96, 4.0),
                        (0.01, 0.02, 0.5, 0.6), w0=1.0, os0=1e-3)
    assert "最大的回落（N = 2 → 10，4%）不超过本次噪声 5% 的两倍" in R.split_lines(small)
    assert "BLAS 按块" not in R.split_lines(small)
    # a noisy run: the calibration 1.0 s against the one-block column 1.2 s is 20 % noise, so a 33 % fall is not
    # twice it
    noisy = SplitTiming(10, 2, 1, (1, 2, 10, 20), (1.0, 0.6, 2.0, 3.0), (1.2, 3.0, 2.0, 4.0),
                        (0.01, 0.02, 0.5, 0.6), w0=1.0, os0=1e-3)
    assert "不超过本次噪声 20% 的两倍" in R.split_lines(noisy)


def test_the_descent_is_read_only_when_the_one_block_run_did_not_wait():
    # review ch12-3's stored run: N = 1 took 34.9 ms of wall for 9.7 ms of CPU, N = 2 23.5 ms. 25.2 ms of waiting
    # is far beyond twice the 5 % noise floor of 9.7 ms: the 1.49 ratio reads the wait, not a second core
    stored = SplitTiming(600, 2, 1, (1, 2, 600), (34.94e-3, 23.53e-3, 107.38e-3), (9.65e-3, 10.99e-3, 26.06e-3),
                         (0.13e-3, 0.17e-3, 4.47e-3), w0=9.65e-3, os0=5.6e-6, pool_cpu=(9.7e-3, 11.0e-3, 40e-3))
    assert R.waiting(stored, 1) == pytest.approx(25.24e-3)
    line = R.descent_line(stored)
    assert "但 N = 1 本身就等了 25.2 毫秒的核（墙钟 34.9、CPU 9.7 毫秒）" in line
    assert "倍" not in line and "要看下坡，需要此刻有空闲的核" in line
    assert line in R.split_lines(stored)
    # an idle machine (the stored idle build VM: its N = 1 wall is under its CPU seconds): the ratio is read,
    # recomputed here from the stored walls
    idle = reference.load("build-vm-idle").split
    assert R.waiting(idle, 1) < 0 and f"N = 1 没有等核；快 {idle.pool[0] / idle.pool[1]:.2f} 倍" in R.descent_line(idle)
    # 4 % of waiting at N = 1 is within twice the 5 % floor: still read as a speed-up
    assert "快 1.73 倍" in R.descent_line(split(pool_one=1.04))
    assert "等了" in R.descent_line(split(pool_one=1.2))          # 20 % > 10 %
    # the P-block run's own wait is named when it exceeds the band: 0.9 s of wall for 1.2 CPU s over 2 threads
    # waited 0.9 - 0.6 = 0.3 s > 2 x 5 % x 0.6 s; in split() (0.6 s of wall) it waited nothing
    slow_two = SplitTiming(10, 2, 1, (1, 2, 10), (1.0, 0.9, 2.0), (1.0, 1.1, 4.0), (0.01, 0.02, 0.5), w0=1.0,
                           os0=1e-3, pool_cpu=(1.0, 1.2, 4.6))
    assert R.descent_line(slow_two).endswith("快 1.11 倍，2 个空闲的核上理想是 2 倍；N = 2 那次等了 300.0 毫秒的核")
    assert "那次等了" not in R.descent_line(split())
    one = SplitTiming(10, 1, 1, (1, 10), (1.0, 2.0), (1.0, 4.0), (0.01, 0.5), w0=1.0, os0=1e-3)
    assert "只有 1 个可用 CPU" in R.descent_line(one)
    with pytest.raises(ValueError, match="pieces"):
        R.descent_line(SplitTiming(10, 2, 1, (1, 10), (1.0, 2.0), (1.0, 4.0), (0.01, 0.5), w0=1.0, os0=1e-3))


def test_gap_verdict_splits_the_gap_into_computation_overhead_and_waiting():
    # split(): P = 2, N = 10, W = 1 s, Os = 1 ms. Prediction 10 ms + 5 rounds x 0.1 s = 0.51 s; pool 2.0 s: gap
    # 1.49 s = computation 0.5 x (4 - 1) = 1.5 s + overhead 0.5 x (4.6 - 4.0) - 0.01 = 0.29 s
    # + waiting 2.0 - 0.5 x 4.6 = -0.3 s
    assert R.gap_split(split()) == pytest.approx((1.49, 1.5, 0.29, -0.3))
    # ... but 4.6 CPU seconds in 2.0 s of wall on 2 cores is impossible (> 2 x 2.0 + two 4 ms ticks, one per
    # thread on another CPU): flagged, not split (review ch12-6 #2)
    assert R.gap_verdict(split()).endswith("三份拆不开，这次不拆")
    assert ("N = 10 一行的线程池 CPU 4600.00 毫秒超过 2 个核 × 墙钟 2000.00 毫秒再加 2 个时钟节拍"
            "（按本书构建机每个 4 毫秒计）") in R.split_lines(split())
    # 3.9 CPU seconds fit: 1.49 s = 1.5 + (0.5 x (3.9 - 4.0) - 0.01 = -0.06) + (2.0 - 0.5 x 3.9 = 0.05)
    text = R.gap_verdict(replace(split(), pool_cpu=(1.0, 1.2, 3.9)))
    assert "= 计算变慢 +1500.0、其余开销 -60.0、等待 +50.0 毫秒" in text
    assert text.endswith("最大的一份是计算变慢：模型假设 W 不随 N 变，没有算进它")
    # review ch12-3's pinned probe: 192 ms of wall for 42 ms of the pool's CPU at N = 600 against a kernel of 27 ms.
    # prediction 600 x 5.9 us + 300 x 8.83 / 600 ms = 3.54 + 4.415 = 7.955 ms; gap 184.045 ms
    # = 0.5 x (27 - 8.83) = 9.085 + 0.5 x (42 - 27) - 3.54 = 3.96 + waiting 192 - 21 = 171 ms
    busy = SplitTiming(600, 2, 1, (1, 600), (9.13e-3, 192e-3), (9.18e-3, 27e-3), (0.12e-3, 4.10e-3),
                       w0=8.83e-3, os0=5.9e-6, pool_cpu=(9.2e-3, 42e-3))
    assert R.gap_split(busy) == pytest.approx((184.045e-3, 9.085e-3, 3.96e-3, 171e-3))
    text = R.gap_verdict(busy)
    assert "计算变慢 +9.1、其余开销 +4.0、等待 +171.0 毫秒：最大的一份是等待" in text
    assert "没有算进" not in text
    # a pool that burned much more CPU than the computation (GIL hand-offs): overhead is the largest part
    churn = SplitTiming(600, 2, 1, (1, 600), (9.13e-3, 60e-3), (9.18e-3, 10e-3), (0.12e-3, 4.10e-3),
                        w0=8.83e-3, os0=5.9e-6, pool_cpu=(9.2e-3, 110e-3))
    # gap 60 - 7.955 = 52.045 = 0.585 + (50 - 3.54 = 46.46) + (60 - 55 = 5)
    assert R.gap_split(churn) == pytest.approx((52.045e-3, 0.585e-3, 46.46e-3, 5e-3))
    assert "最大的一份是其余开销" in R.gap_verdict(churn)
    quick = SplitTiming(600, 2, 1, (1, 600), (9.13e-3, 7.0e-3), (9.18e-3, 23.82e-3), (0.12e-3, 4.10e-3),
                        w0=8.83e-3, os0=5.9e-6, pool_cpu=(9.2e-3, 14e-3))
    assert "实测少 1.0 毫秒 = " in R.gap_verdict(quick) and "最大的一份" not in R.gap_verdict(quick)
    with pytest.raises(ValueError, match="pool_cpu"):
        R.gap_split(SplitTiming(10, 2, 1, (1, 10), (1.0, 2.0), (1.0, 4.0), (0.01, 0.5), w0=1.0, os0=1e-3))


def many_cores(workers, pool_600, pool_cpu_600):
    """A synthetic reading of an idle machine with ``workers`` CPUs: W = 8 ms in one block, 1 ms more at N = 600;
    the pool's wall at N = 1 equals its CPU (no waiting), and N = P takes W / P."""
    pieces = tuple(sorted({1, 2, 4, 16, 600, workers}))
    pool = tuple(8e-3 if k == 1 else (8e-3 / min(k, workers) if k <= workers else 8e-3 / workers) for k in pieces)
    pool = pool[:-1] + (pool_600,)
    kernel = tuple(8e-3 if k < 600 else 9e-3 for k in pieces)
    return SplitTiming(600, workers, 1, pieces, pool, kernel, tuple(k * 5e-6 for k in pieces), w0=8e-3,
                       os0=5e-6, pool_cpu=tuple(kernel[:-1]) + (pool_cpu_600,))


@pytest.mark.parametrize("workers", [4, 8, 16])
def test_split_lines_read_the_descent_on_many_cores(workers):
    # review ch12-4 #4: an 8-core reader lost the N = 1 -> P line. N = 1 -> P: 8 ms -> 8 / P ms, P times faster
    text = R.split_lines(many_cores(workers, 5e-3, 12e-3))
    assert f"N = 1 → {workers}：线程池 8.0 → {8 / workers:.1f} 毫秒，N = 1 没有等核；快 {workers:.2f} 倍" in text


def test_split_lines_say_when_the_descent_was_not_measured_and_name_a_starved_pool():
    t = many_cores(8, 5e-3, 12e-3)
    drop = SplitTiming(t.n, 8, 1, (1, 2, 600), (8e-3, 4e-3, 5e-3), (8e-3, 8e-3, 9e-3), (5e-6, 1e-5, 3e-3),
                       w0=8e-3, os0=5e-6, pool_cpu=(8e-3, 8e-3, 12e-3))
    assert "N = 1 → 8 的一步没有量：块数 (1, 2, 600) 里缺 1 或 P = 8" in R.split_lines(drop)
    # 16 cores, N = 600: prediction 600 x 5 us + 38 rounds x 8 / 600 ms = 3 + 0.5067 = 3.507 ms; the pool took
    # 20 ms for 12 ms of CPU: waiting 20 - 38/600 x 12 = 19.24 ms is the largest part. The dispatch column says
    # 600 x 5 us = 3 ms, less than half of 19.24 ms: a dispatcher done in 3 ms cannot explain it, not named
    idle16 = many_cores(16, 20e-3, 12e-3)
    text = R.gap_verdict(idle16)
    assert "最大的一份是等待" in text and "等派发" not in text
    # the same run with 12 ms of dispatch (>= 19.24 / 2): the dispatcher could have kept the threads idle
    starved = replace(idle16, dispatch=idle16.dispatch[:-1] + (12e-3,))
    assert "派发共用了 12.0 毫秒 CPU，不少于等待的一半，也可能是在等派发" in R.gap_verdict(starved)
    # review ch12-5 #1: 2 cores, one held by another program. Wall 27 ms, pool CPU 26 ms (26 / 54 = 48 % of
    # P x wall), dispatch 3.9 ms: waiting 27 - 26 / 2 = 14 ms is the largest part (computation 0.5 x 1 = 0.5,
    # other 0.5 x 17 - 3 = 5.5), and 3.9 ms of dispatch cannot account for 14 ms: no starvation named
    busy = many_cores(2, 27e-3, 26e-3)
    busy = replace(busy, dispatch=busy.dispatch[:-1] + (3.9e-3,))
    text = R.gap_verdict(busy)
    assert "等待 +14.0 毫秒：最大的一份是等待" in text and "等派发" not in text
    assert "等派发" in R.gap_verdict(replace(busy, dispatch=busy.dispatch[:-1] + (7.5e-3,)))


def test_the_calibration_is_printed_beside_the_dispatch_columns_own_figure():
    # review ch12-11 #1: O_s is checked in one clause against dispatch / N at the most pieces (3 ms / 600 = 5 us)
    t = SplitTiming(600, 2, 1, (1, 600), (1.0, 0.5), (1.0, 1.0), (0.0, 3e-3), w0=1.0, os0=6e-6)
    assert "空任务派发 O_s = 6.0 µs（对照：派发一栏 N = 600 时每个任务 5.0 µs）；线程池 P = 2" in R.split_lines(t)


def test_a_margin_beyond_the_cores_is_called_unattainable_not_a_short_share():
    # review ch12-21 #8c: one thread alone at 0.425 -> margin 1.15; on 2 CPUs a pool would need 2.15 cores
    weak = R.contrast_verdict(0.4, 1.12, 2, serial=0.425)
    assert weak.startswith("对比很弱") and "判据已超过本机最多能多给的 1 个核" in weak and "一小段时间" not in weak
    assert "判据已超过本机最多能多给的 1 个核" in R.process_verdict(1.12, 2, 0.425)
    assert "一小段时间" in R.contrast_verdict(0.96, 1.08, 2) and "一小段时间" in R.process_verdict(1.1, 2, 1.0)
