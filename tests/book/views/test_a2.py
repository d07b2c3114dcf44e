"""Appendix A2's widget and figures."""
import pytest
from matplotlib.figure import Figure

from hetlab.book.views import a2
from hetlab.models.host import load_profile, simulate_host
from hetlab.real.readings import measured_runs


def test_the_widget_predicts_with_the_host_model():
    explorer = a2.host_costs()
    hybrid, alone = a2._plans(8)
    profile = load_profile()
    assert f"{simulate_host(hybrid, profile).makespan * 1e3:.1f} ms" in explorer.text
    explorer.update(handoff_us=0.0, hold_us=0.0, workers=15)
    assert "15 个 CPU 工作线程" in explorer.text
    assert isinstance(a2.host_costs_figure(), Figure)


def test_the_widget_axis_holds_every_bar_its_sliders_reach():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    draw = a2._host_draw()
    for workers in (1, 8):          # the sliders' far corner: lambda 200 us, h 60 us
        draw(ax, workers, 200.0, 60.0)
        widths = [bar.get_width() for bar in ax.patches]
        assert max(widths) > 110 and max(widths) <= ax.get_xlim()[1]   # the old fixed 110 ms axis clipped it
    plt.close(fig)


def test_figures():
    hybrid, _ = a2._plans(4)
    predicted = simulate_host(hybrid, load_profile())
    assert isinstance(a2.plan_and_run(hybrid, predicted, predicted), Figure)
    runs = measured_runs()[:4]
    assert isinstance(a2.predicted_vs_measured(runs, [r.measured_s for r in runs]), Figure)
    with pytest.raises(TypeError, match="measured must be a Schedule"):
        a2.plan_and_run(hybrid, "run")
    with pytest.raises(ValueError, match="predicted must give one makespan per run"):
        a2.predicted_vs_measured(runs, [1.0])


def test_gap_holdout_and_deeper():
    from hetlab.models.host import term_makespans

    hybrid, _ = a2._plans(8)
    assert isinstance(a2.gap_figure(term_makespans(hybrid, load_profile()), 0.082), Figure)
    with pytest.raises(TypeError, match="values must be the 16 makespans"):
        a2.gap_figure({frozenset(): 1.0}, 0.082)
    row = {"source": "x.json", "n": 512, "b": 256, "plan": "gpu_only", "cpu_workers": 0, "predicted_s": 0.01,
           "measured_s": 0.012}
    assert isinstance(a2.holdout_figure([row], [dict(row, plan="hybrid_heft", cpu_workers=2)]), Figure)
    with pytest.raises(ValueError, match="band"):
        a2.holdout_figure([row], [row], band=1.5)
    folded = a2.Deeper("表", "a < b")
    assert repr(folded) == "深入一点：表\na < b"
    html = folded._repr_html_()
    assert html.startswith("<details><summary>深入一点：表</summary>") and "a &lt; b" in html


def test_the_widget_calls_the_review_corner_a_tie():
    # 15 workers, lambda = h = 0: the A2-6 review measured 29.4 vs 29.3 ms with term_makespans, a tie
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    text = a2._host_draw()(ax, 15, 0.0, 0.0)
    plt.close(fig)
    assert "两者相当" in text and "更快" not in text
