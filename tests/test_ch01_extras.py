"""Chapter 1 extras: the SIMT branch-divergence model and the Flynn figure's key."""
import pytest

from hetlab.models.simt import warp_divergence


def test_divergent_warp_runs_both_sides_one_after_the_other():
    w = warp_divergence(8, 1.0, 1.0)
    assert w.time == 2.0
    assert w.utilisation == pytest.approx((8 + 24) / (32 * 2))      # 50 %
    assert w.idle_share == pytest.approx(0.5)
    w = warp_divergence(8, 3.0, 1.0)
    assert w.time == 4.0 and w.utilisation == pytest.approx((8 * 3 + 24) / (32 * 4))


@pytest.mark.parametrize("taken", [0, 32])
def test_uniform_warp_has_no_divergence(taken):
    w = warp_divergence(taken, 2.0, 5.0)
    assert w.utilisation == 1.0
    assert w.time == (2.0 if taken == 32 else 5.0)


def test_warp_divergence_validates():
    with pytest.raises(ValueError, match="taken"):
        warp_divergence(33, 1.0, 1.0)
    with pytest.raises(ValueError, match="if_time"):
        warp_divergence(4, -1.0, 1.0)
    with pytest.raises(TypeError, match="taken"):
        warp_divergence(4.5, 1.0, 1.0)


def test_flynn_diagram_has_a_key_and_consistent_subtitles():
    import matplotlib

    matplotlib.use("Agg")
    from hetlab import plotting

    axes = plotting.flynn_diagram()
    fig = axes[0].figure
    texts = [t.get_text() for leg in fig.legends for t in leg.get_texts()]
    assert len(texts) == 3
    assert "warp" in axes[1].get_title()
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_warp_divergence_record_rejects_inconsistent_fields():
    from hetlab.models.simt import WarpDivergence

    assert WarpDivergence(8, 32, 1.0, 1.0, 2.0, 0.5).utilisation == 0.5
    with pytest.raises(ValueError, match="utilisation"):
        WarpDivergence(8, 32, 1.0, 1.0, 2.0, 0.9)
    with pytest.raises(ValueError, match="width"):
        WarpDivergence(8, 0, 1.0, 1.0, 2.0, 0.5)


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
    chart = _Chart(ax, "article demo")
    assert "2.67" not in chart.title(0) and "2.67" not in chart.title(3)
    assert "2.67" in chart.title(8)
    plt.close(fig)
