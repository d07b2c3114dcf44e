"""Chapter 2 extras: peak width against average parallelism, and the example-dish figure."""
import pytest

from hetlab.devices import identical
from hetlab.schedulers import bounds as WS
from hetlab.tasks import Task, TaskGraph, random_dag


def _dish():
    return TaskGraph([Task("wash", 1), Task("cut", 4), Task("marinate", 2), Task("stock", 3), Task("plate", 1)],
                     [("wash", x) for x in ("cut", "marinate", "stock")] +
                     [(x, "plate") for x in ("cut", "marinate", "stock")])


def test_peak_width_of_the_dish_is_three_while_average_is_below_two():
    g = _dish()
    assert WS.peak_width(g) == 3
    assert WS.parallelism(g) == pytest.approx(11 / 6)


def test_peak_width_of_a_chain_and_of_independent_tasks():
    chain = TaskGraph([Task("a", 2), Task("b", 5)], [("a", "b")])
    assert WS.peak_width(chain) == 1
    assert WS.peak_width([Task("a", 1), Task("b", 2), Task("c", 0)]) == 2     # empty task occupies no moment


@pytest.mark.parametrize("seed", range(6))
def test_greedy_reaches_the_span_with_peak_width_devices(seed):
    g = random_dag(14, mean_degree=1.5, work=(1.0, 9.0), data=(0.0, 0.0), seed=seed)
    p = WS.peak_width(g)
    assert WS.greedy(g, identical(p, speed=1.0)).makespan == pytest.approx(WS.span(g))
    assert p >= WS.parallelism(g) - 1e-9           # the peak is at least the average


def test_transformer_layer_is_almost_a_chain():
    from hetlab.tasks import critical_path
    from hetlab.workloads.opgraphs import transformer_layer

    g = transformer_layer()
    assert len(g) == 14
    assert WS.peak_width(g) == 3                       # Q, K, V side by side
    assert 1.0 < WS.parallelism(g) < 1.3
    assert WS.greedy(g, identical(2)).makespan == pytest.approx(WS.span(g))
    assert critical_path(g)[1][-3:] == ["GELU", "FC2", "add2"]
    # FC1 (s x h x 4h) costs four times a projection (s x h x h)
    assert g.task("FC1").work == pytest.approx(4 * g.task("Q").work, rel=1e-3)


def test_transformer_layer_validates():
    from hetlab.workloads.opgraphs import transformer_layer

    with pytest.raises(ValueError, match="heads"):
        transformer_layer(hidden=100, heads=3)
    with pytest.raises(ValueError, match="tflops"):
        transformer_layer(tflops=0)
    with pytest.raises(TypeError, match="sequence"):
        transformer_layer(sequence=2.5)
