"""hetlab.book.readings.a1: every verdict follows from the numbers it prints (hand-made runs, so each right
reading is decided by hand), and A1.4's prediction interval means what it says."""
import numpy as np
import pytest

from hetlab import schedulers as S
from hetlab.book import reference
from hetlab.book.readings import a1 as R
from hetlab.book.readings import a1_band as B
from hetlab.book.views import a1
from hetlab.devices import Device
from hetlab.real.experiments import SweepReading
from hetlab.schedule import Schedule
from hetlab.tasks import Task, TaskGraph, independent_tasks

CAL = {"cpus": 2, "blas_threads": 2, "matmul_gflops": 80.0, "thread_overhead_s": 40e-6, "process_overhead_s": 200e-6}
# three calibration graphs: released gaps 0.8/0.6, 1.0, 0.6 ms (mean 0.75 ms), queued 90 and 120 us (mean
# 105 us; the second graph had none), stretch 100, 80, 90 us (mean 90 us)
HAND = {"released": ((8e-4, 6e-4), (1e-3,), (6e-4,)), "queued": ((9e-5,), (), (1.2e-4,)),
        "stretch": ((1e-4,), (8e-5,), (9e-5,))}
# ten (predicted, measured) pairs: measured / predicted 0.8, 0.85, ..., 1.3 (at 80%: the 1st and 10th of 11 ranks)
PAIRS = [(1e-3, 1e-3 * r) for r in (0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 0.95, 1.05, 0.85, 1.15)]


def test_calibration_lines_print_the_pools_os_the_hand_overs_and_the_stored_machines():
    text = R.calibration_lines(CAL, reference=reference.load("build-vm-idle"), h200=reference.load("h200"),
                               pipelined=80e-6, workers=2, handovers=HAND)
    assert "线程池 40 µs，进程池 80 µs" in text and "BLAS 用 2 个线程" in text
    assert "进程池的 O_s（2 个工作进程上三次 200 个空任务中最快的一次）是线程池的 2.0 倍" in text
    assert ("A1.4 的执行器上的交接（3 张与 A1.4 同类的图，各跑一次）：被释放的任务平均 750 µs（4 个），"
            "排队的 105 µs（2 个），每个任务平均拉长 90 µs") in text
    assert text.count("参照 · ") == 2 and "H200" in text and "单次往返" not in text
    idle = reference.load("build-vm-idle").calibration          # recorded with its hand-overs: printed with them
    assert f"被释放的任务平均 {R.handover_costs(idle['handovers']).released * 1e6:.0f} µs" in text
    with pytest.raises(TypeError, match="cal"):
        R.calibration_lines({})
    with pytest.raises(ValueError, match="pipelined and workers"):
        R.calibration_lines(CAL, pipelined=80e-6)


def test_handover_costs_are_the_means_and_a_missing_queue_is_charged_the_released_mean():
    c = R.handover_costs(HAND)
    assert (c.released, c.queued, c.stretch) == pytest.approx((7.5e-4, 1.05e-4, 9e-5))
    none_queued = dict(HAND, queued=((), (), ()))
    assert R.handover_costs(none_queued).queued == pytest.approx(7.5e-4)
    with pytest.raises(TypeError, match="handovers"):
        R.handover_costs({"released": ()})
    with pytest.raises(ValueError, match="at least 3"):
        R.handover_costs({"released": ((1e-4,),), "queued": ((1e-4,),), "stretch": ((0.0,),)})
    with pytest.raises(ValueError, match="released"):
        R.handover_costs({"released": ((),) * 3, "queued": ((1e-4,),) * 3, "stretch": ((0.0,),) * 3})
    with pytest.raises(ValueError, match="stretch"):
        R.handover_costs(dict(HAND, stretch=((-1e-4,), (0.0,), (0.0,))))


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
    assert "线程池 0.80 ≤ 1 + 0.05：2 个线程轮流执行" in text and "进程池 2.00 > 1 + 0.40" in text   # max(0.3, 2 x 0.2)
    assert "完工时间 0.500 秒，不低于下界" in text            # bound: max(0.5, 1.0 / 2) = 0.5
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


@pytest.mark.parametrize("os_, words", [(1e-4, "是预测的 1.57 倍，在预测的 1/2 到 2 倍之间"),
                                        (4e-5, "是预测的 3.9 倍，超出预测的 2 倍"),
                                        (4e-4, "是预测的 0.39 倍，不到预测的 1/2")])
def test_sweep_lines_judge_the_finest_split_within_the_factor_stated_before_the_run(os_, words):
    # T(256) - T(2) measured 40 ms; predicted (256 - 2) x O_s: 25.4, 10.2 and 101.6 ms
    text = R.sweep_lines(_sweep(), os_)
    assert "实测在预测的 1/2 到 2 倍之间就算相符" in text.splitlines()[0]
    assert f"切细：N = 256 比 N = P = 2 慢 40.0 毫秒（预测慢 {254 * os_ * 1e3:.1f} 毫秒），{words}" in text


def test_sweep_lines_say_what_the_numbers_show():
    text = R.sweep_lines(_sweep(), 1e-4, reference=reference.load("build-vm"))
    assert "锯齿：N = 3 比 N = 2 和 N = 4 都慢；比 N = 4 多 35.0 毫秒" in text and "独占第二轮" in text
    flat = R.sweep_lines(_sweep(saw=False, fine=False), 1e-4)
    assert "N = 3 并不比 N = 2 和 N = 4 都慢" in flat and "独占" not in flat
    assert "N = 256 比 N = P = 2 快 10.0 毫秒" in flat and "方向与预测相反" in flat


def test_the_references_sweeps_are_judged_against_their_own_calibration():
    idle, busy = reference.load("build-vm-idle"), reference.load("build-vm")
    text = R.sweep_lines(_sweep(), 1e-4, reference=[idle, busy])
    for ref in (idle, busy):
        c, sw = ref.calibration, ref.sweep
        own = c.get("pipelined_s", c["process_overhead_s"])
        want = (sw.counts[-1] - sw.workers) * own + 0.0        # both N are multiples of P: one round each
        got = sw.seconds[-1] - sw.seconds[sw.counts.index(sw.workers)]
        assert f"N = {sw.counts[-1]} 比 P 多 {got * 1e3:.1f} 毫秒（用它自己标定的 O_s" in text
        assert f"预测多 {want * 1e3:.1f} 毫秒" in text
    # the busy machine's sweep (load 3.2) took 63.2 ms against 23.5 predicted: beyond the factor of 2
    assert "超出预测的 2 倍" in text.splitlines()[-1]


def _dag():
    g = TaskGraph([Task("a", 2.0), Task("b", 2.0), Task("c", 2.0)], [("a", "c")])
    return g, [Device(f"worker{k}", "CPU", 1000.0) for k in range(2)]


def test_a_chain_releases_every_task_and_pays_one_hand_over_each():
    # a chain: each task becomes ready when its predecessor ends and its worker is idle -> released
    # makespan = sum(work) + n x released hand-over, whatever the pool size
    g = TaskGraph([Task(c, w) for c, w in zip("abcd", (2.0, 3.0, 4.0, 5.0))],
                  [("a", "b"), ("b", "c"), ("c", "d")])
    for p in (1, 2, 4):
        sim = S.central_queue(g, a1.dag_workers(p), ready="fifo")
        makespan, queued = R.dispatch_simulation(sim, 1e-3, 1e-4)
        assert makespan == pytest.approx(0.014 + 4 * 1e-3) and not queued.any()


def test_independent_tasks_on_p_workers_pay_one_released_then_the_queued_hand_over_per_round():
    # 6 equal tasks of 2 ms on 2 workers: the first two released, the other four queued;
    # each worker: 1 + 2 + (0.1 + 2) + (0.1 + 2) ms = 7.2 ms
    g = TaskGraph([Task(f"t{i}", 2.0) for i in range(6)])
    sim = S.central_queue(g, a1.dag_workers(2), ready="fifo")
    makespan, queued = R.dispatch_simulation(sim, 1e-3, 1e-4)
    assert makespan == pytest.approx(0.0072)
    assert queued.tolist() == [False, False, True, True, True, True]


def test_a_small_dag_by_hand():
    # a -> c and b, 2 ms each, 2 workers, released 1 ms, queued 0.1 ms: a and b released at 0 -> run 1-3 ms on
    # worker0/worker1; c ready at 3 ms with worker0 idle from 3 ms -> released, runs 4-6 ms: 6 ms
    # (the old formula, all dispatch / P: 4 + 3 x 1 / 2 = 5.5 ms)
    g, workers = _dag()
    sim = S.central_queue(g, workers, ready="fifo")
    assert sim.makespan == pytest.approx(0.004)
    assert R.dispatch_simulation(sim, 1e-3, 1e-4)[0] == pytest.approx(0.006)
    # one worker: a 1-3 ms (released), b ready at 0 while a runs (queued) 3.1-5.1, c ready at 3 ms while b
    # runs (queued) 5.2-7.2 ms; 0.5 ms of stretch each: a 1-3.5, b 3.6-6.1, c 6.2-8.7 ms
    one = S.central_queue(g, [Device("w", "CPU", 1000.0)], ready="fifo")
    assert R.dispatch_simulation(one, 1e-3, 1e-4)[0] == pytest.approx(0.0072)
    assert R.dispatch_simulation(one, 1e-3, 1e-4, 5e-4)[0] == pytest.approx(0.0087)


def test_per_task_costs_are_charged_task_by_task():
    g, workers = _dag()
    sim = S.central_queue(g, workers, ready="fifo")
    same = R.dispatch_schedule(sim, [1e-3] * 3, [1e-4] * 3, [0.0] * 3)
    assert same.start.tolist() == pytest.approx(R.dispatch_schedule(sim, 1e-3, 1e-4).start.tolist())
    # a released 1 ms, b released 3 ms, c (after a, released) 0.5 ms: a 1-3, b 3-5, c 3.5-5.5 ms
    s = R.dispatch_schedule(sim, [1e-3, 3e-3, 5e-4], 1e-4)
    assert (s.start * 1e3).tolist() == pytest.approx([1.0, 3.0, 3.5]) and s.makespan == pytest.approx(0.0055)
    with pytest.raises(ValueError, match="one per task"):
        R.dispatch_schedule(sim, [1e-3, 1e-3], 1e-4)
    with pytest.raises(ValueError, match="stretch"):
        R.dispatch_schedule(sim, 1e-3, 1e-4, -1e-4)


def test_without_dispatch_costs_the_simulation_is_the_libraries_central_queue():
    dag = a1.dag()
    for p in (1, 2, 4, 16):
        sim = S.central_queue(dag, a1.dag_workers(p), ready="fifo")
        assert R.dispatch_simulation(sim, 0.0, 0.0)[0] == pytest.approx(sim.makespan, abs=1e-12)


def test_the_a14_graph_queues_fewer_tasks_as_the_pool_grows():
    # the reviewer's independent count (A1-6) on the 40-task A1.4 graph: 35, 17 and 0 queued at P = 2, 4, 16
    dag = a1.dag()
    for workers, queued in ((2, 35), (4, 17), (16, 0)):
        sim = S.central_queue(dag, a1.dag_workers(workers), ready="fifo")
        pred = R.predict_extra(sim, R.handover_costs(HAND), PAIRS, coverage=0.8)
        text = R.split_lines(pred, R.handover_costs(HAND), workers)
        assert f"模拟（P = {workers}）里 {40 - queued} 个任务被释放" in text and f"，{queued} 个排队" in text


def test_predict_extra_by_hand():
    g, workers = _dag()
    sim = S.central_queue(g, workers, ready="fifo")
    # a, b, c all released, 1 ms each (c after a): 6 - 4 = 2 ms; the band's factors 0.8 and 1.3 (see error_band)
    p = R.predict_extra(sim, R.Costs(1e-3, 1e-4), PAIRS, coverage=0.8)
    assert (p.extra, p.low, p.high) == pytest.approx((2e-3, 1.6e-3, 2.6e-3))
    assert (p.released, p.queued, p.pairs, p.factors) == (3, 0, 10, pytest.approx((0.8, 1.3)))
    with pytest.raises(ValueError, match="coverage"):
        R.predict_extra(sim, R.Costs(1e-3, 1e-4), PAIRS, coverage=1.5)
    with pytest.raises(ValueError, match="at least 9"):
        R.predict_extra(sim, R.Costs(1e-3, 1e-4), PAIRS[:5])
    # review A1-20 #3: 10 pairs cannot make a 90% band (even their extremes hold 9/11): refused, not clamped
    with pytest.raises(ValueError, match="at least 19 pairs for a 90% band"):
        R.predict_extra(sim, R.Costs(1e-3, 1e-4), PAIRS)


def test_error_band_is_the_conformal_order_statistics_of_the_ratios():
    # 19 ratios 0.1, 0.2, ..., 1.9 (shuffled): n + 1 = 20; 90%: the floor(20 x 0.05) = 1st and ceil(20 x 0.95) = 19th
    ratios = [k / 10 for k in (7, 3, 19, 1, 12, 5, 16, 9, 2, 14, 11, 4, 18, 6, 8, 13, 10, 15, 17)]
    pairs = [(2e-3, 2e-3 * r) for r in ratios]
    assert R.error_band(pairs, 0.9) == pytest.approx((0.1, 1.9))
    assert R.error_band(pairs, 0.5) == pytest.approx((0.5, 1.5))     # the 5th and the 15th
    with pytest.raises(ValueError, match="pairs"):
        R.error_band([(0.0, 1e-3)] * 10)
    with pytest.raises(TypeError, match="pairs"):
        R.error_band([(1e-3, "x")] * 10)


def test_the_band_holds_its_coverage_for_new_pairs_drawn_like_the_stored_ones():
    """Independent check of what "90% 预测区间" promises: when pairs (a calibration's prediction, a run) come from
    one process, the band from 40 of them holds about 90% of new ones, and a band from one calibration's own
    scatter (what A1.4 once printed) holds far fewer when calibrations miss their machine."""
    rng = np.random.default_rng(7)

    def pair():                 # a calibration misses the machine by a factor; a run scatters around the machine
        machine = 6e-3
        return machine * rng.lognormal(0.0, 0.2), machine * rng.lognormal(0.0, 0.15)

    lo, hi = R.error_band([pair() for _ in range(40)])
    new = [pair() for _ in range(2000)]
    inside = np.mean([p * lo <= m <= p * hi for p, m in new])
    assert 0.84 <= inside <= 0.96


def _placed(g, workers, start_ms, end_ms, device_of=(0, 1, 0)):
    return Schedule(g, workers, list(device_of), np.array(start_ms) / 1e3, np.array(end_ms) / 1e3, "process pool")


@pytest.mark.parametrize("end_c, words", [(6.0, "在预测区间之内"), (8.0, "高于预测区间 1.0 毫秒"),
                                          (4.5, "低于预测区间 0.5 毫秒")])
def test_dag_lines_judge_the_extra_time_against_the_interval_stated_before_the_run(end_c, words):
    g, workers = _dag()
    pred = R.Prediction(0.004, 0.002, 0.001, 0.003, 0.9, 3, 0, 20, (0.5, 1.5))    # extra 1-3 ms over 4 ms
    real = _placed(g, workers, [1, 1, end_c - 2], [3, 3, end_c])
    lines = R.dag_lines(real, pred, R.Costs(1e-3, 1e-4)).splitlines()
    extra = end_c - 4
    assert lines[0] == (f"实测 {end_c:.1f} 毫秒，比模拟多 {extra:.1f} 毫秒"
                        f"（预测多 2.0 毫秒；预测区间 1.0 到 3.0 毫秒）：{words}")
    assert "偏差" not in "\n".join(lines) and lines[2].startswith("诊断（不作判断）：")


def test_dag_lines_read_the_cause_from_stretch_against_gaps():
    g, workers = _dag()
    pred = R.Prediction(0.004, 0.002, 0.001, 0.003, 0.9, 3, 0, 20, (0.5, 1.5))
    # every task set to 2 ms ran 3 ms, no gaps: 3 ms of stretch, 0 of gaps -> the tasks themselves ran late
    late = R.dag_lines(_placed(g, workers, [0, 0, 3], [3, 3, 6]), pred, R.Costs(1e-3, 1e-4))
    assert "（2 个工作进程合计）：任务本身比设定的等待长 3.0 毫秒，任务之间的空隙 0.0 毫秒" in late
    assert "每个工作进程平均 1.5 + 0.0 毫秒" in late and "任务本身被拉长" in late
    # right lengths, a and b start 1 ms late and c 2 ms after a: gaps 1, 1, 2 ms, all three released
    gaps = R.dag_lines(_placed(g, workers, [1, 1, 5], [3, 3, 7]), pred, R.Costs(1e-3, 1e-4))
    assert "主要在任务之间的空隙" in gaps
    assert "诊断（不作判断）：被释放的 3 个任务平均空隙 1333 µs，是标定的 1.33 倍；没有排队的任务" in gaps


def test_the_diagnosis_describes_and_never_judges():
    costs = R.Costs(1e-3, 1e-4)
    for gaps in ([0.3e-3] * 40, [1.5e-3] * 40, [0.5e-3] * 37 + [10e-3] * 3):
        text = "\n".join(R.dispatch_lines(gaps, [True] * 20 + [False] * 20, costs))
        assert not any(w in text for w in ("多算", "少算", "相符", "区间", "等核", "停顿"))
    with pytest.raises(ValueError, match="gaps"):
        R.dispatch_lines([-1e-3], [True], costs)
    with pytest.raises(ValueError, match="one entry per task"):
        R.dispatch_lines([1e-3, 1e-3], [True], costs)


def test_typical_costs_are_the_median_calibration_graph_s():
    g, workers = _dag()
    sim = S.central_queue(g, [Device("w", "CPU", 1000.0)], ready="fifo")   # one worker: a, then b and c queued
    # graph 1 stalled (a released hand-over of 20 ms): the median graph's costs are graph 0's or 2's
    h = {"released": ((1e-3,), (20e-3,), (2e-3,)), "queued": ((1e-4,), (1e-4,), (2e-4,)),
         "stretch": ((0.0,), (0.0,), (0.0,))}
    costs, each = R.typical_costs(sim, h)
    # a released (1, 20, 2 ms) + b and c queued (0.1, 0.1, 0.2 ms each): 1.2, 20.2 and 2.4 ms
    assert [round(x * 1e3, 9) for x in each] == [1.2, 20.2, 2.4]
    assert (costs.released, costs.queued) == pytest.approx((2e-3, 2e-4))      # graph 2: the median prediction
    assert R.dispatch_simulation(sim, costs.released, costs.queued)[0] - sim.makespan == pytest.approx(2.4e-3)


def test_the_condition_is_read_before_the_run_and_picks_the_matching_pairs():
    refs = [reference.load(n) for n in ("build-vm-idle", "build-vm", "build-vm-one-cpu")]
    # review A1-21 #1: one CPU is the one-CPU reference's condition only when the whole machine is quiet too
    assert [R.condition(1, 0.1, 0.1), R.condition(1, 0.1, 1.0), R.condition(1, 0.1), R.condition(1, 1.5, 0.1),
            R.condition(2, 0.1), R.condition(2, 0.5), R.condition(2, 1.6), R.condition(2, 1.9),
            R.condition(4, None)] == ["one-cpu", None, None, None, "idle", None, None, "busy", None]
    # every stored pair carries the busy CPUs read before its calibration, classed by the same function
    for ref in refs:
        assert all(len(row) >= 3 for row in ref.dag["pairs"]) and ref.dag["cpus"] in (1, 2)
    for cpus, busy, machine, name in ((2, 0.0, None, "idle"), (2, 1.9, None, "busy"), (1, 0.1, 0.1, "one-cpu")):
        pairs, line, matched = R.matching_pairs(refs, cpus, busy, 2, machine=machine)
        mine = R.steady([(row[0], row[1]) for r in refs for row in r.dag["pairs"]
                         if R.condition(r.dag["cpus"], row[2], row[3] if len(row) > 3 else None) == name])
        assert matched and pairs == mine and len(pairs) >= R.enough_pairs()
        assert f"（{R.CONDITIONS[name]}" in line
    busy_line = R.matching_pairs(refs, 2, 2.0, 2)[1]
    assert "CPU 都被占满" in busy_line and "同类情形（忙碌" in busy_line
    assert "请在空闲时运行" not in busy_line      # review A1-24: the idle band is no narrower
    # a pool of 4 (a 4-CPU laptop), one CPU beside programs elsewhere on the machine, a partly busy machine:
    # no reference matches, said so, and the band is only a reference (printed as such)
    for cpus, busy, machine, workers in ((4, 0.0, None, 4), (1, 0.0, 0.9, 2), (2, 1.0, None, 2)):
        pairs, line, matched = R.matching_pairs(refs, cpus, busy, workers, machine=machine)
        # every stored pair, less those with a disturbed calibration (the same rule as for a matched class)
        assert not matched and pairs == R.steady([(row[0], row[1]) for r in refs for row in r.dag["pairs"]])
        assert "参照里没有与此相仿的情形" in line and "参考区间" in line and "覆盖率没有检验过" in line
    assert "整台机器上其他程序占着 0.9 个 CPU" in R.matching_pairs(refs, 1, 0.0, 2, machine=0.9)[1]
    assert "读不出其他程序占着几个 CPU" in R.matching_pairs(refs, 2, None, 2)[1]


def test_an_untested_band_is_printed_as_a_reference_band():
    g, workers = _dag()
    sim = S.central_queue(g, workers, ready="fifo")
    pairs = [(1e-3, 1e-3 * (0.8 + 0.025 * k)) for k in range(19)]
    tested, borrowed = (R.predict_extra(sim, R.Costs(1e-3, 1e-4), pairs, tested=t) for t in (True, False))
    assert "；预测区间 " in R.split_lines(tested, R.Costs(1e-3, 1e-4), 2)
    text = R.split_lines(borrowed, R.Costs(1e-3, 1e-4), 2)
    assert "参考区间 " in text and text.endswith("），覆盖率没有检验过")
    assert "90%" not in text and "（覆盖率" not in text
    after = R.dag_lines(_placed(g, workers, [1, 1, 4], [3, 3, 6]), borrowed, R.Costs(1e-3, 1e-4))
    assert "参考区间" in after.splitlines()[0] and "预测区间" not in after.splitlines()[0]
    with pytest.raises(TypeError, match="tested"):
        R.predict_extra(sim, R.Costs(1e-3, 1e-4), pairs, tested="yes")
    # figure A1-4's band, as makespans: the simulation's, then the interval's ends added to it
    assert borrowed.makespans == (borrowed.simulated, borrowed.simulated + borrowed.low,
                                  borrowed.simulated + borrowed.high)


def test_the_references_make_the_band_from_their_pairs_and_check_it_on_others():
    refs = [reference.load(n) for n in ("build-vm-idle", "build-vm", "build-vm-one-cpu")]
    assert sorted(r.dag["condition"] for r in refs) == ["busy", "idle", "one-cpu"]
    idle = refs[0]
    d = idle.dag
    sim = S.central_queue(a1.dag(), a1.dag_workers(d["workers"]), ready="fifo")
    assert sim.makespan == pytest.approx(d["queue_s"])
    # the first pair's prediction follows from the first calibration alone (its median graph's hand-overs)
    costs, _ = R.typical_costs(sim, idle.calibration["handovers"])
    assert [costs.released, costs.queued, costs.stretch] == pytest.approx(d["costs"])
    assert R.dispatch_simulation(sim, *d["costs"])[0] - sim.makespan == pytest.approx(d["pairs"][0][0])
    assert d["measured_s"] - sim.makespan == pytest.approx(d["pairs"][0][1])
    g, workers = _dag()
    text = R.dag_lines(_placed(g, workers, [1, 1, 4], [3, 3, 6]), R.Prediction(0.004, 0.002, 0.001, 0.003, 0.9, 3,
                                                                               0, 20, (0.5, 1.5)),
                       R.Costs(1e-3, 1e-4), reference=refs)
    lines = [x for x in text.splitlines() if x.startswith("参照 · ")]
    assert len(lines) == 3
    def undisturbed(rows, against):     # a prediction at most twice the median prediction of ``against``
        median = float(np.median([row[0] for row in against]))
        return [row for row in rows if row[0] <= 2 * median]

    for ref, line in zip(refs, lines):
        kept = undisturbed(ref.dag["pairs"], ref.dag["pairs"])
        band = sorted(row[1] / row[0] for row in kept)
        # at 90%: ranks floor(0.05 (n + 1)) and ceil(0.95 (n + 1)): 1 and n for 19 to 38 pairs, 2 and 39 of 40
        low, high = (2, 39) if len(band) == 40 else (1, len(band))
        lo, hi = band[low - 1], band[high - 1]
        assert R.error_band(kept) == pytest.approx((lo, hi))
        held = undisturbed(ref.dag["held_out"], ref.dag["pairs"])
        inside = sum(row[0] * lo <= row[1] <= row[0] * hi for row in held)
        assert f"实测 ÷ 预测 {band[0]:.2f} 到 {band[-1]:.2f}" in line
        if len(kept) < len(ref.dag["pairs"]):
            assert f"（另有 {len(ref.dag['pairs']) - len(kept)} 对标定被打扰，不计）" in line
        if (low, high) != (1, len(band)):
            assert f"90% 区间用第 {low} 小和第 {high} 小的：{lo:.2f} 到 {hi:.2f}" in line
        assert f"另测的 {len(held)} 对检验这个区间：{inside} 对落在里面" in line
        if len(kept) < len(ref.dag["pairs"]):
            # review A1-26 #1: the dropping rule came after the recording; the undropped check is printed beside
            every = sorted(row[1] / row[0] for row in ref.dag["pairs"])
            low, high = (2, 39) if len(every) == 40 else (1, len(every))
            raw = sum(row[0] * every[low - 1] <= row[1] <= row[0] * every[high - 1] for row in ref.dag["held_out"])
            assert (f"不剔除时区间 {every[low - 1]:.2f} 到 {every[high - 1]:.2f}，{len(ref.dag['held_out'])} 对里 "
                    f"{raw} 对落在里面") in line
    # review A1-23 #1: the idle reference pools two recordings; its line says how the second fares in the band the
    # first alone gives (20 pairs or fewer: the least and the greatest ratio)
    idle_pairs, idle_held = refs[0].dag["pairs"], refs[0].dag["held_out"]
    first = undisturbed(idle_pairs[:20], idle_pairs[:20])
    ratios = [row[1] / row[0] for row in first]
    later = undisturbed(idle_pairs[20:] + idle_held[20:], first)
    inside = sum(min(ratios) <= row[1] / row[0] <= max(ratios) for row in later)
    assert lines[0].endswith(f"单用 09:40 那批定出的区间 {min(ratios):.2f} 到 {max(ratios):.2f}，12:38 那批的 "
                             f"{len(later)} 对只有 {inside} 对落在里面")
    # the stored first run is the one the figure draws: its makespan is the stored one
    assert max(d["end"]) == pytest.approx(d["measured_s"])


def test_a_reference_recorded_with_the_whole_pair_measured_stayed_in_its_condition_throughout():
    # review A1-22: the 0.2 s reading before a pair cannot see a program that starts during it; a pair storing a
    # fifth number (other programs' busy CPUs over the whole pair, tools/record_reference.py's others_during) must
    # have run in the condition it stands for, and the label quotes that range, not a load average
    one = reference.load("build-vm-one-cpu").dag
    rows = one["pairs"] + one["held_out"]
    assert all(len(row) == 5 for row in rows) and len(rows) == 40
    for row in rows:
        assert R.condition(one["cpus"], row[2], row[3]) == one["condition"] == "one-cpu"
        assert R.stayed("one-cpu", one["cpus"], row[4])
    during = [row[4] for row in rows]
    assert f"每对运行期间别的程序占用 {min(during):.2f}–{max(during):.2f} 个 CPU" in one["label"]


def test_split_lines_say_how_the_band_was_taken():
    p = R.Prediction(0.004, 0.002, 0.001, 0.003, 0.9, 3, 0, 20, (0.5, 1.5))
    text = R.split_lines(p, R.Costs(1e-3, 1e-4), 2, per_graph=[2e-3, 1.9e-3, 2.2e-3, 2.0e-3, 9e-3], note="运行前……")
    assert "5 张标定图各自的预测：2.0、1.9、2.2、2.0、9.0 毫秒，取中位数" in text
    assert text.endswith("运行前……；这 20 对的实测 ÷ 预测里最小和最大的两个就是上面的两个倍数")
    wide = R.split_lines(R.Prediction(0.004, 0.002, 0.001, 0.003, 0.9, 3, 0, 60, (0.5, 1.5)), R.Costs(1e-3, 1e-4), 2,
                         note="x")
    assert wide.endswith("x；这 60 对的实测 ÷ 预测里第 3 小和第 58 小的两个（两头各去掉 2 和 2 个）就是上面的两个倍数")
    with pytest.raises(TypeError, match="note"):
        R.split_lines(p, R.Costs(1e-3, 1e-4), 2, note=1)


def test_plan_lines_explain_threads_beating_the_serial_run_in_wall_clock():
    plan = S.round_robin(independent_tasks([1.0, 1.0]), [Device(f"d{k}", "CPU") for k in range(2)])
    proc = _run(plan, [0, 0], [0.5, 0.5], [0.5, 0.5], "process pool")
    # threads: 0.8 CPU s in 0.9 s (0.89); one thread: 0.8 CPU s in 1.0 s (0.80) -> a larger share, not parallel
    runs = {"thread pool": _run(plan, [0, 0], [0.9, 0.9], [0.4, 0.4], "thread pool"), "process pool": proc,
            "sequential": _run(plan, [0, 0.5], [0.5, 1.0], [0.4, 0.4], "sequential")}
    text = R.plan_lines(runs, plan, 0.5, 2)
    assert "线程池的墙钟比单线程依次执行短 10%（0.900 对 1.000 秒），但不是并行：线程池分到的 CPU 份额更大" in text
    # threads: 0.6 CPU s in 0.9 s (0.67) < 0.80: the shorter wall comes from fewer CPU seconds
    fewer = dict(runs, **{"thread pool": _run(plan, [0, 0], [0.9, 0.9], [0.3, 0.3], "thread pool")})
    assert "这次线程池的循环用的 CPU 秒更少" in R.plan_lines(fewer, plan, 0.5, 2)
    # review A1-24 #3: shares that print alike (1.00 and 1.00) and 7% fewer CPU seconds: the CPU seconds explain it
    same_share = {"thread pool": _run(plan, [0, 0], [0.9315, 0.9315], [0.4660, 0.4660], "thread pool"),
                  "sequential": _run(plan, [0, 0.5], [0.5, 1.0], [0.5, 0.5], "sequential")}
    text = R.plan_lines(dict(runs, **same_share), plan, 0.5, 2)
    assert "这次线程池的循环用的 CPU 秒更少（有效并行度 1.00 对 1.00" in text
    slower = dict(runs, **{"thread pool": _run(plan, [0, 0], [1.1, 1.1], [0.4, 0.4], "thread pool")})
    assert "墙钟比单线程" not in R.plan_lines(slower, plan, 0.5, 2)
    # 0.97 s against 1.00 s: 3% shorter is within the 5% tolerance, noise rather than a finding
    close = dict(runs, **{"thread pool": _run(plan, [0, 0], [0.97, 0.97], [0.4, 0.4], "thread pool")})
    assert "墙钟比单线程" not in R.plan_lines(close, plan, 0.5, 2)


def test_plan_lines_print_the_loops_cpu_seconds_against_the_plan():
    plan = S.round_robin(independent_tasks([1.0, 1.0, 2.0]), [Device(f"d{k}", "CPU") for k in range(3)])
    # planned: 4 units x 0.1 s = 0.4 CPU s; the runs used 0.36, 0.40 and 0.44: -10 % to +10 %
    runs = {name: _run(plan, [0.0, 0.0, 0.0], [0.2, 0.2, 0.4], [cpu / 3] * 3, name)
            for name, cpu in (("sequential", 0.36), ("thread pool", 0.40), ("process pool", 0.44))}
    text = R.plan_lines(runs, plan, 0.1, 2)
    assert "按标定应为 0.400，相差 -10% 到 +10%" in text


def test_the_dispatch_schedule_is_the_predicted_run_task_by_task():
    # the small DAG by hand (test_a_small_dag_by_hand): a, b released 1-3 ms, c released 4-6 ms; on one worker
    # a 1-3 (released), b 3.1-5.1 and c 5.2-7.2 ms (both queued)
    g, workers = _dag()
    two = R.dispatch_schedule(S.central_queue(g, workers, ready="fifo"), 1e-3, 1e-4)
    assert (two.start * 1e3).round(6).tolist() == [1.0, 1.0, 4.0] and two.makespan == pytest.approx(0.006)
    assert two.info["queued"].tolist() == [False, False, False] and len(two.devices) == 2
    one = R.dispatch_schedule(S.central_queue(g, [Device("w", "CPU", 1000.0)], ready="fifo"), 1e-3, 1e-4)
    assert (one.end * 1e3).round(6).tolist() == [3.0, 5.1, 7.2] and one.info["queued"].tolist() == [False, True, True]
    dag = a1.dag()
    for p in (2, 16):                # the figure's schedule and the prediction are one simulation
        sim = S.central_queue(dag, a1.dag_workers(p), ready="fifo")
        s = R.dispatch_schedule(sim, 4e-4, 8e-5)
        makespan, queued = R.dispatch_simulation(sim, 4e-4, 8e-5)
        assert s.makespan == makespan and (s.info["queued"] == queued).all()
        assert np.allclose(s.end - s.start, sim.end - sim.start)


def test_a_disturbed_calibration_is_said_before_the_run_and_left_out_of_the_band():
    # review A1-25 #2: one rule on both sides: a prediction more than 2x the median prediction of the pairs it is
    # compared with is a disturbed calibration (a stall only adds time)
    pairs = [(6.5e-3 + 1e-4 * k, 6.5e-3) for k in range(19)]             # median prediction 7.4 ms
    p = R.Prediction(0.004, 0.002, 0.001, 0.003, 0.9, 3, 0, 19, (0.5, 1.5))
    assert "标定被打扰" not in R.split_lines(p, R.Costs(1e-3, 1e-4), 2, pairs=pairs)
    shaky = R.Prediction(0.004, 0.016, 0.008, 0.024, 0.9, 3, 0, 19, (0.5, 1.5))
    text = R.split_lines(shaky, R.Costs(1e-3, 1e-4), 2, pairs=pairs)
    assert text.splitlines()[-1] == R.calibration_disturbed(0.016, pairs)
    assert "这次的预测是参照各对预测中位数的 2.2 倍，超过 2 倍" in text and "这一对不算检验" in text
    assert R.calibration_disturbed(0.0147, pairs) == ""                 # under 2x
    # the stored side: such a pair is left out of the band, and of the held-out check
    assert R.steady(pairs + [(0.016, 0.005)]) == pairs
    assert R.steady([(0.016, 0.005), (0.007, 0.007)], against=pairs) == [(0.007, 0.007)]
    with pytest.raises(ValueError, match="extra"):
        R.calibration_disturbed(-1.0, pairs)


def test_a_pair_that_left_its_condition_during_the_run_is_said_not_to_test_the_model():
    # review A1-22 #1: the reference pairs were kept only where the whole pair stayed in its condition; the
    # reader's pair is held to the same rule, read after the run (other programs' CPUs over calibration and run)
    # what a quiet machine reads over a pair (up to DURING_NOISE above the idle threshold) is no departure
    assert R.left_condition(2, 0.0, 0.0, 0.1) == "" and R.left_condition(2, 2.0, 2.0, 1.8) == ""
    assert R.left_condition(2, 0.0, 0.0, B.IDLE_BELOW + B.DURING_NOISE - 0.01) == ""
    assert "（空闲）里" in R.left_condition(2, 0.0, 0.0, 0.6)
    assert "（忙碌）里" in R.left_condition(2, 2.0, 2.0, 0.3)          # the spinners stopped mid-pair
    assert "（只用 1 个 CPU）里" in R.left_condition(1, 0.0, 0.0, 0.5)   # a program started on the other CPU
    # no class before the run (partly busy): nothing to leave; nothing read: nothing said
    assert R.left_condition(2, 1.0, 1.0, 0.0) == "" and R.left_condition(2, None, None, 1.0) == ""
    with pytest.raises(ValueError, match="during"):
        R.left_condition(2, 0.0, 0.0, -1.0)
    g, workers = _dag()
    args = (_placed(g, workers, [1, 1, 4], [3, 3, 6]), R.Prediction(0.004, 0.002, 0.001, 0.003, 0.9, 3, 0, 20,
                                                                     (0.5, 1.5)), R.Costs(1e-3, 1e-4))
    left = R.left_condition(2, 0.0, 0.0, 0.6)
    plain, said = R.dag_lines(*args).splitlines(), R.dag_lines(*args, left=left).splitlines()
    assert said == [plain[0], left, *plain[1:]]         # right under the comparison it qualifies
