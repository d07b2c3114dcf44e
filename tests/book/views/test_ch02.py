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


def test_static_twin_of_the_widget_uses_its_devices_and_legend():
    """Figure 2-3 is the widget's chart: devices numbered from 1 as the widget (and the prose) count them, the
    critical-path legend, and on the chapter's graph at 5 devices the greedy makespan equals the span."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pytest

    from hetlab.book import views
    from hetlab.schedulers import bounds as WS

    ax = views.tasks_vs_devices_figure("dag", tasks=16, devices=5)
    assert sorted(t.get_text() for t in ax.get_yticklabels()) == [f"设备 {k}" for k in range(1, 6)] or \
        sorted(t.get_text() for t in ax.get_yticklabels()) == [f"device {k}" for k in range(1, 6)]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert len(labels) == 5 and any("关键路径" in x or "critical" in x for x in labels)
    span = WS.span(views.example_graph("dag", 16), speed=10.0)
    assert f"{span:.2f}" in ax.get_title()
    plt.close("all")
    with pytest.raises(ValueError, match="shape"):
        views.tasks_vs_devices_figure("chain")
    with pytest.raises(ValueError, match="devices"):
        views.tasks_vs_devices_figure("dag", 16, 9)
