"""Chapter 7's views (hetlab.book.views.ch07): static figures and the metrics widget's readout."""
from hetlab.book.views import ch07


def test_static_figures_draw():
    import matplotlib.pyplot as plt
    for ax in (ch07.throughput_utilisation_figure(), ch07.split_figure(), ch07.efficiency_figure()):
        assert ax.get_title()
        plt.close(ax.figure)


def test_metrics_readout_when_still_rising():
    text = ch07.metrics_explorer().update(tasks=96, spread=0.5)
    assert "尚未走平" in text and "只剩" not in text


def test_imbalance_readout_uses_chapter_5s_busy_time_notation():
    text = ch07.imbalance_explorer().update(policy="lpt", tasks=16, spread=0.8)
    assert "B_max" in text and "W_max" not in text


def test_latency_figure_puts_the_closed_forms_through_the_simulated_points():
    import matplotlib.pyplot as plt
    import numpy as np
    ax = ch07.latency_figure(utilisations=(0.5, 0.8), seeds=4, requests=20_000)
    mean_line, p99_line = ax.lines[:2]
    x = mean_line.get_xdata()
    # by hand: 1 / (1 - rho) and ln(100) / (1 - rho)
    assert np.allclose(mean_line.get_ydata(), 1 / (1 - x))
    assert np.allclose(p99_line.get_ydata(), np.log(100) / (1 - x))
    plt.close(ax.figure)


def test_isoefficiency_overhead_by_hand():
    import numpy as np
    # 2 devices: (2 - 1) 0.64 s serial; ring at 1 ms: 2 x (2 (2 - 1) 1 ms + 2 (1/2) 0.1 s) = 0.204 s
    assert ch07.isoefficiency_overhead(2, "serial") == np.float64(0.64)
    assert np.isclose(ch07.isoefficiency_overhead(2, "ring", 1e-3), 0.64 + 2 * (0.002 + 0.1))
    # the default is the book's 14 us per step: 2 x (2 x 14 us + 0.1 s)
    assert np.isclose(ch07.isoefficiency_overhead(2, "ring"), 0.64 + 2 * (28e-6 + 0.1))
    # halving-doubling equals the ring at 2 devices (one step each way) and is cheaper at 1024
    assert np.isclose(ch07.isoefficiency_overhead(2, "halving_doubling"), ch07.isoefficiency_overhead(2, "ring"))
    assert ch07.isoefficiency_overhead(1024, "halving_doubling") < ch07.isoefficiency_overhead(1024, "ring")


def test_isoefficiency_readout_and_figure():
    import matplotlib.pyplot as plt
    explorer = ch07.isoefficiency_explorer()
    text = explorer.update(efficiency=0.8, model="serial", latency_us=14.0)
    assert "×16.2" in text                      # (1024 - 1) / (64 - 1) = 16.24: work grows like N
    # ring at 14 us: T_o(64) = 63 x 0.64 + 64 (126 x 14 us + 0.196875) = 53.033 s, T_o(1024) = 888.65 s
    ring = explorer.update(efficiency=0.8, model="ring", latency_us=14.0)
    assert "T₁ = 212 s" in ring and "×16.8" in ring
    assert "×48.4" in explorer.update(efficiency=0.8, model="ring", latency_us=1000.0)
    ax = ch07.isoefficiency_figure(0.8)
    assert len(ax.lines) == 6                   # four overhead curves and two reference slopes
    assert "T_1" in ax.get_ylabel() and "单卡" in ax.get_ylabel() or "one-device" in ax.get_ylabel()
    plt.close("all")
