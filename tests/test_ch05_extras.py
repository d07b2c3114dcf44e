"""Chapter 5 extras: dispatch cost of dynamic scheduling, the central queue on a DAG, the Gantt legend."""
import matplotlib
import pytest

import hetlab
from hetlab import schedulers as S
from hetlab.devices import identical, kitchen
from hetlab.models import dispatch as DC
from hetlab.models import dynamics as R
from hetlab.workloads import skewed_tasks

matplotlib.use("Agg")


def _orders():
    return skewed_tasks(24, spread=0.8, seed=7), kitchen()


def test_zero_overhead_equals_dynamic_queue():
    g, d = _orders()
    run = R.compare_under_variance(g, d, noise=0.3, seed=0)
    a = R.actual_graph(g, d, noise=0.3, seed=0)
    s = DC.dynamic_queue_with_overhead(a, d, order=DC._dynamic_order(g, d), overhead=0.0)
    assert s.makespan == pytest.approx(run.dynamic.makespan)


def test_overhead_delays_every_task_and_validates():
    g, d = _orders()
    base = DC.dynamic_queue_with_overhead(g, d, overhead=0.0)
    slow = DC.dynamic_queue_with_overhead(g, d, overhead=0.1).validate()
    assert slow.makespan > base.makespan
    assert slow.makespan <= base.makespan + 0.1 * len(g.tasks)


def test_break_even_moves_right_with_overhead():
    g, d = _orders()
    values = [DC.break_even_noise(g, d, overhead=o, seeds=10) for o in (0.0, 0.05, 0.1)]
    assert all(v is not None for v in values)
    assert values == sorted(values) and values[0] < values[-1]
    point = DC.overhead_sweep(g, d, overhead=0.0, noises=[0.0], seeds=3)[0]
    assert point.gap == pytest.approx(point.static - point.dynamic) and point.seeds == 3


def test_central_queue_dag_within_greedy_bounds():
    four = identical(4, speed=1.0)
    for seed in range(5):
        _, act = R.fork_join(5, work=64.0, skew=0.6, seed=seed)
        s = DC.central_queue_dag(act, four).validate()
        t1, tinf = hetlab.total_work(act), hetlab.critical_path(act)[0]
        assert max(t1 / 4, tinf) - 1e-9 <= s.makespan <= t1 / 4 + tinf + 1e-9


def test_central_queue_single_device_is_serial():
    _, act = R.fork_join(3, seed=1)
    s = DC.central_queue_dag(act, identical(1)).validate()
    assert s.makespan == pytest.approx(hetlab.total_work(act))


@pytest.mark.parametrize("bad", [-0.1, float("nan"), "x"])
def test_overhead_validation(bad):
    g, d = _orders()
    with pytest.raises((ValueError, TypeError)):
        DC.dynamic_queue_with_overhead(g, d, overhead=bad)


def test_seeds_validation():
    g, d = _orders()
    with pytest.raises(ValueError):
        DC.overhead_sweep(g, d, overhead=0.0, noises=[0.1], seeds=0)


def test_gantt_legend_titles_and_identical():
    import matplotlib.pyplot as plt

    from hetlab.book.views import ch05
    g, d = _orders()
    fig, ax = plt.subplots()
    hetlab.plotting.gantt(S.lpt(g, d), ax)
    ch05.gantt_legend(ax)
    assert ax.get_legend().get_title().get_text() != ""
    ws = S.work_stealing(R.fork_join(3)[1], identical(2), initial="first")
    hetlab.plotting.gantt(ws, ax)
    ch05.gantt_legend(ax, identical=True)
    assert ax.get_legend() is None or len(ax.get_legend().get_texts()) == 1
    plt.close(fig)


def test_fork_join_wins_counts():
    four = identical(4, speed=1.0)
    wins = DC.fork_join_wins(range(3), four)
    assert wins.trees == 3
    assert 0 <= wins.stealing_beats_central <= 3 and wins.central_beats_static == 3
    with pytest.raises(ValueError):
        DC.fork_join_wins([], four)


def test_decision_counts_fast_device_decides_most_and_predicts_small_overhead():
    from hetlab.devices import kitchen
    from hetlab.models import dispatch as DC
    from hetlab.workloads import skewed_tasks

    orders, devices = skewed_tasks(24, spread=0.8, seed=7), kitchen()
    zero = DC.decision_counts(orders, devices, overhead=0.0)
    assert zero.delay == 0 and zero.predicted_delay == 0 and sum(zero.decisions) == 24
    d = DC.decision_counts(orders, devices, overhead=0.02)
    assert d.base_decisions == (4, 12, 8)          # the GPU (fastest) decides 12 times, not n/m = 8
    assert abs(d.predicted_delay - 12 * 0.02) < 1e-9
    assert abs(d.delay - d.predicted_delay) < 0.02
    with pytest.raises(ValueError, match="overhead"):
        DC.decision_counts(orders, devices, overhead=-1)


def test_crossing_noise_interpolates_between_grid_points():
    from hetlab.models import dispatch as DC

    pts = [DC.OverheadPoint(0.0, 1.0, 1.2, 0, 1), DC.OverheadPoint(0.1, 1.0, 1.1, 0, 1),
           DC.OverheadPoint(0.2, 1.3, 1.0, 1, 1)]
    assert abs(DC.crossing_noise(pts) - (0.1 + 0.1 * 0.1 / 0.4)) < 1e-12
    assert DC.crossing_noise(pts[:2]) is None and DC.crossing_noise([]) is None
    assert DC.crossing_noise(pts[2:]) == 0.2
    with pytest.raises(TypeError, match="points"):
        DC.crossing_noise([1.0])


def test_speed_rule_is_proportional_to_speed_and_beats_round_robin():
    from hetlab.devices import kitchen
    from hetlab.models import late_orders as X
    from hetlab.workloads import skewed_tasks

    devices = kitchen()
    assert X.speed_rule(devices, 4) == ["GPU", "NPU", "GPU", "CPU"]
    assert X.speed_rule(devices, 0) == []
    orders = skewed_tasks(24, spread=0.8, seed=7)
    rr = X.extra_orders(orders, devices, count=4, at=2.0)
    fast = X.extra_orders(orders, devices, count=4, at=2.0, rule="by-speed")
    assert rr.rule == "round-robin" and fast.rule == "by-speed"
    assert fast.static.makespan < rr.static.makespan
    assert fast.dynamic.makespan == rr.dynamic.makespan
    assert "按速度" in fast.summary_zh()
    with pytest.raises(ValueError, match="rule"):
        X.extra_orders(orders, devices, rule="random")


def test_capacity_bound_holds_and_reduces_to_lower_bound():
    g, d = _orders()
    zero = DC.decision_counts(g, d, overhead=0.0)
    assert DC.capacity_bound(g, d, decisions=zero.decisions) == pytest.approx(S.lower_bound(g, d))
    for overhead in (0.02, 0.05, 0.1, 0.5):
        c = DC.decision_counts(g, d, overhead=overhead)
        bound = DC.capacity_bound(g, d, decisions=c.decisions, overhead=overhead)
        assert bound <= c.makespan + 1e-9
        speeds = [x.speed for x in d]
        expected = (hetlab.total_work(g) + overhead * sum(s * n for s, n in zip(speeds, c.decisions))) / sum(speeds)
        assert bound == pytest.approx(expected)


def test_capacity_bound_rejects_bad_input():
    g, d = _orders()
    with pytest.raises(ValueError, match="decisions"):
        DC.capacity_bound(g, d, decisions=[1, 2])
    with pytest.raises(ValueError, match="decisions"):
        DC.capacity_bound(g, d, decisions=[1, 2, 3])
    with pytest.raises(ValueError, match="decisions"):
        DC.capacity_bound(g, d, decisions=[-1, 20, 5])
    with pytest.raises(TypeError, match="decisions"):
        DC.capacity_bound(g, d, decisions=[1.5, 20, 2.5])
    with pytest.raises(ValueError, match="overhead"):
        DC.capacity_bound(g, d, decisions=[8, 8, 8], overhead=-1.0)
    timed = hetlab.TaskGraph([hetlab.Task("a", 1.0, times={"CPU": 1.0, "GPU": 5.0, "NPU": 1.0})])
    with pytest.raises(ValueError, match="work / speed"):
        DC.capacity_bound(timed, d, decisions=[1, 0, 0])


def test_ch05_figures_and_table():
    from hetlab.book.views import ch05
    g, d = _orders()
    ws = S.work_stealing(g, d, steal_latency=0.1, initial="first", seed=0)
    fig = ch05.steal_vs_eft_figure(S.eft(g, d), ws)
    assert len(fig.axes) == 2
    texts = [t.get_text() for t in fig.axes[1].texts]
    assert any("T14" in t for t in texts)
    with pytest.raises(TypeError, match="ws"):
        ch05.steal_vs_eft_figure(S.eft(g, d), "ws")
    with pytest.raises(ValueError, match="ws"):
        ch05.steal_vs_eft_figure(S.eft(g, d), S.eft(skewed_tasks(5, seed=1), d))
    table = ch05.kitchen_policy_table(g, d).splitlines()
    assert len(table) == 6 and "4.74" in table[-1]
    with pytest.raises(ValueError, match="keys"):
        ch05.kitchen_policy_table(g, d, keys=["nope"])
    four = identical(4, speed=1.0)
    est, act = R.fork_join(3, work=16.0, skew=0.6, seed=0)
    plan = S.eft(est, four)
    static = S.execute_plan(act, four, {x.name: plan.tasks_on(x.name) for x in four})
    fig = ch05.fork_join_figure(static, S.work_stealing(act, four, seed=0), DC.central_queue_dag(act, four))
    assert len(fig.axes) == 3 and all(a.get_legend() is None for a in fig.axes)
    with pytest.raises(TypeError, match="central"):
        ch05.fork_join_figure(static, static, None)
    import matplotlib.pyplot as plt
    plt.close("all")


def test_capacity_bound_default_decisions():
    g, d = _orders()
    c = DC.decision_counts(g, d, overhead=0.1)
    assert DC.capacity_bound(g, d, overhead=0.1) == DC.capacity_bound(g, d, decisions=c.decisions, overhead=0.1)


def test_variance_figure():
    from hetlab.book.views import ch05
    g, d = _orders()
    fig = ch05.variance_figure(R.compare_under_variance(g, d, noise=0.0, straggler="GPU", slowdown=4.0))
    assert len(fig.axes) == 2 and "18.96" in fig.axes[0].get_title()
    with pytest.raises(TypeError, match="run"):
        ch05.variance_figure(3)
    import matplotlib.pyplot as plt
    plt.close("all")


def test_stealing_vs_eft_counts_and_gaps():
    from hetlab.devices import kitchen
    from hetlab.workloads import skewed_tasks

    devs = kitchen()
    r = DC.stealing_vs_eft(devs, menus=range(4), steal_seeds=2)
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
    from hetlab.devices import kitchen

    r = DC.stealing_vs_eft(kitchen())
    assert 0 < r.wins < 20 and r.worst_loss > r.best_win > 0


@pytest.mark.parametrize("kwargs, name", [({"menus": []}, "menus"), ({"menus": [-1]}, "menus"),
                                          ({"n": 0}, "n"), ({"spread": -1.0}, "spread"),
                                          ({"steal_seeds": 0}, "steal_seeds"),
                                          ({"steal_latency": -0.1}, "steal_latency"),
                                          ({"menus": "ab"}, "menus")])
def test_stealing_vs_eft_rejects_bad_input(kwargs, name):
    from hetlab.devices import kitchen

    with pytest.raises((ValueError, TypeError), match=name):
        DC.stealing_vs_eft(kitchen(), **kwargs)


def test_stealing_vs_eft_record_validates():
    with pytest.raises(ValueError, match="eft"):
        DC.StealingVsEft((0, 1), (1.0, 2.0), (1.0,), (1.0, 1.0), 1, 0.0)
    with pytest.raises((ValueError, TypeError), match="steal_seeds"):
        DC.StealingVsEft((0,), (1.0,), (1.0,), (1.0,), 0, 0.0)
