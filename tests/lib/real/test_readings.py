"""The stored H200 readings: what a prediction may read, every stored makespan, and traces as schedules."""
import dataclasses
import json

import pytest

from hetlab.devices import Device
from hetlab.real.readings import (
    HOLDOUT,
    TORCH_HOLDOUT,
    case_of,
    compare_readings,
    measured_makespans,
    measured_runs,
    read_case,
    reading,
    reading_names,
    trace_schedule,
)
from hetlab.workloads.cholesky import cholesky_graph, predict_makespans


def test_the_shipped_files():
    # the Cholesky readings; other chapters store more readings of the same machine beside them
    assert {"async_b256", "async_b512", "h200", "h200_hetero"} <= set(reading_names())
    assert reading("h200")["env"]["gpu"] == "NVIDIA H200"
    with pytest.raises(ValueError, match="name must be one of"):
        reading("h100")


def test_case_of_reads_only_the_inputs():
    data = reading("h200_hetero")
    case, workers = case_of(data)
    assert (case.n, case.b, workers) == (3072, 256, [4, 8, 15])
    assert case.op_costs["gemm"]["GPU"] == data["hetero"]["op_costs"]["gemm"]["gpu_s"]
    # the same answer from the inputs alone: nothing measured is needed
    inner = data["hetero"]
    bare = {k: inner[k] for k in ("n", "b", "op_costs", "tile_copy_s")} | {"cpu4": {}, "cpu8": {}, "cpu15": {}}
    assert case_of(bare) == (case, workers)


def test_bad_readings_are_refused_with_the_field_named(tmp_path):
    with pytest.raises(ValueError, match="must give 'tile_copy_s'"):
        case_of({"n": 512, "b": 256, "op_costs": {}, "cpu4": {}})
    with pytest.raises(ValueError, match="at least one section 'cpuW'"):
        bare = {k: v for k, v in reading("h200_hetero")["hetero"].items() if not k.startswith("cpu")}
        case_of(bare)
    with pytest.raises(ValueError, match="b must divide n"):
        case_of({"n": 1000, "b": 256, "op_costs": reading("h200_hetero")["hetero"]["op_costs"], "tile_copy_s": 0,
                 "cpu4": {}})
    path = tmp_path / "x.json"
    path.write_text("{not json")
    with pytest.raises(ValueError, match="is not JSON"):
        read_case(path)
    with pytest.raises(ValueError, match="cannot be read"):
        read_case(tmp_path / "missing.json")
    path.write_text(json.dumps([1, 2]))
    with pytest.raises(ValueError, match="must be a JSON object"):
        read_case(path)


def test_every_stored_makespan_is_listed_once():
    runs = measured_runs()
    assert len(runs) == 28          # h200.json 6, h200_hetero.json 10, async files 2 x 2 x 3
    keys = {(r.source, r.plan, r.cpu_workers, r.mode) for r in runs}
    assert len(keys) == 28
    het = {(r.plan, r.cpu_workers): r.measured_s for r in runs if r.source == "h200_hetero.json"}
    assert het[("hybrid_heft", 8)] == reading("h200_hetero")["hetero"]["cpu8"]["hybrid_heft"]["measured_s"]


def test_a_stored_trace_is_a_schedule():
    het = reading("h200_hetero")["hetero"]
    trace = het["cpu8"]["hybrid_heft"]["trace"]
    devices = [Device("GPU", "GPU")] + [Device(f"CPU{i}") for i in range(8)]
    s = trace_schedule(cholesky_graph(12), devices, trace)
    assert s.makespan == max(row[3] for row in trace)
    assert sum(d == 0 for d in s.device_of) == het["cpu8"]["hybrid_heft"]["tasks_per_kind"]["GPU"]
    s.validate(check_durations=False)
    with pytest.raises(ValueError, match=r"trace\[0\] must be \[task, device, start, end\]"):
        trace_schedule(cholesky_graph(1), devices, [["POTRF_0", "GPU", 0.0]])


# --- the hold-out readings (hetlab/data/readings/h200-2026-12-04b and -04c): configurations the profile never saw ---

#: What tools/measure_cholesky_gpu.py measured (its CONFIGS): n, b and the CPU worker counts, sorted.
_HOLDOUT_CASES = {"n3072_b256": (3072, 256, [2, 4, 6, 8, 12, 15]), "n4096_b256": (4096, 256, [2, 4, 6, 12]),
                  "n8192_b512": (8192, 512, [2, 4, 6, 12])}


def _tasks(n: int, b: int) -> int:
    t = n // b          # T + T(T-1) + T(T-1)(T-2)/6 tasks
    return t + t * (t - 1) + t * (t - 1) * (t - 2) // 6


def test_the_holdout_readings_are_read_as_cases():
    assert reading_names(HOLDOUT) == ["cuda_graph", *sorted(_HOLDOUT_CASES)]
    assert reading_names(TORCH_HOLDOUT) == sorted(_HOLDOUT_CASES)
    for machine in (HOLDOUT, TORCH_HOLDOUT):
        for name, (n, b, workers) in _HOLDOUT_CASES.items():
            data = reading(name, machine)
            case, found = case_of(data)
            assert (case.n, case.b, found) == (n, b, workers)
            assert case.inputs_on_host          # hetlab's executor starts with the matrix in host memory
            assert data["hetero"]["gpu_only"]["tasks_per_kind"] == {"GPU": _tasks(n, b)}   # every task on the GPU
            assert [k for k in measured_makespans(data) if k != "gpu_only"] == [f"cpu{w}" for w in workers]
    assert not case_of(reading("h200_hetero"))[0].inputs_on_host     # the calibration runs: tiles on the GPU


def test_holdout_makespans_are_the_best_of_3_then_the_median():
    for name in _HOLDOUT_CASES:
        old, new = reading(name, HOLDOUT), reading(name, TORCH_HOLDOUT)
        assert measured_makespans(old)["gpu_only"] == min(old["hetero"]["gpu_only"]["all_s"])
        runs = sorted(new["hetero"]["gpu_only"]["all_s"])
        middle = (runs[len(runs) // 2 - 1] + runs[len(runs) // 2]) / 2     # an even count of runs: 12 or 18
        assert len(runs) % 2 == 0 and measured_makespans(new)["gpu_only"] == pytest.approx(middle, rel=1e-12)
        for key, row in measured_makespans(new).items():
            if key != "gpu_only":                # the dispatch-aware plan was the GPU-only one: not run again
                assert set(row) == {"cpu_only", "hybrid_heft"}
                assert new["hetero"][key]["hybrid_dispatch_aware"]["same_plan_as"] == "gpu_only"


@pytest.fixture(scope="module")
def holdout_rows():
    return compare_readings()


def test_every_holdout_makespan_is_predicted_from_the_inputs_alone(holdout_rows):
    # 3 GPU-only runs, and 3 plans for each of the 6 + 4 + 4 worker counts
    assert len(holdout_rows) == 3 + 3 * (6 + 4 + 4)
    for name, (n, b, workers) in _HOLDOUT_CASES.items():
        data = reading(name, HOLDOUT)
        inner = data["hetero"]
        keys = ("n", "b", "op_costs", "tile_copy_s", "inputs_on_host")
        bare = {k: inner[k] for k in keys} | {f"cpu{w}": {} for w in workers}
        predicted = predict_makespans(*case_of(bare))             # nothing measured is in `bare`
        rows = [r for r in holdout_rows if r["source"] == f"{name}.json"]
        for r in rows:
            assert (r["n"], r["b"]) == (n, b)
            if r["plan"] == "gpu_only":
                assert (r["predicted_s"], r["measured_s"]) == (predicted["gpu_only"], inner["gpu_only"]["measured_s"])
                continue
            key = f"cpu{r['cpu_workers']}"
            assert r["measured_s"] == inner[key][r["plan"]]["measured_s"]
            if r["plan"] == "hybrid_dispatch_aware":        # it ran with no CPU worker: the GPU-only plan's prediction
                assert inner[key][r["plan"]]["cpu_workers_used"] == 0 == r["cpu_workers_used"]
                assert r["predicted_s"] == predicted["gpu_only"]
            else:
                assert r["predicted_s"] == predicted[key][r["plan"]]
            assert r["error"] == pytest.approx(r["predicted_s"] / r["measured_s"] - 1)
        # the dispatch-aware plan may use no CPU worker, so it is never predicted slower than the GPU alone
        assert all(predicted[f"cpu{w}"]["hybrid_dispatch_aware"] <= predicted["gpu_only"] for w in workers)


def test_the_first_copy_adds_a_host_visit_and_a_copy_per_tile_to_the_gpu_plan(holdout_rows):
    # GPU only, one thread: the T(T+1)/2 first copies, each a host visit and a tile copy, simply add up
    from hetlab.models.host import load_profile

    profile = load_profile()
    as_first_predicted = compare_readings(HOLDOUT, first_copy=False)    # the model before it had the first copy
    assert [(r["source"], r["plan"], r["cpu_workers"]) for r in as_first_predicted] == \
        [(r["source"], r["plan"], r["cpu_workers"]) for r in holdout_rows]
    for name, (n, b, _workers) in _HOLDOUT_CASES.items():
        case, _ = case_of(reading(name, HOLDOUT))
        t = n // b
        without = predict_makespans(dataclasses.replace(case, inputs_on_host=False), [1])["gpu_only"]
        with_copies, earlier = (next(r["predicted_s"] for r in rows
                                     if r["source"] == f"{name}.json" and r["plan"] == "gpu_only")
                                for rows in (holdout_rows, as_first_predicted))
        assert earlier == without
        assert with_copies - without == pytest.approx(t * (t + 1) / 2 * (profile.hold_s + case.tile_copy_s), rel=1e-9)
    with pytest.raises(TypeError, match="first_copy must be True or False"):
        compare_readings(HOLDOUT, first_copy="no")


def test_the_plan_run_on_the_device_is_the_plan_predicted_here():
    # the dispatch-aware plan was chosen on the device from the same inputs and profile; 04b's run before the model
    # had the first copy, 04c's after: each agrees with the model of its day
    from hetlab.schedulers.host_aware import host_aware

    for machine, first_copy in ((HOLDOUT, False), (TORCH_HOLDOUT, True)):
        for name, (_n, _b, workers) in _HOLDOUT_CASES.items():
            sec = reading(name, machine)["hetero"]
            case = dataclasses.replace(case_of(sec)[0], inputs_on_host=first_copy)
            for w in workers:
                stored = sec[f"cpu{w}"]["hybrid_dispatch_aware"]
                plan = host_aware(case.graph(case.devices(w)), case.devices(w), host_inputs=case.host_inputs())
                assert plan.info["cpu_workers"] == stored["cpu_workers_used"]
                assert plan.info["predicted"].makespan == pytest.approx(stored["predicted_s_on_device"], rel=1e-12)


def test_the_torch_holdout_compares_the_plans_that_ran():
    rows = compare_readings(TORCH_HOLDOUT)
    assert len(rows) == 3 + 2 * (6 + 4 + 4)             # no dispatch-aware row: it was the GPU-only plan each time
    assert {r["plan"] for r in rows} == {"gpu_only", "cpu_only", "hybrid_heft"}
