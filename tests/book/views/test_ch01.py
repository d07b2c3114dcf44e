"""Chapter 1's views (hetlab.book.views.ch01): the static figures and the player's titles."""
import pytest


def test_static_figures_of_the_widgets():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from hetlab.book import views

    ax = views.serial_vs_parallel_figure(tasks=4, spread=0.5)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("并行时间" in x for x in labels)
    assert [t.get_text() for t in ax.get_xticklabels()][1:] == ["t0", "t1", "t2", "t3"]
    plt.close(ax.figure)
    ax = views.parallelism_figure(8, 4, 4)
    assert [t.get_text() for t in ax.get_yticklabels()][0].endswith("1 段")
    assert "张量并行" in ax.get_xlabel()
    plt.close(ax.figure)
    with pytest.raises(ValueError, match="tensor"):
        views.parallelism_figure(8, 5, 4)
    with pytest.raises(ValueError, match="spread"):
        views.serial_vs_parallel_figure(4, 2.0)


def test_player_title_does_not_give_the_makespan_away():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from hetlab.book.views.ch01 import _Chart

    fig, ax = plt.subplots()
    chart = _Chart(ax, "article_demo")
    assert "2.67" not in chart.title(0) and "2.67" not in chart.title(3)
    assert "2.67" in chart.title(8)
    plt.close(fig)
