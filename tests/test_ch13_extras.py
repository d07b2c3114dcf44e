"""Chapter 13's static whiteboard figure and the numbers its caption quotes."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from hetlab.book import views  # noqa: E402
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


# --- library additions used by chapter 13 -------------------------------------------------------
from hetlab import formulas as F  # noqa: E402
from hetlab.strong_scaling import efficiency_knee  # noqa: E402

LINK = {"grad_bytes": 0.5e9, "bandwidth": 25e9, "latency": 20e-6}


@pytest.mark.parametrize("p, n", [(0.8, 16), (0.9, 10), (0.5, 3), (0.0, 8), (1.0, 4)])
def test_gustafson_fraction_converted_to_the_single_device_run_gives_the_same_speedup(p, n):
    pa = F.gustafson_to_amdahl_fraction(p, n)
    assert 0.0 <= pa <= 1.0
    assert F.amdahl(pa, n) == pytest.approx(F.gustafson(p, n))


def test_gustafson_to_amdahl_fraction_values_and_validation():
    assert F.gustafson_to_amdahl_fraction(0.8, 16) == pytest.approx(12.8 / 13)
    with pytest.raises(ValueError, match="p"):
        F.gustafson_to_amdahl_fraction(1.5, 4)
    with pytest.raises(ValueError, match="N"):
        F.gustafson_to_amdahl_fraction(0.5, 0.5)


def test_fraction_after_speedup_lowers_p_and_the_ceiling():
    assert F.fraction_after_speedup(0.9, 1) == pytest.approx(0.9)
    q = F.fraction_after_speedup(0.9, 4)
    assert q == pytest.approx(0.225 / 0.325)
    assert F.amdahl_limit(q) < F.amdahl_limit(0.9)
    assert F.fraction_after_speedup(0.0, 4) == 0.0 and F.fraction_after_speedup(1.0, 4) == 1.0
    with pytest.raises(ValueError, match="factor"):
        F.fraction_after_speedup(0.5, 0)


def test_efficiency_knee_is_the_largest_count_with_enough_efficiency():
    n = efficiency_knee(0.95, min_efficiency=0.5, max_devices=1024, **LINK)
    assert n == 12
    assert speedup_with_allreduce(0.95, n, **LINK) / n >= 0.5
    assert speedup_with_allreduce(0.95, n + 1, **LINK) / (n + 1) < 0.5
    assert efficiency_knee(0.95, min_efficiency=1.0, max_devices=64, **LINK) == 1
    # without communication and p = 1 every count is fully efficient: the cap binds
    assert efficiency_knee(1.0, min_efficiency=0.9, max_devices=64, grad_bytes=0, latency=0) == 64


@pytest.mark.parametrize("kwargs, error, word", [
    ({"min_efficiency": 0}, ValueError, "min_efficiency"), ({"min_efficiency": 1.5}, ValueError, "min_efficiency"),
    ({"max_devices": 2.0}, TypeError, "max_devices"), ({"max_devices": 0}, ValueError, "max_devices"),
])
def test_efficiency_knee_rejects_bad_inputs(kwargs, error, word):
    with pytest.raises(error, match=word):
        efficiency_knee(0.95, **kwargs)
