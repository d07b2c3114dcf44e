"""hetlab.book.views.a1: the appendix's workloads and figures."""
import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from hetlab import schedulers as S  # noqa: E402
from hetlab.book import reference  # noqa: E402
from hetlab.book.views import a1  # noqa: E402
from hetlab.real.execute import Sleep  # noqa: E402


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
    runs = {"process pool": scaled, "thread pool": scaled}
    assert len([ax for ax in a1.plan_gantt(plan, runs).axes]) == 3
    g = a1.dag()
    sim = S.central_queue(g, a1.dag_workers(2), ready="fifo")
    assert len(a1.dag_gantt(sim, sim).axes) == 2
    ref = reference.load("build-vm")
    fig = a1.sweep_figure(ref.sweep, 2e-4, reference=ref.sweep)
    assert len(fig.axes[0].lines) >= 3 and a1.pool_rounds_figure().axes
    with pytest.raises(TypeError, match="sweep"):
        a1.sweep_figure({}, 2e-4)
    with pytest.raises(ValueError, match="os_"):
        a1.sweep_figure(ref.sweep, 0.0)
    assert np.isfinite(sim.makespan)
