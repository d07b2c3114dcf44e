"""hetlab.formulas: the scaling laws (each expected value computed by hand or from its definition)."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hetlab import formulas as F

fractions = st.floats(0, 1)
counts = st.floats(1, 1e6)


def test_serial_and_parallel_time_follow_their_definitions():
    assert F.serial_time([2, 5, 3]) == 10
    assert F.parallel_time([2, 5, 3]) == 5


@given(st.lists(st.floats(0, 1e6), min_size=1, max_size=50))
def test_parallel_never_exceeds_serial(times):
    assert F.parallel_time(times) <= F.serial_time(times) + 1e-9


@given(fractions, counts, counts)
def test_amdahl_is_monotone_in_devices(p, n1, n2):
    lo, hi = sorted((n1, n2))
    assert F.amdahl(p, lo) <= F.amdahl(p, hi) + 1e-12


@given(fractions, fractions, counts)
def test_amdahl_is_monotone_in_parallel_fraction(p1, p2, n):
    lo, hi = sorted((p1, p2))
    assert F.amdahl(lo, n) <= F.amdahl(hi, n) * (1 + 1e-12)


@given(st.floats(0, 0.999), counts)
def test_amdahl_stays_below_its_limit_and_efficiency_is_s_over_n(p, n):
    s = F.amdahl(p, n)
    assert 1 - 1e-12 <= s <= F.amdahl_limit(p) * (1 + 1e-12)
    assert F.amdahl_efficiency(p, n) == pytest.approx(s / n)


def test_article_amdahl_examples():
    assert F.amdahl_limit(0.95) == pytest.approx(20.0)   # "5% serial: at most 20x"
    assert F.amdahl_limit(0.1) == pytest.approx(1 / 0.9)  # interview Q7: about 1.1x
    assert F.amdahl_limit(1.0) == math.inf
    assert F.amdahl(0.95, 1024) < 20


def test_formulas_accept_arrays_and_broadcast():
    s = F.amdahl(np.array([0.5, 0.9]), np.array([[1], [2]]))
    assert s.shape == (2, 2)
    np.testing.assert_allclose(s[1], [1 / (0.5 + 0.25), 1 / (0.1 + 0.45)])


def test_derivation_is_sqrt_w_over_os_with_a_positive_second_derivative():
    import sympy as sp

    d = F.derive_optimal_tasks()
    W, Os = sp.symbols("W O_s", positive=True)
    assert sp.simplify(d.N_star - sp.sqrt(W / Os)) == 0
    assert d.d2T_at_star.is_positive
    assert sp.simplify(d.T_min - 2 * sp.sqrt(W * Os)) == 0
    assert "\\begin{aligned}" in d.latex()


@pytest.mark.parametrize("w, o", [(10_000, 1.0), (500.0, 0.3), (64.0, 4.0), (3e6, 0.02)])
def test_symbolic_optimum_equals_the_numeric_argmin(w, o):
    import sympy as sp

    d = F.derive_optimal_tasks()
    exact = float(d.N_star.subs({sp.Symbol("W", positive=True): w, sp.Symbol("O_s", positive=True): o}))
    grid = np.linspace(1, 10 * exact, 2_000_001)
    numeric = grid[np.argmin(F.total_time(grid, w, o))]
    assert exact == pytest.approx(F.optimal_tasks(w, o))
    assert numeric == pytest.approx(exact, rel=1e-4)


@given(st.floats(0.01, 0.99), st.floats(2, 4096))
def test_karp_flatt_recovers_the_serial_fraction_of_an_amdahl_speedup(p, n):
    assert F.karp_flatt(F.amdahl(p, n), n) == pytest.approx(1 - p, rel=1e-6, abs=1e-9)


def test_gustafson():
    assert F.gustafson(0.95, 1024) == pytest.approx(0.05 + 0.95 * 1024)


def test_pipeline_and_imbalance():
    assert F.pipeline_period([3, 5, 4, 2]) == 5
    assert F.pipeline_throughput([3, 5, 4, 2]) == pytest.approx(0.2)
    assert F.imbalance([4, 2, 2, 4]) == pytest.approx(1 / 3)
    assert F.imbalance([3, 3, 3]) == 0


@pytest.mark.parametrize("call, message", [
    (lambda: F.amdahl(1.3, 4), r"p must be in \[0, 1\], got 1.3"),
    (lambda: F.amdahl(0.5, 0), r"N must be in \[1, inf\), got 0"),
    (lambda: F.amdahl([0.5, -0.1], 4), r"p must be in \[0, 1\], got -0.1"),
    (lambda: F.total_time(10, -1, 1), r"W must be in \[0, inf\), got -1"),
    (lambda: F.optimal_tasks(10, 0), r"Os must be in \(0, inf\), got 0"),
    (lambda: F.karp_flatt(2, 1), r"N must be in \(1, inf\)"),
    (lambda: F.serial_time([]), r"times must be a non-empty"),
    (lambda: F.amdahl(float("nan"), 2), r"p must not contain nan"),
    (lambda: F.imbalance([0, 0]), r"loads must not all be zero"),
])
def test_bad_input_names_the_parameter_and_range(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("value", ["0.5", None, True, object()])
def test_non_numbers_are_type_errors(value):
    with pytest.raises(TypeError, match="p must be"):
        F.amdahl(value, 2)


# --- issue 11: extreme inputs give the limit, or a ValueError naming the parameter -------------------------------

def test_optimal_tasks_of_huge_work_does_not_overflow():
    # sqrt(1e300) / sqrt(1e-10) = 1e150 / 1e-5 = 1e155; W / Os itself (1e310) would overflow to inf.
    assert F.optimal_tasks(1e300, 1e-10) == pytest.approx(1e155)


def test_amdahl_efficiency_at_infinitely_many_devices_is_the_limit():
    # E = 1 / (N (1 - p) + p): for p = 1 the serial part is empty, E = 1 for every N; for p < 1, E -> 0.
    assert F.amdahl_efficiency(1.0, math.inf) == 1.0
    assert F.amdahl_efficiency(0.5, math.inf) == 0.0
    assert F.amdahl(0.5, math.inf) == pytest.approx(2.0)      # the ceiling 1 / (1 - p)


@pytest.mark.parametrize("call, name", [
    (lambda: F.total_time(math.inf, 100.0, 0.0), "N"),          # inf * 0 was NaN
    (lambda: F.total_time(4, math.inf, 1.0), "W"),
    (lambda: F.gustafson(0.0, math.inf), "N"),                  # 0 * inf was NaN
    (lambda: F.speedup(1e300, 1e-300), "t_serial"),
    (lambda: F.pipeline_throughput([0.0, 0.0]), "stage_times"),  # was ZeroDivisionError
])
def test_extreme_inputs_are_refused_by_name(call, name):
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    assert name in str(info.value)


def test_imbalance_of_huge_equal_loads_is_zero_not_nan():
    # The mean of [1e308, 1e308] is 1e308 (their sum overflows, the mean does not): perfectly balanced.
    assert F.imbalance([1e308, 1e308]) == 0.0
    assert F.imbalance([4, 2, 2, 4]) == pytest.approx(1 / 3)    # (4 - 3) / 3


def test_amdahl_limit_is_infinite_only_at_p_1():
    assert F.amdahl_limit(1.0) == math.inf and F.amdahl_limit(0.75) == pytest.approx(4.0)


# --- Amdahl and Gustafson are one law measured on two runs: the fraction conversions ------------------------------

@pytest.mark.parametrize("p", [0.0, 0.5, 0.9, 0.95, 0.999, 1.0])
@pytest.mark.parametrize("n", [1, 2, 8, 1024])
def test_amdahl_and_gustafson_agree_when_p_is_measured_where_each_says(p, n):
    q = F.fraction_after_speedup(p, n)
    assert F.gustafson(q, n) == pytest.approx(F.amdahl(p, n))
    assert F.gustafson_to_amdahl_fraction(q, n) == pytest.approx(p)


def test_fraction_after_speedup_by_hand():
    # p = 0.95, N = 1024: parallel part 0.95/1024 = 0.000928 of a run lasting 0.050928
    assert F.fraction_after_speedup(0.95, 1024) == pytest.approx(0.000928 / 0.050928, rel=1e-3)


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
        F.gustafson_to_amdahl_fraction(0.5, 0)


def test_fraction_after_speedup_lowers_p_and_the_ceiling():
    assert F.fraction_after_speedup(0.9, 1) == pytest.approx(0.9)
    q = F.fraction_after_speedup(0.9, 4)
    assert q == pytest.approx(0.225 / 0.325)
    assert F.amdahl_limit(q) < F.amdahl_limit(0.9)
    assert F.fraction_after_speedup(0.0, 4) == 0.0 and F.fraction_after_speedup(1.0, 4) == 1.0
    with pytest.raises(ValueError, match="N"):
        F.fraction_after_speedup(0.5, 0)
    with pytest.raises(ValueError, match="p must be"):
        F.fraction_after_speedup(1.2, 4)


def test_one_minus_karp_flatt_is_the_fraction_a_target_speedup_needs():
    # 7.5x on 8 devices: p = (1 - 1/7.5) / (1 - 1/8) = 0.99047619 (Amdahl solved for p)
    p = 1 - F.karp_flatt(7.5, 8)
    assert p == pytest.approx((1 - 1 / 7.5) / (1 - 1 / 8))
    assert F.amdahl(p, 8) == pytest.approx(7.5)


def test_mfu_is_the_model_flops_rate_over_the_peak_of_all_devices():
    # by hand: a 1e9-parameter model trained at 1e4 tokens/s needs 6e13 FLOP/s; 4 devices of 1e14 peak: 15 %
    assert F.mfu(1e4, 1e9, 1e14, devices=4) == pytest.approx(0.15)
    # Llama 2 70B (Touvron et al. 2023, table 2): 2.0e12 tokens in 1,720,320 A100-80GB hours at 312 TFLOP/s BF16
    per_gpu = 2.0e12 / (1_720_320 * 3600)
    assert F.mfu(per_gpu, 70e9, 312e12) == pytest.approx(6 * 70e9 * 2.0e12 / (1_720_320 * 3600 * 312e12))
    # inference counts 2 FLOPs per parameter and token: a third of training's 6 at the same rate
    assert F.mfu(1e4, 1e9, 1e14, flops_per_param=2) == pytest.approx(F.mfu(1e4, 1e9, 1e14) / 3)
    assert np.allclose(F.mfu(np.array([1e4, 2e4]), 1e9, 1e14), [0.6, 1.2])


@pytest.mark.parametrize("kwargs, match", [
    ({"tokens_per_s": -1}, "tokens_per_s"), ({"params": 0}, "params"), ({"peak_flops": 0}, "peak_flops"),
    ({"devices": 0}, "devices"), ({"devices": 1.5}, "devices"), ({"flops_per_param": 0}, "flops_per_param"),
])
def test_mfu_rejects_bad_inputs(kwargs, match):
    args = {"tokens_per_s": 1e4, "params": 1e9, "peak_flops": 1e14, **kwargs}
    with pytest.raises((ValueError, TypeError), match=match):
        F.mfu(**args)


def test_overhead_time_is_the_device_time_beyond_the_serial_work():
    # Amdahl, p = 0.9, 8 devices, T_1 = 1: T_8 = 0.1 + 0.9/8 = 0.2125; T_o = 8 x 0.2125 - 1 = 0.7 = (N - 1)(1 - p)
    t8 = 0.1 + 0.9 / 8
    assert F.overhead_time(1.0, t8, 8) == pytest.approx(0.7)
    # E = 1 / (1 + T_o / T_1) and the Karp-Flatt fraction is T_o / ((N - 1) T_1)
    assert 1 / (1 + F.overhead_time(1.0, t8, 8)) == pytest.approx(F.amdahl_efficiency(0.9, 8))
    assert F.overhead_time(1.0, t8, 8) / 7 == pytest.approx(F.karp_flatt(1 / t8, 8))
    assert np.allclose(F.overhead_time(10.0, np.array([10.0, 5.0]), np.array([1, 2])), [0.0, 0.0])
    with pytest.raises(ValueError, match="t_parallel"):
        F.overhead_time(1.0, 0.0, 2)


def test_isoefficiency_work_holds_the_efficiency_it_was_asked_for():
    # W = E / (1 - E) T_o: with that W, E = W / (W + T_o) is back to E
    for e in (0.2, 0.5, 0.8, 0.95):
        w = F.isoefficiency_work(e, 3.0)
        assert w / (w + 3.0) == pytest.approx(e)
    assert F.isoefficiency_work(0.8, 0.0) == 0.0
    for bad in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match="efficiency"):
            F.isoefficiency_work(bad, 1.0)
    with pytest.raises(ValueError, match="overhead"):
        F.isoefficiency_work(0.5, -1.0)
