"""Chapter 13's static figures (hetlab.book.views.ch13): the gradient-bucket whiteboard and the serving roofline."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from hetlab.book import views  # noqa: E402


def test_bucket_figure_stars_each_best_bucket_and_marks_the_ddp_default():
    ax = views.bucket_figure((50, 25))
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    # (0.3 s - 118.1 ms) / 1.764 ms = 103 buckets of 29.1 MB at 50 GB/s; (0.3 - 0.236) / 1.764 ms = 36 of 83.3 MB
    assert any("29.1 MB" in t for t in legend) and any("83.3 MB" in t for t in legend)
    assert any("25 MB" in t.get_text() for t in ax.texts)
    assert len(ax.lines) == 2 * 2 + 1      # a curve and a star per bandwidth, the dotted default
    plt.close(ax.figure)


def test_serving_roofline_places_decode_left_and_prefill_right_of_the_ridge():
    ax = views.serving_roofline_figure(8192, 4096, (1, 64))
    texts = [t.get_text() for t in ax.texts]
    # intensity of an 8192 x 8192 BF16 matrix on b rows: b * 8192 / (8192 + 2 b), about 1 at b = 1, 2048 at 4096
    assert any("1 FLOP/B" in t for t in texts) and any("2048 FLOP/B" in t for t in texts)
    assert any("295" in t for t in texts)        # the H100's ridge: 989 TFLOP/s / 3.35 TB/s
    plt.close(ax.figure)


@pytest.mark.parametrize("call, match", [
    (lambda: views.bucket_figure(()), "bandwidths_gbs"), (lambda: views.bucket_figure((0,)), "bandwidths_gbs"),
    (lambda: views.bucket_figure(n_devices=1), "n_devices"), (lambda: views.bucket_figure(backward_s=-1), "backward_s"),
    (lambda: views.serving_roofline_figure(hidden=0), "hidden"),
    (lambda: views.serving_roofline_figure(decode_batches=(0,)), "decode_batches"),
])
def test_figures_reject_bad_inputs(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()
    plt.close("all")
