"""Chapter 1 extras: the SIMT branch-divergence model and the Flynn figure's key."""
import pytest

from hetlab.simt import warp_divergence


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
    from hetlab.simt import WarpDivergence

    assert WarpDivergence(8, 32, 1.0, 1.0, 2.0, 0.5).utilisation == 0.5
    with pytest.raises(ValueError, match="utilisation"):
        WarpDivergence(8, 32, 1.0, 1.0, 2.0, 0.9)
    with pytest.raises(ValueError, match="width"):
        WarpDivergence(8, 0, 1.0, 1.0, 2.0, 0.5)
