import numpy as np
import pytest

from hetlab.real.split_timing import SplitTiming, plot_split_timing, split_matmul_timing


def test_measures_every_piece_count_and_the_model_combines_the_parts():
    t = split_matmul_timing(n=64, pieces=(1, 2, 8, 64), repeat=1)
    assert t.pieces == (1, 2, 8, 64) and len(t.pool) == len(t.kernel) == len(t.dispatch) == 4
    assert all(v > 0 for v in t.pool + t.kernel + t.dispatch)
    # the model is dispatch + kernel / min(N, workers), by definition
    expected = [d + k / min(p, 2) for p, k, d in zip(t.pieces, t.kernel, t.dispatch)]
    assert np.allclose(t.model(), expected)
    assert t.best in t.pieces
    assert "块数" in t.table() and "毫秒" in t.table()


def test_the_blocks_really_compute_the_product():
    # the kernel measurement times the same row blocks the pool runs; check those blocks give a @ b
    rng = np.random.default_rng(0)
    a, b = rng.random((30, 30)), rng.random((30, 30))
    blocks = [(r[0], r[-1] + 1) for r in np.array_split(np.arange(30), 7)]
    assert np.allclose(np.concatenate([a[i:j] @ b for i, j in blocks]), a @ b)


def test_known_timings_give_the_expected_best_and_figure():
    t = SplitTiming(10, 2, 1, (1, 2, 10), (4.0, 2.1, 3.0), (4.0, 4.0, 5.0), (0.1, 0.1, 0.5))
    assert t.best == 2
    assert t.model() == pytest.approx((4.1, 2.1, 3.0))
    ax = plot_split_timing(t)
    assert len(ax.lines) == 4


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(n=0), ValueError, "n must be in"), (dict(n=10, pieces=(11,)), ValueError, "pieces must be in"),
    (dict(n=10, pieces=()), ValueError, "at least one"), (dict(n=10, pieces="12"), TypeError, "pieces"),
    (dict(n=10, workers=0), ValueError, "workers"), (dict(n=10, pieces=(1.5,)), TypeError, "pieces"),
])
def test_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        split_matmul_timing(**kwargs)
