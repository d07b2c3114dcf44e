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
