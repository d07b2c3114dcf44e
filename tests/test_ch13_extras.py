"""Chapter 13's static whiteboard figure and the numbers its caption quotes."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from hetlab.book import views  # noqa: E402


def test_whiteboard_figure_marks_each_optimum_and_the_1024_device_values():
    ax = views.whiteboard_figure(0.95, 0.5, 25, latencies_us=(20, 80))
    texts = [t.get_text() for t in ax.texts]
    assert any("151" in t and "9.80x" in t for t in texts)
    assert any("75" in t and "8.77x" in t for t in texts)
    assert "7.59x" in texts and "3.93x" in texts
    assert len(ax.get_legend().get_texts()) == 3
    plt.close(ax.figure)


@pytest.mark.parametrize("kwargs, error, word", [
    ({"p": 1.0}, ValueError, "p"), ({"p": "x"}, TypeError, "p"), ({"grad_gb": -1}, ValueError, "grad_gb"),
    ({"bandwidth_gbs": 0}, ValueError, "bandwidth_gbs"), ({"latencies_us": ()}, ValueError, "latencies_us"),
    ({"latencies_us": (-5,)}, ValueError, "latencies_us"),
])
def test_whiteboard_figure_rejects_bad_inputs(kwargs, error, word):
    with pytest.raises(error, match=word):
        views.whiteboard_figure(**kwargs)
    plt.close("all")
