"""Chapter 13 (interview questions): the whiteboard question "why does adding devices stop helping?"."""
from __future__ import annotations

import numpy as np

from .. import plotting as P
from ..formulas import amdahl, amdahl_limit
from ..strong_scaling import best_device_count, speedup_with_allreduce
from ..widgets import Explorer, slider

__all__ = ['scaling_whiteboard', 'scaling_readout']

_N = np.unique(np.geomspace(1, 1024, 120).round().astype(int))


def _link(grad_gb: float, bandwidth_gbs: float, latency_us: float) -> dict:
    return {"grad_bytes": grad_gb * 1e9, "bandwidth": bandwidth_gbs * 1e9, "latency": latency_us * 1e-6}


def scaling_readout(p: float, grad_gb: float, bandwidth_gbs: float, latency_us: float = 20.0) -> str:
    """The widget's readout: Amdahl's ceiling, and the best device count (and its speed-up) when a
    one-second step ends with a ring all-reduce of ``grad_gb`` GB over ``bandwidth_gbs`` GB/s links
    with ``latency_us`` microseconds per hop (see :mod:`hetlab.strong_scaling`)."""
    link = _link(grad_gb, bandwidth_gbs, latency_us)
    best = best_device_count(p, max_devices=1024, **link)
    top = speedup_with_allreduce(p, best, **link)
    return (f"p = {p:.3f}：Amdahl 上限 {amdahl_limit(p):.1f}x；梯度 {grad_gb:g} GB、带宽 {bandwidth_gbs:g} GB/s、"
            f"每跳延迟 {latency_us:g} µs 时，最佳设备数 {best}，加速比 {top:.2f}x；用 1024 台只有 "
            f"{speedup_with_allreduce(p, 1024, **link):.2f}x")


def scaling_whiteboard() -> Explorer:
    """Amdahl's curve beside the same curve with a ring all-reduce per step (one-second step on one
    device); the dot marks the best device count."""
    def draw(ax, p: float, grad_gb: float, bandwidth_gbs: float, latency_us: float) -> str:
        link = _link(grad_gb, bandwidth_gbs, latency_us)
        ax.plot(_N, amdahl(p, _N), color="#4C72B0", label=P.label("Amdahl（无通信）", "Amdahl (no communication)"))
        ax.plot(_N, speedup_with_allreduce(p, _N, **link), color="#C44E52",
                label=P.label("加上环形全归约", "with ring all-reduce"))
        best = best_device_count(p, max_devices=1024, **link)
        ax.plot([best], [speedup_with_allreduce(p, best, **link)], "o", color="#C44E52")
        ax.set_xscale("log", base=2)
        ax.set_xlim(1, 1024)
        ax.set_ylim(0, max(2.0, min(amdahl_limit(p), 1024) * 1.05))
        ax.set_xlabel(P.label("设备数 N", "devices N"))
        ax.set_ylabel(P.label("加速比", "speed-up"))
        ax.set_title(P.label("加卡为什么会停止变快", "why adding devices stops helping"))
        ax.legend(loc="upper left", fontsize=8)
        return scaling_readout(p, grad_gb, bandwidth_gbs, latency_us)

    return Explorer(draw, {"p": slider("可并行比例 p", 0.5, 0.999, 0.001, 0.95, fmt=".3f"),
                           "grad_gb": slider("梯度大小 GB", 0.0, 4.0, 0.1, 0.5, fmt=".1f"),
                           "bandwidth_gbs": slider("带宽 GB/s", 5.0, 100.0, 5.0, 25.0, fmt=".0f"),
                           "latency_us": slider("每跳延迟 µs", 0.0, 100.0, 5.0, 20.0, fmt=".0f")},
                    figsize=(7, 3.2))


#: (chapter, factory) for each widget of this module.
VIEWS = [(13, scaling_whiteboard)]
