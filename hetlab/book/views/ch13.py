"""Chapter 13 (interview questions): the whiteboard question "why does adding devices stop helping?"."""
from __future__ import annotations

import numpy as np

from hetlab import plotting as P
from hetlab._validate import check_nonnegative, check_positive, check_real, check_sequence
from hetlab.communication import best_device_count, efficiency_knee, speedup_with_allreduce
from hetlab.formulas import amdahl, amdahl_limit
from hetlab.widgets import Explorer, slider

__all__ = ['scaling_whiteboard', 'scaling_readout', 'whiteboard_figure']

_N = np.unique(np.geomspace(1, 1024, 120).round().astype(int))


def _link(grad_gb: float, bandwidth_gbs: float, latency_us: float) -> dict:
    return {"grad_bytes": grad_gb * 1e9, "bandwidth": bandwidth_gbs * 1e9, "latency": latency_us * 1e-6}


def scaling_readout(p: float, grad_gb: float, bandwidth_gbs: float, latency_us: float = 20.0,
                    max_devices: int = 1024) -> str:
    """The widget's readout: Amdahl's ceiling, the device count with the highest speed-up (and that
    speed-up) when a one-second step ends with a ring all-reduce of ``grad_gb`` GB over
    ``bandwidth_gbs`` GB/s links with ``latency_us`` microseconds per hop (see
    :mod:`hetlab.communication`), the largest count that still has parallel efficiency >= 50 %, and
    the speed-up at ``max_devices``. At the range edges it says so: when the best count is the cap,
    more devices would still help; when it is 1, the communication outweighs the parallel part."""
    link = _link(grad_gb, bandwidth_gbs, latency_us)
    best = best_device_count(p, max_devices=max_devices, **link)
    top = speedup_with_allreduce(p, best, **link)
    knee = efficiency_knee(p, min_efficiency=0.5, max_devices=max_devices, **link)
    head = (f"p = {p:.3f}：Amdahl 上限 {amdahl_limit(p):.1f}x；梯度 {grad_gb:g} GB、带宽 {bandwidth_gbs:g} GB/s、"
            f"每跳延迟 {latency_us:g} µs 时，")
    if best == max_devices:
        return (head + f"最佳设备数 ≥ {max_devices}（已到滑块上限，再加卡仍会变快），{max_devices} 台时加速比 "
                f"{top:.2f}x；效率不低于 50% 的最多 {knee} 台")
    if best == 1:
        return (head + f"最佳设备数 1：通信比省下的计算时间还长，加卡只会更慢（{max_devices} 台只有 "
                f"{speedup_with_allreduce(p, max_devices, **link):.2f}x）")
    return (head + f"最佳设备数 {best}，加速比 {top:.2f}x（效率 {top / best:.0%}）；效率不低于 50% 的最多 "
            f"{knee} 台（{speedup_with_allreduce(p, knee, **link):.2f}x）；用 {max_devices} 台只有 "
            f"{speedup_with_allreduce(p, max_devices, **link):.2f}x")


def scaling_whiteboard() -> Explorer:
    """Amdahl's curve beside the same curve with a ring all-reduce per step (one-second step on one
    device); the dot marks the best device count."""
    def draw(ax, p: float, grad_gb: float, bandwidth_gbs: float, latency_us: float) -> str:
        link = _link(grad_gb, bandwidth_gbs, latency_us)
        ax.plot(_N, amdahl(p, _N), color="#4C72B0", label=P.label("Amdahl（无通信）", "Amdahl (no communication)"))
        ax.plot(_N, speedup_with_allreduce(p, _N, **link), color="#C44E52",
                label=P.label("加上环形全归约", "with ring all-reduce"))
        ceiling = amdahl_limit(p)
        ax.axhline(ceiling, color="#4C72B0", lw=0.8, ls=":")
        ax.annotate(P.label(f"上限 1/(1-p) = {ceiling:.3g}x", f"ceiling 1/(1-p) = {ceiling:.3g}x"),
                    (1024, ceiling), xytext=(0, 3), textcoords="offset points", fontsize=8, color="#4C72B0",
                    ha="right")
        best = best_device_count(p, max_devices=1024, **link)
        top = float(speedup_with_allreduce(p, best, **link))
        end = float(speedup_with_allreduce(p, 1024, **link))
        ax.plot([best], [top], "o", color="#C44E52")
        left = best < 16  # near the left edge the label goes to the right of the dot
        ax.annotate(P.label(f"N* = {best}，{top:.2f}x", f"N* = {best}, {top:.2f}x"), (best, top),
                    xytext=(8 if left else -10, 8), textcoords="offset points", fontsize=8, color="#C44E52",
                    ha="left" if left else "right")
        ax.plot([1024], [end], "s", color="#C44E52", ms=4)
        ax.annotate(f"{end:.2f}x", (1024, end), xytext=(5, -3), textcoords="offset points", fontsize=8,
                    color="#C44E52", ha="left")
        ax.set_xscale("log", base=2)
        ax.set_xlim(1, 1024 * 1.6)
        ax.set_xticks([1, 4, 16, 64, 256, 1024], ['1', '4', '16', '64', '256', '1024'])
        ax.set_ylim(0, max(2.0, min(ceiling, 1024) * 1.12))
        ax.set_xlabel(P.label("设备数 N（对数刻度）", "devices N (log scale)"))
        ax.set_ylabel(P.label("加速比（相对单卡）", "speed-up over one device"))
        ax.set_title(P.label("加卡为什么会停止变快", "why adding devices stops helping"))
        ax.legend(loc="upper left", fontsize=8)
        return scaling_readout(p, grad_gb, bandwidth_gbs, latency_us)

    return Explorer(draw, {"p": slider("可并行比例 p", 0.5, 0.999, 0.001, 0.95, fmt=".3f"),
                           "grad_gb": slider("梯度大小 GB", 0.0, 4.0, 0.1, 0.5, fmt=".1f"),
                           "bandwidth_gbs": slider("带宽 GB/s", 5.0, 100.0, 5.0, 25.0, fmt=".0f"),
                           "latency_us": slider("每跳延迟 µs", 0.0, 100.0, 5.0, 20.0, fmt=".0f")},
                    figsize=(7, 3.2))


def whiteboard_figure(p: float = 0.95, grad_gb: float = 0.5, bandwidth_gbs: float = 25.0,
                   latencies_us=(20.0, 80.0), ax=None):
    """A static, annotated copy of the whiteboard result: Amdahl's curve and, for each per-hop
    latency in ``latencies_us``, the curve with a ring all-reduce; each curve's best device count
    and its speed-up at 1024 devices are marked. Returns the axes."""
    p = check_real("p", p)
    if not 0.0 <= p < 1.0:
        raise ValueError(f"p must be a parallel fraction in [0, 1), got {p!r}")
    check_nonnegative("grad_gb", grad_gb)
    check_positive("bandwidth_gbs", bandwidth_gbs)
    latencies = [check_nonnegative("latencies_us", a) for a in check_sequence("latencies_us", latencies_us)]
    ax = P.new_axes(ax, figsize=(7.5, 3.6))
    ax.plot(_N, amdahl(p, _N), color="#4C72B0", label=P.label("Amdahl（无通信）", "Amdahl (no communication)"))
    ax.axhline(amdahl_limit(p), color="#4C72B0", lw=0.8, ls=":")
    ax.annotate(P.label(f"上限 1/(1-p) = {amdahl_limit(p):.0f}x", f"ceiling 1/(1-p) = {amdahl_limit(p):.0f}x"),
                (1.2, amdahl_limit(p)), xytext=(0, -11), textcoords="offset points", fontsize=8, color="#4C72B0")
    colours = ["#C44E52", "#DD8452", "#55A868", "#8172B3"]
    for k, alpha in enumerate(latencies):
        link = _link(grad_gb, bandwidth_gbs, alpha)
        colour = colours[k % len(colours)]
        ax.plot(_N, speedup_with_allreduce(p, _N, **link), color=colour,
                label=P.label(f"全归约，每跳 {alpha:g} µs", f"all-reduce, {alpha:g} µs per hop"))
        best = best_device_count(p, max_devices=1024, **link)
        top = float(speedup_with_allreduce(p, best, **link))
        end = float(speedup_with_allreduce(p, 1024, **link))
        ax.plot([best], [top], "o", color=colour)
        ax.annotate(P.label(f"N* = {best}，{top:.2f}x", f"N* = {best}, {top:.2f}x"), (best, top),
                    xytext=(-10, 8), textcoords="offset points", fontsize=8, color=colour, ha="right")
        ax.plot([1024], [end], "s", color=colour, ms=4)
        ax.annotate(f"{end:.2f}x", (1024, end), xytext=(5, -3), textcoords="offset points", fontsize=8,
                    color=colour, ha="left")
    ax.set_xscale("log", base=2)
    ax.set_xlim(1, 1024 * 1.6)
    ax.set_xticks([1, 4, 16, 64, 256, 1024], ['1', '4', '16', '64', '256', '1024'])
    ax.set_ylim(0, amdahl_limit(p) * 1.12)
    ax.set_xlabel(P.label("设备数 N（对数刻度）", "devices N (log scale)"))
    ax.set_ylabel(P.label("加速比（相对单卡）", "speed-up over one device"))
    ax.set_title(P.label(f"p = {p:g}，梯度 {grad_gb:g} GB，带宽 {bandwidth_gbs:g} GB/s：加卡何时停止变快",
                         f"p = {p:g}, {grad_gb:g} GB gradients, {bandwidth_gbs:g} GB/s: "
                         "when adding devices stops helping"))
    ax.legend(loc="center left", fontsize=8)
    return ax


#: (chapter, factory) for each widget of this module.
VIEWS = [(13, scaling_whiteboard)]
