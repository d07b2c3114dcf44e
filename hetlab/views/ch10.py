"""Chapter 10 (AI scenarios): serving, training, phone."""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from .. import formulas as F
from .. import plotting as P
from .. import schedulers as S
from .. import simulators as sim
from ..devices import phone_soc
from ..widgets import Explorer, checkbox, dropdown, int_slider
from ..workloads import segmentation_model

__all__ = ['serving', 'training', 'phone', 'serving_workload', 'SERVING']


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


#: (chapter, factory) for each widget of this module.
VIEWS = [(10, serving), (10, training), (10, phone)]
