"""Chapter 8's claims, checked beyond the one case the chapter prints."""
import numpy as np
import pytest

from hetlab.models import pipelines as PL
from hetlab.models import training as T


def gelu(z):
    return 0.5 * z * (1 + np.tanh(0.7978845608 * (z + 0.044715 * z ** 3)))


@pytest.mark.parametrize("seed", range(20))
def test_column_then_row_split_equals_the_whole_layer(seed):
    # 8.4: A split by columns and B by rows, the two partial sums add up to GeLU(XA)B (seed 0 in the chapter)
    rng = np.random.default_rng(seed)
    X, A, B = rng.standard_normal((4, 8)), rng.standard_normal((8, 16)), rng.standard_normal((16, 8))
    parts = [gelu(X @ a) @ b for a, b in zip(np.hsplit(A, 4), np.vsplit(B, 4))]     # 4 GPUs as well
    assert np.allclose(sum(parts), gelu(X @ A) @ B)


def one_f_one_b(p, m, s):
    warm = min(p - s - 1, m)
    order = [f"F{k}" for k in range(warm)]
    for k in range(m - warm):
        order += [f"F{warm + k}", f"B{k}"]
    return order + [f"B{k}" for k in range(m - warm, m)]


@pytest.mark.parametrize("p", range(1, 7))
@pytest.mark.parametrize("m", [1, 2, 3, 5, 8, 12])
def test_the_chapters_1f1b_order_is_hetlabs_and_holds_min_p_minus_s_m(p, m):
    sim = PL.pipeline_schedule([1.0] * p, micro_batches=m, method="1f1b")
    for s in range(p):
        assert one_f_one_b(p, m, s) == [t.split("@")[0] for t in sim.tasks_on(f"S{s}")]
    assert sim.info["peak_activations"] == [min(p - s, m) for s in range(p)]
    assert sim.info["bubble_fraction"] == pytest.approx(T.bubble_fraction(p, m))


def test_zero_2_and_3_under_a_pipeline_cost_their_multiples():
    # 8.3: 16 micro-batches, DP 8, PP 16: (16 G + W) / (G + W) = 8.5 and 48 / 2 = 24 times ZeRO-1's bytes
    one = T.zero_traffic(70e9, dp=8, pp=16, zero_stage=1, micro_batches=16)
    assert T.zero_traffic(70e9, dp=8, pp=16, zero_stage=2, micro_batches=16) / one == pytest.approx(8.5)
    assert T.zero_traffic(70e9, dp=8, pp=16, zero_stage=3, micro_batches=16) / one == pytest.approx(24.0)


def test_slow_middle_stage_separates_gpipe_and_1f1b():
    # the pipeline 试一试: [1, 1, 2, 1], m = 8 -> 1F1B ends first and both bubbles exceed the formula's 3/11
    gpipe = PL.pipeline_schedule([1, 1, 2, 1], 8, method="gpipe")
    ofob = PL.pipeline_schedule([1, 1, 2, 1], 8, method="1f1b")
    assert ofob.makespan < gpipe.makespan
    assert min(ofob.info["bubble_fraction"], gpipe.info["bubble_fraction"]) > T.bubble_fraction(4, 8)
