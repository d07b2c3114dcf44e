"""Chapter 1's views (hetlab.book.views.ch01): the static figures, the player's titles and the memory check."""
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
    with pytest.raises(ValueError, match="params"):
        views.parallelism_figure(8, 4, 4, params=0.0)
    with pytest.raises(ValueError, match="spread"):
        views.serial_vs_parallel_figure(4, 2.0)


def test_model_states_per_card_by_hand():
    """16 bytes a parameter (2 + 2 + 12, ZeRO's accounting), split over tensor x pipeline, never over data."""
    from hetlab.book.views.ch01 import _model_states_gib

    assert _model_states_gib(70e9, 32, 1, 16) == pytest.approx(70e9 * 16 / 16 / 2**30)   # 65.19 GiB
    assert _model_states_gib(13e9, 1, 2, 1) == pytest.approx(13e9 * 16 / 2 / 2**30)      # 96.86 GiB
    assert _model_states_gib(13e9, 8, 1, 3) == _model_states_gib(13e9, 1, 1, 3)          # data parallel: no saving


def test_combo_explorer_greys_out_what_does_not_fit():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from hetlab.book import views

    fits, too_big = (views.parallelism_figure(8, 1, p, params=13e9) for p in (3, 2))
    assert "放得下" in fits.get_title() or "fits" in fits.get_title()
    assert all(patch.get_hatch() is None for patch in fits.patches)
    assert all(patch.get_hatch() == "//" for patch in too_big.patches)       # 13e9 x 16 / 2 B = 96.9 GiB > 80
    plt.close("all")
    text = views.parallelism_combo_explorer().update(params=13e9, data=8, tensor=1, pipeline=2)
    assert "= 16" in text and "放不下" in text


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
