"""The stored H200 readings: what a prediction may read, every stored makespan, and traces as schedules."""
import json

import pytest

from hetlab.devices import Device
from hetlab.real.readings import case_of, measured_runs, read_case, reading, reading_names, trace_schedule
from hetlab.workloads.cholesky import cholesky_graph


def test_the_shipped_files():
    assert reading_names() == ["async_b256", "async_b512", "h200", "h200_hetero"]
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
