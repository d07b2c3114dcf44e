"""Appendix A2.7's prose about the hold-out readings (hetlab/data/readings/h200-2026-12-04b), checked on the data.

The section says what held and what did not on configurations the machine profile never saw; each test is one
sentence of it, so a new reading or a refitted profile that changes the story fails here first.
"""
import pytest

from hetlab.real.readings import HOLDOUT, compare_readings, reading

NAMES = ("n3072_b256", "n4096_b256", "n8192_b512")


@pytest.fixture(scope="module")
def rows():
    return compare_readings(HOLDOUT, first_copy=False)     # as predicted before the model had the first copy


@pytest.fixture(scope="module")
def sections():
    return {name: reading(name, HOLDOUT)["hetero"] for name in NAMES}


def test_most_holdout_predictions_miss_the_band_with_a_direction(rows):
    # "留出误差大多在 ±25% 以外": fewer than half inside
    assert sum(abs(r["error"]) <= 0.25 for r in rows) < len(rows) / 2
    # "只用 CPU 的计划全部预测偏长，b = 512 上用 GPU 的计划全部预测偏短"
    assert all(r["error"] > 0 for r in rows if r["plan"] == "cpu_only")
    assert all(r["error"] < 0 for r in rows if r["b"] == 512 and r["plan"] != "cpu_only")


def test_numpy_trsm_is_several_times_the_torch_one(sections):
    old = reading("h200_hetero")["hetero"]["op_costs"]["trsm"]["cpu1_s"]
    assert sections["n3072_b256"]["op_costs"]["trsm"]["cpu1_s"] > 3 * old      # "慢了好几倍"


def test_one_plan_spreads_by_more_than_half(sections):
    for sec in sections.values():
        aware = [sec[k]["hybrid_dispatch_aware"] for k in sec if k[3:].isdigit()]
        assert all(a["cpu_workers_used"] == 0 for a in aware)          # "都没用 CPU": the GPU-only plan
        runs = sec["gpu_only"]["all_s"] + [s for a in aware for s in a["all_s"]]
        assert max(runs) > 1.5 * min(runs)                             # "最慢的比最快的慢一半以上"


def test_the_first_copy_is_most_of_the_512_tile_shortfall(rows, sections):
    for name, sec in sections.items():
        t = sec["n"] // sec["b"]
        copies = t * (t + 1) // 2 * sec["tile_copy"]["h2d_s"]
        gap = next(r["measured_s"] - r["predicted_s"] for r in rows
                   if r["source"] == f"{name}.json" and r["plan"] == "gpu_only")
        if sec["b"] == 512:
            assert copies > gap / 2                                    # "占了……偏短的一大半"
        else:
            assert copies < 0.01                                       # "只有几毫秒"


def test_the_qualitative_lesson_holds(rows, sections):
    for sec in sections.values():
        for key in (k for k in sec if k[3:].isdigit()):
            assert sec[key]["hybrid_heft"]["measured_s"] > sec["gpu_only"]["measured_s"]   # measured
    predicted = {(r["source"], r["plan"], r["cpu_workers"]): r["predicted_s"] for r in rows}
    for (source, plan, _w), p in predicted.items():
        if plan == "hybrid_heft":
            assert p > predicted[(source, "gpu_only", 0)]                                  # and predicted


def test_a_graph_replay_removes_the_host_but_not_the_small_kernels(sections):
    graphs = reading("cuda_graph", HOLDOUT)["cuda_graph"]
    for name, g in graphs.items():
        replay = g["graph_replay_s"]
        assert sections[name]["gpu_only"]["measured_s"] > 3 * replay       # "快了好几倍"
        assert replay > 3 * g["torch_cholesky_gpu_s"]                      # "仍然是……库函数的好几倍"
        assert 10e-6 < replay / g["tasks"] < 100e-6                        # "每个十几到几十微秒"
