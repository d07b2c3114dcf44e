"""Chapter 12.1's process pool against the prediction from the CPUs other work kept busy before the run."""
import pytest

from hetlab.book.readings import ch12 as R
from hetlab.book.readings.ch12_share import SHARE_NOISE, share_prediction, share_verdict
from hetlab.real.cpu_load import share_range
from tests.book.readings.test_ch12 import gil

# runs on the 2-vCPU build VM (December 2026): (CPUs, busy before, one thread alone, process pool)
IDLE = [(2, 0.0, 1.00, 1.96), (2, 0.0, 1.00, 1.99), (2, 0.15, 1.00, 1.69), (2, 0.15, 1.00, 1.87)]
PINNED = [(1, 0.0, 1.00, 1.00), (1, 0.0, 1.00, 1.00)]                  # taskset -c 0
BUSY = [(2, 1.00, 1.00, 1.06), (2, 1.03, 1.00, 1.20), (2, 1.00, 1.00, 1.16), (2, 1.00, 1.00, 1.21),
        (2, 2.00, 0.68, 1.00), (2, 2.00, 0.57, 0.92)]                # one spinner; two spinners


# more runnable threads than CPUs (review ch12-20, the 2-vCPU build VM): one spinner on the already loaded VM,
# and three steady spinners started before the sample; (busy before, one thread alone, process pool)
OVERFULL = [(2.00, 0.57, 0.57), (2.00, 0.38, 0.31), (2.00, 0.40, 0.37)]


@pytest.mark.parametrize("cpus, busy, serial, measured", IDLE + PINNED + BUSY)
def test_idle_pinned_and_busy_runs_agree_with_their_prediction(cpus, busy, serial, measured):
    text = share_verdict(measured, cpus, cpus, busy, serial)
    assert text.endswith("与运行前量到的空闲 CPU 相符") or text.endswith("与运行前量到的满载相符")


def test_a_machine_that_got_busier_during_the_run_is_said_so_with_the_evidence():
    # one spinner, and a second program started during the run: one thread alone got 0.36 of a core
    text = share_verdict(0.50, 2, 2, 1.0, 0.36)
    assert text.startswith("进程池 0.50 低于预测的 1.00–1.33 个核（放宽 0.1 后 0.90）")
    assert "比运行前那 0.2 秒多" in text and text.endswith("一个线程单独运行也只分到 0.36 个核")
    assert "让出了" in share_verdict(1.9, 2, 2, 1.0, 1.0)


@pytest.mark.parametrize("busy, serial, measured", OVERFULL)
def test_a_full_machine_predicts_at_most_and_blames_no_change_it_cannot_see(busy, serial, measured):
    # review ch12-20 #1: idle time reads 2.00 for two spinners and for three; the pool's 0.31 is not a busier run
    assert "至多能用 1.00 个核" in share_prediction(2, 2, busy) and "1.00–" not in share_prediction(2, 2, busy)
    text = share_verdict(measured, 2, 2, busy, serial)
    assert text.startswith(f"进程池 {measured:.2f} 没有超过预测的上限 1.00 个核")
    assert "可能多于核数" in text and "也可能运行中更忙了" in text and "比运行前那 0.2 秒多" not in text


@pytest.mark.parametrize("cpus", [1, 2, 4, 16])
@pytest.mark.parametrize("extra", [0, 1, 2, 5, 20])
def test_any_number_of_competing_threads_beyond_the_cpus_is_never_called_a_busier_run(cpus, extra):
    # k >= C CPU-bound threads, each at a fair share: the pool gets C N_p / (N_p + k), the sample reads C
    competing = cpus + extra
    pool = cpus * cpus / (cpus + competing)
    text = share_verdict(pool, cpus, cpus, float(cpus), pool / cpus)
    assert "比运行前那 0.2 秒多" not in text and "高于" not in text
    assert "至多能用" in share_prediction(cpus, cpus, float(cpus))
    assert text.endswith("满载相符") == (extra == 0 or pool >= cpus / 2 - SHARE_NOISE)


@pytest.mark.parametrize("busy", [0.0, 0.3, 1.0, 1.5, 1.85])
def test_the_verdict_agrees_exactly_on_the_printed_range(busy):
    low, high = share_range(2, 2, busy)
    for par in (low - SHARE_NOISE + 1e-9, (low + high) / 2, high + SHARE_NOISE - 1e-9):
        assert "相符" in share_verdict(par, 2, 2, busy, 1.0)
    assert "低于" in share_verdict(low - SHARE_NOISE - 1e-3, 2, 2, busy, 1.0)
    assert "高于" in share_verdict(high + SHARE_NOISE + 1e-3, 2, 2, busy, 1.0)
    assert f"{low:.2f}" in share_prediction(2, 2, busy) and f"{high:.2f}" in share_prediction(2, 2, busy)


def test_gil_lines_predict_from_the_busy_cpus_or_say_they_could_not():
    text = R.gil_lines(gil(processes=1.2), busy=1.0)
    assert "运行前 0.2 秒里别的程序占着 1.00 个 CPU，按此预测 2 个进程能用 1.00–1.33 个核" in text.splitlines()[0]
    assert "进程池 1.20 在预测的 1.00–1.33 个核以内" in text
    full = R.gil_lines(gil(processes=0.4), busy=2.0).splitlines()
    assert full[0].endswith("只能预测 2 个进程至多能用 1.00 个核")
    assert any(line.startswith("进程池 0.40 没有超过预测的上限 1.00 个核") for line in full)
    plain = R.gil_lines(gil())
    assert "没有 /proc/stat" in plain.splitlines()[0] and "在预测的" not in plain
    with pytest.raises(ValueError, match="busy"):
        R.gil_lines(gil(), busy=3.0)


def test_a_pool_above_the_bound_of_a_full_machine_is_compared_with_that_bound_only():
    # review ch12-21 #3: the prediction said "至多 1.00"; the verdict must not quote share_range's internal 0.00
    text = share_verdict(1.19, 2, 2, 2.0, 0.9)
    assert text == "进程池 1.19 高于预测的上限 1.00 个核（放宽 0.1 后 1.10）：运行中别的程序让出了 CPU"
    assert "0.00" not in text
    assert "高于预测的 1.00–1.33 个核" in share_verdict(1.5, 2, 2, 1.0, 1.0)
