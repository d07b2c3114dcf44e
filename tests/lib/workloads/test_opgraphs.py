"""hetlab.workloads.opgraphs: one Transformer layer's operators, costed by the roofline (chapter 2)."""
import pytest

from hetlab import schedulers as S
from hetlab.devices import identical
from hetlab.schedulers import bounds as WS
from hetlab.tasks import critical_path
from hetlab.workloads.opgraphs import transformer_costs, transformer_layer


def test_costs_by_hand():
    """h = 4096, s = 2048, 32 heads, 2-byte values (the chapter's layer, the review's figures)."""
    costs = transformer_costs()
    h, s, a = 4096, 2048, 32
    assert costs["Q"] == (2 * s * h * h, (s * h + h * h + s * h) * 2)
    # QK^T: 2 s^2 h FLOPs = 34.4 GFLOP; Q and K read, 32 score matrices of s x s written: 302 MB
    assert costs["QK^T"] == (2 * s * s * h, (2 * s * h + a * s * s) * 2)
    assert costs["QK^T"][1] == pytest.approx(302.0e6, rel=1e-3)
    assert costs["AV"][1] == costs["QK^T"][1]          # scores and V in, s x h out
    assert costs["softmax"][1] == 2 * a * s * s * 2


def test_roofline_takes_the_binding_side():
    """QK^T's intensity is 34.4e9 / 302e6 = 114 FLOP/B, below the A100's ridge 312 / 2.0 = 156:
    memory-bound at 302e6 / 2.0e12 s = 151.0 us (not 34.4e9 / 312e12 s = 110.1 us). Q is compute-bound:
    68.7e9 / 312e12 s = 220.3 us."""
    layer = transformer_layer(tflops=312.0, bandwidth_tbs=2.0)
    assert layer.task("QK^T").work == pytest.approx(151.0, abs=0.05)
    assert layer.task("AV").work == pytest.approx(151.0, abs=0.05)
    assert layer.task("Q").work == pytest.approx(220.3, abs=0.05)
    # a tenfold bandwidth makes QK^T compute-bound too
    assert transformer_layer(tflops=312.0, bandwidth_tbs=20.0).task("QK^T").work == pytest.approx(110.1, abs=0.05)


def test_transformer_layer_is_almost_a_chain():
    g = transformer_layer()
    assert len(g) == 14
    assert WS.peak_width(g) == 3                       # Q, K, V side by side
    assert 1.0 < WS.parallelism(g) < 1.3
    assert S.earliest_free(g, identical(2)).makespan == pytest.approx(WS.span(g))
    assert critical_path(g)[1][-3:] == ["GELU", "FC2", "add2"]
    # FC1 (s x h x 4h) costs four times a projection (s x h x h): both compute-bound
    assert g.task("FC1").work == pytest.approx(4 * g.task("Q").work, rel=1e-3)


def test_transformer_layer_validates():
    with pytest.raises(ValueError, match="heads"):
        transformer_layer(hidden=100, heads=3)
    with pytest.raises(ValueError, match="tflops"):
        transformer_layer(tflops=0)
    with pytest.raises(TypeError, match="sequence"):
        transformer_layer(sequence=2.5)
    with pytest.raises(ValueError, match="bytes_per_value"):
        transformer_costs(bytes_per_value=0)
