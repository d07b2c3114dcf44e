"""Chapter 2's views (hetlab.book.views.ch02): the dish figure and the Transformer layer's graph."""
import pytest


def test_dish_figure():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from hetlab.book import views

    axes = views.dish_figure()
    assert len(axes) == 3
    plt.close(axes[0].figure)
    with pytest.raises(ValueError, match="devices"):
        views.dish_figure(devices=(0,))


def test_transformer_figure_names_the_span():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from hetlab.book import views

    ax = views.transformer_figure()
    assert "D = 2842.3" in ax.get_title() and "W/D = 1.16" in ax.get_title()
    plt.close(ax.figure)
