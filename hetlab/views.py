"""The book's interactive figures: one factory per widget, each returning an
:class:`~hetlab.widgets.Explorer` whose draw function only calls the library.

A chapter shows one with ``views.granularity().widget``; a test drives it with
``explorer.update(W=..., Os=...)`` at every control's ends and middle. :data:`ALL`
lists every factory with the chapter that uses it.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from . import formulas as F
from . import plotting as P
from . import schedulers as S
from . import simulators as sim
from .devices import identical, kitchen, phone_soc
from .widgets import Explorer, checkbox, dropdown, int_slider, slider
from .workloads import article_tasks, segmentation_model, skewed_tasks

__all__ = ["orchestration", "serial_vs_parallel", "parallelism_combo", "peak_compute", "granularity",
           "policies", "amdahl", "efficiency", "imbalance", "pipeline", "dag_balance", "serving", "training",
           "phone", "article_policies", "transfer_cost", "ALL"]


# --- chapter 1 -----------------------------------------------------------------------------------

@lru_cache(maxsize=256)
def _kitchen_schedule(policy: str, gpu_speed: float = 20.0):
    from .devices import Device

    devices = [Device(d.name, d.kind, gpu_speed if d.kind == "GPU" else d.speed) for d in kitchen()]
    return S.POLICIES[policy](article_tasks(), devices).validate()


def orchestration() -> Explorer:
    """Decompose, assign, orchestrate: the demo's dishes appear on the Gantt chart one by one."""
    def draw(ax, step: int, policy: str) -> str:
        s = _kitchen_schedule(policy)
        order = np.argsort(s.start, kind="stable")[:step]
        shown = np.zeros(len(s.graph), dtype=bool)
        shown[order] = True
        partial = _masked(s, shown)
        P.gantt(partial, ax, xmax=s.makespan, title=P.label(
            f"{policy}：已派出 {step}/8 道菜", f"{policy}: {step}/8 dishes dispatched"))
        phase = P.label("分解：8 道菜拆成独立任务", "decompose: 8 independent tasks") if step == 0 else (
            P.label("分配 + 编排：", "assign + orchestrate: ") + ", ".join(
                f"{s.graph.tasks[i].name}->{s.devices[s.device_of[i]].name}@{s.start[i]:.2f}" for i in order[-3:]))
        return phase

    return Explorer(draw, {"step": int_slider("step", 0, 8, 8),
                           "policy": dropdown("policy", ["article demo", "EFT", "LPT", "optimal"])},
                    play="step", figsize=(8, 2.8))


def _masked(s, shown):
    """A copy of schedule ``s`` keeping only the tasks in ``shown`` (for animations)."""
    from .schedule import Schedule
    from .tasks import TaskGraph

    keep = np.flatnonzero(shown)
    graph = TaskGraph([s.graph.tasks[i] for i in keep])
    return Schedule(graph, s.devices, s.device_of[keep], s.start[keep], s.end[keep], s.policy, s.log)


def serial_vs_parallel() -> Explorer:
    """Serial sum against parallel max for n equal-sized tasks on n devices (the 4x of chapter 1)."""
    def draw(ax, tasks: int, spread: float) -> str:
        graph = skewed_tasks(tasks, spread=spread, seed=1)
        devices = identical(tasks, speed=10.0)
        serial = S.serial(graph, devices).validate()
        parallel = S.eft(graph, devices).validate()
        times = S.cost_matrix(graph, devices)[:, 0]
        ax.bar(["serial"], [serial.makespan], color="#4C72B0")
        ax.bar([f"T{i}" for i in range(tasks)], times, color="#55A868")
        ax.axhline(parallel.makespan, color="crimson", ls="--", lw=1)
        ax.set_ylabel(P.label("时间", "time"))
        ax.set_title(P.label(f"串行 = 求和 {serial.makespan:.2f}，并行 = 最大值 {parallel.makespan:.2f}",
                             f"serial = sum {serial.makespan:.2f}, parallel = max {parallel.makespan:.2f}"))
        return f"T_serial = {serial.makespan:.2f}, T_parallel = {parallel.makespan:.2f}, " \
               f"speed-up = {parallel.speedup(serial):.2f}x"

    return Explorer(draw, {"tasks": int_slider("tasks", 1, 8, 4), "spread": slider("spread", 0.0, 1.0, 0.1, 0.0)},
                    figsize=(7, 3))


def parallelism_combo() -> Explorer:
    """Data x tensor x pipeline parallelism: how many devices a combination uses."""
    def draw(ax, data: int, tensor: int, pipeline: int) -> str:
        P.parallelism_grid(data, tensor, pipeline, ax)
        return f"devices = {data} x {tensor} x {pipeline} = {data * tensor * pipeline}"

    return Explorer(draw, {"data": int_slider("data", 1, 8, 2), "tensor": int_slider("tensor", 1, 4, 2),
                           "pipeline": int_slider("pipeline", 1, 4, 4)}, figsize=(8, 3.2))


# --- chapter 3 ------------------------------------------------------------------------------------

def peak_compute() -> Explorer:
    """P = N_cores x f x IPC for a CPU-like and a GPU-like chip, on a log axis (bars updated in place)."""
    art: dict = {}

    def draw(ax, cores: int, ghz: float, ipc: float) -> str:
        mine = F.peak_compute(cores, ghz * 1e9, ipc)
        if not art:
            names = ["EPYC 7742 (FP64)", "A100 (FP32)", P.label("你的芯片", "yours")]
            values = [F.peak_compute(64, 2.25e9, 16), F.peak_compute(6912, 1.41e9, 2), mine]
            art["bars"] = ax.barh(names, values, color=["#4C72B0", "#55A868", "#C44E52"])
            ax.set_xscale("log")
            ax.set_xlim(1e9, 1e15)
            ax.set_xlabel(P.label("峰值（次/秒，对数轴）", "peak ops/s (log)"))
            ax.set_title("P = N_cores × f × IPC")
        art["bars"][2].set_width(mine)
        return f"P = {cores} x {ghz:g} GHz x {ipc:g} = {mine:.3g} ops/s"

    return Explorer(draw, {"cores": int_slider("cores", 1, 8192, 64), "ghz": slider("GHz", 0.5, 5.0, 0.05, 2.25),
                           "ipc": slider("IPC", 0.5, 32.0, 0.5, 16.0, fmt=".1f")}, figsize=(7, 2.6), clear=False)


# --- chapter 4 ------------------------------------------------------------------------------------

def granularity() -> Explorer:
    """The U-curve T(N) = N Os + W/N; sliders for W and Os move the curve and N*.

    Drawn once, then updated in place (the heaviest redraw of the book otherwise)."""
    art: dict = {}

    def draw(ax, W: float, Os: float) -> str:
        n_star = F.optimal_tasks(W, Os)
        n = np.geomspace(1, max(10.0, 4 * n_star), 300)
        t_star = F.total_time(max(n_star, 1.0), W, Os)
        if not art:
            P.granularity_curve(W, Os, ax)
            art["total"], art["overhead"], art["work"], art["point"] = ax.lines[:4]
            art["note"] = ax.texts[-1]
        art["total"].set_data(n, F.total_time(n, W, Os))
        art["overhead"].set_data(n, n * Os)
        art["work"].set_data(n, W / n)
        art["point"].set_data([max(n_star, 1.0)], [t_star])
        art["note"].xy = (max(n_star, 1.0), t_star)
        art["note"].set_text(f"N* = {n_star:.1f}\nT = {t_star:.1f}")
        ax.set_xlim(1, n[-1])
        ax.set_ylim(0, min(float(F.total_time(1, W, Os)), 4 * t_star) * 1.05)
        ax.set_title(P.label(f"粒度 U 形曲线：W = {W:g}, Os = {Os:g}", f"Granularity U-curve: W = {W:g}, Os = {Os:g}"))
        return f"N* = sqrt(W/Os) = {n_star:.2f}, T(N*) = {F.total_time(max(n_star, 1.0), W, Os):.2f}"

    return Explorer(draw, {"W": slider("W", 100.0, 100000.0, 100.0, 10000.0, fmt=".0f"),
                           "Os": slider("Os", 0.1, 10.0, 0.1, 1.0, fmt=".1f")}, figsize=(7, 3.6), clear=False)


# --- chapter 5 ------------------------------------------------------------------------------------

def policies() -> Explorer:
    """Static vs dynamic vs work stealing on the kitchen: a policy dropdown and a task-count slider."""
    def draw(ax, policy: str, tasks: int, steal_latency: float) -> str:
        graph = skewed_tasks(tasks, spread=0.8, seed=7)
        devices = kitchen()
        options = {"steal_latency": steal_latency, "initial": "first"} if policy == "work stealing" else {}
        s = S.POLICIES[policy](graph, devices, **options).validate()
        base = S.serial(graph, devices, device="CPU")
        P.gantt(s, ax, show_names=tasks <= 16)
        text = f"{policy}: makespan {s.makespan:.2f}, speed-up {s.speedup(base):.2f}x, imbalance {s.imbalance:.2f}"
        if policy == "work stealing":
            text += f", steals {s.info['steals']} (failed {s.info['failed_steals']})"
        return text

    names = ["round-robin", "block", "by affinity", "earliest free", "EFT", "LPT", "work stealing"]
    return Explorer(draw, {"policy": dropdown("policy", names, "work stealing"),
                           "tasks": int_slider("tasks", 3, 60, 24),
                           "steal_latency": slider("steal latency", 0.0, 1.0, 0.05, 0.1)}, figsize=(8, 2.8))


# --- chapters 6 and 7 -----------------------------------------------------------------------------

def amdahl() -> Explorer:
    """Amdahl's law with p and N sliders, the ceiling 1/(1-p) and the chosen point marked."""
    def draw(ax, p: float, N: int) -> str:
        n = np.unique(np.round(np.geomspace(1, 4096, 160)))
        s = F.amdahl(p, N)
        ax.plot(n, F.amdahl(p, n), label=f"p = {p:.2f}")
        ax.plot(n, n, color="0.6", ls="--", lw=0.8, label=P.label("线性", "linear"))
        if p < 1:
            ax.axhline(F.amdahl_limit(p), color="crimson", ls=":", label=f"1/(1-p) = {F.amdahl_limit(p):.1f}")
        ax.plot([N], [s], "o", color="crimson")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.set_ylim(1, 4096)
        ax.set_xlabel(P.label("设备数 N", "devices N"))
        ax.set_ylabel(P.label("加速比 S", "speed-up S"))
        ax.legend(fontsize=8, loc="upper left")
        ax.set_title(P.label("Amdahl 定律", "Amdahl's law"))
        return f"S = 1/((1-p) + p/N) = {s:.3f}; ceiling 1/(1-p) = {F.amdahl_limit(p):.3f}"

    return Explorer(draw, {"p": slider("p", 0.0, 1.0, 0.01, 0.95), "N": int_slider("N", 1, 4096, 1024)},
                    figsize=(7, 3.6))


def efficiency() -> Explorer:
    """Efficiency E = S/N = 1/(N(1-p)+p) against N, with the chosen point marked."""
    def draw(ax, p: float, N: int) -> str:
        n = np.unique(np.round(np.geomspace(1, 4096, 160)))
        e = F.amdahl_efficiency(p, N)
        ax.plot(n, F.amdahl_efficiency(p, n))
        ax.plot([N], [e], "o", color="crimson")
        ax.set_xscale("log", base=2)
        ax.set_ylim(0, 1.05)
        ax.set_xlabel(P.label("设备数 N", "devices N"))
        ax.set_ylabel(P.label("效率 E", "efficiency E"))
        ax.set_title(P.label(f"p = {p:.2f} 时的并行效率", f"efficiency at p = {p:.2f}"))
        return f"S = {F.amdahl(p, N):.3f}, E = S/N = {e:.4f}"

    return Explorer(draw, {"p": slider("p", 0.0, 1.0, 0.01, 0.9), "N": int_slider("N", 1, 4096, 16)},
                    figsize=(7, 3.2))


def imbalance() -> Explorer:
    """Per-device loads of a policy, with W_max, W_avg and the imbalance."""
    def draw(ax, policy: str, tasks: int, spread: float) -> str:
        graph = skewed_tasks(tasks, spread=spread, seed=3)
        devices = identical(4, speed=10.0)
        s = S.POLICIES[policy](graph, devices).validate()
        ax.bar([d.name for d in devices], s.busy, color="#4C72B0")
        ax.axhline(s.busy.mean(), color="black", ls="--", lw=1, label="W_avg")
        ax.axhline(s.busy.max(), color="crimson", ls=":", lw=1, label="W_max")
        ax.set_ylabel(P.label("忙碌时间", "busy time"))
        ax.legend(fontsize=8)
        ax.set_title(P.label(f"{policy}：不均衡度 {s.imbalance:.3f}", f"{policy}: imbalance {s.imbalance:.3f}"))
        return f"W_max = {s.busy.max():.2f}, W_avg = {s.busy.mean():.2f}, imbalance = {s.imbalance:.3f}"

    return Explorer(draw, {"policy": dropdown("policy", ["block", "round-robin", "earliest free", "LPT"]),
                           "tasks": int_slider("tasks", 4, 64, 16),
                           "spread": slider("spread", 0.0, 1.5, 0.1, 0.8)}, figsize=(6, 3))


# --- chapter 8 ------------------------------------------------------------------------------------

def pipeline() -> Explorer:
    """Pipeline parallel timeline: stages, micro-batches, GPipe or 1F1B, and one slow stage."""
    def draw(ax, stages: int, micro_batches: int, method: str, slow: float) -> str:
        times = np.ones(stages)
        times[stages // 2] *= slow
        s = sim.pipeline_schedule(times, micro_batches, method=method).validate()
        P.pipeline_timeline(s, ax)
        formula = F.gpipe_bubble_fraction(stages, micro_batches)
        return (f"period max t_i = {F.pipeline_period(times):.2f}, bubble {s.info['bubble_fraction']:.3f} "
                f"(equal stages: (p-1)/(m+p-1) = {formula:.3f}), peak activations {max(s.info['peak_activations'])}")

    return Explorer(draw, {"stages": int_slider("stages", 1, 8, 4),
                           "micro_batches": int_slider("micro-batches", 1, 16, 8),
                           "method": dropdown("method", ["gpipe", "1f1b"]),
                           "slow": slider("slow stage x", 1.0, 3.0, 0.25, 1.0)}, figsize=(8, 3.2))


# --- chapter 9 ------------------------------------------------------------------------------------

@lru_cache(maxsize=32)
def _dag(n: int, seed: int):
    from .tasks import random_dag

    return random_dag(n, mean_degree=1.5, work=(1.0, 10.0), data=(0.0, 4.0), seed=seed)


def dag_balance() -> Explorer:
    """A random task graph on the kitchen: policies against the critical path."""
    def draw(ax, policy: str, tasks: int, seed: int) -> str:
        from .devices import Link
        from .tasks import critical_path

        graph = _dag(tasks, seed)
        devices = kitchen(link=Link(0.0, 10.0))
        s = S.POLICIES[policy](graph, devices).validate()
        length, path = critical_path(graph, devices)
        P.gantt(s, ax, show_names=tasks <= 20)
        ax.axvline(length, color="crimson", ls=":", lw=1)
        return (f"{policy}: makespan {s.makespan:.2f}; critical path {length:.2f} ({len(path)} tasks); "
                f"lower bound {S.lower_bound(graph, devices):.2f}; imbalance {s.imbalance:.2f}")

    names = ["round-robin", "earliest free", "EFT", "HEFT", "work stealing"]
    return Explorer(draw, {"policy": dropdown("policy", names, "HEFT"),
                           "tasks": int_slider("tasks", 5, 40, 16), "seed": int_slider("seed", 0, 9, 0)},
                    figsize=(8, 2.8))


# --- chapter 10 -----------------------------------------------------------------------------------

#: The serving scenario: 4 GPUs, 20 ms per batch plus 2 ms per request of relative size 1.
SERVING = dict(batch_overhead=0.02, per_request=0.002, max_wait=0.01)


@lru_cache(maxsize=32)
def serving_workload(rate: int, seed: int = 0):
    """30 s of bursty requests (bursts at 10x the calm rate, 5% of the time) and their sizes."""
    arrivals = sim.bursty_arrivals(rate, 30.0, burst_factor=10.0, burst_share=0.05, mean_burst=1.0, seed=seed)
    sizes = np.random.default_rng(seed + 1).lognormal(0.0, 0.5, arrivals.size)
    return arrivals, sizes


def serving() -> Explorer:
    """Dynamic batching under bursty load: latency distribution with and without batching.

    The CDF is drawn from 400 quantiles and updated in place."""
    art: dict = {}
    share = np.linspace(0, 1, 400)

    def draw(ax, rate: int, max_batch: int, steal: bool) -> str:
        arrivals, sizes = serving_workload(rate)
        r = sim.serve(arrivals, 4, max_batch=max_batch, steal=steal, sizes=sizes, **SERVING)
        lat = np.quantile(r.latency, share) * 1e3
        if not art:
            art["cdf"], = ax.plot(lat, share, color="#4C72B0")
            art["p99"] = ax.axvline(r.p99 * 1e3, color="crimson", ls=":", label="P99")
            ax.axvline(200, color="0.5", ls="--", lw=0.8, label="200 ms")
            ax.set_xscale("log")
            ax.set_xlim(10, 3e4)
            ax.set_ylim(0, 1.02)
            ax.set_xlabel(P.label("延迟（毫秒，对数轴）", "latency (ms, log)"))
            ax.set_ylabel(P.label("累计比例", "cumulative share"))
            art["legend"] = ax.legend(fontsize=8, loc="lower right")
        art["cdf"].set_data(lat, share)
        art["p99"].set_xdata([r.p99 * 1e3, r.p99 * 1e3])
        art["legend"].get_texts()[0].set_text(f"P99 {r.p99 * 1e3:.0f} ms")
        ax.set_title(P.label(f"{len(arrivals)} 个请求，4 张 GPU，最大批 {max_batch}",
                             f"{len(arrivals)} requests, 4 GPUs, max batch {max_batch}"))
        return r.summary()

    return Explorer(draw, {"rate": int_slider("calm rate /s", 10, 150, 60, step=10),
                           "max_batch": int_slider("max batch", 1, 32, 16), "steal": checkbox("steal", True)},
                    figsize=(7, 3.2), clear=False)


def training() -> Explorer:
    """Data x pipeline parallel training throughput against device count (a 70B-class job)."""
    def draw(ax, data: int, stages: int, micro_batches: int) -> str:
        args = dict(samples_per_step=1024, compute_time=6000.0, grad_size=140.0, bandwidth=25.0, latency=1e-4,
                    overlap=0.8)
        dps = 2 ** np.arange(0, 7)
        _, curve = sim.training_throughput(data_parallel=dps, pipeline_stages=stages, micro_batches=micro_batches,
                                           **args)
        _, point = sim.training_throughput(data_parallel=data, pipeline_stages=stages, micro_batches=micro_batches,
                                           **args)
        ax.plot(dps * stages, curve, "o-", label=P.label(f"{stages} 段流水线", f"{stages} stages"))
        ax.plot(dps * stages, dps * stages, color="0.6", ls="--", lw=0.8, label=P.label("线性", "linear"))
        ax.plot([data * stages], [point], "o", color="crimson", ms=9)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.set_xlabel(P.label("GPU 数", "GPUs"))
        ax.set_ylabel(P.label("相对单卡加速", "speed-up over one GPU"))
        ax.legend(fontsize=8)
        bubble = F.gpipe_bubble_fraction(stages, micro_batches)
        return f"{data} x {stages} = {data * stages} GPUs: speed-up {point:.1f}x, bubble {bubble:.1%}"

    return Explorer(draw, {"data": int_slider("data parallel", 1, 64, 32), "stages": int_slider("stages", 1, 16, 16),
                           "micro_batches": int_slider("micro-batches", 1, 64, 16)}, figsize=(7, 3.2))


@lru_cache(maxsize=16)
def _phone(policy: str):
    graph, devices = segmentation_model(), phone_soc()
    return S.POLICIES[policy](graph, devices).validate(), S.serial(graph, devices, device="CPU")


def phone() -> Explorer:
    """A 120-operator segmentation model on a phone SoC: where each policy puts the operators."""
    def draw(ax, policy: str) -> str:
        s, cpu = _phone(policy)
        P.gantt(s, ax, show_names=False, title=P.label(f"{policy}：每帧 {s.makespan:.1f} ms",
                                                        f"{policy}: {s.makespan:.1f} ms per frame"))
        ax.set_xlabel(P.label("时间（毫秒）", "time (ms)"))
        power = s.energy / s.makespan
        return (f"{policy}: {1000 / s.makespan:.1f} fps ({s.speedup(cpu):.1f}x CPU-only), "
                f"average power {power:.2f} W (CPU-only {cpu.energy / cpu.makespan:.2f} W)")

    return Explorer(draw, {"policy": dropdown("policy", ["serial", "by affinity", "EFT", "HEFT", "work stealing"],
                                              "HEFT")}, figsize=(8, 2.4))


# --- chapters 11 and 12 ---------------------------------------------------------------------------

def article_policies() -> Explorer:
    """The article's eight dishes under each policy, with the gap to the optimum; a slider
    changes the GPU cook's speed (the article's is 20)."""
    def draw(ax, policy: str, gpu_speed: float) -> str:
        s, best = _kitchen_schedule(policy, gpu_speed), _kitchen_schedule("optimal", gpu_speed)
        P.gantt(s, ax, xmax=_kitchen_schedule("round-robin", 5.0).makespan)
        return f"{policy}, GPU speed {gpu_speed:g}: makespan {s.makespan:.3f}, optimum {best.makespan:.3f}, " \
               f"gap {(s.makespan - best.makespan) / best.makespan:.1%}"

    names = ["article demo", "round-robin", "by affinity", "EFT", "LPT", "work stealing", "HEFT", "optimal"]
    return Explorer(draw, {"policy": dropdown("policy", names), "gpu_speed": int_slider("GPU speed", 5, 40, 20)},
                    figsize=(8, 2.6))


def transfer_cost() -> Explorer:
    """CPU vs GPU for one matrix multiply of size n, counting the PCIe copies both ways."""
    def draw(ax, log2_n: float) -> str:
        sizes = 2.0 ** np.arange(4, 14.01, 0.25)
        n = 2.0 ** log2_n
        cpu, gpu, copy = F.matmul_offload_ms(sizes)
        ax.plot(sizes, cpu, label="CPU")
        ax.plot(sizes, gpu, label=P.label("GPU（含拷贝）", "GPU incl. copies"))
        ax.plot(sizes, copy, ls=":", label=P.label("拷贝", "copies"))
        ax.axvline(n, color="crimson", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel(P.label("矩阵边长 n", "matrix size n"))
        ax.set_ylabel(P.label("时间（毫秒）", "time (ms)"))
        ax.legend(fontsize=8)
        c, g, k = F.matmul_offload_ms(n)
        winner = "GPU" if g < c else "CPU"
        return f"n = {n:.0f}: CPU {c:.4f} ms, GPU {g:.4f} ms (of which copies {k:.4f} ms): {winner} wins"

    return Explorer(draw, {"log2_n": slider("log2 n", 4.0, 13.0, 0.25, 6.0)}, figsize=(7, 3.2))


#: (chapter, factory) for every widget of the book.
ALL = [(1, orchestration), (1, serial_vs_parallel), (1, parallelism_combo), (2, serial_vs_parallel),
       (3, peak_compute), (4, granularity), (5, policies), (6, amdahl), (7, efficiency), (7, imbalance),
       (8, pipeline), (9, dag_balance), (10, serving), (10, training), (10, phone), (11, article_policies),
       (12, transfer_cost), (13, amdahl)]
