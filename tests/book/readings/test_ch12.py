"""hetlab.book.readings.ch12: every verdict of chapter 12's measured cells follows from the numbers it prints.

The readings are built by hand, so each right reading is decided by hand from the numbers.
"""
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
    assert "> 1 + 0.05" in R.thread_verdict(1.06) and "没有 GIL" in R.thread_verdict(1.5)
    with pytest.raises(ValueError, match="parallelism"):
        R.thread_verdict(-0.1)


@pytest.mark.parametrize("par, cores, serial, words, absent", [
    (1.80, 2, 1.0, "几个进程真的同时", "没有超过"),
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


def split(kernel_last=4.0, dispatch_last=0.5):
    # 2 workers; calibrated W = 1 s, Os = 1 ms: the prediction at N = 10 is 10 ms + 5 rounds x 0.1 s = 0.51 s
    return SplitTiming(10, 2, 1, (1, 2, 10), (1.0, 0.6, 2.0), (1.0, 1.1, kernel_last), (0.01, 0.02, dispatch_last),
                       w0=1.0, os0=1e-3)


def test_split_prediction_is_the_rounds_model_with_w_fixed():
    assert R.split_prediction(split()) == pytest.approx((1.001, 0.502, 0.51))


def test_split_lines_compare_the_computations_growth_with_the_dispatch():
    text = R.split_lines(split(), reference=reference.load("build-vm"), h200=reference.load("h200"))
    assert "N = 10 时纯计算是 N = 1 的 4.00 倍（多 3000.0 毫秒），派发共 500.0 毫秒" in text
    assert "主要来自计算本身变慢" in text
    assert "线程池实测 2000.0 毫秒，预测 510.0 毫秒，实测多 1490.0 毫秒" in text
    assert text.count("参照 · ") == 2 and "倍）——每多一份约 15 µs" in text
    assert "N = 1 → 2：线程池 1000.0 → 600.0 毫秒，快 1.67 倍" in text
    flat = SplitTiming(10, 2, 1, (1, 2, 10), (1.0, 1.1, 2.0), (1.0, 1.1, 4.0), (0.01, 0.02, 0.5), w0=1.0, os0=1e-3)
    assert "没有更快（0.91 倍）" in R.split_lines(flat)
    one = SplitTiming(10, 1, 1, (1, 10), (1.0, 2.0), (1.0, 4.0), (0.01, 0.5), w0=1.0, os0=1e-3)
    assert "只有 1 个可用 CPU" in R.split_lines(one) and "N = 1 →" not in R.split_lines(one)
    dispatch_bound = R.split_lines(split(kernel_last=1.2, dispatch_last=0.5))
    assert "这次派发比计算的增量还大" in dispatch_bound and "主要来自计算本身" not in dispatch_bound
    with pytest.raises(TypeError, match="timing"):
        R.split_lines(None)


@pytest.mark.parametrize("threads, processes, cores, words, absent", [
    (0.60, 1.90, 2, "对比出现了", "出现不了"),                  # an idle two-core machine: 0.60 vs 1.90 cores
    (0.63, 0.49, 2, "这次对比出现不了", "对比出现了"),          # the stored busy run: no second free core
    (1.05, 1.06, 2, "对比出现了", "出现不了"),                  # both sides of the tolerance 0.05
    (0.90, 0.90, 1, "只有 1 个可用 CPU", "对比出现了"),
    (1.80, 1.90, 2, "都超过 1 个核", "对比出现了"),             # a free-threaded interpreter
])
def test_contrast_verdict_appears_only_when_the_process_pool_got_more_than_one_core(
        threads, processes, cores, words, absent):
    text = R.contrast_verdict(threads, processes, cores)
    assert words in text and absent not in text


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


def test_gap_verdict_splits_the_gap_into_computation_dispatch_and_waiting():
    # split(): P = 2, N = 10, W = 1 s, Os = 1 ms. Prediction 10 ms + 5 rounds x 0.1 s = 0.51 s; pool 2.0 s: gap
    # 1.49 s = computation 5 x (4 - 1) / 10 = 1.5 s + dispatch 0.5 - 0.01 = 0.49 s + waiting -0.5 s
    assert R.gap_split(split()) == pytest.approx((1.49, 1.5, 0.49, -0.5))
    text = R.gap_verdict(split())
    assert "= 计算变慢 +1500.0、派发之差 +490.0、CPU 秒里看不到的等待 -500.0 毫秒" in text
    assert text.endswith("最大的一份是计算变慢：模型假设 W 不随 N 变，没有算进它")
    # the stored busy run of review ch12-2: the computation grows little, the pool's wall grows much.
    # prediction 600 x 5.9 us + 300 x 8.83 / 600 ms = 3.54 + 4.415 = 7.955 ms; gap 63.145 ms
    # = 300 x (23.82 - 8.83) / 600 = 7.495 + (4.10 - 3.54) = 0.56 + waiting 55.09 ms
    busy = SplitTiming(600, 2, 1, (1, 600), (9.13e-3, 71.10e-3), (9.18e-3, 23.82e-3), (0.12e-3, 4.10e-3),
                       w0=8.83e-3, os0=5.9e-6)
    assert R.gap_split(busy) == pytest.approx((63.145e-3, 7.495e-3, 0.56e-3, 55.09e-3))
    text = R.gap_verdict(busy)
    assert "计算变慢 +7.5、派发之差 +0.6、CPU 秒里看不到的等待 +55.1 毫秒：最大的一份是等待" in text
    assert "没有算进" not in text
    # a calibration that overstates O_s (54 us a task, 9 us measured): the dispatch part is negative
    over = SplitTiming(600, 2, 1, (1, 600), (26.1e-3, 46.1e-3), (10.0e-3, 25.4e-3), (0.16e-3, 5.4e-3),
                       w0=10.2e-3, os0=54e-6)
    # prediction 32.4 + 5.1 = 37.5 ms; gap 8.6 = 7.6 + (5.4 - 32.4 = -27.0) + 28.0
    assert R.gap_split(over) == pytest.approx((8.6e-3, 7.6e-3, -27.0e-3, 28.0e-3))
    assert "最大的一份是等待" in R.gap_verdict(over)
    quick = SplitTiming(600, 2, 1, (1, 600), (9.13e-3, 7.0e-3), (9.18e-3, 23.82e-3), (0.12e-3, 4.10e-3),
                        w0=8.83e-3, os0=5.9e-6)
    assert "实测少 1.0 毫秒 = " in R.gap_verdict(quick) and "最大的一份" not in R.gap_verdict(quick)
