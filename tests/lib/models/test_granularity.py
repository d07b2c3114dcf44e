"""P-device granularity model and integer N* (hetlab.models.granularity)."""
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
])
def test_bad_input_names_the_parameter(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def test_overhead_table_is_ordered_and_sourced():
    seconds = [o.seconds for o in G.OVERHEADS]
    assert seconds == sorted(seconds) and all(o.source for o in G.OVERHEADS)
