"""Chapter 13's static whiteboard figure and the numbers its caption quotes."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from hetlab import views  # noqa: E402
from hetlab.strong_scaling import best_device_count, speedup_with_allreduce  # noqa: E402


def test_whiteboard_figure_marks_each_optimum_and_the_1024_device_values():
    ax = views.whiteboard_figure(0.95, 0.5, 25, latencies_us=(20, 80))
    texts = [t.get_text() for t in ax.texts]
    assert any("151" in t and "9.80x" in t for t in texts)
    assert any("75" in t and "8.77x" in t for t in texts)
    assert "7.59x" in texts and "3.93x" in texts
    assert len(ax.get_legend().get_texts()) == 3
    plt.close(ax.figure)


def test_whiteboard_figure_numbers_agree_with_the_model():
    link = {"grad_bytes": 0.5e9, "bandwidth": 25e9, "latency": 80e-6}
    best = best_device_count(0.95, max_devices=1024, **link)
    assert best == 75
    assert float(speedup_with_allreduce(0.95, 1024, **link)) == pytest.approx(3.93, abs=0.005)


@pytest.mark.parametrize("kwargs, error, word", [
    ({"p": 1.0}, ValueError, "p"), ({"p": "x"}, TypeError, "p"), ({"grad_gb": -1}, ValueError, "grad_gb"),
    ({"bandwidth_gbs": 0}, ValueError, "bandwidth_gbs"), ({"latencies_us": ()}, ValueError, "latencies_us"),
    ({"latencies_us": (-5,)}, ValueError, "latencies_us"),
])
def test_whiteboard_figure_rejects_bad_inputs(kwargs, error, word):
    with pytest.raises(error, match=word):
        views.whiteboard_figure(**kwargs)
    plt.close("all")
