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
