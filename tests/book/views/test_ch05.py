"""hetlab.book.views.ch05: the Gantt legend, the figures and the policy table of chapter 5."""
import matplotlib
import pytest

import hetlab
from hetlab import schedulers as S
from hetlab.book.views import ch05
from hetlab.devices import identical, kitchen
from hetlab.models import dynamics as R
from hetlab.workloads import fork_join, skewed_tasks

matplotlib.use("Agg")


def _orders():
    return skewed_tasks(24, spread=0.8, seed=7), kitchen()


def test_gantt_legend_titles_and_identical():
    import matplotlib.pyplot as plt

    g, d = _orders()
    fig, ax = plt.subplots()
    hetlab.plotting.gantt(S.lpt(g, d), ax)
    ch05.gantt_legend(ax)
    assert ax.get_legend().get_title().get_text() != ""
    ws = S.work_stealing(fork_join(3)[1], identical(2), initial="first")
    hetlab.plotting.gantt(ws, ax)
    ch05.gantt_legend(ax, identical=True)
    assert ax.get_legend() is None or len(ax.get_legend().get_texts()) == 1
    plt.close(fig)


def test_ch05_figures_and_table():
    import matplotlib.pyplot as plt

    g, d = _orders()
    ws = S.work_stealing(g, d, steal_latency=0.1, initial="first", seed=0)
    fig = ch05.steal_vs_eft_figure(S.eft(g, d), ws)
    assert len(fig.axes) == 2
    texts = [t.get_text() for t in fig.axes[1].texts]
    assert any("T14" in t for t in texts)
    with pytest.raises(TypeError, match="ws"):
        ch05.steal_vs_eft_figure(S.eft(g, d), "ws")
    with pytest.raises(ValueError, match="ws"):
        ch05.steal_vs_eft_figure(S.eft(g, d), S.eft(skewed_tasks(5, seed=1), d))
    table = ch05.kitchen_policy_table(g, d).splitlines()
    assert len(table) == 6 and "4.74" in table[-1]
    with pytest.raises(ValueError, match="keys"):
        ch05.kitchen_policy_table(g, d, keys=["nope"])
    four = identical(4, speed=1.0)
    est, act = fork_join(3, work=16.0, skew=0.6, seed=0)
    plan = S.eft(est, four)
    static = S.execute_plan(act, four, {x.name: plan.tasks_on(x.name) for x in four})
    fig = ch05.fork_join_figure(static, S.work_stealing(act, four, seed=0), S.central_queue(act, four, ready="fifo"))
    assert len(fig.axes) == 3 and all(a.get_legend() is None for a in fig.axes)
    with pytest.raises(TypeError, match="central"):
        ch05.fork_join_figure(static, static, None)
    plt.close("all")


def test_variance_figure():
    import matplotlib.pyplot as plt

    g, d = _orders()
    fig = ch05.variance_figure(R.compare_under_variance(g, d, noise=0.0, straggler="GPU", slowdown=4.0))
    assert len(fig.axes) == 2 and "18.96" in fig.axes[0].get_title()
    with pytest.raises(TypeError, match="run"):
        ch05.variance_figure(3)
    plt.close("all")
