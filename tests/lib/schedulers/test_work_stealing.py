"""hetlab.schedulers.work_stealing: randomised work stealing (Blumofe & Leiserson 1999) as a discrete-event
simulation, its steal log, and equality with the straightforward simulation it replaced (issue 19)."""
import heapq
import random
from collections import deque

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from properties.strategies import devices_strategy, graph_strategy

from hetlab import schedulers as S
from hetlab.devices import Device, Link, identical, kitchen
from hetlab.tasks import Task, independent_tasks, random_dag


def test_work_stealing_balances_a_skewed_start_and_logs_each_steal():
    graph, devices = independent_tasks([1.0] * 40), identical(4)
    s = S.work_stealing(graph, devices, steal_latency=0.1, initial="first", seed=3).validate()
    assert s.info["steals"] == sum(1 for e in s.log if e.task is not None) > 0
    for event in s.log:
        if event.task is not None:
            assert s.placement(event.task).device == event.thief
            assert event.victim == "D0"
            assert s.placement(event.task).start >= event.time - 1e-12
    assert s.makespan < 40 / 2   # far better than D0 alone


def test_work_stealing_needs_no_steals_when_already_balanced():
    s = S.work_stealing(independent_tasks([1.0] * 8), identical(4), steal_latency=0.5)
    assert s.info["steals"] == 0 and s.makespan == 2


def test_work_stealing_is_deterministic_given_a_seed():
    graph = independent_tasks(np.arange(1, 61) % 7 + 1.0)
    runs = [S.work_stealing(graph, kitchen(), steal_latency=0.05, initial="first", seed=k) for k in (1, 1, 2)]
    assert np.array_equal(runs[0].device_of, runs[1].device_of) and runs[0].log == runs[1].log
    assert runs[0].log != runs[2].log


@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(graph_strategy(), devices_strategy(), st.sampled_from([0.0, 0.3]), st.sampled_from(["round_robin", "first"]))
def test_work_stealing_on_task_graphs_validates(graph, devices, latency, initial):
    S.work_stealing(graph, devices, steal_latency=latency, initial=initial).validate()


# --- issue 19: the faster simulation gives the same results ---------------------------------------------

def reference_work_stealing(graph, devices, steal_latency=0.0, seed=0, initial="round_robin"):
    """The simulation as it was before issue 19 (one StealEvent per attempt, a randrange per victim), rewritten
    only to take its inputs from public functions. Returns (device_of, start, end, log tuples, events)."""
    from hetlab.tasks import cost_matrix

    g, n, m = graph, len(graph.tasks), len(devices)
    costs = cost_matrix(graph, devices).tolist()
    rng = random.Random(seed)
    names = [d.name for d in devices]
    deques = [deque() for _ in range(m)]
    roots = [i for i in g.order if not g.preds[i]]
    for k, i in enumerate(roots):
        deques[{"round_robin": k % m, "block": (k * m) // max(len(roots), 1), "first": 0}[initial]].append(i)
    queued = len(roots)
    device_of, start, end = [0] * n, [0.0] * n, [0.0] * n
    missing = [len(p) for p in g.preds]
    latency = np.array([[0.0 if a is b else max(a.link.latency, b.link.latency) for b in devices] for a in devices])
    inverse = np.array([[0.0 if a is b else 1.0 / min(a.link.bandwidth, b.link.bandwidth) for b in devices]
                        for a in devices])
    log, events, seq, parked = [], [], 0, []
    for j in range(m):
        events.append((0.0, seq, 0, j, -1))
        seq += 1
    n_events = 0

    def run(i, j, t):
        nonlocal seq
        ready = t
        for p, data in zip(g.preds[i], g.pred_data[i]):
            ready = max(ready, end[p] + latency[device_of[p], j] + data * inverse[device_of[p], j])
        device_of[i], start[i] = j, ready
        end[i] = ready + costs[i][j]
        heapq.heappush(events, (end[i], seq, 1, j, i))
        seq += 1

    while events:
        t, _, kind, j, payload = heapq.heappop(events)
        n_events += 1
        if kind == 1:
            for k in g.succs[payload]:
                missing[k] -= 1
                if missing[k] == 0:
                    deques[j].append(k)
                    queued += 1
            while parked and queued:
                heapq.heappush(events, (t, seq, 0, parked.pop(), -1))
                seq += 1
        elif kind == 2:
            if deques[payload]:
                i = deques[payload].popleft()
                queued -= 1
                log.append((t, names[j], names[payload], g.tasks[i].name))
                run(i, j, t)
                continue
            log.append((t, names[j], names[payload], None))
        if deques[j]:
            queued -= 1
            run(deques[j].pop(), j, t)
        elif queued and m > 1:
            victim = rng.randrange(m - 1)
            victim += victim >= j
            heapq.heappush(events, (t + steal_latency, seq, 2, j, victim))
            seq += 1
        else:
            parked.append(j)
    return np.array(device_of), np.array(start), np.array(end), log, n_events


def _assert_same(graph, devices, **options):
    s = S.work_stealing(graph, devices, **options)
    device_of, start, end, log, events = reference_work_stealing(graph, devices, **options)
    assert np.array_equal(s.device_of, device_of)
    assert np.array_equal(s.start, start) and np.array_equal(s.end, end)
    assert [(e.time, e.thief, e.victim, e.task) for e in s.log] == log
    steals = sum(1 for entry in log if entry[3] is not None)
    assert s.info == {"steals": steals, "failed_steals": len(log) - steals, "events": events}
    return s


@pytest.mark.parametrize("seed", range(40))
def test_equal_to_the_reference_on_random_instances(seed):
    # 40 seeds x graphs, devices, latencies and initial deals; 1 to 17 devices (victims drawn from 0 .. 16).
    # Every fourth instance has operation kinds on devices with affinities (run times from the cost matrix).
    r = random.Random(seed)
    n = r.randint(1, 120)
    ops = ["matmul", "conv", "control"] if seed % 4 == 3 else None
    graph = random_dag(n, mean_degree=r.choice([0.0, 0.5, 2.0]), data=(0.0, 3.0), ops=ops, seed=seed) \
        if seed % 3 else independent_tasks([r.choice([0.0, 1.0, r.uniform(0, 5)]) for _ in range(n)])
    m = r.randint(1, 17)
    devices = [kitchen(link=Link(0.1, 10.0)), identical(m),
               [Device(f"P{j}", speed=r.choice([1.0, 2.0, 3.0]), link=Link(0.05, 4.0)) for j in range(m)],
               kitchen(affinity=True, link=Link(0.1, 10.0))][seed % 4]
    for initial in ("round_robin", "block", "first"):
        _assert_same(graph, devices, steal_latency=r.choice([0.0, 0.01, 0.3]), seed=r.randrange(100),
                     initial=initial)


@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(graph_strategy(), devices_strategy(), st.sampled_from([0.0, 0.3]), st.integers(0, 5))
def test_equal_to_the_reference_on_hypothesis_instances(graph, devices, latency, seed):
    _assert_same(graph, devices, steal_latency=latency, seed=seed, initial="first")


def test_the_benchmark_instance_is_unchanged():
    # benchmarks/bench_work_stealing.py, scaled down: 5,000 tasks on 16 devices, all dealt to the first.
    graph = independent_tasks(np.random.default_rng(0).lognormal(0, 1, 5000))
    s = _assert_same(graph, identical(16), steal_latency=0.01, initial="first", seed=0)
    assert s.info["failed_steals"] > 10 * s.info["steals"] > 0


def test_the_log_reads_like_a_tuple_of_steal_events():
    s = S.work_stealing(independent_tasks([1.0] * 12), identical(3), steal_latency=0.25, initial="first", seed=1)
    events = tuple(s.log)
    assert len(s.log) == len(events) > 0 and all(isinstance(e, S.StealEvent) for e in events)
    assert s.log == events and events == s.log and s.log[0] == events[0] and s.log[-1] == events[-1]
    assert s.log[1:3] == events[1:3] and list(reversed(s.log)) == list(reversed(events))
    assert s.log != events[:-1] and s.log != "not a log"
    again = S.work_stealing(independent_tasks([1.0] * 12), identical(3), steal_latency=0.25, initial="first", seed=1)
    assert again.log == s.log
    with pytest.raises(TypeError):
        hash(s.log)


def test_ten_thousand_devices_cost_nothing_per_pair_of_devices():
    # The largest machine the library allows: three tasks dealt round-robin start at 0 on D0000..D0002 and end
    # at 1; the 9,997 idle devices wait. Nothing of size devices x devices is built (1e8 entries would be 800 MB).
    s = S.work_stealing(independent_tasks([1.0] * 3), identical(10_000), steal_latency=1.0)
    assert s.makespan == 1.0 and s.info == {"steals": 0, "failed_steals": 0, "events": 10_003}


def test_options_are_checked():
    g, d = independent_tasks([1.0, 2.0]), identical(2)
    with pytest.raises(TypeError, match="seed must be an integer"):
        S.work_stealing(g, d, seed=1.5)
    with pytest.raises(ValueError, match="seed must be in"):
        S.work_stealing(g, d, seed=-1)
    with pytest.raises(ValueError, match="steal_latency must be in"):
        S.work_stealing([Task("a")], identical(2), steal_latency=-1)


def test_retry_keeps_an_idle_device_stealing_until_the_run_ends():
    # By hand: one task of 1 on D0, D1 idle with steal latency 0.3. Without retry D1 waits (no attempt); with retry
    # its attempts resolve at 0.3, 0.6, 0.9 and 1.2, the last one still under way when the task ends at 1.
    g, two = independent_tasks([1.0]), identical(2)
    waiting = S.work_stealing(g, two, steal_latency=0.3, initial="first")
    assert waiting.makespan == 1.0 and len(waiting.log) == 0
    busy = S.work_stealing(g, two, steal_latency=0.3, initial="first", retry=True)
    assert busy.makespan == 1.0 and [e.task for e in busy.log] == [None] * 4
    assert [e.time for e in busy.log] == pytest.approx([0.3, 0.6, 0.9, 1.2])


@pytest.mark.parametrize("seed", range(6))
def test_with_retry_every_device_either_works_or_steals(seed):
    # Blumofe & Leiserson's accounting: each of the P devices is, at every moment up to the makespan, running a
    # task or making a steal attempt, so P * makespan = total run time + stealing time up to the makespan (an
    # attempt resolved at t began at t - latency). Random DAGs on identical devices with free transfers.
    g, four, latency = random_dag(30, seed=seed), identical(4), 0.05
    s = S.work_stealing(g, four, steal_latency=latency, initial="first", seed=seed, retry=True).validate()
    stealing = sum(min(latency, s.makespan - (e.time - latency)) for e in s.log)
    assert 4 * s.makespan == pytest.approx(float(s.busy.sum()) + stealing)


def test_retry_is_checked():
    g, d = independent_tasks([1.0, 2.0]), identical(2)
    with pytest.raises(TypeError, match="retry"):
        S.work_stealing(g, d, steal_latency=0.1, retry=1)
    with pytest.raises(ValueError, match="retry=True needs steal_latency > 0"):
        S.work_stealing(g, d, retry=True)
    with pytest.raises(ValueError, match="steal_latency=1e-09"):     # billions of attempts: refused up front
        S.work_stealing(g, d, steal_latency=1e-9, retry=True)
