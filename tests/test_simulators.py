import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetlab import formulas as F
from hetlab.models import simulators as sim


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 12), st.sampled_from(["gpipe", "1f1b"]), st.sampled_from([0.0, 1.0, 2.0]))
def test_simulated_bubble_equals_the_gpipe_formula_for_equal_stages(p, m, method, ratio):
    s = sim.pipeline_schedule([1.5] * p, m, method=method, backward_ratio=ratio).validate()
    assert s.info["bubble_fraction"] == pytest.approx(F.gpipe_bubble_fraction(p, m), abs=1e-12)
    # The classic fill-drain time: (m + p - 1) slots of (forward + backward).
    assert s.makespan == pytest.approx((m + p - 1) * 1.5 * (1 + ratio))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.5, 5.0), min_size=1, max_size=6), st.integers(1, 10))
def test_forward_pipeline_takes_sum_plus_slowest_per_extra_item(stages, m):
    s = sim.pipeline_schedule(stages, m, backward_ratio=0).validate()
    assert s.makespan == pytest.approx(sum(stages) + (m - 1) * max(stages))


@pytest.mark.parametrize("p, m", [(4, 8), (3, 2), (5, 12)])
def test_1f1b_holds_at_most_p_minus_s_activations(p, m):
    one = sim.pipeline_schedule([1] * p, m, method="1f1b").validate()
    gpipe = sim.pipeline_schedule([1] * p, m, method="gpipe").validate()
    assert one.info["peak_activations"] == [min(p - s, m) for s in range(p)]
    assert gpipe.info["peak_activations"] == [m] * p
    assert one.makespan == pytest.approx(gpipe.makespan)


def test_pipeline_rejects_bad_input():
    with pytest.raises(ValueError, match="micro_batches must be in"):
        sim.pipeline_schedule([1, 1], 0)
    with pytest.raises(ValueError, match="method must be"):
        sim.pipeline_schedule([1, 1], 2, method="zigzag")
    with pytest.raises(ValueError, match="stage_times must be in"):
        sim.pipeline_schedule([1, 0], 2)


def test_data_parallel_step_and_training_throughput():
    # One device: no communication at all.
    assert sim.data_parallel_step(2.0, 1, grad_size=1.0, bandwidth=1.0) == pytest.approx(2.0)
    steps = sim.data_parallel_step(1.0, np.array([2, 8]), grad_size=1.0, bandwidth=10.0)
    np.testing.assert_allclose(steps, [0.5 + 0.1, 0.125 + 2 * 7 / 8 / 10])
    hidden = sim.data_parallel_step(1.0, 8, grad_size=1.0, bandwidth=10.0, overlap=1.0)
    assert hidden == pytest.approx(0.125 + 0.175 - 0.125)   # overlap hides at most the compute time
    thr, speedup = sim.training_throughput(100, 10.0, data_parallel=1, pipeline_stages=1, micro_batches=1,
                                           grad_size=1.0, bandwidth=1.0)
    assert speedup == pytest.approx(1.0) and thr == pytest.approx(10.0)


def test_bursty_arrivals_are_seeded_sorted_and_near_the_expected_rate():
    a = sim.bursty_arrivals(100, 200.0, burst_factor=10, burst_share=0.1, seed=4)
    assert np.all(np.diff(a) >= 0) and a.min() >= 0 and a.max() < 200
    assert np.array_equal(a, sim.bursty_arrivals(100, 200.0, burst_factor=10, burst_share=0.1, seed=4))
    expected = 100 * (0.9 + 0.1 * 10) * 200
    assert abs(a.size - expected) < 0.15 * expected
    with pytest.raises(ValueError, match="burst_share must be in"):
        sim.bursty_arrivals(1, 1, burst_share=1.0)


def test_serve_single_device_without_queueing_adds_only_the_service_time():
    arrivals = np.arange(10) * 1.0
    r = sim.serve(arrivals, 1, max_batch=1, batch_overhead=0.1, per_request=0.05)
    np.testing.assert_allclose(r.latency, 0.15)
    assert r.utilisation[0] == pytest.approx(1.5 / r.horizon)


def test_serve_batches_a_burst_waits_at_most_max_wait_and_serves_everyone_once():
    arrivals = np.array([0.0, 0.001, 0.002, 0.003, 5.0])
    r = sim.serve(arrivals, 1, max_batch=4, max_wait=0.01, batch_overhead=0.02, per_request=0.005)
    assert [len(b[3]) for b in r.batches] == [4, 1]
    assert sorted(i for b in r.batches for i in b[3]) == list(range(5))
    assert r.batches[0][1] == pytest.approx(0.003)     # full batch starts at once
    assert r.batches[1][1] == pytest.approx(5.01)      # a lone request waits max_wait
    r.schedule.validate()


def test_batching_tames_tail_latency_under_bursts():
    a = sim.bursty_arrivals(60, 30.0, burst_factor=10, burst_share=0.05, seed=0)
    single = sim.serve(a, 4, max_batch=1, batch_overhead=0.02, per_request=0.002)
    batched = sim.serve(a, 4, max_batch=16, batch_overhead=0.02, per_request=0.002)
    assert batched.p99 < single.p99 / 10
    assert batched.batch_efficiency > single.batch_efficiency
    assert np.all(batched.finish >= batched.arrivals)


def test_stealing_helps_when_one_queue_holds_a_huge_request():
    arrivals = np.arange(6) * 0.001
    sizes = [50, 1, 1, 1, 1, 1]
    kw = dict(max_batch=1, batch_overhead=0.02, per_request=0.002, sizes=sizes)
    assert sim.serve(arrivals, 2, steal=True, **kw).p99 < sim.serve(arrivals, 2, steal=False, **kw).p99


# --- issue 11: bad input is refused by name, huge sizes at once ----------------------------------------------------

@pytest.mark.parametrize("call, name", [
    (lambda: sim.pipeline_schedule([1, 1], 10**12), "micro_batches"),          # used to build tasks for minutes
    (lambda: sim.pipeline_schedule([1, 1], 4, activation=-1.0), "activation"),
    (lambda: sim.pipeline_schedule([1, 1], 4, method=3), "method"),
    (lambda: sim.serve([0.0, 0.1], 10**12), "n_devices"),                        # used to run for minutes
    (lambda: sim.serve([0.0, 0.1], steal="no"), "steal"),                        # a string was truthy
    (lambda: sim.serve([]), "arrivals"),
    (lambda: sim.serve([0.0, math.inf]), "arrivals"),
    (lambda: sim.bursty_arrivals(1e12, 1e12), "rate"),                           # was a MemoryError
    (lambda: sim.bursty_arrivals(5.0, 2.0, seed=-1), "seed"),                    # numpy's message named no parameter
    (lambda: sim.bursty_arrivals(5.0, 2.0, mean_burst=1e-300), "mean_burst"),
    (lambda: sim.data_parallel_step(1.0, 2.5, 1.0, 1.0), "n_devices"),
    (lambda: sim.data_parallel_step(1.0, 4, math.inf, 1.0), "grad_size"),        # was NaN
    (lambda: sim.training_throughput(32, 1.0, 2, 2, 4, 1.0, 1.0, latency=math.inf), "latency"),
])
def test_bad_simulator_input_is_refused_by_name(call, name):
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    assert name in str(info.value)


def test_serve_result_percentile_checks_q():
    r = sim.serve(np.linspace(0.0, 0.5, 20), 2)
    assert r.percentile(0) <= r.p50 <= r.p99 <= r.percentile(100)
    with pytest.raises(ValueError, match=r"q must be in \[0, 100\]"):
        r.percentile(150)


def test_skewed_tasks_refuses_a_string_of_kinds():
    # kinds='CPU' used to give tasks preferring 'C', 'P' and 'U'.
    from hetlab.workloads import skewed_tasks

    with pytest.raises(TypeError, match="kinds must be a sequence"):
        skewed_tasks(4, kinds="CPU")
    assert {t.kind for t in skewed_tasks(30, kinds=["GPU"]).tasks} == {"GPU"}
