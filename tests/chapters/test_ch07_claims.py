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
    # "吞吐量不会在 N_c 之前走平……在 20 组任务上，走平的位置都在 N_c 之后约一成（6% 到 16%）";
    # "利用率‘在 N_c 之前都高于九成’并不总成立"
    early = 0
    for seed in range(20):
        g = skewed_tasks(32, spread=0.5, seed=seed)
        n_c, t_max = conflict_start(g), float(g.work.max()) / 10
        rows = device_sweep(g, range(1, 33))
        plateau = next(r.n_devices for r in rows if r.makespan <= t_max + 1e-9)
        assert 1.05 * n_c <= plateau <= 1.2 * n_c
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


def test_the_knee_lies_near_the_conflict_start_on_20_task_sets():
    # "20 组任务逐台扫描时，膝点都落在 N_c 附近（0.99 到 1.13 倍）"
    for seed in range(20):
        g = skewed_tasks(32, spread=0.5, seed=seed)
        knee = max(device_sweep(g, range(1, 33)), key=lambda r: r.speedup * r.efficiency)
        assert 0.95 <= knee.n_devices / conflict_start(g) <= 1.15


def test_halving_the_budget_or_the_service_time():
    # 7.5 try-it: rho <= 1 - ln(100) x service / budget, by hand: 1 - 4.605 x 0.1 = 0.54; 1 - 4.605/40 = 0.885
    assert 1 - math.log(100) * 0.010 / 0.100 == pytest.approx(0.5395, abs=1e-4)
    assert 1 - math.log(100) * 0.005 / 0.200 == pytest.approx(0.8849, abs=1e-4)
    for service, budget in ((0.010, 0.100), (0.005, 0.200)):
        rho = 1 - math.log(100) * service / budget
        assert Q.mm1_latency_quantile(rho / service, 1 / service, 0.99) == pytest.approx(budget)


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


def _overhead(n, allreduce=None, alpha=C.NETWORK_STEP_LATENCY):
    comm = 0.0 if allreduce is None else allreduce(n, 1e9, 10e9, alpha)
    return (n - 1) * 0.64 + n * comm


def test_isoefficiency_growth_of_the_three_overhead_models():
    # at the book's 14 us: "从 64 台到 1024 台，工作量约 ×17"; the N^2 term only overtakes the linear part at
    # N_x = (t_s + 2G/B) / (2 alpha) = 0.84 / 28e-6 = 30,000 ("约 3 万台"); at the exaggerated 1 ms: N_x = 420 and
    # "工作量就得 ×48"; halving-doubling stays nearly linear (N log N)
    def ratio(ar, alpha=C.NETWORK_STEP_LATENCY):
        return (F.isoefficiency_work(0.8, _overhead(1024, ar, alpha))
                / F.isoefficiency_work(0.8, _overhead(64, ar, alpha)))
    assert ratio(None) == pytest.approx(1023 / 63)
    assert 16.5 < ratio(C.ring_allreduce_time) < 17.5
    assert 16 < ratio(C.halving_doubling_allreduce_time) < 1.1 * 16.3
    assert 2.5 * 16 < ratio(C.ring_allreduce_time, 1e-3) < 3.2 * 16
    assert (0.64 + 0.2) / (2 * 14e-6) == pytest.approx(30_000) and (0.64 + 0.2) / 2e-3 == pytest.approx(420)
    # past N_x the ring's overhead grows like N^2: doubling N about quadruples the work at 14 us only far out
    far = F.isoefficiency_work(0.8, _overhead(2 ** 20, C.ring_allreduce_time)) / F.isoefficiency_work(
        0.8, _overhead(2 ** 19, C.ring_allreduce_time))
    assert 3.5 < far < 4
    # with that work the step's efficiency is exactly the target: T_N = t_s + (T_1 - t_s)/N + T_ring(N)
    for n in (2, 64, 1024):
        for alpha in (C.NETWORK_STEP_LATENCY, 1e-3):
            t1 = F.isoefficiency_work(0.8, _overhead(n, C.ring_allreduce_time, alpha))
            t_n = 0.64 + (t1 - 0.64) / n + C.ring_allreduce_time(n, 1e9, 10e9, alpha)
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


def test_the_small_gpu_matmul_is_mostly_launch_and_synchronise():
    # 7.9: the stored GPU time is wall time around a synchronise (README: "Timings are wall-clock ... around
    # torch.cuda.synchronize()"). 4096: "发射与同步的十几微秒还不到百分之一"; 256: "光是发射一个极小的核函数再同步
    # 就要十几微秒，运算量只有 1/64 的 64 阶乘法也要二十多微秒"; MFU = FLOPs / (wall x 67 TFLOP/s): 90% and 1.8%
    data = reading("h200")
    rows = {r["n"]: r for r in data["matmul"]["rows"] if r["dtype"] == "float64"}
    sync_s = data["launch"]["per_launch_with_sync_us"] * 1e-6
    assert 10e-6 < sync_s < 20e-6 and sync_s / rows[4096]["gpu_kernel_s"] < 0.01
    assert sync_s > 0.5 * rows[256]["gpu_kernel_s"]                  # at least half of the 256 wall time
    assert 20e-6 < rows[64]["gpu_kernel_s"] < rows[256]["gpu_kernel_s"] < 30e-6
    for n, share in ((4096, 0.902), (256, 0.018)):
        flops = 2 * n ** 3 / rows[n]["gpu_kernel_s"]                    # by hand, not the stored TFLOP/s
        assert flops / 67e12 == pytest.approx(share, abs=0.001)


def test_the_whole_matrix_library_call_beats_the_tiled_run():
    # 7.7 深入一点: torch.linalg.cholesky on 16 threads is faster than the 15-thread tiled run
    data = reading("h200_hetero")
    whole = reading("h200")["cholesky"]["n3072_b256"]["torch_cholesky_all_cpu_threads_s"]
    assert whole < data["hetero"]["cpu15"]["cpu_only"]["measured_s"]
