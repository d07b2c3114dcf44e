"""Appendix A2.7's sentences about the hold-out batches and the CUDA-graph replay."""

import pytest

from hetlab.book.readings import a2_holdout


def _row(plan, workers, predicted, measured):
    return {"source": "x.json", "n": 1024, "b": 256, "plan": plan, "cpu_workers": workers,
            "predicted_s": predicted, "measured_s": measured}


def test_holdout_table_counts_the_rows_inside_the_band():
    rows = [_row("gpu_only", 0, 0.011, 0.010), _row("cpu_only", 2, 0.050, 0.100),
            _row("hybrid_dispatch_aware", 2, 0.012, 0.010)]
    text = a2_holdout.holdout_table(rows)
    lines = text.splitlines()
    assert len(lines) == 1 + 3 + 2
    assert "+10%" in lines[1] and "-50%" in lines[2] and "+20%" in lines[3] and "考虑主机的计划" in lines[3]
    assert "2 个在 ±25% 以内，最大误差 -50%" in lines[4]       # +10% and +20% inside, -50% outside
    assert "只用 CPU -50% 到 -50%" in lines[5]
    with pytest.raises(ValueError, match="each of rows must be a dict"):
        a2_holdout.holdout_table([{"plan": "gpu_only"}])


def test_miss_lines_group_the_predictions_outside_the_band():
    rows = [_row("cpu_only", 2, 0.150, 0.100), _row("cpu_only", 4, 0.110, 0.100), _row("gpu_only", 0, 0.011, 0.010),
            _row("hybrid_heft", 2, 0.050, 0.100)]
    # +50% and -50% are outside ±25%, +10% twice inside; the GPU-only group has no miss and is not listed
    assert a2_holdout.miss_lines(rows).splitlines() == [
        "n = 1024、b = 256，只用 CPU：2 个里 1 个在带外，误差 +10% 到 +50%",
        "n = 1024、b = 256，混合（HEFT）：1 个里 1 个在带外，误差 -50% 到 -50%"]
    assert a2_holdout.miss_lines(rows, band=0.6) == "每个预测都在 ±60% 以内"


def test_heft_vs_gpu_lines_compare_within_each_reading():
    rows = [_row("gpu_only", 0, 0.030, 0.040), _row("hybrid_heft", 2, 0.050, 0.035),
            _row("hybrid_heft", 4, 0.020, 0.045)]
    # measured: 35 < 40 (faster), 45 > 40 (slower); predicted: 50 > 30 (slower), 20 < 30 (faster)
    assert a2_holdout.heft_vs_gpu_lines(rows).endswith("实测 1 / 2 组，模型预测 1 / 2 组")
    with pytest.raises(ValueError, match="GPU-only and a hybrid HEFT"):
        a2_holdout.heft_vs_gpu_lines([_row("gpu_only", 0, 0.030, 0.040)])


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
    lines = a2_holdout.copy_in_run_lines(section, 1, HostProfile("p", 3e-5, 8e-5)).splitlines()
    assert lines[1].endswith("输入都在 GPU 上：2 个，时长中位数 100 µs")
    assert lines[2].endswith("一个输入来自 CPU 工作线程：2 个，时长中位数 700 µs，多出 600 µs")
    assert lines[3].endswith("占用主机 30 µs + 单独测的块拷贝 200 µs = 230 µs")
    assert len(lines) == 4                           # no first-copy reading, no line for it
    section["tile_copy"] = {"h2d_first_s": 3.5e-4}   # 350 - 200 us
    assert a2_holdout.copy_in_run_lines(section, 1, HostProfile("p", 3e-5, 8e-5)).splitlines()[4].endswith(
        "第一次拷上 GPU：350 µs，比反复拷同一块多 150 µs")
    rows["TRSM_3_1"][1] = "GPU"                      # no GEMM with an input from a CPU worker left
    with pytest.raises(ValueError, match="no GPU GEMM with 0 or with 1 input"):
        a2_holdout.copy_in_run_lines(section, 1, HostProfile("p", 3e-5, 8e-5))
    with pytest.raises(ValueError, match="trace of the hybrid HEFT run 'cpu2'"):
        a2_holdout.copy_in_run_lines(section, 2, HostProfile("p", 3e-5, 8e-5))


def test_cost_change_lines_put_the_two_readings_side_by_side():
    from hetlab.workloads.cholesky import CholeskyCase

    old = CholeskyCase(1024, 256, {op: {"CPU": 5e-4, "GPU": 6e-5} for op in ("potrf", "trsm", "syrk", "gemm")})
    new = CholeskyCase(1024, 256, {op: {"CPU": 3e-3, "GPU": 4e-5} for op in ("potrf", "trsm", "syrk", "gemm")})
    text = a2_holdout.cost_change_lines(old, new)
    assert text.count("500 µs → 3000 µs") == 4 and text.count("60 µs → 40 µs") == 4
    # two matrix orders with the same tile size: the header names them
    assert a2_holdout.cost_change_lines(old, CholeskyCase(2048, 256, new.op_costs)).startswith(
        "同样 b = 256 的块，两次读数的块代价（n = 1024 → n = 2048）")
    with pytest.raises(ValueError, match="same tile size"):
        a2_holdout.cost_change_lines(old, CholeskyCase(2048, 512, old.op_costs))


def test_same_plan_lines_pool_every_run_of_the_gpu_only_plan():
    def plan(best, runs, **extra):
        return {"measured_s": best, "all_s": runs, **extra}
    section = {"n": 1024, "b": 256, "gpu_only": plan(0.030, [0.030, 0.031, 0.032]),
               "cpu2": {"cpu_only": plan(0.2, [0.2]), "hybrid_heft": plan(0.05, [0.05]),
                        "hybrid_dispatch_aware": plan(0.040, [0.040, 0.050, 0.060], cpu_workers_used=0)}}
    text = a2_holdout.same_plan_lines([section])
    # six runs of one plan: 30 to 60 ms, median of 30 31 32 40 50 60 = (32 + 40) / 2 = 36 ms;
    # the aware plan's best, 40 ms, is 33% over the GPU-only best of 30 ms
    assert "共跑了 6 次，30.0 ms 到 60.0 ms（中位数 36.0 ms）" in text
    assert "1 组里有 1 组比单独测的只用 GPU（30.0 ms）慢，最多慢 33%" in text
    assert text.endswith("比只用 GPU 慢：1 / 1 组")
    with pytest.raises(TypeError, match="sections"):
        a2_holdout.same_plan_lines([{"n": 1}])


def test_graph_replay_lines_compare_the_replay_with_the_library():
    graphs = {"r": {"n": 1024, "b": 256, "tasks": 100, "eager_one_thread_s": 0.02, "graph_replay_s": 0.01,
                    "torch_cholesky_gpu_s": 0.002}}
    text = a2_holdout.graph_replay_lines(graphs, {"r": 0.05})
    # 10 ms / 2 ms = 5.0; 10 ms / 100 tasks = 100 us; eager 20 ms / 10 ms = 2.0 (50 %); 50 - 20 = 30 ms
    assert "5.0 倍" in text and "每个任务 100 µs；1 次连发里最快的一次，用时是重放的 2.0 倍（重放是它的 50%）" in text
    assert "按中位数是 2.0 倍；执行器又比最快的连发多 30.0 ms" in text
    # three eager runs 20, 30, 40 ms (median 30) and replays 10, 12, 20 ms (median 12): 30 / 12 = 2.5
    graphs["r"].update(eager_all_s=[0.02, 0.04, 0.03], graph_all_s=[0.01, 0.02, 0.012])
    assert "3 次连发里最快的一次，用时是重放的 2.0 倍" in a2_holdout.graph_replay_lines(graphs, {"r": 0.05})
    assert "按中位数是 2.5 倍" in a2_holdout.graph_replay_lines(graphs, {"r": 0.05})
    with pytest.raises(TypeError, match="executor"):
        a2_holdout.graph_replay_lines(graphs, {"r": None})


def test_batch_lines_compare_the_batches_like_for_like():
    def row(plan, w, measured):
        return {"source": "x.json", "n": 512, "b": 256, "plan": plan, "cpu_workers": w, "predicted_s": 0.01,
                "measured_s": measured}
    # first: gpu_only out of band (0.01 vs 0.02), cpu_only in; a dispatch-aware row only the first batch has
    first = [row("gpu_only", 0, 0.02), row("cpu_only", 2, 0.011), row("hybrid_dispatch_aware", 2, 0.01)]
    second = [row("gpu_only", 0, 0.01), row("cpu_only", 2, 0.011)]
    text = a2_holdout.batch_lines(first, second)
    assert "两批都有的 2 个配置上：第一批 1 个在 ±25% 以内，第二批 2 个" in text
    assert "第一批另有 1 个第二批没有的（考虑主机的计划），其中 1 个在带里" in text
    assert "另有" not in a2_holdout.batch_lines(second, second)


def test_repeat_lines_split_re_measured_from_new_configurations():
    calibration = [_row("gpu_only", 0, 0.01, 0.01), _row("cpu_only", 4, 0.01, 0.01)]
    # re-measured: gpu_only (+10%, in) and cpu_only at 4 workers (+50%, out);
    # new: cpu_only at 2 workers (a worker count the calibration lacks, -50%, out), hybrid (0%, in)
    rows = [_row("gpu_only", 0, 0.011, 0.010), _row("cpu_only", 4, 0.150, 0.100),
            _row("cpu_only", 2, 0.050, 0.100), _row("hybrid_heft", 4, 0.020, 0.020)]
    assert a2_holdout.repeat_lines(rows, calibration) == (
        "校准里有过、这里重测的配置 2 个，1 个在 ±25% 以内；新配置 2 个，1 个在带里")
    with pytest.raises(ValueError, match="band"):
        a2_holdout.repeat_lines(rows, calibration, band=0)


def test_repeat_lines_counts_a_dispatch_aware_run_without_cpu_workers_as_the_gpu_only_plan():
    calibration = [_row("gpu_only", 0, 0.01, 0.01)]
    # offered 4 workers but gave them nothing: it ran the calibrated GPU-only plan again (re-measured, in);
    # the one that did use 2 workers is a new configuration (-50%, out)
    idle = {**_row("hybrid_dispatch_aware", 4, 0.010, 0.011), "cpu_workers_used": 0}
    busy = {**_row("hybrid_dispatch_aware", 4, 0.050, 0.100), "cpu_workers_used": 2}
    assert a2_holdout.repeat_lines([idle, busy], calibration) == (
        "校准里有过、这里重测的配置 1 个，1 个在 ±25% 以内；新配置 1 个，0 个在带里")
