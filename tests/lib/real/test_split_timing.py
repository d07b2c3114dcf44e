"""hetlab.real.split_timing: one matrix product split into row blocks, timed in three parts."""
import numpy as np
import pytest

from hetlab.real.split_timing import SplitTiming, split_matmul_timing


def test_measures_every_piece_count_and_calibrates_before_the_sweep():
    t = split_matmul_timing(n=64, pieces=(1, 2, 8, 64), workers=2, repeat=1)
    assert t.pieces == (1, 2, 8, 64) and len(t.pool) == len(t.kernel) == len(t.dispatch) == 4
    assert all(v > 0 for v in t.pool + t.kernel) and all(v >= 0 for v in t.dispatch)
    assert t.w0 > 0 and t.os0 > 0 and t.workers == 2 and t.blas_threads == 1
    assert t.at(8) == (t.pool[2], t.kernel[2], t.dispatch[2])
    with pytest.raises(ValueError, match="measured counts"):
        t.at(3)


def test_one_row_blocks_cost_more_cpu_than_one_block():
    # 300 matrix-vector products re-read all of b 300 times: far more CPU than one 300 x 300 product
    # (a factor of about 2-6 on the machines the book was built on; 1.2 leaves room for any cache).
    t = split_matmul_timing(n=300, pieces=(1, 300), workers=1, repeat=3)
    assert t.kernel[1] > 1.2 * t.kernel[0]


def test_the_blocks_really_compute_the_product():
    # the kernel measurement times the same row blocks the pool runs; check those blocks give a @ b
    rng = np.random.default_rng(0)
    a, b = rng.random((30, 30)), rng.random((30, 30))
    blocks = [(r[0], r[-1] + 1) for r in np.array_split(np.arange(30), 7)]
    assert np.allclose(np.concatenate([a[i:j] @ b for i, j in blocks]), a @ b)


def test_a_record_built_by_hand_is_checked():
    t = SplitTiming(10, 2, 1, (1, 2), (4.0, 2.1), (4.0, 4.0), (0.1, 0.1), w0=4.0, os0=1e-5)
    assert t.at(2) == (2.1, 4.0, 0.1)
    with pytest.raises(ValueError, match="same length"):
        SplitTiming(10, 2, 1, (1, 2), (4.0,), (4.0, 4.0), (0.1, 0.1), w0=4.0, os0=1e-5)
    with pytest.raises(ValueError, match="w0"):
        SplitTiming(10, 2, 1, (1,), (4.0,), (4.0,), (0.1,), w0=0.0, os0=1e-5)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(n=0), ValueError, "n must be in"), (dict(n=10, pieces=(11,)), ValueError, "pieces must be in"),
    (dict(n=10, pieces=()), ValueError, "at least one"), (dict(n=10, pieces="12"), TypeError, "pieces"),
    (dict(n=10, workers=0), ValueError, "workers"), (dict(n=10, pieces=(1.5,)), TypeError, "pieces"),
])
def test_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        split_matmul_timing(**kwargs)
