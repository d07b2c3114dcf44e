"""Appendix A1 additions: run_plan, attribute, relative fits, round-trip dispatch, loop_rate."""
import math

import numpy as np
import pytest

from hetlab import schedulers as S
from hetlab.devices import Device, kitchen
from hetlab.real import measure
from hetlab.real.execute import Attribution, attribute, run_plan
from hetlab.tasks import Task, TaskGraph
from hetlab.workloads import article_tasks


def test_run_plan_keeps_placement_and_sizes_tasks():
    plan = S.POLICIES["article_demo"](article_tasks(), kitchen())
    run = run_plan(plan, 0.002, executor="thread", steps_per_second=measure.loop_rate(0.01))
    s = run.schedule.validate(check_durations=False)
    assert [d.name for d in s.devices] == ["CPU", "GPU", "NPU"]
    assert (s.device_of == plan.device_of).all()
    assert np.allclose(s.info["planned_seconds"], (plan.end - plan.start) * 0.002)
    assert (s.end >= s.start).all() and s.makespan > 0


def test_run_plan_rejects_bad_input():
    plan = S.POLICIES["article_demo"](article_tasks(), kitchen())
    with pytest.raises(ValueError, match="executor"):
        run_plan(plan, 0.001, executor="dask", steps_per_second=1e6)
    with pytest.raises(ValueError, match="at most 10 s"):
        run_plan(plan, 100.0, steps_per_second=1e6)
    with pytest.raises(TypeError, match="plan"):
        run_plan("plan", 0.1)
    g = TaskGraph([Task("a", 1.0), Task("b", 1.0)], [("a", "b")])
    dep = S.eft(g, [Device("c", "CPU", 1.0)])
    with pytest.raises(ValueError, match="independent"):
        run_plan(dep, 0.001, steps_per_second=1e6)


def test_attribute_of_a_plan_against_itself_is_neutral():
    plan = S.eft(article_tasks(), kitchen())
    a = attribute(plan, plan)
    assert isinstance(a, Attribution)
    assert a.median_stretch == pytest.approx(1.0) and a.gaps == pytest.approx(0.0)
    assert a.implied_overhead == pytest.approx(0.0) and a.stretched_plan == pytest.approx(plan.makespan)
    scaled = attribute(plan, plan, seconds_per_unit=2.0)
    assert scaled.planned == pytest.approx(2 * plan.makespan) and scaled.median_stretch == pytest.approx(0.5)
    assert scaled.implied_overhead < 0


def test_attribute_rejects_other_graphs():
    plan = S.eft(article_tasks(), kitchen())
    other = S.eft(TaskGraph([Task("x", 1.0)]), kitchen())
    with pytest.raises(ValueError, match="same tasks"):
        attribute(plan, other)


def test_relative_fit_recovers_exact_data():
    counts = [1, 2, 3, 4, 8, 16, 64]
    exact = [n * 200e-6 + math.ceil(n / 2) * 0.3 / n for n in counts]
    for rel in (False, True):
        o, w = measure.fit_overhead(counts, exact, workers=2, relative=rel)
        assert o == pytest.approx(200e-6, rel=1e-6) and w == pytest.approx(0.3, rel=1e-6)
    with pytest.raises(ValueError, match="positive"):
        measure.fit_overhead([1, 2], [0.0, 1.0], workers=2, relative=True)


def test_round_trip_dispatch_and_loop_rate():
    assert measure.dispatch_overhead(50, workers=1, pipelined=False) > 0
    with pytest.raises(TypeError, match="pipelined"):
        measure.dispatch_overhead(5, pipelined="yes")
    assert measure.loop_rate(0.01) > 1e4
    with pytest.raises(ValueError, match="seconds"):
        measure.loop_rate(0.0)


def test_sweep_repeat_is_validated():
    with pytest.raises(ValueError, match="repeat"):
        measure.granularity_sweep(0.01, [1, 2], executor="thread", repeat=0)
    out = measure.granularity_sweep(0.01, [1, 2], executor="thread", workers=1, repeat=3)
    assert set(out) == {1, 2} and all(v > 0 for v in out.values())


def test_gantt_panels_and_machine_note():
    import matplotlib
    matplotlib.use("Agg")
    from hetlab.book.views import a1
    plan = S.eft(article_tasks(), kitchen())
    fig = a1.gantt_panels([(plan, "a"), (plan, "b")], mark=plan.makespan)
    assert len(fig.axes) == 2
    with pytest.raises(TypeError, match="panels"):
        a1.gantt_panels([(1, "a")])
    with pytest.raises(ValueError, match="panels"):
        a1.gantt_panels([])
    assert "较忙" in a1.machine_note(2.0) and "空闲" in a1.machine_note(0.1)
    assert isinstance(a1.machine_note(), str)


def test_attribution_text_reads_a_run():
    from hetlab.book.views import a1
    plan = S.eft(article_tasks(), kitchen())
    text = a1.attribution_text(plan, plan, 1e-4, 2e-4)
    assert "偏差（实测 − 模拟）/ 模拟 = +0.0%（在 ±15% 之内）" in text and "拉长倍数中位数 1.00" in text
    assert "执行顺序：中心就绪队列模拟" in text and "额外忙碌 +0.0 毫秒" in text
    with pytest.raises(ValueError, match="process_os"):
        a1.attribution_text(plan, plan, 0.0, 1e-4)
    with pytest.raises(ValueError, match="scale"):
        a1.demo_for_real(scale=0.0)


def test_run_plan_records_cpu_time_and_sequential_baseline():
    plan = S.POLICIES["article_demo"](article_tasks(), kitchen())
    rate = measure.loop_rate(0.01)
    seq = run_plan(plan, 0.002, executor="process", steps_per_second=rate, sequential=True).schedule
    assert seq.policy == "sequential"
    assert len(seq.info["cpu_seconds"]) == len(plan.graph.tasks)
    order = np.argsort(seq.start)
    assert np.all(np.diff(seq.start[order]) >= 0)
    assert np.all(seq.start[order][1:] >= seq.end[order][:-1] - 1e-9)     # one after another
    thread = run_plan(plan, 0.002, executor="thread", steps_per_second=rate).schedule
    assert 0 < thread.info["parallelism"] <= 1.25                        # the GIL: one loop at a time
    with pytest.raises(TypeError, match="sequential"):
        run_plan(plan, 0.001, steps_per_second=1e6, sequential="yes")


def test_task_gaps_sum_to_attribution_gaps():
    from hetlab.real.execute import task_gaps
    g = TaskGraph([Task("a", 1.0), Task("b", 1.0), Task("c", 1.0)], [("a", "b")])
    plan = S.eft(g, [Device("w0", "CPU", 1.0), Device("w1", "CPU", 1.0)])
    import dataclasses
    late = dataclasses.replace(plan, start=plan.start + np.array([0.0, 0.5, 0.25]),
                               end=plan.end + np.array([0.0, 0.5, 0.25]))
    gaps = task_gaps(late)
    assert gaps.sum() == pytest.approx(attribute(plan, late).gaps)
    assert gaps[0] == 0.0 and gaps[1] == pytest.approx(0.5)
    with pytest.raises(TypeError, match="measured"):
        task_gaps("x")


def _stretched_run():
    import numpy as np

    from hetlab.schedule import Schedule
    g = TaskGraph([Task(f"t{i}", 10.0) for i in range(4)], [])
    devs = [Device("w0", "CPU", 1000.0), Device("w1", "CPU", 1000.0)]
    plan = S.eft(g, devs)
    # measured: t0 took 5x its plan (long tail), and every task waited 20 ms before starting
    dur = np.array([0.05, 0.01, 0.01, 0.01])
    start, end, free = np.zeros(4), np.zeros(4), [0.0, 0.0]
    for i in range(4):
        d = int(plan.device_of[i])
        start[i] = free[d] + 0.02
        end[i] = start[i] + dur[i]
        free[d] = end[i]
    return plan, Schedule(g, plan.devices, plan.device_of, start, end, "measured")


def test_attribute_totals_see_the_long_tail():
    plan, real = _stretched_run()
    a = attribute(plan, real)
    assert a.median_stretch == pytest.approx(1.0)
    assert a.planned_busy == pytest.approx(0.04) and a.measured_busy == pytest.approx(0.08)
    assert a.extra_busy == pytest.approx(0.04) and a.long_tasks == 1
    assert a.gaps == pytest.approx(0.08)
    assert a.total_estimate == pytest.approx((0.08 + 0.08) / 2)


def test_attribution_text_names_load_and_long_tail():
    from hetlab.book.views import a1
    plan, real = _stretched_run()
    text = a1.attribution_text(plan, real, 1e-4, 1e-3)
    assert "1 个任务被拉长 2 倍以上" in text and "额外忙碌 +40.0 毫秒" in text
    assert "等核（负载）" in text and "执行顺序：" in text
    quiet = a1.attribution_text(plan, real, 1e-4, 0.02)
    assert "等核（负载）" not in quiet and "与派发的往返延迟相当" in quiet


def test_gantt_panels_label_the_same_tasks():
    import matplotlib
    matplotlib.use("Agg")
    from hetlab.book.views import a1
    plan, real = _stretched_run()
    fig = a1.gantt_panels([(plan, "plan"), (real, "real")], label_from=1, names=1)
    names = [[t.get_text() for t in ax.texts] for ax in fig.axes]
    assert names[0] == names[1] == ["t0"]
    with pytest.raises(ValueError, match="label_from"):
        a1.gantt_panels([(plan, "plan")], label_from=3)


def test_thread_verdicts_use_stated_tolerances():
    import pytest

    from hetlab.book.views import a1

    assert "不超过 1 个核" in a1.thread_parallelism_verdict(1.01)
    assert "容差 0.05" in a1.thread_parallelism_verdict(1.01)
    assert "无 GIL" in a1.thread_parallelism_verdict(1.2)
    assert "测量噪声之内" in a1.thread_ratio_verdict(1.08)
    assert "复现" in a1.thread_ratio_verdict(1.3)
    assert "重跑" in a1.thread_ratio_verdict(0.7)
    assert "复现了" in a1.thread_ratio_verdict(1.3, shares=(0.95, 1.0))          # same share of a core
    assert "不算复现" in a1.thread_ratio_verdict(1.3, shares=(0.71, 0.94))      # less of a core: maybe load
    assert "GIL 交接的损耗：复现了" in a1.thread_ratio_verdict(1.3, shares=(0.71, 0.94), idle=True)
    assert "测量噪声之内" in a1.thread_ratio_verdict(1.08, shares=(0.5, 1.0))
    with pytest.raises(TypeError, match="shares"):
        a1.thread_ratio_verdict(1.3, shares=(1.0,))
    with pytest.raises(ValueError, match="shares"):
        a1.thread_ratio_verdict(1.3, shares=(-1.0, 1.0))
    with pytest.raises(ValueError, match="tolerance"):
        a1.thread_parallelism_verdict(1.0, tolerance=-1)
    with pytest.raises(ValueError, match="ratio"):
        a1.thread_ratio_verdict(0.0)


def test_lane_stagger_and_stretch_reads_a_thread_run():
    from hetlab.book.views import a1

    plan = S.POLICIES["article_demo"](article_tasks(), kitchen())
    run = run_plan(plan, 0.002, executor="thread", steps_per_second=measure.loop_rate(0.01)).schedule
    stagger, stretch = a1.lane_stagger_and_stretch(run)
    assert stagger >= 0 and stretch > 0
    with pytest.raises(TypeError, match="schedule"):
        a1.lane_stagger_and_stretch(plan)


def test_sleep_body_waits_and_validates():
    import time

    t0 = time.perf_counter()
    assert measure.Sleep(0.01)() == 0.01
    assert time.perf_counter() - t0 >= 0.009
    with pytest.raises(ValueError, match="seconds"):
        measure.Sleep(-1.0)
    with pytest.raises(ValueError, match="seconds"):
        measure.Sleep(11.0)


def test_gil_gap_control_returns_gaps_for_both_bodies():
    from hetlab.real.execute import gil_gap_control
    from hetlab.tasks import random_dag

    g = random_dag(6, mean_degree=1.0, work=(1.0, 2.0), data=(0.0, 0.0), seed=0)
    gaps = gil_gap_control(g, seconds_per_unit=1e-3, executor="thread", workers=2, repeat=2)
    assert set(gaps) == {"spin", "sleep"}
    for v in gaps.values():
        assert v.shape == (12,) and (v >= 0).all() and np.isfinite(v).all()


def test_gil_gap_control_rejects_bad_input():
    from hetlab.real.execute import gil_gap_control

    g = article_tasks()
    with pytest.raises(ValueError, match="seconds_per_unit"):
        gil_gap_control(g, seconds_per_unit=0.1)       # 11.4 s of work per run: over the 1 s cap
    with pytest.raises(ValueError, match="seconds_per_unit"):
        gil_gap_control(g, seconds_per_unit=-1.0)
    with pytest.raises(ValueError, match="executor"):
        gil_gap_control(g, executor="gpu")
    with pytest.raises(ValueError, match="workers"):
        gil_gap_control(g, workers=0)
    with pytest.raises(ValueError, match="repeat"):
        gil_gap_control(g, repeat=0)
    with pytest.raises(TypeError, match="graph"):
        gil_gap_control([1, 2])


def test_gil_control_verdict_covers_every_outcome():
    from hetlab.book.views.a1 import gil_control_verdict

    assert "与 GIL 假设一致" in gil_control_verdict(0.004, 0.001)
    assert "一部分" in gil_control_verdict(0.004, 0.0028)
    assert "不支持" in gil_control_verdict(0.004, 0.004)
    assert "不支持" in gil_control_verdict(1.0, 0.7976)                  # printed as 0.80: judged as 0.80
    assert "一部分" in gil_control_verdict(1.0, 0.79)
    assert "与 GIL 假设一致" in gil_control_verdict(1.0, 0.5)
    assert "不支持" in gil_control_verdict(0.001, 0.003)
    assert "无从检验" in gil_control_verdict(0.0, 0.001)
    with pytest.raises(ValueError, match="spin_gap"):
        gil_control_verdict(-1.0, 0.0)


def test_gil_control_text_says_so_without_dask(monkeypatch):
    import builtins

    from hetlab.book.views.a1 import gil_control_text

    real_import = builtins.__import__

    def no_dask(name, *args, **kwargs):
        if name.startswith("dask") or name.startswith("distributed"):
            raise ImportError("No module named 'dask'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_dask)
    text = gil_control_text(article_tasks())
    assert "未安装 Dask" in text


def test_a1_readings_follow_the_numbers():
    from hetlab.book.views import a1

    assert a1._pct(-0.001, 0) == "0%" and a1._pct(0.0881) == "+8.8%"
    cal = {"matmul_gflops": 40.0, "gpu": {"available": False}}
    assert "FP64" in a1.offload_text(cal) and "n ≥ 20" in a1.offload_text(cal)
    with pytest.raises(TypeError, match="cal"):
        a1.offload_text({})


def test_gantt_panels_colour_by_level():
    from hetlab.book.views import a1
    from hetlab.tasks import random_dag

    dag = random_dag(12, mean_degree=1.5, seed=1)
    s = S.eft(dag, [Device("w0", "CPU", 1.0), Device("w1", "CPU", 1.0)])
    fig = a1.gantt_panels([(s, "a"), (s, "b")], mark=s.makespan, color_by="level")
    assert len(fig.axes) == 3                                          # two panels and a colour bar
    with pytest.raises(ValueError, match="color_by"):
        a1.gantt_panels([(s, "a")], color_by="depth")


def test_cost_and_shortfall_is_an_identity():
    from hetlab.book.views import a1

    cost, short = a1.cost_and_shortfall(0.220, 0.189, 1.90, 0.378)
    assert abs(cost * short - 0.220 / 0.189) < 1e-12
    assert abs(cost - 1.90 * 0.220 / 0.378) < 1e-12
    with pytest.raises(ValueError, match="parallelism"):
        a1.cost_and_shortfall(1.0, 1.0, 0.0, 1.0)


def test_cpu_cost_verdict_is_conditional():
    from hetlab.book.views import a1

    assert "核都忙时每个核变慢" in a1.cpu_cost_verdict(1.0, 1.13, 1.0)
    assert "没有让核明显变慢" in a1.cpu_cost_verdict(1.0, 1.01, 1.0)
    assert "GIL 交接本身" in a1.cpu_cost_verdict(1.0, 1.0, 1.08)
    assert "漂" in a1.cpu_cost_verdict(0.9, 1.0, 1.0)
    with pytest.raises(ValueError, match="process"):
        a1.cpu_cost_verdict(1.0, -1.0, 1.0)


def test_idle_gap_text_names_the_gap_and_blocked_tasks():
    from hetlab import Device, random_dag
    from hetlab import schedulers as S
    from hetlab.book.views import a1

    dag = random_dag(40, mean_degree=1.5, work=(2.0, 10.0), data=(0.0, 0.0), seed=1)
    workers = [Device(f"worker{k}", "CPU", 1000.0) for k in range(2)]
    text = a1.idle_gap_text(S.eft(dag, workers))
    assert "worker1" in text and "T06" in text and "队尾" in text
    assert "没有明显" in a1.idle_gap_text(S.eft(dag, workers), min_gap=1.0)
    with pytest.raises(TypeError, match="schedule"):
        a1.idle_gap_text(3)
    with pytest.raises(ValueError, match="min_gap"):
        a1.idle_gap_text(S.eft(dag, workers), min_gap=-1.0)


def test_cpu_cost_verdict_saturated_machine():
    from hetlab.book.views import a1

    assert "饱和" in a1.cpu_cost_verdict(1.0, 1.2, 1.0, saturated=True)
    with pytest.raises(TypeError, match="saturated"):
        a1.cpu_cost_verdict(1.0, 1.0, 1.0, saturated=1)


def test_cpu_cost_verdict_thread_reading_qualified_by_drift():
    from hetlab.book.views import a1

    assert "分不出" in a1.cpu_cost_verdict(1.14, 1.0, 1.07)
    assert "分不出" in a1.cpu_cost_verdict(1.0, 1.0, 1.07, saturated=True)
    assert "GIL 交接本身" in a1.cpu_cost_verdict(1.0, 1.0, 1.07)


def test_cross_worker_edges_and_lane_first_stretch():
    import dataclasses

    from hetlab.book.views.a1 import cross_worker_edges, lane_first_stretch
    g = TaskGraph([Task("a", 1.0), Task("b", 1.0), Task("c", 1.0)], [("a", "b"), ("a", "c")])
    plan = S.eft(g, [Device("w0", "cpu", 1.0), Device("w1", "cpu", 1.0)])
    edges, crossed, far, near = cross_worker_edges(plan)
    assert edges == 2
    assert crossed == sum(int(plan.device_of[0] != plan.device_of[k]) for k in (1, 2))
    assert (math.isnan(far) or far >= 0) and (math.isnan(near) or near >= 0)
    twice = dataclasses.replace(plan, start=plan.start * 2, end=plan.end * 2)
    stretch = lane_first_stretch(twice, plan, 1.0)
    assert stretch and all(math.isclose(x, 2.0) for _, x in stretch)


def test_dask_report_figure_flag(monkeypatch):
    from hetlab.book.views import a1

    with pytest.raises(TypeError, match="figure"):
        a1.dask_report(None, None, None, None, figure="yes")
    with pytest.raises(TypeError, match="details"):
        a1.dask_report(None, None, None, None, details="yes")
    monkeypatch.setattr(a1, "_dask_report", lambda *args: ("跳过 Dask（未安装）", "", None, None))
    assert a1.dask_report(None, None, None, None) == "跳过 Dask（未安装）"
    assert a1.dask_report(None, None, None, None, figure=True) == ("跳过 Dask（未安装）", None)
    assert a1.dask_report(None, None, None, None, details=True) == ("跳过 Dask（未安装）", "")
    plan = S.heft(article_tasks(), kitchen())
    monkeypatch.setattr(a1, "_dask_report", lambda *args: ("text", "more", plan, plan))
    text, fig = a1.dask_report(None, None, None, None, figure=True)
    assert text == "text\nmore" and len(fig.axes) >= 2
    summary, more, fig = a1.dask_report(None, None, None, None, figure=True, details=True)
    assert (summary, more) == ("text", "more") and len(fig.axes) >= 2


def test_split_startup_adds_up_and_removes_the_startup_from_the_gaps():
    from hetlab.real.execute import split_startup, task_gaps
    from hetlab.schedule import Schedule

    g = TaskGraph([Task("a", 1.0), Task("b", 1.0), Task("c", 1.0)], [("a", "c")])
    devs = [Device("w0", "CPU", 1.0), Device("w1", "CPU", 1.0)]
    late = Schedule(g, devs, np.array([0, 1, 0]), np.array([0.10, 0.12, 0.21]), np.array([0.20, 0.22, 0.31]), "x")
    startup, shifted = split_startup(late)
    assert startup == pytest.approx(0.10)
    assert startup + shifted.makespan == pytest.approx(late.makespan)          # the two terms add up
    assert np.allclose(shifted.end - shifted.start, late.end - late.start)     # task lengths unchanged
    per_task = task_gaps(shifted)
    assert per_task[0] == 0.0 and per_task[1] == pytest.approx(0.02) and per_task[2] == pytest.approx(0.01)
    # the start-up was in the first task of each worker's gap; nothing else changes
    assert task_gaps(late).sum() - per_task.sum() == pytest.approx(2 * startup)
    assert shifted.info["startup_removed"] == pytest.approx(0.10)
    with pytest.raises(TypeError, match="measured"):
        split_startup("run")


def test_dask_run_warms_up_before_the_clock_and_reports_its_startup():
    pytest.importorskip("dask.distributed", reason="dask[distributed] not installed (test extra)")
    from hetlab.real.execute import run_graph, split_startup

    g = TaskGraph([Task("a", 1.0), Task("b", 1.0), Task("c", 1.0)], [("a", "c"), ("b", "c")])
    run = run_graph(g, {k: measure.Spin(0.002) for k in "abc"}, executor="dask", workers=2)
    info = run.schedule.info
    warm = info["warmup"]
    assert len(warm) == 2 + 2                         # one import task per worker, one pair each way
    assert all(end <= 0 for _, end, _ in warm)        # all of it finished before the clock started
    assert {w for _, _, w in warm[:2]} == set(info["workers"]) or len(info["workers"]) < 2
    startup, shifted = split_startup(run.schedule)
    assert startup == pytest.approx(info["startup"]) and info["submit_seconds"] >= 0
    assert startup + shifted.makespan == pytest.approx(run.schedule.makespan)


def test_loop_rate_median_option():
    assert measure.loop_rate(0.01, repeat=5, statistic="median") > 1e4
    with pytest.raises(ValueError, match="statistic"):
        measure.loop_rate(0.01, statistic="mean")
    with pytest.raises(ValueError, match="repeat"):
        measure.loop_rate(0.01, repeat=0)


def test_demo_for_real_details_flag_is_checked():
    from hetlab.book.views import a1

    with pytest.raises(TypeError, match="details"):
        a1.demo_for_real(0.01, details="yes")
    with pytest.raises(ValueError, match="repeat"):
        a1.demo_for_real(0.01, repeat=0)


def test_sweep_counts_add_p_p_plus_one_and_2p():
    from hetlab.book.views.a1 import sweep_counts

    assert sweep_counts(2) == [1, 2, 3, 4, 8, 16, 64, 256]
    assert sweep_counts(16) == [1, 2, 3, 4, 8, 16, 17, 32, 64, 256]
    assert sweep_counts(5, counts=[1, 100]) == [1, 5, 6, 10, 100]
    with pytest.raises(ValueError, match="workers"):
        sweep_counts(0)
    with pytest.raises(ValueError, match="counts"):
        sweep_counts(2, counts=[0, 4])


def test_sawtooth_text_is_general_in_p():
    from hetlab.book.views.a1 import sawtooth_text
    from hetlab.models import granularity as G

    w, os_ = 0.2, 400e-6
    for p in (2, 3, 8):
        wall = {n: float(G.total_time_on(n, w, os_, p, model="rounds")) for n in (p, p + 1, 2 * p)}
        text = sawtooth_text(wall, os_, w, p)
        gap = w * (p - 1) / (p * (p + 1)) - (p - 1) * os_       # T(P + 1) - T(2P) of the rounds model
        assert f"{gap * 1e3:.1f} 毫秒" in text and f"N = P + 1 = {p + 1}" in text
        assert "比 N = " in text and "并不比" not in text
        assert ("W/6 − Os" in text) == (p == 2)
    flat = {2: 0.10, 3: 0.10, 4: 0.11}
    assert "并不比" in sawtooth_text(flat, os_, w, 2)
    assert "无法核对" in sawtooth_text({2: 0.1}, os_, w, 2)
    assert "没有锯齿" in sawtooth_text({}, os_, w, 1)
    assert "不为正" in sawtooth_text({}, 0.01, 0.2, 8) and "不为正" not in sawtooth_text({}, os_, w, 8)
    with pytest.raises(TypeError, match="wall"):
        sawtooth_text([0.1], os_, w, 2)
    with pytest.raises(ValueError, match="w"):
        sawtooth_text({}, os_, -1.0, 2)


def test_sweep_figure_draws_a_sweep_and_validates():
    from hetlab.book.views.a1 import sweep_counts, sweep_figure
    from hetlab.models import granularity as G

    for p in (2, 3, 16):
        counts = sweep_counts(p)
        sweep = {"counts": counts, "wall": {n: float(G.total_time_on(n, 0.2, 4e-4, p, model="rounds"))
                                            for n in counts}, "os": 4e-4, "w": 0.2, "P": p, "total": 0.2}
        fig = sweep_figure(sweep, 2e-4)
        ax = fig.axes[0]
        assert len(ax.lines) == 5 and ax.get_xscale() == "log"       # points, 2 models x (dense, sparse)
        dense = ax.lines[1].get_xdata()
        assert dense[-1] % p == 0 and ax.lines[2].get_xdata()[0] == dense[-1]   # the two parts meet
    with pytest.raises(TypeError, match="sweep"):
        sweep_figure({"counts": [1]}, 2e-4)
    with pytest.raises(ValueError, match="process_os"):
        sweep_figure(sweep, -1.0)


def test_chapter_label_names_the_appendix():
    import tempfile
    from pathlib import Path

    from hetlab.book.progress import ProgressStore, chapter_label

    assert chapter_label(5) == "第 5 章" and chapter_label(14) == "附录 A1"
    with pytest.raises(ValueError, match="chapter"):
        chapter_label(0)
    store = ProgressStore(Path(tempfile.mkdtemp()) / "p.db")
    assert store.chapter_summary(14, 6).startswith("附录 A1：已答 0/6 题")
    assert store.chapter_summary(3, 6).startswith("第 3 章：已答 0/6 题")


def test_dask_report_as_dict(monkeypatch):
    from hetlab.book.views import a1

    monkeypatch.setattr(a1, "_dask_report", lambda *args: ("跳过 Dask（未安装）", "", None, None))
    out = a1.dask_report(None, None, None, None, as_dict=True)
    assert out["text"] == "跳过 Dask（未安装）" and out["fig"] is None and math.isnan(out["gap"])
    plan = S.heft(article_tasks(), kitchen())
    plan.info["median_gap"] = 0.003
    monkeypatch.setattr(a1, "_dask_report", lambda *args: ("text", "more", plan, plan))
    out = a1.dask_report(None, None, None, None, as_dict=True)
    assert (out["text"], out["more"], out["gap"]) == ("text", "more", 0.003) and len(out["fig"].axes) >= 2
    with pytest.raises(TypeError, match="as_dict"):
        a1.dask_report(None, None, None, None, as_dict="yes")


def test_gil_control_text_prints_the_run_to_run_spread(monkeypatch):
    from hetlab.book.views.a1 import gil_control_text
    from hetlab.real import execute

    def fake(graph, **kwargs):
        spin = np.concatenate([np.full(8, 0.004), np.full(8, 0.005)])
        return {"spin": spin, "sleep": np.full(16, 0.0022)}

    monkeypatch.setattr(execute, "gil_gap_control", fake)
    text = gil_control_text(article_tasks(), repeat=2, reference_gap=0.0036)
    assert "逐次的中位数：忙等 4.00、5.00 毫秒" in text and "3.60 毫秒" in text
    assert "相差 39%" in text and "不确定" in text                  # 5.00 / 3.60 - 1; ratio 0.49 is near 0.5
    text = gil_control_text(article_tasks(), repeat=2)
    assert "相差 25%" in text
    steady = gil_control_text(article_tasks(), repeat=1, reference_gap=0.0045)
    assert "相差 0%" in steady and "不受这份波动影响" in steady      # no spread: the verdict stands
    with pytest.raises(ValueError, match="reference_gap"):
        gil_control_text(article_tasks(), reference_gap=-1.0)


def test_submission_text_is_true_in_every_order_of_events():
    from hetlab.book.views import a1
    # the loop outlasts the start-up: its tail overlaps the first tasks, inside the compared window
    text = a1.submission_text(0.0176, 0.0356, 40, {"worker0": 0.0, "worker1": 0.033})
    assert "其中" not in text.split("；")[0]
    assert "0.89 毫秒" in text and "按任务计的开销" in text and "不是一次性启动" in text
    assert "18.0 毫秒才提交完" in text and "全程都在提交" in text
    assert "worker1" in text and "33.0 毫秒" in text and "前 18.0 毫秒提交仍在进行" in text
    split = a1.submission_text(0.0176, 0.0356, 40, {"worker0": 0.0, "worker1": 0.033},
                               {"worker0": 0.0, "worker1": 0.020})
    assert "前 20.0 毫秒它的第一个任务还在等前驱" in split and "其后 13.0 毫秒计入任务间空隙" in split
    source = a1.submission_text(0.0176, 0.0356, 40, {"worker0": 0.0, "worker1": 0.033},
                                {"worker0": 0.0, "worker1": 0.0})
    assert "一开始就已就绪" in source and "这 33.0 毫秒的白缝全部计入任务间空隙" in source
    waited = a1.submission_text(0.0176, 0.0356, 40, {"worker0": 0.0, "worker1": 0.033},
                                {"worker0": 0.0, "worker1": 0.040})
    assert "前 33.0 毫秒它的第一个任务还在等前驱" in waited and "没有一段计入任务间空隙" in waited
    with pytest.raises(TypeError, match="first_ready"):
        a1.submission_text(0.01, 0.02, 4, {"w0": 0.0}, {"w1": 0.0})
    # the loop ends before the first task starts: it lies inside the start-up, which is then not all one-off
    early = a1.submission_text(0.030, 0.012, 40, {"worker0": 0.0, "worker1": 0.0004})
    assert "18.0 毫秒就已结束" in early and "并非全是一次性的" in early and "提交完" not in early
    assert "没有工作者空等" in early
    assert "空等" in a1.submission_text(0.030, 0.012, 40, {"w0": 0.0, "w1": 0.005})
    assert "仍在进行" not in a1.submission_text(0.030, 0.012, 40, {"w0": 0.0, "w1": 0.005})
    assert "工作者" not in a1.submission_text(0.01, 0.02, 10)
    with pytest.raises(ValueError, match="startup"):
        a1.submission_text(-1.0, 0.01, 4)
    with pytest.raises(ValueError, match="tasks"):
        a1.submission_text(0.01, 0.01, 0)
    with pytest.raises(TypeError, match="first_starts"):
        a1.submission_text(0.01, 0.01, 4, [0.0])
    with pytest.raises(ValueError, match="first_starts"):
        a1.submission_text(0.01, 0.01, 4, {"w0": float("nan")})


def test_speedup_text_prints_model_values_and_flags_a_drifted_serial_run():
    from hetlab.book.views import a1
    measured = {"进程池": 3.67, "线程池": 1.76, "单线程依次执行": 1.87}
    model = {"进程池": 3.01, "线程池": 1.51, "单线程依次执行": 1.51}
    calm = a1.speedup_text(measured, model, 0.02)
    assert "进程池 3.67x（3.01x）" in calm and "线程池 1.76x（1.51x）" in calm and "注意" not in calm
    slow = a1.speedup_text(measured, model, 0.22)
    assert "高 22%" in slow and "偏大" in slow and "进程池 3.01x" in slow    # 3.67 / 1.22
    fast = a1.speedup_text(measured, model, -0.10)
    assert "低 10%" in fast and "偏小" in fast
    with pytest.raises(ValueError, match="model"):
        a1.speedup_text(measured, {"进程池": 3.0}, 0.0)
    with pytest.raises(ValueError, match="drift"):
        a1.speedup_text(measured, model, float("nan"))
    with pytest.raises(ValueError, match="measured"):
        a1.speedup_text({**measured, "进程池": -1.0}, model, 0.0)


def test_gantt_panels_draws_events_in_the_legend():
    import matplotlib.pyplot as plt

    from hetlab.book.views import a1

    plan = S.POLICIES["article_demo"](article_tasks(), kitchen())
    fig = a1.gantt_panels([(plan, "a"), (plan, "b")], mark=1.0, events=[(1, 2.0, "submitted")])
    labels = [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
    assert "submitted" in labels
    assert any(abs(line.get_xdata()[0] - 2.0) < 1e-12 for line in fig.axes[1].get_lines())
    plt.close(fig)
    with pytest.raises(ValueError, match="panel"):
        a1.gantt_panels([(plan, "a")], events=[(3, 1.0, "x")])
    with pytest.raises(TypeError, match="events"):
        a1.gantt_panels([(plan, "a")], events="x")
