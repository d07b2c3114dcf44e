"""Static plan vs dynamic policy under runtime variance; fork-join DAG (hetlab.models.dynamics)."""
import pytest

from hetlab import schedulers as S
from hetlab.devices import identical, kitchen
from hetlab.models import dynamics as R
from hetlab.tasks import independent_tasks
from hetlab.workloads import skewed_tasks


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


def test_dynamic_queue_by_hand():
    # Two identical devices, tasks 3, 1, 1, 1 in that order: D0 takes 3; D1 takes 1, 1, 1 -> makespan 3.
    s = R.dynamic_queue(independent_tasks([3.0, 1.0, 1.0, 1.0]), identical(2)).validate()
    assert s.makespan == pytest.approx(3.0)
    assert s.tasks_on("D1") == ["T1", "T2", "T3"]


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


def test_dynamic_wins_on_average_under_noise():
    g, d = skewed_tasks(24, spread=0.8, seed=7), kitchen()
    wins = sum(R.compare_under_variance(g, d, noise=0.5, seed=k).dynamic.makespan
               < R.compare_under_variance(g, d, noise=0.5, seed=k).static.makespan for k in range(10))
    assert wins >= 7


def test_fork_join_work_is_conserved_and_shapes_agree():
    est, act = R.fork_join(4, work=64.0, skew=0.6, seed=3)
    assert sum(t.work for t in est.tasks) == pytest.approx(64.0)
    assert sum(t.work for t in act.tasks) == pytest.approx(64.0)
    assert dict(est.edges) == dict(act.edges)
    assert len(est.tasks) == 2 ** 4 + 2 * (2 ** 4 - 1)     # leaves + (split, join) per internal call


def test_work_stealing_beats_the_static_plan_on_skewed_fork_join():
    four = identical(4, 1.0)
    wins = 0
    for seed in range(5):
        est, act = R.fork_join(5, work=64.0, skew=0.6, seed=seed)
        plan = S.eft(est, four)
        static = S.execute_plan(act, four, {x.name: plan.tasks_on(x.name) for x in four})
        ws = S.work_stealing(act, four, steal_latency=0.05, initial="first", seed=0).validate()
        wins += ws.makespan < static.makespan
    assert wins >= 4


@pytest.mark.parametrize("call, message", [
    (lambda: R.actual_graph(skewed_tasks(3), kitchen(), noise=-1), "noise"),
    (lambda: R.actual_graph(skewed_tasks(3), kitchen(), straggler="TPU"), "straggler"),
    (lambda: R.actual_graph(skewed_tasks(3), kitchen(), slowdown=0.5), "slowdown"),
    (lambda: R.fork_join(0), "depth"),
    (lambda: R.fork_join(3, skew=1.5), "skew"),
    (lambda: R.dynamic_queue(skewed_tasks(3), kitchen(), order=["T0"]), "order"),
])
def test_bad_input(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()
