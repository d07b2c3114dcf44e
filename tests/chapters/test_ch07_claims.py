"""Chapter 7's claims from seeded simulations, closed forms and stored readings (issue 17, rule 4).

Each test quotes the sentence of chapters/07-metrics.ipynb it guards. Expected values come from the formulas
(LPT's lower bounds, M/M/1, the lock's closed forms, Grama's overhead function), 20 task sets or seeds, and the
stored H200 readings; none is copied from the chapter's printed outputs.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from hetlab import communication as C
from hetlab import formulas as F
from hetlab import schedulers as S
from hetlab.devices import Device
from hetlab.metrics import conflict_start, device_sweep, hetero_metrics
from hetlab.models import queueing as Q
from hetlab.models import sync
from hetlab.real.readings import case_of, reading
from hetlab.workloads import skewed_tasks


def test_the_conflict_start_predicts_the_plateau_on_20_task_sets():
    # "吞吐量总是在 N_c 之后才走平，晚一到两成"; "利用率‘在 N_c 之前都高于九成’并不总成立"
    early = 0
    for seed in range(20):
        g = skewed_tasks(32, spread=0.5, seed=seed)
        n_c, t_max = conflict_start(g), float(g.work.max()) / 10
        rows = device_sweep(g, range(1, 33))
        plateau = next(r.n_devices for r in rows if r.makespan <= t_max + 1e-9)
        assert n_c <= plateau <= 1.25 * n_c
        # below N_c the makespan is never shorter than T_1 / N (the first lower bound)
        assert all(r.makespan >= F.serial_time(g.work) / 10 / r.n_devices - 1e-9 for r in rows)
        early += min(r.utilisation for r in rows if r.n_devices <= n_c) < 0.9
    assert 0 < early < 20


def test_the_knee_of_the_example_is_its_conflict_start():
    # "膝点落在 12 台，正好是冲突起点"
    g = skewed_tasks(32, spread=0.5, seed=1)
    rows = device_sweep(g, [1, 2, 4, 8, 12, 16, 24, 32])
    knee = max(rows, key=lambda r: r.speedup * r.efficiency)
    assert knee.n_devices == round(conflict_start(g)) == 12


def test_mm1_latency_and_littles_law_on_20_seeds():
    # "利用率从一半升到九成，平均延迟变成五倍，P99 延迟也一样；再升到 0.95，又翻一倍"
    assert Q.mm1_latency(0.9, 1.0) / Q.mm1_latency(0.5, 1.0) == pytest.approx(5.0)
    assert Q.mm1_latency(0.95, 1.0) / Q.mm1_latency(0.9, 1.0) == pytest.approx(2.0)
    runs = [Q.single_server(0.8, 1.0, seed=s) for s in range(20)]
    assert np.mean([r.mean_latency for r in runs]) == pytest.approx(5.0, rel=0.05)
    for r in runs:       # Little's law holds exactly on each run with the run's own arrival rate
        assert r.mean_in_system == pytest.approx(r.arrival_rate * r.mean_latency, rel=1e-12)
    # the figure's spread: P99 varies far more between seeds than the mean (relative to itself)
    hi = [Q.single_server(0.9, 1.0, seed=s) for s in range(20)]
    p99, mean = np.array([r.percentile(99) for r in hi]), np.array([r.mean_latency for r in hi])
    assert p99.std() / p99.mean() > mean.std() / mean.mean() * 0.8


def test_a_latency_budget_is_a_utilisation_ceiling():
    # 10 ms service, P99 <= 200 ms: ln(100) x 10 ms / (1 - rho) <= 200 ms -> rho <= 0.77
    rho = 1 - math.log(100) * 0.010 / 0.200
    assert rho == pytest.approx(0.7697, abs=1e-4)
    assert Q.mm1_latency_quantile(rho / 0.010, 100.0, 0.99) == pytest.approx(0.200)
    assert 1 - 0.99 ** 100 == pytest.approx(0.634, abs=1e-3)          # fan-out to 100 servers


def _overhead(n, allreduce=None):
    comm = 0.0 if allreduce is None else allreduce(n, 1e9, 10e9, 1e-3)
    return (n - 1) * 0.64 + n * comm


def test_isoefficiency_growth_of_the_three_overhead_models():
    # fixed serial time: work x16 for devices x16; ring: much faster (the alpha term is N^2); halving-doubling:
    # nearly linear (N log N)
    ratio = {name: F.isoefficiency_work(0.8, _overhead(1024, ar)) / F.isoefficiency_work(0.8, _overhead(64, ar))
             for name, ar in (("serial", None), ("ring", C.ring_allreduce_time),
                              ("hd", C.halving_doubling_allreduce_time))}
    assert ratio["serial"] == pytest.approx(1023 / 63)
    assert ratio["ring"] > 2.5 * 16 and 16 < ratio["hd"] < 1.1 * 16.3
    # with that work the step's efficiency is exactly the target: T_N = t_s + (T_1 - t_s)/N + T_ring(N)
    for n in (2, 64, 1024):
        t1 = F.isoefficiency_work(0.8, _overhead(n, C.ring_allreduce_time))
        t_n = 0.64 + (t1 - 0.64) / n + C.ring_allreduce_time(n, 1e9, 10e9, 1e-3)
        assert t1 / (n * t_n) == pytest.approx(0.8)


def test_karp_flatt_of_the_strong_scaled_lock_rises_and_follows_the_closed_forms():
    # "锁争用的 e 在 10 台以内很小、但一直在涨，超过 10 台后跳了上去，并向 h/(c+h) = 0.1 靠近"
    k, c, h = 480, 0.9, 0.1
    e = []
    for n in (2, 4, 8, 12, 16, 32):
        t_n = sync.lock_run(n, k // n, compute=c, critical=h, noise=0.0).makespan
        closed = k * h + c if n > (c + h) / h else (k / n) * (c + h) + (n - 1) * h
        assert t_n == pytest.approx(closed)
        e.append(F.karp_flatt(k * (c + h) / t_n, n))
        assert (n * t_n - k * (c + h)) / ((n - 1) * k * (c + h)) == pytest.approx(e[-1])   # e = T_o/((N-1)T_1)
    assert e == sorted(e) and e[2] < 0.01 < e[3] and e[-1] < h / (c + h)
    assert e[0] == pytest.approx(2 * h / (k * (c + h)))


def test_the_measured_cholesky_overhead_lies_outside_the_task_graph():
    # "实测的 e 大了一个数量级"; "实测的 e 随 N 下降"; T_o grows but slower than N - 1
    data = reading("h200_hetero")
    case, workers = case_of(data)
    graph = case.graph(case.devices(1, gpu=False))
    t1 = sum(t.times["CPU0"] for t in graph.tasks)
    e_real, e_model, t_o = [], [], []
    for w in workers:
        measured = data["hetero"][f"cpu{w}"]["cpu_only"]["measured_s"]
        devices = case.devices(w, gpu=False)
        model = S.heft(case.graph(devices), devices).makespan
        assert model == pytest.approx(data["hetero"][f"cpu{w}"]["cpu_only"]["simulated_s"])
        e_real.append(F.karp_flatt(t1 / measured, w))
        e_model.append(F.karp_flatt(t1 / model, w))
        t_o.append(F.overhead_time(t1, measured, w))
        assert t1 / measured < 0.6 * t1 / model            # the model's speed-up is about twice the measured
    assert all(r > 5 * m for r, m in zip(e_real, e_model))
    assert e_real == sorted(e_real, reverse=True) and e_model == sorted(e_model)
    assert t_o == sorted(t_o)


def test_capacity_efficiency_of_the_mixed_machine_and_the_measured_matmul():
    mixed = [Device("GPU", "GPU", 10.0)] + [Device(f"CPU{i}", "CPU", 2.0) for i in range(4)]
    m = hetero_metrics(skewed_tasks(20, spread=0.5, seed=1), mixed, policy=S.lpt)
    assert m.capacity == pytest.approx(1.8)
    assert m.weighted_efficiency == pytest.approx(m.speed_weighted_utilisation)
    assert m.naive_efficiency_slowest > 1 > m.weighted_efficiency > m.utilisation
    row = next(r for r in reading("h200")["matmul"]["rows"] if r["dtype"] == "float64" and r["n"] == 4096)
    capacity = 1 + row["cpu_gflops"] / 1e3 / row["gpu_tflops"]
    assert 1.0 < capacity < 1.02                         # "最多只有一个多百分点"
    assert row["cpu_s"] / row["gpu_kernel_s"] > 50       # "GPU 快了几十倍"
