"""hetlab.models.dynamics: static plans against run-time decisions (noise, stragglers, late orders, fork-join)."""
import pytest

from hetlab import schedulers as S
from hetlab.devices import Device, identical, kitchen
from hetlab.models import dynamics as R
from hetlab.tasks import Task, TaskGraph, independent_tasks
from hetlab.workloads import fork_join, skewed_tasks


def test_without_noise_the_actual_times_are_the_estimates():
    g = skewed_tasks(10, seed=1)
    act = R.actual_graph(g, kitchen(), noise=0.0)
    assert S.lpt(act, kitchen()).makespan == pytest.approx(S.lpt(g, kitchen()).makespan)


def test_straggler_multiplies_its_times_only():
    g = independent_tasks([10.0, 20.0])
    act = R.actual_graph(g, kitchen(), noise=0.0, straggler="GPU", slowdown=4.0)
    # GPU speed 20: 10 work -> 0.5 planned, 2.0 actual; CPU (speed 10) unchanged: 1.0.
    assert act.tasks[0].times == {"CPU": 1.0, "GPU": 2.0, "NPU": pytest.approx(10 / 15)}


def test_same_seed_same_actual_times():
    g = skewed_tasks(8, seed=2)
    a, b = (R.actual_graph(g, kitchen(), noise=0.4, seed=5) for _ in range(2))
    assert [t.times for t in a.tasks] == [t.times for t in b.tasks]


def test_largest_first_sorts_by_the_fastest_estimate_ties_in_graph_order():
    assert R.largest_first(independent_tasks([3, 9, 3, 5]), kitchen()) == ["T1", "T3", "T0", "T2"]


def test_the_dynamic_queue_by_hand():
    # Two identical devices, tasks 3, 1, 1, 1 in that order: D0 takes 3; D1 takes 1, 1, 1 -> makespan 3.
    s = S.central_queue(independent_tasks([3.0, 1.0, 1.0, 1.0]), identical(2)).validate()
    assert s.makespan == pytest.approx(3.0)
    assert s.tasks_on("D1") == ["T1", "T2", "T3"]


def test_the_dynamic_queue_gives_the_largest_dish_to_the_fastest_free_cook():
    # Exact estimates, dishes 30, 10, 10, 10, 10 on CPU 10 / GPU 20 / NPU 15: all free at 0, the GPU takes
    # the 30 (1.5); NPU and CPU take 10s (0.667, 1.0), the NPU the next at 0.667 (-> 1.333), the CPU the last
    # at 1.0 (-> 2.0). Listing the slow CPU first does not hand it the 30 (that would take 3.0).
    run = R.compare_under_variance(independent_tasks([30, 10, 10, 10, 10]), kitchen(), noise=0.0)
    assert run.dynamic.placement("T0").device == "GPU"
    assert run.dynamic.makespan == pytest.approx(2.0)


def test_exact_estimates_keep_the_plan_and_a_straggler_breaks_it():
    g, d = skewed_tasks(24, spread=0.8, seed=7), kitchen()
    exact = R.compare_under_variance(g, d, noise=0.0)
    assert exact.static.makespan == pytest.approx(exact.planned.makespan)
    broken = R.compare_under_variance(g, d, noise=0.0, straggler="GPU", slowdown=4.0)
    # The plan still sends the GPU its share; at a quarter speed it takes 4x as long.
    gpu = broken.planned.busy[1]
    assert broken.static.makespan >= 4 * gpu - 1e-9
    assert broken.dynamic.makespan < broken.static.makespan
    for run in (exact, broken):
        for s in (run.planned, run.static, run.dynamic, run.oracle):
            s.validate()


def test_dynamic_wins_under_noise_on_every_seed_of_the_chapters_menu():
    # Chapter 5's review: with ties to the fastest cook the dynamic queue wins 392 of 400 runs (20 menus x 20
    # seeds at sigma 0.3); on the chapter's menu at sigma 0.5 it wins at least 9 of 10.
    g, d = skewed_tasks(24, spread=0.8, seed=7), kitchen()
    runs = [R.compare_under_variance(g, d, noise=0.5, seed=k) for k in range(10)]
    assert sum(r.dynamic.makespan < r.static.makespan for r in runs) >= 9


# --- late orders --------------------------------------------------------------------------------------

def test_late_orders_by_hand():
    # Plan: D0 runs the 4, D1 the 1. Two dishes of 1 ordered at 0.5.
    # Static round-robin: D0 gets late1 after its 4 -> ends 5; D1 gets late2 at 1 -> 2. Makespan 5.
    # Dynamic: D1 is free at 1 and takes late1 (1-2), then late2 (2-3); D0 ends at 4. Makespan 4.
    run = R.late_orders(independent_tasks([4.0, 1.0]), identical(2), count=2, work=1.0, at=0.5)
    assert run.planned.makespan == pytest.approx(4.0)
    assert run.static.makespan == pytest.approx(5.0)
    assert run.dynamic.makespan == pytest.approx(4.0)


def test_nothing_starts_before_it_is_ordered():
    run = R.late_orders(skewed_tasks(10, seed=3), kitchen(), count=5, at=2.0, prefix="加")
    for s in (run.static, run.dynamic):
        s.validate()
        for k in range(5):
            assert s.placement(f"加{k + 1}").start >= 2.0 - 1e-12


def test_dynamic_waits_for_orders_when_idle():
    # Nothing known before the run but one tiny task: cooks idle until the order at 3.
    run = R.late_orders(independent_tasks([0.5]), identical(2), count=2, work=1.0, at=3.0)
    assert run.dynamic.makespan == pytest.approx(4.0)
    assert run.static.makespan == pytest.approx(4.0)


def test_speed_rule_is_proportional_to_speed_and_beats_round_robin():
    devices = kitchen()
    assert R.speed_rule(devices, 4) == ["GPU", "NPU", "GPU", "CPU"]
    assert R.speed_rule(devices, 0) == []
    orders = skewed_tasks(24, spread=0.8, seed=7)
    rr = R.late_orders(orders, devices, count=4, at=2.0)
    fast = R.late_orders(orders, devices, count=4, at=2.0, rule="by-speed")
    assert rr.rule == "round-robin" and fast.rule == "by-speed"
    assert fast.static.makespan < rr.static.makespan
    assert fast.dynamic.makespan == rr.dynamic.makespan
    with pytest.raises(ValueError, match="rule"):
        R.late_orders(orders, devices, rule="random")


def test_late_orders_with_a_straggler_by_hand():
    # Plan: D0 runs T0 (4), D1 runs T1 (4); late1 and late2 (2 each) ordered at 1, dealt D0, D1.
    # D0 runs twice as slow as planned. Static: D0 does T0 (8) then late1 (4) -> 12; D1 ends at 6.
    # Dynamic (list T0, T1, late1, late2): D0 takes T0 (0-8), D1 T1 (0-4), late1 (4-6), late2 (6-8) -> 8.
    run = R.late_orders(independent_tasks([4.0, 4.0]), identical(2), count=2, work=2.0, at=1.0,
                        straggler="D0", slowdown=2.0)
    assert run.planned.makespan == pytest.approx(4.0)
    assert run.static.makespan == pytest.approx(12.0)
    assert run.dynamic.makespan == pytest.approx(8.0)


def test_late_orders_under_noise_run_every_dish_for_its_actual_time():
    orders, devices = skewed_tasks(12, seed=5), kitchen()
    run = R.late_orders(orders, devices, count=3, at=1.0, noise=0.4, seed=2, prefix="加")
    full = TaskGraph([Task(t.name, t.work) for t in run.static.graph.tasks])   # the estimates of all dishes
    actual = R.actual_graph(full, devices, noise=0.4, seed=2)
    for s in (run.static, run.dynamic):
        s.validate()
        for i, t in enumerate(full.tasks):
            device = devices[s.device_of[i]].name
            assert s.end[i] - s.start[i] == pytest.approx(actual.task(t.name).times[device])
    assert run.planned.makespan == R.late_orders(orders, devices, count=3, at=1.0, prefix="加").planned.makespan


@pytest.mark.parametrize("kwargs, message", [({"count": 0}, "count"), ({"work": -1.0}, "work"),
                                             ({"at": float("nan")}, "at"), ({"prefix": ""}, "prefix"),
                                             ({"prefix": "T"}, "already has tasks named"),
                                             ({"noise": -0.1}, "noise"), ({"seed": -1}, "seed"),
                                             ({"slowdown": 0.5}, "slowdown"), ({"straggler": "TPU"}, "straggler")])
def test_late_orders_bad_input(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        R.late_orders(skewed_tasks(3), kitchen(), **kwargs)


# --- fork-join trees and work stealing ----------------------------------------------------------------

def test_work_stealing_beats_the_static_plan_on_skewed_fork_join():
    four = identical(4, 1.0)
    wins = 0
    for seed in range(5):
        est, act = fork_join(5, work=64.0, skew=0.6, seed=seed)
        plan = S.eft(est, four)
        static = S.execute_plan(act, four, {x.name: plan.tasks_on(x.name) for x in four})
        ws = S.work_stealing(act, four, steal_latency=0.05, initial="first", seed=0).validate()
        wins += ws.makespan < static.makespan
    assert wins >= 4


def test_fork_join_wins_counts():
    four = identical(4, speed=1.0)
    wins = R.fork_join_wins(range(3), four)
    assert wins.trees == 3
    assert 0 <= wins.stealing_beats_central <= 3 and wins.central_beats_static == 3
    with pytest.raises(ValueError):
        R.fork_join_wins([], four)


def test_fork_join_wins_averages_the_steal_seeds():
    four = identical(4, speed=1.0)
    est, act = fork_join(4, work=32.0, skew=0.6, seed=1)
    runs = [S.work_stealing(act, four, steal_latency=0.05, initial="first", seed=k).makespan for k in range(3)]
    central = S.central_queue(act, four, ready="fifo").makespan
    wins = R.fork_join_wins([1], four, depth=4, work=32.0, steal_seeds=3)
    assert wins.stealing_beats_central == int(sum(runs) / 3 < central)
    with pytest.raises(ValueError, match="steal_seeds"):
        R.fork_join_wins([1], four, steal_seeds=0)


def test_slackness_curve_on_equal_independent_tasks():
    # Eight unit tasks: T1 = 8, span 1. The central queue keeps every device busy: speed-up exactly P.
    # Work stealing can only lose time to steals, and nothing beats min(P, T1 / span).
    curve = R.slackness_curve(independent_tasks([1.0] * 8), (1, 2, 4, 8), steal_latency=0.0, steal_seeds=3)
    assert (curve.work, curve.span, curve.parallelism) == (8.0, 1.0, 8.0)
    assert curve.central == pytest.approx((1.0, 2.0, 4.0, 8.0))
    for p, s in zip(curve.counts, curve.stealing):
        assert 1.0 - 1e-12 <= s <= min(p, curve.parallelism) + 1e-12


def test_slackness_curve_is_capped_by_the_parallelism():
    _, act = fork_join(4, work=32.0, skew=0.6, seed=3)
    curve = R.slackness_curve(act, (2, 16, 64), steal_seeds=2)
    for p, s, c in zip(curve.counts, curve.stealing, curve.central):
        assert s <= min(p, curve.parallelism) + 1e-9 and c <= min(p, curve.parallelism) + 1e-9
    # Greedy (the central queue on identical devices): T_P <= T1 / P + span (Graham 1969, Brent 1974).
    for p, c in zip(curve.counts, curve.central):
        assert curve.work / c <= curve.work / p + curve.span + 1e-9


@pytest.mark.parametrize("kwargs, name", [({"counts": []}, "counts"), ({"counts": [0]}, "counts"),
                                          ({"counts": [1.5]}, "counts"), ({"steal_seeds": 0}, "steal_seeds"),
                                          ({"steal_latency": -1.0}, "steal_latency")])
def test_slackness_curve_rejects_bad_input(kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        R.slackness_curve(independent_tasks([1.0, 2.0]), **kwargs)
    with pytest.raises(ValueError, match="stealing"):
        R.SlacknessCurve(2.0, 1.0, (1, 2), (1.0,), (1.0, 2.0))


def test_stealing_vs_eft_counts_and_gaps():
    devs = kitchen()
    r = R.stealing_vs_eft(devs, menus=range(4), steal_seeds=2)
    assert r.menus == (0, 1, 2, 3) and len(r.stealing) == len(r.eft) == len(r.lpt) == 4
    # each row is reproducible from the schedulers it summarises
    tasks = skewed_tasks(24, spread=0.8, seed=3)
    ws = [S.work_stealing(tasks, devs, seed=k).makespan for k in range(2)]
    assert r.stealing[3] == pytest.approx(sum(ws) / 2)
    assert r.eft[3] == pytest.approx(S.eft(tasks, devs).makespan)
    assert r.lpt[3] == pytest.approx(S.lpt(tasks, devs).makespan)
    gaps = r.gaps
    assert r.wins == int((gaps < 0).sum())
    assert r.worst_loss == pytest.approx(max(0.0, gaps.max()))
    assert r.best_win == pytest.approx(max(0.0, -gaps.min()))
    assert r.worst_menu in r.menus and 0 <= r.lpt_beats_stealing <= 4


def test_stealing_vs_eft_twenty_menus_mixed():
    r = R.stealing_vs_eft(kitchen())
    assert 0 < r.wins < 20 and r.worst_loss > r.best_win > 0


@pytest.mark.parametrize("kwargs, name", [({"menus": []}, "menus"), ({"menus": [-1]}, "menus"),
                                          ({"n": 0}, "n"), ({"spread": -1.0}, "spread"),
                                          ({"steal_seeds": 0}, "steal_seeds"),
                                          ({"steal_latency": -0.1}, "steal_latency"),
                                          ({"menus": "ab"}, "menus")])
def test_stealing_vs_eft_rejects_bad_input(kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        R.stealing_vs_eft(kitchen(), **kwargs)


def test_stealing_vs_eft_record_validates():
    with pytest.raises(ValueError, match="eft"):
        R.StealingVsEft((0, 1), (1.0, 2.0), (1.0,), (1.0, 1.0), 1, 0.0)
    with pytest.raises((ValueError, TypeError), match="steal_seeds"):
        R.StealingVsEft((0,), (1.0,), (1.0,), (1.0,), 0, 0.0)


@pytest.mark.parametrize("call, message", [
    (lambda: R.actual_graph(skewed_tasks(3), kitchen(), noise=-1), "noise"),
    (lambda: R.actual_graph(skewed_tasks(3), kitchen(), straggler="TPU"), "straggler"),
    (lambda: R.actual_graph(skewed_tasks(3), kitchen(), slowdown=0.5), "slowdown"),
])
def test_bad_input(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


CPU_GPU = [Device("CPU", "CPU", 1.0), Device("GPU", "GPU", 4.0)]


def test_runtime_eft_lets_the_slow_device_idle_when_the_fast_one_finishes_first():
    # By hand: two dishes of 2, CPU speed 1, GPU speed 4. At 0 the GPU takes the first (0.5); the second would end at
    # 2 on the CPU but at 1 on the GPU after it, so the CPU stays idle: makespan 1. The speed-blind queue gives the
    # second dish to the idle CPU: 2.
    g = independent_tasks([2.0, 2.0])
    s = R.runtime_eft(g, g, CPU_GPU).validate()
    assert s.makespan == pytest.approx(1.0) and s.tasks_on("GPU") == ["T0", "T1"] and s.tasks_on("CPU") == []
    assert S.central_queue(g, CPU_GPU).makespan == pytest.approx(2.0)


def test_runtime_eft_trusts_its_model_unless_it_calibrates():
    # By hand: three dishes of 2 and a GPU that runs 4x slower than its nominal speed 4 (2 per dish, like the CPU).
    # Nominal model: at 0 the plan puts all three on the "fast" GPU and the CPU idles; the GPU ends them at 2, 4, 6.
    # Calibrated: at 2 the GPU's ratio actual/estimate is 4, so dish 2 costs it 2 (ends at 4, tie with the CPU, the
    # faster nominal device wins) and dish 3 would end at 6 there, at 4 on the idle CPU: both end at 4.
    g = independent_tasks([2.0, 2.0, 2.0])
    slow = R.actual_graph(g, CPU_GPU, noise=0.0, straggler="GPU", slowdown=4.0)
    assert R.runtime_eft(g, slow, CPU_GPU).validate().makespan == pytest.approx(6.0)
    calibrated = R.runtime_eft(g, slow, CPU_GPU, calibrate=True).validate()
    assert calibrated.makespan == pytest.approx(4.0) and calibrated.tasks_on("CPU") == ["T2"]
    assert S.central_queue(slow, CPU_GPU).makespan == pytest.approx(4.0)


@pytest.mark.parametrize("menu", range(5))
def test_runtime_eft_with_exact_estimates_is_the_lpt_plan(menu):
    # With exact estimates what the run shows is what the plan expected, so deciding at each task end reproduces
    # the plan EFT makes ahead of time in the same largest-first order, i.e. LPT's.
    g = skewed_tasks(24, spread=0.8, seed=menu)
    assert R.runtime_eft(g, g, kitchen()).makespan == pytest.approx(S.lpt(g, kitchen()).makespan)


def test_runtime_eft_starts_each_task_when_a_device_is_free_and_runs_it_for_its_actual_time():
    g = skewed_tasks(12, spread=0.8, seed=3)
    act = R.actual_graph(g, kitchen(), noise=0.5, seed=1)
    s = R.runtime_eft(g, act, kitchen()).validate()
    for i, t in enumerate(s.graph.tasks):
        j = s.device_of[i]
        assert s.end[i] - s.start[i] == pytest.approx(act.task(t.name).times[s.devices[j].name])


@pytest.mark.parametrize("call, message", [
    (lambda g: R.runtime_eft(g, TaskGraph(list(g.tasks), [("T0", "T1")]), kitchen()), "independent"),
    (lambda g: R.runtime_eft(g, independent_tasks([1.0]), kitchen()), "actual"),
    (lambda g: R.runtime_eft(g, g, kitchen(), order=["T0", "T0", "T1"]), "order"),
    (lambda g: R.runtime_eft(g, g, kitchen(), calibrate="yes"), "calibrate"),
])
def test_runtime_eft_bad_input(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call(independent_tasks([1.0, 2.0, 3.0]))
