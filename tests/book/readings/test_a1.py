"""hetlab.book.readings.a1: every verdict follows from the numbers it prints (hand-made runs, so each right
reading is decided by hand)."""
import numpy as np
import pytest

from hetlab import schedulers as S
from hetlab.book import reference
from hetlab.book.readings import a1 as R
from hetlab.devices import Device
from hetlab.real.experiments import SweepReading
from hetlab.schedule import Schedule
from hetlab.tasks import Task, TaskGraph, independent_tasks

CAL = {"cpus": 2, "blas_threads": 2, "matmul_gflops": 80.0, "thread_overhead_s": 40e-6, "process_overhead_s": 200e-6}


def test_calibration_lines_print_both_overheads_and_the_stored_machines():
    text = R.calibration_lines(CAL, 400e-6, reference=reference.load("build-vm"), h200=reference.load("h200"))
    assert "线程池 40 µs，进程池 200 µs，进程池单次往返 400 µs" in text
    assert "单次往返是流水线 O_s 的 2.0 倍" in text and "是线程池的 5.0 倍" in text
    assert text.count("参照 · ") == 2 and "H200" in text and "BLAS 用 2 个线程" in text
    with pytest.raises(TypeError, match="cal"):
        R.calibration_lines({}, 1e-4)
    with pytest.raises(ValueError, match="round_trip"):
        R.calibration_lines(CAL, 0.0)


def _run(plan, start, end, cpu, policy):
    return Schedule(plan.graph, plan.devices, plan.device_of, np.array(start), np.array(end), policy,
                    info={"cpu_seconds": list(cpu)})


def test_plan_prediction_is_the_larger_of_the_plan_and_the_work_over_the_cores():
    # three devices, two tasks of 1 and one of 2 units: plan 2 units; busy 4 units over min(C, 3) cores
    plan = S.round_robin(independent_tasks([1.0, 1.0, 2.0]), [Device(f"d{k}", "CPU") for k in range(3)])
    assert R.plan_prediction(plan, 0.1, 1) == (1, pytest.approx(0.4))     # one core: all 4 units in turn
    assert R.plan_prediction(plan, 0.1, 2) == (2, pytest.approx(0.2))
    assert R.plan_prediction(plan, 0.1, 16) == (3, pytest.approx(0.2))    # the plan's own 2 units
    with pytest.raises(ValueError, match="cpus"):
        R.plan_prediction(plan, 0.1, 0)


def test_plan_lines_read_threads_and_processes_from_their_parallelism():
    plan = S.round_robin(independent_tasks([1.0, 1.0]), [Device(f"d{k}", "CPU") for k in range(2)])
    # threads: 2 x 0.4 CPU s in 1 s (0.80); processes: 2 x 0.5 CPU s in 0.5 s (2.00); one thread 0.8 in 1 s
    runs = {"thread pool": _run(plan, [0, 0], [1, 1], [0.4, 0.4], "thread pool"),
            "process pool": _run(plan, [0, 0], [0.5, 0.5], [0.5, 0.5], "process pool"),
            "sequential": _run(plan, [0, 0.5], [0.5, 1.0], [0.4, 0.4], "sequential")}
    text = R.plan_lines(runs, plan, 0.5, 2)
    assert "线程池 0.80 ≤ 1 + 0.05：2 个线程轮流执行" in text and "进程池 2.00 > 1 + 0.05" in text
    assert "完成时间 0.500 秒，不低于下界" in text            # bound: max(0.5, 1.0 / 2) = 0.5
    busy = dict(runs, **{"process pool": _run(plan, [0, 0], [1, 1], [0.3, 0.3], "process pool")})
    text = R.plan_lines(busy, plan, 0.5, 2)
    assert "进程池 0.60，没有超过 1 个核" in text and "只分到 0.80 个核" in text
    with pytest.raises(TypeError, match="runs"):
        R.plan_lines({}, plan, 0.5, 2)


def _sweep(saw=True, fine=True):
    # P = 2, W = 0.2 s: 1 -> 0.2, 2 -> 0.1, 3 -> 0.135 (or 0.09 without the tooth), 4 -> 0.1, 256 -> 0.14 (or 0.09)
    return SweepReading(2, 0.2, (1, 2, 3, 4, 256), (0.2, 0.1, 0.135 if saw else 0.09, 0.1, 0.14 if fine else 0.09))


def test_sweep_prediction_is_the_rounds_model():
    pred = R.sweep_prediction(_sweep(), 1e-4)
    assert pred[3] == pytest.approx(3e-4 + 2 * 0.2 / 3) and pred[256] == pytest.approx(256e-4 + 0.1)


def test_sweep_lines_say_what_the_numbers_show():
    text = R.sweep_lines(_sweep(), 1e-4, reference=reference.load("build-vm"))
    assert "锯齿：N = 3 比 N = 2 和 N = 4 都慢；比 N = 4 多 35.0 毫秒" in text and "独占第二轮" in text
    assert "切细：N = 256 比 N = 2 慢 40.0 毫秒" in text and "参照 · " in text
    flat = R.sweep_lines(_sweep(saw=False, fine=False), 1e-4)
    assert "N = 3 并不比 N = 2 和 N = 4 都慢" in flat and "独占" not in flat
    assert "N = 256 比 N = 2 快 10.0 毫秒" in flat and "多付一次派发" not in flat


def _dag():
    g = TaskGraph([Task("a", 2.0), Task("b", 2.0), Task("c", 2.0)], [("a", "c")])
    return g, [Device(f"worker{k}", "CPU", 1000.0) for k in range(2)]


def test_dag_prediction_adds_one_round_trip_per_task_shared_by_the_workers():
    g, workers = _dag()
    sim = S.central_queue(g, workers, ready="fifo")                 # a, b at 0-2 ms, c at 2-4 ms
    assert sim.makespan == pytest.approx(0.004)
    assert R.dag_prediction(sim, 1e-3) == pytest.approx(0.004 + 3 * 1e-3 / 2)


@pytest.mark.parametrize("late, words", [(0.0, "在 ±15% 之内"), (0.005, "比预测慢 15% 以上"),
                                         (-0.003, "比预测快 15% 以上")])
def test_dag_lines_band(late, words):
    g, workers = _dag()
    sim = S.central_queue(g, workers, ready="fifo")
    pred = R.dag_prediction(sim, 1e-3)                               # 5.5 ms
    shift = pred - sim.makespan + late
    real = Schedule(g, workers, sim.device_of, sim.start * (1 + shift / sim.makespan),
                    sim.end * (1 + shift / sim.makespan), "process pool")
    text = R.dag_lines(sim, real, 1e-3)
    assert words in text and f"{real.makespan / pred - 1:+.0%}" in text


def _placed(g, workers, sim, start_ms, end_ms):
    return Schedule(g, workers, sim.device_of, np.array(start_ms) / 1e3, np.array(end_ms) / 1e3, "process pool")


def test_dag_lines_read_the_cause_from_stretch_against_gaps():
    g, workers = _dag()
    sim = S.central_queue(g, workers, ready="fifo")                 # a, b at 0-2 ms on two workers, c at 2-4 ms
    # every task set to 2 ms ran 3 ms, no gaps: 3 ms of stretch, 0 of gaps -> the tasks themselves ran late
    late = R.dag_lines(sim, _placed(g, workers, sim, [0, 0, 3], [3, 3, 6]), 1e-3)
    assert "合计 3.0 毫秒；任务之间的空隙合计 0.0 毫秒" in late and "任务本身被拉长" in late
    # right lengths, a and b start 1 ms late and c 2 ms after a: 4 ms of gaps >= 3 round trips of 1 ms
    gaps = R.dag_lines(sim, _placed(g, workers, sim, [1, 1, 5], [3, 3, 7]), 1e-3)
    assert "空隙合计 4.0 毫秒（3 次往返合计 3.0 毫秒）" in gaps and "派发是主因" in gaps
    # exactly the simulation: no gaps at all, fewer than one round trip per task -> prefetched
    ahead = R.dag_lines(sim, sim, 1e-3)
    assert "比预测快 15% 以上" in ahead and "预先取走" in ahead
    assert "注意" not in ahead                                        # 1.5 ms of 5.5 ms: above the band


def test_dag_lines_say_when_the_band_cannot_see_the_dispatch():
    g, workers = _dag()
    sim = S.central_queue(g, workers, ready="fifo")
    text = R.dag_lines(sim, sim, 1e-5)                               # 3 x 10 us / 2 = 15 us of 4.015 ms
    assert "预测的派发只占预测的 0%" in text and "分辨不出它" in text


def test_plan_lines_explain_threads_beating_the_serial_run_in_wall_clock():
    plan = S.round_robin(independent_tasks([1.0, 1.0]), [Device(f"d{k}", "CPU") for k in range(2)])
    proc = _run(plan, [0, 0], [0.5, 0.5], [0.5, 0.5], "process pool")
    # threads: 0.8 CPU s in 0.9 s (0.89); one thread: 0.8 CPU s in 1.0 s (0.80) -> a larger share, not parallel
    runs = {"thread pool": _run(plan, [0, 0], [0.9, 0.9], [0.4, 0.4], "thread pool"), "process pool": proc,
            "sequential": _run(plan, [0, 0.5], [0.5, 1.0], [0.4, 0.4], "sequential")}
    text = R.plan_lines(runs, plan, 0.5, 2)
    assert "线程池的墙钟比单线程依次执行还短（0.900 对 1.000 秒），但不是并行：线程池分到的 CPU 份额更大" in text
    # threads: 0.6 CPU s in 0.9 s (0.67) < 0.80: the shorter wall comes from fewer CPU seconds
    fewer = dict(runs, **{"thread pool": _run(plan, [0, 0], [0.9, 0.9], [0.3, 0.3], "thread pool")})
    assert "这次线程池的循环用的 CPU 秒更少" in R.plan_lines(fewer, plan, 0.5, 2)
    slower = dict(runs, **{"thread pool": _run(plan, [0, 0], [1.1, 1.1], [0.4, 0.4], "thread pool")})
    assert "墙钟比单线程" not in R.plan_lines(slower, plan, 0.5, 2)
