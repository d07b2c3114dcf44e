"""Appendix A2's sentences: the numbers they print come from the readings, HEFT and the host model."""
import re

import pytest

from hetlab.book.readings import a2
from hetlab.book.views.a2 import _plans
from hetlab.models.host import load_profile
from hetlab.real.readings import case_of, measured_runs, reading, trace_schedule


def _hetero():
    return reading("h200_hetero")["hetero"]


def test_workload_lines_count_the_tasks_and_the_gemm_arithmetic():
    case, _ = case_of(_hetero())
    text = a2.workload_lines(case, gpu_flops=60e12)
    assert "364 个任务" in text and "858 条依赖边" in text and "GEMM 220" in text
    # 2 * 256^3 = 33.55 MFLOP at 60 TFLOP/s: 0.56 us
    assert "33.6 MFLOP" in text and "0.56 µs" in text
    # the stored 256-order FP64 matmul (27.4 us) less one launch + synchronise (14.4 us) leaves 13 us on the device
    text = a2.workload_lines(case, gpu_flops=60e12, tile_matmul_s=27.4e-6, launch_sync_s=14.4e-6)
    assert "27.4 µs" in text and "14.4 µs" in text and "约 13 µs" in text
    with pytest.raises(ValueError, match="launch_sync_s"):
        a2.workload_lines(case, tile_matmul_s=10e-6, launch_sync_s=20e-6)   # overhead longer than the whole call


def test_host_limit_lines_put_the_fitted_constants_beside_the_readings():
    case, _ = case_of(_hetero())
    profile = load_profile()
    text = a2.host_limit_lines(case, profile, 0.0247)
    # 2h = 2 x 34 us = 68 us > the GEMM tile's 63 us on the GPU: no device time left for it in the model
    assert "2h = 68 µs" in text and "GEMM 0.0 µs" in text and "GEMM 在模型里几乎没有设备时间" in text
    # 364 tasks x 2 visits x 34 us = 24.75 ms, above the measured 24.7 ms
    assert "728 次占用主机" in text and "24.8 ms" in text and "低于下界" in text
    assert f"s(1) = {profile.slowdown_base:.2f}" in text                 # ln 1 = 0: s(1) is the base
    assert "高于下界" in a2.host_limit_lines(case, profile, 0.030)


def test_plan_and_measured_lines_use_the_stored_numbers():
    hybrid, alone = _plans(8)
    het = _hetero()
    plan_text = a2.plan_lines(hybrid, alone)
    # HEFT's own simulations as stored: 29.3 ms alone, 16.0 ms with 8 CPU workers, 216 tasks on the GPU
    assert "29.3 ms" in plan_text and "16.0 ms" in plan_text and "GPU 上 216 个任务" in plan_text
    assert f"{het['gpu_only']['simulated_s'] / het['cpu8']['hybrid_heft']['simulated_s']:.2f} 倍" in plan_text
    text = a2.measured_lines(het["gpu_only"]["measured_s"], het["cpu8"]["hybrid_heft"]["measured_s"], hybrid)
    assert "24.7 ms" in text and "82.0 ms" in text and "慢 3.3 倍" in text


def test_trace_lines_show_the_gpu_waiting_longer_beside_cpu_workers():
    hybrid, alone = _plans(8)
    het = _hetero()
    mixed = trace_schedule(hybrid.graph, hybrid.devices, het["cpu8"]["hybrid_heft"]["trace"])
    solo = trace_schedule(alone.graph, alone.devices, het["gpu_only"]["trace"])
    waits = [int(x) for x in re.findall(r"等待中位数 (\d+) µs", a2.trace_lines(mixed, solo))]
    assert len(waits) == 2 and waits[1] > 10 * waits[0]
    with pytest.raises(ValueError, match="must both hold tasks on a GPU"):
        cpu_only = trace_schedule(hybrid.graph, hybrid.devices,
                                  [[t, "CPU0", float(i), i + 1.0] for i, (t, *_) in enumerate(het["cpu8"]["cpu_only"]
                                                                                              ["trace"])])
        a2.trace_lines(cpu_only, solo)


def test_prediction_table_has_a_row_per_run_and_the_largest_error():
    runs = measured_runs()[:3]
    predicted = [r.measured_s * 1.1 for r in runs]
    text = a2.prediction_table(runs, predicted)
    assert len(text.splitlines()) == 3 + 2 and "+10%" in text and text.endswith("最大误差：10%")
    # the synchronising runs are the calibration set: their values are fits, the others predictions
    fitted = {run.mode == "sync" for run in runs}
    assert ("同步·拟合" in text) == (True in fitted) and ("异步·预测" in text) == (False in fitted)
    with pytest.raises(ValueError, match="predicted must give one makespan per run"):
        a2.prediction_table(runs, predicted[:2])


def test_calibration_and_free_host_lines():
    profile = load_profile()
    text = a2.calibration_lines(profile)
    assert "22 个同步读数" in text and text.count("最大误差") == 4
    hybrid, alone = _plans(8)
    lines = a2.free_host_lines(hybrid, alone, profile).splitlines()
    hybrid_ms = [float(re.search(r"混合计划 ([\d.]+) ms", line).group(1)) for line in lines]
    assert hybrid_ms == sorted(hybrid_ms, reverse=True)     # a cheaper host never predicts a later end
    with pytest.raises(ValueError, match="records no calibration"):
        from hetlab.models.host import HostProfile

        a2.calibration_lines(HostProfile("bare", 1e-5, 1e-5))


def test_planner_and_cuda_graph_lines():
    text = a2.planner_lines({"gpu_only": 0.03, "cpu4": {"cpu_only": 0.1, "hybrid_heft": 0.08,
                                                        "hybrid_dispatch_aware": 0.03}}, {4: 0})
    assert "30.0 ms" in text and "80.0 ms" in text
    launch = reading("h200")["launch"]
    text = a2.cuda_graph_lines(launch, 0.0247, 364, 0.0016)
    assert "0.93 µs" in text and "68 µs" in text       # 24.7 ms / 364 tasks = 67.9 us
    with pytest.raises(TypeError, match="launch must be the 'launch' section"):
        a2.cuda_graph_lines({}, 0.0247, 364, 0.0016)


def _row(plan, workers, predicted, measured):
    return {"source": "x.json", "n": 1024, "b": 256, "plan": plan, "cpu_workers": workers,
            "predicted_s": predicted, "measured_s": measured}


def test_holdout_table_counts_the_rows_inside_the_band():
    rows = [_row("gpu_only", 0, 0.011, 0.010), _row("cpu_only", 2, 0.050, 0.100),
            _row("hybrid_dispatch_aware", 2, 0.012, 0.010)]
    text = a2.holdout_table(rows)
    lines = text.splitlines()
    assert len(lines) == 1 + 3 + 2
    assert "+10%" in lines[1] and "-50%" in lines[2] and "+20%" in lines[3] and "考虑主机的计划" in lines[3]
    assert "2 个在 ±25% 以内，最大误差 -50%" in lines[4]       # +10% and +20% inside, -50% outside
    assert "只用 CPU -50% 到 -50%" in lines[5]
    with pytest.raises(ValueError, match="each of rows must be a dict"):
        a2.holdout_table([{"plan": "gpu_only"}])


def test_miss_lines_group_the_predictions_outside_the_band():
    rows = [_row("cpu_only", 2, 0.150, 0.100), _row("cpu_only", 4, 0.110, 0.100), _row("gpu_only", 0, 0.011, 0.010),
            _row("hybrid_heft", 2, 0.050, 0.100)]
    # +50% and -50% are outside ±25%, +10% twice inside; the GPU-only group has no miss and is not listed
    assert a2.miss_lines(rows).splitlines() == ["n = 1024、b = 256，只用 CPU：2 个里 1 个在带外，误差 +10% 到 +50%",
                                                "n = 1024、b = 256，混合（HEFT）：1 个里 1 个在带外，误差 -50% 到 -50%"]
    assert a2.miss_lines(rows, band=0.6) == "每个预测都在 ±60% 以内"


def test_heft_vs_gpu_lines_compare_within_each_reading():
    rows = [_row("gpu_only", 0, 0.030, 0.040), _row("hybrid_heft", 2, 0.050, 0.035),
            _row("hybrid_heft", 4, 0.020, 0.045)]
    # measured: 35 < 40 (faster), 45 > 40 (slower); predicted: 50 > 30 (slower), 20 < 30 (faster)
    assert a2.heft_vs_gpu_lines(rows).endswith("实测 1 / 2 组，模型预测 1 / 2 组")
    with pytest.raises(ValueError, match="GPU-only and a hybrid HEFT"):
        a2.heft_vs_gpu_lines([_row("gpu_only", 0, 0.030, 0.040)])


def test_copy_in_run_lines_time_the_gpu_gemms_by_their_inputs_from_cpu_workers():
    from hetlab.models.host import HostProfile
    from hetlab.workloads.cholesky import CholeskyCase

    ops = ("potrf", "trsm", "syrk", "gemm")
    case = CholeskyCase(1280, 256, {op: {"CPU": 1e-3, "GPU": 1e-4} for op in ops}, 2e-4, inputs_on_host=True)
    rows = {t.name: [t.name, "GPU", 0.0, 1e-4] for t in case.graph(case.devices(0)).tasks}
    # 5 x 5 tiles: the GEMMs of steps k >= 1 copy no matrix tile first. TRSM_3_1 on a CPU worker is one input of
    # GEMM_3_2_1 and GEMM_4_3_1 (600 and 800 us: median 700); GEMM_4_2_1 and GEMM_4_3_2 read only GPU tiles
    # (100 us each)
    rows["TRSM_3_1"][1] = "CPU0"
    rows["GEMM_3_2_1"][3], rows["GEMM_4_3_1"][3] = 6e-4, 8e-4
    section = {"n": 1280, "b": 256, "op_costs": {op: {"cpu1_s": 1e-3, "gpu_s": 1e-4} for op in ops},
               "tile_copy_s": 2e-4, "inputs_on_host": True, "gpu_only": {},
               "cpu1": {"hybrid_heft": {"trace": list(rows.values())}}}
    lines = a2.copy_in_run_lines(section, 1, HostProfile("p", 3e-5, 8e-5)).splitlines()
    assert lines[1].endswith("输入都在 GPU 上：2 个，时长中位数 100 µs")
    assert lines[2].endswith("一个输入来自 CPU 工作线程：2 个，时长中位数 700 µs，多出 600 µs")
    assert lines[3].endswith("占用主机 30 µs + 单独测的块拷贝 200 µs = 230 µs")
    rows["TRSM_3_1"][1] = "GPU"                      # no GEMM with an input from a CPU worker left
    with pytest.raises(ValueError, match="no GPU GEMM with 0 or with 1 input"):
        a2.copy_in_run_lines(section, 1, HostProfile("p", 3e-5, 8e-5))
    with pytest.raises(ValueError, match="trace of the hybrid HEFT run 'cpu2'"):
        a2.copy_in_run_lines(section, 2, HostProfile("p", 3e-5, 8e-5))


def test_cost_change_lines_put_the_two_readings_side_by_side():
    from hetlab.workloads.cholesky import CholeskyCase

    old = CholeskyCase(1024, 256, {op: {"CPU": 5e-4, "GPU": 6e-5} for op in ("potrf", "trsm", "syrk", "gemm")})
    new = CholeskyCase(1024, 256, {op: {"CPU": 3e-3, "GPU": 4e-5} for op in ("potrf", "trsm", "syrk", "gemm")})
    text = a2.cost_change_lines(old, new)
    assert text.count("500 µs → 3000 µs") == 4 and text.count("60 µs → 40 µs") == 4
    # two matrix orders with the same tile size: the header names them
    assert a2.cost_change_lines(old, CholeskyCase(2048, 256, new.op_costs)).startswith(
        "同样 b = 256 的块，两次读数的块代价（n = 1024 → n = 2048）")
    with pytest.raises(ValueError, match="same tile size"):
        a2.cost_change_lines(old, CholeskyCase(2048, 512, old.op_costs))


def test_same_plan_lines_pool_every_run_of_the_gpu_only_plan():
    def plan(best, runs, **extra):
        return {"measured_s": best, "all_s": runs, **extra}
    section = {"n": 1024, "b": 256, "gpu_only": plan(0.030, [0.030, 0.031, 0.032]),
               "cpu2": {"cpu_only": plan(0.2, [0.2]), "hybrid_heft": plan(0.05, [0.05]),
                        "hybrid_dispatch_aware": plan(0.040, [0.040, 0.050, 0.060], cpu_workers_used=0)}}
    text = a2.same_plan_lines([section])
    # six runs of one plan: 30 to 60 ms, median of 30 31 32 40 50 60 = (32 + 40) / 2 = 36 ms;
    # the aware plan's best, 40 ms, is 33% over the GPU-only best of 30 ms
    assert "共跑了 6 次，30.0 ms 到 60.0 ms（中位数 36.0 ms）" in text
    assert "1 组里有 1 组比单独测的只用 GPU（30.0 ms）慢，最多慢 33%" in text
    assert text.endswith("比只用 GPU 慢：1 / 1 组")
    with pytest.raises(TypeError, match="sections"):
        a2.same_plan_lines([{"n": 1}])


def test_graph_replay_lines_compare_the_replay_with_the_library():
    graphs = {"r": {"n": 1024, "b": 256, "tasks": 100, "eager_one_thread_s": 0.02, "graph_replay_s": 0.01,
                    "torch_cholesky_gpu_s": 0.002}}
    text = a2.graph_replay_lines(graphs, {"r": 0.05})
    # 10 ms / 2 ms = 5.0; 10 ms / 100 tasks = 100 us; 50 ms / 10 ms = 5.0
    assert "5.0 倍" in text and "每个任务 100 µs，比执行器快 5.0 倍" in text
    with pytest.raises(TypeError, match="executor"):
        a2.graph_replay_lines(graphs, {"r": None})


def test_batch_lines_compare_the_batches_like_for_like():
    def row(plan, w, measured):
        return {"source": "x.json", "n": 512, "b": 256, "plan": plan, "cpu_workers": w, "predicted_s": 0.01,
                "measured_s": measured}
    # first: gpu_only out of band (0.01 vs 0.02), cpu_only in; a dispatch-aware row only the first batch has
    first = [row("gpu_only", 0, 0.02), row("cpu_only", 2, 0.011), row("hybrid_dispatch_aware", 2, 0.01)]
    second = [row("gpu_only", 0, 0.01), row("cpu_only", 2, 0.011)]
    text = a2.batch_lines(first, second)
    assert "两批都有的 2 个配置上：第一批 1 个在 ±25% 以内，第二批 2 个" in text
    assert "第一批另有 1 个第二批没有的（考虑主机的计划），其中 1 个在带里" in text
    assert "另有" not in a2.batch_lines(second, second)
