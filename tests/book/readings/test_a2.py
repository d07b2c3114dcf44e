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
    assert "24.7 ms" in text and "82.0 ms" in text and "只用 GPU 的 3.3 倍" in text


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


def test_calibration_lines():
    profile = load_profile()
    text = a2.calibration_lines(profile)
    assert "22 个同步读数" in text and text.count("最大误差") == 4
    with pytest.raises(ValueError, match="records no calibration"):
        from hetlab.models.host import HostProfile

        a2.calibration_lines(HostProfile("bare", 1e-5, 1e-5))


def test_gap_lines_split_the_extra_time_free_of_any_order():
    hybrid, _ = _plans(8)
    lines = a2.gap_lines(hybrid, load_profile(), 0.082).splitlines()
    rows = [[float(x) for x in re.findall(r"\d+\.\d+", line)] for line in lines[1:5]]
    for alone, last, low, high, phi in rows:     # the Shapley value lies within the range over the orders
        assert low <= min(alone, last, phi) and max(alone, last, phi) <= high
    none, full = (float(x) for x in re.findall(r"([\d.]+) ms", lines[5])[:2])
    assert none == pytest.approx(hybrid.makespan * 1e3, abs=0.05)      # no term on: HEFT's own plan
    assert sum(r[4] for r in rows) == pytest.approx(full - none, abs=0.25)   # Shapley values add up
    assert "单独加上 λ：多出 0.0 ms" in lines[7]                        # with h = 0 nobody waits for the host
    count, each, total = re.search(r"有 (\d+) 条.*?(\d+) µs = ([\d.]+) ms", lines[8]).groups()
    assert float(total) == pytest.approx(rows[0][0], abs=0.11)          # copies alone = the copies waited
    assert float(total) == pytest.approx(int(count) * float(each) / 1e3, rel=0.01)
    with pytest.raises(ValueError, match="measured_s"):
        a2.gap_lines(hybrid, load_profile(), 0.0)


def test_heft_gap_lines_range_each_kind_of_plan():
    runs = measured_runs()
    text = a2.heft_gap_lines(runs)
    cpu = [r.simulated_s / r.measured_s - 1 for r in runs if r.plan == "cpu_only"]
    assert f"只用 CPU：模拟偏差 {min(cpu):+.0%} 到 {max(cpu):+.0%}（{len(cpu)} 个读数）" in text
    assert "混合计划，b = 256" in text and "混合计划，b = 512" in text
    with pytest.raises(TypeError, match="runs"):
        a2.heft_gap_lines([])


def test_gpu_only_spread_lines_put_one_model_value_beside_several_runs():
    runs = measured_runs()
    text = a2.gpu_only_spread_lines(runs, [r.measured_s * 1.1 for r in runs])
    assert text.count("误差 +10%") == 3 and "3 次运行" in text      # three synchronising GPU-only 256-tile runs
    with pytest.raises(ValueError, match="no|none"):
        a2.gpu_only_spread_lines(runs, [r.measured_s for r in runs], b=128)


def test_planner_and_cuda_graph_lines():
    text = a2.planner_lines({"gpu_only": 0.03, "cpu4": {"cpu_only": 0.1, "hybrid_heft": 0.08,
                                                        "hybrid_dispatch_aware": 0.03}}, {4: 0})
    assert "30.0 ms" in text and "80.0 ms" in text
    launch = reading("h200")["launch"]
    text = a2.cuda_graph_lines(launch, 0.0247, 364, 0.0016, 13e-6)
    assert "0.93 µs" in text and "68 µs" in text       # 24.7 ms / 364 tasks = 67.9 us
    # the replay's floor: 364 kernels x 13 us one after another = 4.73 ms, 4.73 / 1.6 = 2.96x the library
    assert "≈ 4.7 ms" in text and "库函数的 3.0 倍" in text
    with pytest.raises(TypeError, match="launch must be the 'launch' section"):
        a2.cuda_graph_lines({}, 0.0247, 364, 0.0016, 13e-6)
    with pytest.raises(ValueError, match="device_s"):
        a2.cuda_graph_lines(launch, 0.0247, 364, 0.0016, 0.0)


def test_calibration_spread_lines_keep_what_holds_under_every_fit():
    hybrid, alone = _plans(8)
    profile = load_profile()
    lines = a2.calibration_spread_lines(hybrid, alone, profile).splitlines()
    rows = lines[1:-2]
    assert len(rows) == 1 + len(profile.calibration["held_out"])        # the profile's set and each hold-out fit
    values = [[float(x) for x in re.findall(r"([\d.]+) ms", r)] for r in rows]
    copies = {v[0] for v in values}
    # the copy term depends on the link latency only, never on h, lambda or s(k): one value in every row,
    # the gap table's "copies alone" (HEFT's 16.0 ms + 292 x 63 us)
    assert len(copies) == 1
    floor = float(re.search(r"([\d.]+) ms", lines[-2]).group(1))
    faster = sum(v[1] < floor for v in values)
    assert lines[-1].endswith(f"{faster} 组比只用 GPU 快") and "每组都比只用 GPU 慢" in lines[-1]
    # h and lambda move too: each row prints its own set's constants (the profile's, then each fit's)
    fits = [profile] + [fit["constants"] for fit in profile.calibration["held_out"].values()]
    got = [tuple(int(x) for x in re.findall(r"(\d+) µs", r)) for r in rows]
    want = [(round(profile.hold_s * 1e6), round(profile.handoff_s * 1e6))]
    want += [(round(f.get("hold_s", profile.hold_s) * 1e6), round(f.get("handoff_s", profile.handoff_s) * 1e6))
             for f in fits[1:]]
    assert got == want and len(set(got)) == len(got)
    shares = [int(x) for x in re.findall(r"(\d+)%", "".join(rows))]
    assert all(50 < s < 100 for s in shares)                             # the host's pair is the larger part
    with pytest.raises(TypeError, match="gpu_only"):
        a2.calibration_spread_lines(hybrid, None, profile)


def test_timeline_lines_put_the_model_beside_the_trace():
    hybrid, _ = _plans(8)
    measured = trace_schedule(hybrid.graph, hybrid.devices, _hetero()["cpu8"]["hybrid_heft"]["trace"])
    from hetlab.models.host import simulate_host
    text = a2.timeline_lines(measured, simulate_host(hybrid, load_profile()))
    # an independent trace walk (the A2-4 review's script) found: GPU idle 49 % vs 72 %, idle waiting for a CPU
    # input 0 vs 12.3 ms, median GPU task 153 vs 68 us
    assert re.search(r"GPU 空闲占完工时间\s+49%\s+72%", text)
    assert re.search(r"其中等 CPU 任务的输入\s+0.0 ms\s+12.3 ms", text)
    assert re.search(r"GPU 任务时长中位数\s+153 µs\s+68 µs", text)
    with pytest.raises(TypeError, match="model"):
        a2.timeline_lines(measured, None)


def test_race_verdict_calls_results_within_one_percent_a_tie():
    # the A2-6 review's corner (15 workers, lambda = h = 0): 29.4 vs 29.3 ms differ by 0.34 %, a tie
    assert a2.race_verdict(29.4, 29.3) == "两者相当"
    assert a2.race_verdict(29.3, 29.4) == "两者相当"
    # 1.5 % apart (30.45 / 30.0) is no tie; the default widget setting, 36.3 vs 29.3 ms, is a clear GPU win
    assert a2.race_verdict(30.45, 30.0) == "只用 GPU 更快"
    assert a2.race_verdict(30.0, 30.45) == "混合计划更快"
    assert a2.race_verdict(36.3, 29.3) == "只用 GPU 更快"
    with pytest.raises(ValueError, match="hybrid_ms"):
        a2.race_verdict(0.0, 29.3)
