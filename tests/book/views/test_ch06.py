"""Chapter 6's views (hetlab.book.views.ch06)."""


def test_barrier_view_readout_mentions_prediction():
    import matplotlib
    matplotlib.use("Agg")
    from hetlab.book.views import ch06
    explorer = ch06.barrier_explorer()
    assert explorer is not None
