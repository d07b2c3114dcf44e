"""hetlab.book.views.ch05: the figures and the policy table of chapter 5."""
import matplotlib
import numpy as np
import pytest

from hetlab import schedulers as S
from hetlab.book.views import ch05
from hetlab.devices import identical, kitchen
from hetlab.models import dynamics as R
from hetlab.workloads import fork_join, skewed_tasks

matplotlib.use("Agg")


def _orders():
    return skewed_tasks(24, spread=0.8, seed=7), kitchen()


def _bar_colours(ax):
    """The face colours of an axes' Gantt bars (the first collection holds every bar)."""
    return {tuple(c) for c in ax.collections[0].get_facecolors()}


def test_steal_vs_eft_figure_one_colour_and_the_seeds_strip():
    import matplotlib.pyplot as plt

    g, d = _orders()
    ws = S.work_stealing(g, d, steal_latency=0.1, initial="first", seed=0)
    fig = ch05.steal_vs_eft_figure(S.eft(g, d), ws)
    assert len(fig.axes) == 2
    assert any("T14" in t.get_text() for t in fig.axes[1].texts)
    assert all(len(_bar_colours(ax)) == 1 for ax in fig.axes)    # colour carries no information in chapter 5
    fig = ch05.steal_vs_eft_figure(S.eft(g, d), ws, makespans=[6.0, 6.5, ws.makespan])
    assert len(fig.axes) == 3
    with pytest.raises(TypeError, match="ws"):
        ch05.steal_vs_eft_figure(S.eft(g, d), "ws")
    with pytest.raises(ValueError, match="ws"):
        ch05.steal_vs_eft_figure(S.eft(g, d), S.eft(skewed_tasks(5, seed=1), d))
    with pytest.raises((TypeError, ValueError), match="makespans"):
        ch05.steal_vs_eft_figure(S.eft(g, d), ws, makespans=[])
    plt.close("all")


def test_kitchen_policy_table():
    g, d = _orders()
    table = ch05.kitchen_policy_table(g, d).splitlines()
    assert len(table) == 6 and "4.74" in table[-1] and "完工时间" in table[-1]
    with pytest.raises(ValueError, match="keys"):
        ch05.kitchen_policy_table(g, d, keys=["nope"])


def test_fork_join_figure():
    import matplotlib.pyplot as plt

    four = identical(4, speed=1.0)
    est, act = fork_join(3, work=16.0, skew=0.6, seed=0)
    plan = S.eft(est, four)
    static = S.execute_plan(act, four, {x.name: plan.tasks_on(x.name) for x in four})
    stealing = S.work_stealing(act, four, seed=0)
    fig = ch05.fork_join_figure(static, stealing, S.central_queue(act, four, ready="fifo"),
                                makespans=[stealing.makespan, 9.0])
    assert len(fig.axes) == 3 and all(a.get_legend() is None for a in fig.axes)
    assert "9.00" in fig.axes[1].get_title()
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


def test_menus_figure_counts_the_static_wins():
    import matplotlib.pyplot as plt

    gains = np.array([[0.1, 0.2, -0.05], [0.0, 0.3, 0.1]])     # two runs of six where the static plan did not lose
    ax = ch05.menus_figure(gains)
    assert "2" in ax.get_title() and "6" in ax.get_title()
    with pytest.raises(ValueError, match="gains"):
        ch05.menus_figure([0.1, 0.2])
    plt.close("all")


def test_deque_and_slackness_figures():
    import matplotlib.pyplot as plt

    fig = ch05.deque_figure()
    assert fig.axes and fig.axes[0].texts
    curve = R.slackness_curve(fork_join(3, work=16.0, skew=0.6, seed=0)[1], (1, 2, 4), steal_seeds=1)
    ax = ch05.slackness_figure([curve])
    assert len(ax.get_lines()) == 3
    with pytest.raises(ValueError, match="curves"):
        ch05.slackness_figure([])
    with pytest.raises(TypeError, match="curves"):
        ch05.slackness_figure([3])
    plt.close("all")
