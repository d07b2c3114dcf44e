"""The tiled-Cholesky task graph: counts, dependencies and HEFT's stored plans."""
import dataclasses
import math

import pytest

from hetlab.models.host import HostProfile, simulate_host
from hetlab.real.readings import measured_runs, reading
from hetlab.schedulers import heft
from hetlab.tasks import critical_path
from hetlab.workloads.cholesky import (
    OPS,
    CholeskyCase,
    cholesky_devices,
    cholesky_graph,
    predict_makespans,
    task_counts,
    tile_count,
)

#: Hand-derived dependencies of the 3 x 3 tiling: each task waits for the last writer of every tile it touches.
EDGES_3 = {
    ("POTRF_0", "TRSM_1_0"), ("POTRF_0", "TRSM_2_0"),
    ("TRSM_1_0", "SYRK_1_0"), ("TRSM_2_0", "SYRK_2_0"),
    ("TRSM_2_0", "GEMM_2_1_0"), ("TRSM_1_0", "GEMM_2_1_0"),
    ("SYRK_1_0", "POTRF_1"),
    ("POTRF_1", "TRSM_2_1"), ("GEMM_2_1_0", "TRSM_2_1"),
    ("TRSM_2_1", "SYRK_2_1"), ("SYRK_2_0", "SYRK_2_1"),
    ("SYRK_2_1", "POTRF_2"),
}


def test_counts_match_the_stored_readings():
    # The H200 reading's own counts: 8 x 8 tiles -> 120 tasks and 252 edges, 12 x 12 -> 364 and 858.
    stored = reading("h200")["cholesky"]
    for key, tiles in (("n4096_b512", 8), ("n3072_b256", 12)):
        g = cholesky_graph(tiles)
        assert (len(g.tasks), len(g.edges)) == (stored[key]["tasks"], stored[key]["edges"])
        assert task_counts(tiles)["total"] == stored[key]["tasks"]


def test_task_counts_by_kernel():
    # potrf T, trsm and syrk T(T-1)/2, gemm T(T-1)(T-2)/6: for T = 3, 3 + 3 + 3 + 1.
    assert task_counts(3) == {"potrf": 3, "trsm": 3, "syrk": 3, "gemm": 1, "total": 10}
    g = cholesky_graph(5)
    for op in OPS:
        assert sum(t.op == op for t in g.tasks) == task_counts(5)[op]


def test_dependencies_of_three_tiles_by_hand():
    assert set(cholesky_graph(3).edges) == EDGES_3


def test_critical_path_in_flop_units():
    # POTRF 1/3, TRSM 1, GEMM 2, SYRK 1 (units of b^3): the longest chain for 3 tiles runs through the GEMM,
    # 1/3 + 1 + 2 + 1 + 1 + 1/3 = 17/3.
    length, path = critical_path(cholesky_graph(3))
    assert length == pytest.approx(17 / 3)
    assert path == ["POTRF_0", "TRSM_2_0", "GEMM_2_1_0", "TRSM_2_1", "SYRK_2_1", "POTRF_2"]


def test_every_stored_heft_plan_is_reproduced():
    # hetlab.heft made the stored plans; their simulated makespans are in the readings.
    for run in measured_runs():
        devices = run.devices()
        plan = heft(run.case.graph(devices, cpu_scale=run.cpu_scale, gpu_extra_s=run.gpu_extra_s), devices)
        assert plan.makespan == pytest.approx(run.simulated_s, rel=1e-9), (run.source, run.plan, run.cpu_workers)


def test_run_times_come_from_the_cost_table():
    costs = {op: {"CPU": 2.0 + k, "GPU": 0.5} for k, op in enumerate(OPS)}
    devices = cholesky_devices(1, tile_copy_s=0.25)
    g = cholesky_graph(2, costs, devices)
    assert g.task("SYRK_1_0").times == {"GPU": 0.5, "CPU0": 4.0}
    assert devices[0].link.latency == 0.25 and devices[1].link.latency == 0.0


def test_devices_and_tiles_are_checked():
    assert [d.name for d in cholesky_devices(3, gpu=False)] == ["CPU0", "CPU1", "CPU2"]
    assert tile_count(3072, 256) == 12
    with pytest.raises(ValueError, match="b must divide n"):
        tile_count(1000, 256)
    with pytest.raises(ValueError, match="cpu_workers must be at least 1"):
        cholesky_devices(0, gpu=False)
    with pytest.raises(ValueError, match="op_costs and devices go together"):
        cholesky_graph(2, {op: {"CPU": 1.0} for op in OPS})
    with pytest.raises(ValueError, match=r"op_costs\['gemm'\] must give a time for every device kind"):
        cholesky_graph(2, {op: {"CPU": 1.0, "GPU": 1.0} for op in ("potrf", "trsm", "syrk")} | {"gemm": {"GPU": 1.0}},
                       cholesky_devices(1))
    with pytest.raises(ValueError, match=r"op_costs\['trsm'\]\['GPU'\] must be in \[0, inf\)"):
        CholeskyCase(512, 256, {op: {"CPU": 1.0, "GPU": -1.0 if op == "trsm" else 1.0} for op in OPS})


def _case():
    return CholeskyCase(1024, 256, {op: {"CPU": 4e-4, "GPU": 1e-4} for op in OPS}, 5e-5)


def test_predictions_without_a_host_are_heft_and_never_worse_than_gpu_only():
    free = HostProfile("free host", hold_s=0.0, handoff_s=0.0)
    case = CholeskyCase(1024, 256, {op: {"CPU": 4e-4, "GPU": 1e-4} for op in OPS}, 0.0)   # copies free too
    out = predict_makespans(case, [2, 4], free)
    assert set(out) == {"gpu_only", "cpu2", "cpu4"}
    # A free host, no slowdown: the prediction is HEFT's own simulation (20 GPU tasks of 0.1 ms in a row).
    assert out["gpu_only"] == pytest.approx(20 * 1e-4)
    hybrid = heft(case.graph(case.devices(4)), case.devices(4)).makespan
    assert out["cpu4"]["hybrid_heft"] == pytest.approx(hybrid)
    for key in ("cpu2", "cpu4"):
        assert set(out[key]) == {"cpu_only", "hybrid_heft", "hybrid_dispatch_aware"}
        assert out[key]["hybrid_dispatch_aware"] <= out["gpu_only"] + 1e-15
        assert out[key]["hybrid_dispatch_aware"] <= out[key]["hybrid_heft"] + 1e-15


def test_predictions_with_the_shipped_profile_keep_the_dispatch_aware_plan_at_most_gpu_only():
    case = _case()
    out = predict_makespans(case, [1, 3])
    assert all(math.isfinite(out[k]["cpu_only"]) and out[k]["hybrid_dispatch_aware"] <= out["gpu_only"]
               for k in ("cpu1", "cpu3"))
    gpu_only = heft(case.graph(case.devices(0)), case.devices(0))
    from hetlab.models.host import load_profile

    assert out["gpu_only"] == simulate_host(gpu_only, load_profile()).makespan


def test_each_tile_of_the_matrix_is_copied_once_by_its_first_user():
    # Step 0 touches every tile first: POTRF_0 (0,0), TRSM_i_0 (i,0), SYRK_i_0 (i,i), GEMM_i_j_0 (i,j); T(T+1)/2 tiles.
    case = CholeskyCase(1024, 256, {op: {"CPU": 4e-4, "GPU": 1e-4} for op in OPS}, 5e-5, inputs_on_host=True)
    first = case.host_inputs()
    assert first == {name: 1 for name in ["POTRF_0", "TRSM_1_0", "TRSM_2_0", "TRSM_3_0", "SYRK_1_0", "SYRK_2_0",
                                          "SYRK_3_0", "GEMM_2_1_0", "GEMM_3_1_0", "GEMM_3_2_0"]}
    assert _case().host_inputs() == {}             # the matrix already on the GPU
    with pytest.raises(TypeError, match="inputs_on_host must be True or False"):
        CholeskyCase(1024, 256, _case().op_costs, inputs_on_host=1)


def test_the_first_copies_lengthen_the_gpu_only_prediction_by_a_visit_and_a_copy_each():
    # One GPU thread, no CPU worker: nothing overlaps, so the 10 copies (host visit 2e-5 + copy 5e-5) add up.
    profile = HostProfile("p", hold_s=2e-5, handoff_s=0.0)
    on_host = dataclasses.replace(_case(), inputs_on_host=True)
    gap = predict_makespans(on_host, [1], profile)["gpu_only"] - predict_makespans(_case(), [1], profile)["gpu_only"]
    assert gap == pytest.approx(10 * (2e-5 + 5e-5))


def test_predict_makespans_checks_its_arguments():
    with pytest.raises(TypeError, match="case must be a CholeskyCase"):
        predict_makespans({"n": 1}, [1])
    with pytest.raises(TypeError, match="workers must be a sequence"):
        predict_makespans(_case(), 4)
    with pytest.raises(ValueError, match="a worker count in workers must be in"):
        predict_makespans(_case(), [0])
    with pytest.raises(TypeError, match="profile must be a HostProfile"):
        predict_makespans(_case(), [1], profile="h200")
