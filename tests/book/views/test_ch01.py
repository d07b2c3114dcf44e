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
    with pytest.raises(ValueError, match="ways"):
        views.memory_map_figure(0)
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
    from hetlab.book.views.ch01 import _combo_draw

    fits, too_big = plt.subplots(1, 2)[1]
    _combo_draw(fits, 8, 1, 3, 13e9)
    _combo_draw(too_big, 8, 1, 2, 13e9)
    assert "放得下" in fits.get_title() or "fits" in fits.get_title()
    assert all(patch.get_hatch() is None for patch in fits.patches)
    assert all(patch.get_hatch() == "//" for patch in too_big.patches)       # 13e9 x 16 / 2 B = 96.9 GiB > 80
    assert [t.get_text() for t in fits.get_yticklabels()][0].endswith("1 段")
    plt.close("all")
    text = views.parallelism_combo_explorer().update(params=13e9, data=8, tensor=1, pipeline=2)
    assert "= 16" in text and "放不下" in text


def test_memory_map_greys_exactly_the_cells_over_the_card():
    """Figure 1-5: 16 B x params / (tensor x pipeline) against 80 GiB, tensor in 1, 2, 4, 8 (powers of two)
    and pipeline 1..4. By hand, 13e9: 1 x 1 = 193.7, 1 x 2 = 96.9 (over), 1 x 3 = 64.6 (fits), so 13 of
    16 cells fit (t x p >= 3); 70e9 needs t x p >= 70e9 x 16 / 80 GiB = 13.04, i.e. 14 parts, which the
    grid has only as 4 x 4, 8 x 2, 8 x 3 and 8 x 4 (no 14 = 2 x 7 cell): 4 cells fit."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from hetlab.book import views

    small, large = views.memory_map_figure(4)
    assert sum(p.get_hatch() == "//" for p in small.patches) == 3
    assert sum(p.get_hatch() == "//" for p in large.patches) == 12
    assert [t.get_text() for t in large.get_xticklabels()] == ["1", "2", "4", "8"]
    assert {t.get_text() for t in small.texts} >= {"194", "97", "65"}
    plt.close("all")


def test_player_readout_names_one_dispatch_per_frame():
    """Each frame dispatches one dish, so the readout names exactly one: frame 7 is t6 -> GPU at 1.60
    (the chapter's hand trace: the GPU frees at 1.60 after t4, the CPU only at 1.80)."""
    import numpy as np

    from hetlab.book.views.ch01 import _step_text, kitchen_schedule

    s = kitchen_schedule()
    order = np.argsort(s.start, kind="stable")
    text = _step_text(s, order, 7)
    assert text.count("→") == 1 and "t6" in text and "GPU，1.60" in text
    assert all(_step_text(s, order, k).count("→") == 1 for k in range(1, 9))


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
