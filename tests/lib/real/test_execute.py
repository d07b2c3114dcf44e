"""hetlab.real.execute: real runs of task graphs and plans, the task bodies, and the measures of a run."""
import operator
import time

import numpy as np
import pytest

from hetlab import schedulers as S
from hetlab.devices import Device, kitchen
from hetlab.real import measure
from hetlab.real.execute import Sleep, busy_loop, effective_parallelism, run_graph, run_plan, task_gaps
from hetlab.schedule import Schedule
from hetlab.tasks import Task, TaskGraph, random_dag
from hetlab.workloads import article_tasks


def combine(*inputs):
    """A picklable task body: its value depends on every input, so order mistakes show."""
    return (sum(inputs) * 31 + len(inputs)) % 1_000_003


def graph_and_functions(n=50, seed=3):
    graph = random_dag(n, mean_degree=2.0, seed=seed)
    return graph, {t.name: combine for t in graph.tasks}


def serial_results(graph, functions):
    results = {}
    for name in graph.topological_order():
        i = graph.index[name]
        results[name] = functions[name](*(results[graph.tasks[p].name] for p in graph.preds[i]))
    return results


def check_run(run, graph, functions):
    assert run.results == serial_results(graph, functions)
    run.schedule.validate(check_durations=False)   # every dependency finished before its consumer started
    for (src, dst) in graph.edges:
        assert run.schedule.placement(dst).start >= run.schedule.placement(src).end


@pytest.mark.parametrize("executor", ["process", "thread"])
def test_local_pools_respect_dependencies_and_match_the_serial_run(executor):
    graph, functions = graph_and_functions()
    run = run_graph(graph, functions, executor=executor, workers=2)
    check_run(run, graph, functions)
    assert 1 <= len(run.schedule.devices) <= 2


def test_dask_local_cluster_with_two_workers():
    pytest.importorskip("dask.distributed", reason="dask[distributed] not installed (test extra)")
    graph, functions = graph_and_functions()
    run = run_graph(graph, functions, executor="dask", workers=2)
    check_run(run, graph, functions)
    assert run.schedule.policy == "dask" and 1 <= len(run.schedule.devices) <= 2


def test_run_graph_rejects_bad_input():
    graph = TaskGraph([Task("a"), Task("b")], [("a", "b")])
    with pytest.raises(ValueError, match="missing \\['b'\\]"):
        run_graph(graph, {"a": int})
    with pytest.raises(TypeError, match="not callable"):
        run_graph(graph, {"a": int, "b": 3})
    with pytest.raises(ValueError, match="executor must be"):
        run_graph(graph, {"a": int, "b": operator.neg}, executor="gpu")
    with pytest.raises(ValueError, match=r"workers must be in \[1, 256\], got 0"):
        run_graph(graph, {"a": int, "b": operator.neg}, executor="thread", workers=0)
    with pytest.raises(TypeError, match="functions must map task names"):
        run_graph(graph, None, executor="thread")


def test_busy_loop_sums_squares_mod_7():
    # 0, 1, 4, 9 % 7 = 2, 16 % 7 = 2: the loop's value for 5 steps is 0 + 1 + 4 + 2 + 2
    assert busy_loop(5) == 9 and busy_loop(0) == 0
    with pytest.raises(ValueError, match="n must be in"):
        busy_loop(10**9)


def test_sleep_lasts_its_wall_time_and_validates():
    start = time.perf_counter()
    Sleep(0.02)("ignored", "inputs")
    assert time.perf_counter() - start >= 0.02
    cpu = time.thread_time()
    Sleep(0.05)()
    assert time.thread_time() - cpu < 0.025        # a sleep holds no core
    with pytest.raises(ValueError, match="seconds"):
        Sleep(-1.0)
    with pytest.raises(ValueError, match="seconds"):
        Sleep(11.0)


def test_effective_parallelism_is_cpu_seconds_per_wall_second():
    # three tasks over [0, 2] s using 1 + 1 + 2 CPU seconds: two cores on average
    assert effective_parallelism([0.0, 0.0, 1.0], [1.0, 1.0, 2.0], [1.0, 1.0, 2.0]) == 2.0
    assert effective_parallelism([0.5], [1.5], [0.25]) == 0.25
    with pytest.raises(ValueError, match="equal, positive length"):
        effective_parallelism([0.0], [1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="end must lie after start"):
        effective_parallelism([1.0], [1.0], [0.0])
    with pytest.raises(ValueError, match="cpu"):
        effective_parallelism([0.0], [1.0], [-1.0])


def test_run_plan_keeps_placement_and_sizes_tasks():
    plan = S.article_demo(article_tasks(), kitchen())
    run = run_plan(plan, 0.002, executor="thread", steps_per_second=measure.loop_rate(0.01))
    s = run.schedule.validate(check_durations=False)
    assert [d.name for d in s.devices] == ["CPU", "GPU", "NPU"]
    assert (s.device_of == plan.device_of).all()
    assert np.allclose(s.info["planned_seconds"], (plan.end - plan.start) * 0.002)
    assert (s.end >= s.start).all() and s.makespan > 0
    assert s.info["parallelism"] == pytest.approx(effective_parallelism(s.start, s.end, s.info["cpu_seconds"]))


def test_run_plan_threads_never_compute_on_more_than_one_core():
    # The GIL: whatever the machine's load, the loops' CPU seconds cannot exceed the span they ran in
    # (1.05: the first start and the last end are read in different threads).
    plan = S.round_robin(TaskGraph([Task(f"t{i}", 1.0) for i in range(4)]), [Device(f"w{k}", "CPU") for k in range(4)])
    s = run_plan(plan, 0.02, executor="thread", steps_per_second=measure.loop_rate(0.01)).schedule
    assert 0 < s.info["parallelism"] <= 1.05


def test_run_plan_sequential_runs_one_task_after_another():
    plan = S.article_demo(article_tasks(), kitchen())
    seq = run_plan(plan, 0.002, executor="process", steps_per_second=measure.loop_rate(0.01),
                   sequential=True).schedule
    assert seq.policy == "sequential" and len(seq.info["cpu_seconds"]) == len(plan.graph.tasks)
    order = np.argsort(seq.start)
    assert np.all(seq.start[order][1:] >= seq.end[order][:-1] - 1e-9)


def test_run_plan_sleep_body_overlaps_waits_on_threads():
    # four 50 ms waits on four threads take about 50 ms, not 200 ms: waiting needs no GIL
    plan = S.round_robin(TaskGraph([Task(f"t{i}", 1.0) for i in range(4)]), [Device(f"w{k}", "CPU") for k in range(4)])
    s = run_plan(plan, 0.05, executor="thread", body="sleep").schedule
    assert s.info["steps_per_second"] is None
    assert s.makespan < 0.15 and (s.end - s.start >= 0.05 - 1e-3).all()


def test_run_plan_rejects_bad_input():
    plan = S.article_demo(article_tasks(), kitchen())
    with pytest.raises(ValueError, match="executor"):
        run_plan(plan, 0.001, executor="dask", steps_per_second=1e6)
    with pytest.raises(ValueError, match="at most 10 s"):
        run_plan(plan, 100.0, steps_per_second=1e6)
    with pytest.raises(TypeError, match="plan"):
        run_plan("plan", 0.1, steps_per_second=1e6)
    with pytest.raises(TypeError, match="steps_per_second is required"):
        run_plan(plan, 0.001)
    with pytest.raises(ValueError, match="steps_per_second must be None"):
        run_plan(plan, 0.001, body="sleep", steps_per_second=1e6)
    with pytest.raises(ValueError, match="body"):
        run_plan(plan, 0.001, body="spin")
    with pytest.raises(TypeError, match="sequential"):
        run_plan(plan, 0.001, steps_per_second=1e6, sequential="yes")
    g = TaskGraph([Task("a", 1.0), Task("b", 1.0)], [("a", "b")])
    with pytest.raises(ValueError, match="independent"):
        run_plan(S.eft(g, [Device("c", "CPU", 1.0)]), 0.001, steps_per_second=1e6)


def test_task_gaps_measure_the_wait_after_a_task_could_start():
    # a -> b on one worker, c on another: b could start at a's end (1.0) and started at 1.5; c at 0.25
    g = TaskGraph([Task("a", 1.0), Task("b", 1.0), Task("c", 1.0)], [("a", "b")])
    devices = [Device("w0", "CPU", 1.0), Device("w1", "CPU", 1.0)]
    s = Schedule(g, devices, np.array([0, 0, 1]), np.array([0.0, 1.5, 0.25]), np.array([1.0, 2.5, 1.25]), "x")
    assert task_gaps(s).tolist() == [0.0, 0.5, 0.25]
    with pytest.raises(TypeError, match="measured"):
        task_gaps("run")
