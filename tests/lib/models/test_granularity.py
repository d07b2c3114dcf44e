"""P-device granularity model, integer N*, one in-order device and the halo ratio (hetlab.models.granularity)."""
import math

import numpy as np
import pytest

from hetlab import formulas as F
from hetlab.models import granularity as G


def test_ideal_model_by_hand():
    # N = 100 tasks on P = 8 devices: 100 * 1 dispatch + 10000 / 8 execution.
    assert G.total_time_on(100, 10_000, 1.0, 8) == pytest.approx(1350.0)
    # Fewer tasks than devices: the book's model N Os + W / N.
    assert G.total_time_on(4, 10_000, 1.0, 8) == pytest.approx(4 + 2500)


def test_rounds_model_by_hand():
    # 12 equal tasks of 100 on 8 devices run in 2 rounds: 12 + 2 * 100.
    assert G.total_time_on(12, 1200, 1.0, 8, model="rounds") == pytest.approx(212.0)
    # Rounds can never beat the ideal spread.
    n = np.arange(1, 200)
    assert (G.total_time_on(n, 5000, 0.5, 7, model="rounds") >= G.total_time_on(n, 5000, 0.5, 7) - 1e-9).all()


def test_unlimited_devices_recovers_the_books_model():
    n = np.arange(1, 500)
    assert np.allclose(G.total_time_on(n, 10_000, 1.0, 10**6), F.total_time(n, 10_000, 1.0))


@pytest.mark.parametrize("W, Os, P", [(10_000, 1.0, None), (2000, 3.0, None), (10_000, 1.0, 8), (50, 7.0, None),
                                      (123_456, 0.3, 1000), (10_000, 1.0, 3), (1.0, 5.0, None)])
def test_integer_optimum_matches_brute_force(W, Os, P):
    n = np.arange(1, 5000)
    for model in ("ideal", "rounds"):
        t = G.total_time_on(n, W, Os, P or 10**9, model=model)
        assert G.optimal_task_count(W, Os, P) == int(n[np.argmin(t)])


def test_integer_optimum_examples():
    assert G.optimal_task_count(10_000, 1.0) == 100
    assert G.optimal_task_count(2000, 3.0) == 26        # T(25) = 155.0 > T(26) = 154.92
    assert G.optimal_task_count(10_000, 1.0, P=8) == 8  # clamped: more tasks than devices never helps


@pytest.mark.parametrize("call, message", [
    (lambda: G.total_time_on(0, 1, 1, 2), "N must be"),
    (lambda: G.total_time_on(2, 1, 1, 0), "P must be"),
    (lambda: G.total_time_on(2, 1, 1, True), "P must be"),
    (lambda: G.total_time_on(2, 1, 1, 2, model="x"), "model must be"),
    (lambda: G.total_time_on(math.inf, 1, 1, 2), "N must be finite"),
    (lambda: G.optimal_task_count(1, 0.0), "Os must be"),
    (lambda: G.optimal_task_count(float("nan"), 1.0), "W must be"),
    (lambda: G.optimal_task_count(1, 1, P=2.5), "P must be"),
    (lambda: G.in_order_time(0, 1.0, 1.0), "N must be"),
    (lambda: G.in_order_time(2.5, 1.0, 1.0), "N must be"),
    (lambda: G.in_order_time(2, -1.0, 1.0), "W must be"),
    (lambda: G.halo_ratio(0, 1), "n must be"),
    (lambda: G.halo_ratio(4, 17), "pieces must be"),
    (lambda: G.halo_ratio(4, 5, layout="strips"), "pieces must be"),
    (lambda: G.halo_ratio(4, 2, layout="rings"), "layout must be"),
])
def test_bad_input_names_the_parameter(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def test_rounds_model_multiple_of_p():
    # equal tasks on P = 2: N = 3 leaves a device idle in round 2, N = 4 does not
    t3 = G.total_time_on(3, 0.040, 10e-6, 2, model="rounds")
    t4 = G.total_time_on(4, 0.040, 10e-6, 2, model="rounds")
    assert t3 == pytest.approx(3e-5 + 2 * 0.040 / 3) and t4 == pytest.approx(4e-5 + 0.020)
    assert t3 > t4


def test_in_order_time_by_hand():
    assert G.in_order_time(1, 100.0, 5.0) == pytest.approx(105.0)            # issue, then run it all
    assert G.in_order_time(4, 100.0, 5.0) == pytest.approx(5 + 25 + 3 * 25)  # launches hidden: Os + W
    assert G.in_order_time(40, 100.0, 5.0) == pytest.approx(40 * 5 + 2.5)   # device waits for each launch
    n = np.arange(1, 200)
    t = G.in_order_time(n, 100.0, 5.0)
    assert (t >= 100.0).all() and (t >= n * 5.0).all()                      # never below W nor N Os


@pytest.mark.parametrize("N, W, Os", [(1, 10.0, 1.0), (7, 10.0, 1.0), (30, 10.0, 1.0), (12, 1.0, 0.0),
                                      (5, 0.0, 2.0), (64, 0.267, 0.0154)])
def test_in_order_time_is_the_engine_with_issue_times(N, W, Os):
    # an independent oracle: the greedy engine on one device, piece k released when it has been issued
    from hetlab import schedulers as S
    from hetlab.devices import identical
    from hetlab.tasks import independent_tasks

    tasks = independent_tasks([W / N] * N)
    release = {t.name: (k + 1) * Os for k, t in enumerate(tasks.tasks)}
    assert G.in_order_time(N, W, Os) == pytest.approx(S.central_queue(tasks, identical(1), release=release).makespan)


def _halo_by_counting(n: int, blocks_per_side: int, rows_per_piece: int | None = None) -> float:
    """Brute force on a periodic n x n grid: for each piece, the cells outside it that a 5-point stencil reads."""
    def piece(i, j):
        if rows_per_piece:
            return i // rows_per_piece
        side = n // blocks_per_side
        return (i // side, j // side)
    outside: dict = {}
    for i in range(n):
        for j in range(n):
            for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                k, m = (i + di) % n, (j + dj) % n
                if piece(k, m) != piece(i, j):
                    outside.setdefault(piece(i, j), set()).add((k, m))
    pieces = len(outside)
    return sum(len(v) for v in outside.values()) / pieces / (n * n / pieces)


def test_halo_ratio_counts_the_cells_a_piece_reads_from_its_neighbours():
    assert G.halo_ratio(16, 16) == pytest.approx(_halo_by_counting(16, 4))            # 4 x 4 blocks of 4 x 4
    assert G.halo_ratio(16, 4) == pytest.approx(_halo_by_counting(16, 2))             # 2 x 2 blocks of 8 x 8
    assert G.halo_ratio(16, 8, layout="strips") == pytest.approx(_halo_by_counting(16, 0, rows_per_piece=2))
    assert G.halo_ratio(1024, 16) == pytest.approx(4 * 256 / 256**2)
    assert G.halo_ratio(1024, np.array([1, 4, 16])).tolist() == pytest.approx([4 / 1024, 8 / 1024, 16 / 1024])
