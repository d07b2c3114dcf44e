"""Real execution of task graphs: process pool, thread pool and Dask on loopback."""
import operator

import pytest

from hetlab.real import measure
from hetlab.real.execute import makespan_error, run_graph
from hetlab.tasks import Task, TaskGraph, random_dag


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


def test_makespan_error_and_overhead_fit():
    graph = TaskGraph([Task("a", 1.0)])
    run = run_graph(graph, {"a": int}, executor="thread", workers=1)
    assert makespan_error(run.schedule, run.schedule) == 0
    n = [1, 2, 4, 8, 16, 64]
    times = [k * 0.002 + 1.5 / k for k in n]
    os_, w = measure.fit_overhead(n, times)
    assert os_ == pytest.approx(0.002) and w == pytest.approx(1.5)
    with pytest.raises(ValueError, match="task_counts and seconds must have the same length"):
        measure.fit_overhead([1, 2], [1.0])


def test_overhead_fit_never_returns_a_negative_overhead():
    # Times that fall faster than W/N would need a negative Os: the fit holds Os at 0 instead.
    # With Os = 0 the least-squares W for T = W/N is sum(t/N) / sum(1/N^2) (normal equation of one unknown).
    n = [1, 2, 4]
    t = [1.0, 0.4, 0.1]
    os_, w = measure.fit_overhead(n, t)
    expected_w = sum(ti / ni for ti, ni in zip(t, n)) / sum(1 / ni**2 for ni in n)
    assert os_ == 0.0 and w == pytest.approx(expected_w)


def test_run_graph_rejects_zero_workers_instead_of_defaulting():
    graph = TaskGraph([Task("a", 1.0)])
    with pytest.raises(ValueError, match=r"workers must be in \[1, 256\], got 0"):
        run_graph(graph, {"a": int}, executor="thread", workers=0)
    with pytest.raises(TypeError, match="functions must map task names"):
        run_graph(graph, None, executor="thread")
    with pytest.raises(TypeError, match="measured must be a Schedule"):
        makespan_error(run_graph(graph, {"a": int}, executor="thread", workers=1).schedule, None)


def test_calibration_is_cached_per_machine(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = measure.calibrate()
    assert first["matmul_gflops"] > 0 and first["process_overhead_s"] > 0
    assert first["gpu"]["available"] in (True, False)
    assert measure.calibrate() == first                 # read back from the cache
    assert measure.calibrated_cpu(first).speed == first["matmul_gflops"]
