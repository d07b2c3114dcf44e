"""hetlab.models.queueing: the M/M/1 closed forms (Kleinrock 1975), a hand-built run and the seeded simulation.

Expected values: 1 / (mu - lambda) and -ln(1 - q) / (mu - lambda) computed by hand, Little's law as a sample-path
identity, and Lindley's recursion worked on three requests.
"""
import math

import numpy as np
import pytest

from hetlab.models import queueing as Q


def test_closed_forms_by_hand():
    assert Q.mm1_latency(0.8, 1.0) == pytest.approx(5.0)
    assert Q.mm1_latency(2.0, 10.0) == pytest.approx(1 / 8)
    assert Q.mm1_latency_quantile(0.8, 1.0, 0.99) == pytest.approx(math.log(100) * 5.0)
    assert Q.mm1_latency_quantile(0.5, 1.0, 0.5) == pytest.approx(2 * math.log(2))


@pytest.mark.parametrize("call, name", [
    (lambda: Q.mm1_latency(1.0, 1.0), "arrival_rate"), (lambda: Q.mm1_latency(0.0, 1.0), "arrival_rate"),
    (lambda: Q.mm1_latency(0.5, -1.0), "service_rate"), (lambda: Q.mm1_latency_quantile(0.5, 1.0, 1.0), "q"),
    (lambda: Q.single_server(0.5, 1.0, requests=0), "requests"), (lambda: Q.single_server(2.0, 1.0), "arrival_rate"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_a_hand_built_run():
    # arrivals 0, 1, 5; services 2, 2, 1: request 2 waits for the server until 2, request 3 finds it idle
    run = Q.QueueRun(arrivals=[0.0, 1.0, 5.0], departures=[2.0, 4.0, 6.0], services=[2.0, 2.0, 1.0])
    assert run.latencies.tolist() == [2.0, 3.0, 1.0]
    assert run.span == 6.0 and run.utilisation == pytest.approx(5 / 6)
    assert run.mean_in_system == pytest.approx(6 / 6) == run.arrival_rate * run.mean_latency
    assert run.percentile(50) == 2.0
    with pytest.raises(ValueError, match="departures"):
        Q.QueueRun(arrivals=[0.0], departures=[1.0], services=[2.0])


def test_the_simulation_follows_lindleys_recursion_and_littles_law():
    run = Q.single_server(0.7, 1.0, requests=2000, seed=4)
    d = np.maximum.accumulate(run.arrivals)       # arrivals are increasing already
    start = np.empty_like(d)
    free = 0.0
    for i, (a, s) in enumerate(zip(d, run.services)):
        start[i] = max(free, a)
        free = start[i] + s
    assert np.allclose(run.departures, start + run.services)
    assert run.mean_in_system == pytest.approx(run.arrival_rate * run.mean_latency, rel=1e-12)


def test_twenty_seeds_agree_with_the_closed_forms():
    # rho = 0.8: mean 5, p99 23.03; the seed-to-seed spread of 20,000-request runs is a few per cent
    means = [Q.single_server(0.8, 1.0, seed=s).mean_latency for s in range(20)]
    p99 = [Q.single_server(0.8, 1.0, seed=s).percentile(99) for s in range(20)]
    assert np.mean(means) == pytest.approx(5.0, rel=0.05)
    assert np.mean(p99) == pytest.approx(math.log(100) * 5.0, rel=0.08)
    assert all(3.5 < p / m < 5.5 for p, m in zip(p99, means))      # ln 100 = 4.6 times the mean
