"""Chapter 2 extras: the example-dish figure, the Transformer layer, the critical-path Gantt."""
import pytest

from hetlab import schedulers as S
from hetlab.devices import identical
from hetlab.schedulers import bounds as WS


def test_transformer_layer_is_almost_a_chain():
    from hetlab.tasks import critical_path
    from hetlab.workloads.opgraphs import transformer_layer

    g = transformer_layer()
    assert len(g) == 14
    assert WS.peak_width(g) == 3                       # Q, K, V side by side
    assert 1.0 < WS.parallelism(g) < 1.3
    assert S.earliest_free(g, identical(2)).makespan == pytest.approx(WS.span(g))
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
