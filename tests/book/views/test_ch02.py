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
    """The title's D is the chain LN1 -> Q -> QK^T -> softmax -> AV -> O -> add1 -> LN2 -> FC1 -> GELU -> FC2
    -> add2 (V runs beside QK^T and softmax, so the chain through Q is the longest)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from hetlab.book import views
    from hetlab.workloads.opgraphs import transformer_layer

    g = transformer_layer()
    chain = ["LN1", "Q", "QK^T", "softmax", "AV", "O", "add1", "LN2", "FC1", "GELU", "FC2", "add2"]
    d = sum(g.task(name).work for name in chain)
    ax = views.transformer_figure()
    assert f"D = {d:.1f}" in ax.get_title()
    plt.close(ax.figure)
