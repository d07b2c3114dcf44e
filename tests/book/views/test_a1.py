"""hetlab.book.views.a1: the appendix's workloads and figures."""
import matplotlib

matplotlib.use("Agg")

import dataclasses  # noqa: E402
import json  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from hetlab import schedulers as S  # noqa: E402
from hetlab.book import reference  # noqa: E402
from hetlab.book.readings import a1 as readings  # noqa: E402
from hetlab.book.views import a1  # noqa: E402
from hetlab.real.execute import Sleep  # noqa: E402
from hetlab.real.experiments import queued_tasks  # noqa: E402


def test_workloads():
    plan, serial = a1.demo_plan()
    assert plan.makespan == pytest.approx(2.6667, abs=1e-4) and serial.makespan == pytest.approx(11.4)
    g = a1.dag()
    assert len(g.tasks) == 40 and all(2.0 <= t.work <= 10.0 for t in g.tasks)
    bodies = a1.sleep_bodies(g)
    assert all(isinstance(b, Sleep) and b.seconds == pytest.approx(t.work / 1000)
               for t, b in zip(g.tasks, bodies.values()))
    assert [d.name for d in a1.dag_workers(2)] == ["worker0", "worker1"] and a1.pool_size() >= 2
    with pytest.raises(TypeError, match="graph"):
        a1.sleep_bodies("dag")


def test_figures_draw_one_panel_per_run():
    plan, _ = a1.demo_plan()
    scaled = S.article_demo(plan.graph, plan.devices)
    timed = dataclasses.replace(scaled, info={"cpu_seconds": list(scaled.end - scaled.start)})
    runs = {"process pool": timed, "thread pool": timed}
    fig = a1.plan_gantt(plan, runs, reference=reference.load("build-vm-idle").plan)
    assert len(fig.axes) == 3 and not any(ax.get_legend() for ax in fig.axes)
    # each lane is a CPU process or thread playing a planned device: named so, not as the device itself
    assert {t.get_text() for t in fig.axes[1].get_yticklabels()} in (
        {f"扮演 {d.name}" for d in plan.devices}, {f"as {d.name}" for d in plan.devices})
    busy = (timed.end - timed.start).sum() / (timed.end.max() - timed.start.min())   # CPU s per wall s
    # the reference's figure recomputed from the stored file: CPU seconds over wall seconds
    idle = json.loads(Path(reference.__file__).with_name("data").joinpath(
        "readings", "build-vm-idle.json").read_text(encoding="utf-8"))["plan"]["process pool"]
    assert f"有效并行度 {busy:.2f}；参照 {idle['cpu'] / idle['wall']:.2f}" in fig.axes[1].get_title()
    bars = fig.axes[1].collections[0].get_facecolors()                   # one colour per lane
    lanes = {int(d): tuple(c) for d, c in zip(timed.device_of, bars)}
    assert all(tuple(c) == lanes[int(d)] for d, c in zip(timed.device_of, bars)) and len(set(lanes.values())) == 3
    g = a1.dag()
    sim = S.central_queue(g, a1.dag_workers(2), ready="fifo")
    predicted = readings.dispatch_schedule(sim, 4e-4, 1e-4)
    axes = a1.dag_gantt(predicted, sim).axes
    assert len(axes) == 2 and [t.get_text() for t in axes[1].get_yticklabels()][-1] in ("工作进程 0", "worker 0")
    # the released tasks hatched in both panels: the prediction's own split, and the run's
    released = [int((~predicted.info["queued"]).sum()), int((~queued_tasks(sim)).sum())]
    assert [sum(1 for c in ax.collections if c.get_hatch()) for ax in axes] == released and released[0] >= 1
    # review A1-16 #6: only the released tasks are numbered (legible), in every panel
    numbered = [sorted(int(t.get_text()) for t in ax.texts) for ax in axes]
    assert numbered[0] == np.flatnonzero(~predicted.info["queued"]).tolist()
    assert numbered[1] == np.flatnonzero(~queued_tasks(sim)).tolist()
    # the idle reference's first stored run, drawn as a third panel with its own released tasks hatched
    stored = reference.load("build-vm-idle").dag
    run = a1.stored_dag_run(stored)
    assert run.makespan == pytest.approx(stored["measured_s"]) and len(run.devices) == stored["workers"]
    three = a1.dag_gantt(predicted, sim, reference=run).axes
    assert len(three) == 3 and sum(1 for c in three[2].collections if c.get_hatch()) == int((~queued_tasks(run)).sum())
    # review A1-17 #4: the tested quantity drawn: the no-dispatch makespan and the interval, in every panel
    ends = (sim.makespan, sim.makespan + 2e-3, sim.makespan + 5e-3)
    shaded = a1.dag_gantt(predicted, sim, reference=run, interval=ends).axes
    for k, ax in enumerate(shaded):
        spans = [p for p in ax.patches if p.get_alpha() == pytest.approx(0.18)]
        lines = [ln for ln in ax.lines if ln.get_linestyle() == ":"]
        assert len(lines) == 1 and lines[0].get_xdata()[0] == pytest.approx(sim.makespan)
        assert len(spans) == (1 if k < 2 else 0)        # the stored run had its own calibration: no band there
        for span in spans:              # a Rectangle (matplotlib >= 3.9) from low to high
            assert (span.get_x(), span.get_x() + span.get_width()) == pytest.approx((ends[1], ends[2]))
    # an untested band is labelled so, and the time axis reaches past the band's high end
    far = (sim.makespan, sim.makespan + 2e-3, sim.makespan * 1.5)
    fig = a1.dag_gantt(predicted, sim, interval=far, tested=False)
    assert any("参考区间" in t.get_text() or "reference band" in t.get_text() for t in fig.legends[0].get_texts())
    assert all(ax.get_xlim()[1] >= far[2] for ax in fig.axes)
    with pytest.raises(TypeError, match="tested"):
        a1.dag_gantt(predicted, sim, interval=far, tested="no")
    with pytest.raises(ValueError, match="interval"):
        a1.dag_gantt(predicted, sim, interval=(0.2, 0.1, 0.05))
    with pytest.raises(TypeError, match="dispatch_schedule"):
        a1.dag_gantt(sim, sim)
    with pytest.raises(TypeError, match="reference"):
        a1.dag_gantt(predicted, sim, reference={})
    with pytest.raises(TypeError, match="stored"):
        a1.stored_dag_run({"start": []})
    ref = reference.load("build-vm")
    fig = a1.sweep_figure(ref.sweep, 2e-4, reference=ref.sweep)
    assert len(fig.axes[0].lines) >= 3 and a1.pool_rounds_figure().axes
    with pytest.raises(TypeError, match="sweep"):
        a1.sweep_figure({}, 2e-4)
    with pytest.raises(ValueError, match="os_"):
        a1.sweep_figure(ref.sweep, 0.0)
    assert np.isfinite(sim.makespan)


def test_the_idle_references_runs_are_drawn_below_the_readers():
    plan, _ = a1.demo_plan()
    scaled = S.article_demo(plan.graph, plan.devices)
    timed = dataclasses.replace(scaled, info={"cpu_seconds": list(scaled.end - scaled.start)})
    # as tools/record_reference.py stores them: start, end, CPU seconds per task; here two cores' worth
    raw = {"process pool": {"start": [0.0] * 8, "end": [0.1] * 8, "cpu_seconds": [0.05] * 8},
           "thread pool": {"start": [0.0] * 8, "end": [0.2] * 8, "cpu_seconds": [0.025] * 8}}
    stored = a1.stored_runs(plan, raw)
    assert stored["process pool"].makespan == pytest.approx(0.1) and stored["thread pool"].graph is plan.graph
    fig = a1.plan_gantt(plan, {"process pool": timed, "thread pool": timed}, stored=stored)
    assert len(fig.axes) == 5
    assert "有效并行度 4.00" in fig.axes[3].get_title() and "有效并行度 1.00" in fig.axes[4].get_title()
    with pytest.raises(TypeError, match="plan_runs"):
        a1.stored_runs(plan, [])
    # A1.1 calibrates on A1.4's siblings: the same generator and size, never A1.4's own graph
    siblings = a1.calibration_dags()
    assert len(siblings) == len(a1.CALIBRATION_SEEDS) and 1 not in a1.CALIBRATION_SEEDS
    assert all(len(g.tasks) == 40 and g.tasks != a1.dag().tasks for g in siblings)
    assert all(2.0 <= t.work <= 10.0 for g in siblings for t in g.tasks)
