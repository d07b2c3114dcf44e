"""Chapter 13 (interview questions): the whiteboard on gradient buckets, and prefill and decode on a roofline."""
from __future__ import annotations

import numpy as np

from hetlab import plotting as P
from hetlab._validate import check_int, check_nonnegative, check_positive, check_sequence
from hetlab.book.readings.ch13 import bucket_readout
from hetlab.communication import NETWORK_STEP_LATENCY, best_bucket_count, exposed_allreduce
from hetlab.models import hardware as H
from hetlab.models.roofline import attainable, dense_layer_intensity
from hetlab.widgets import Explorer, dropdown, slider

__all__ = ['bucket_whiteboard', 'bucket_figure', 'serving_roofline_figure']

#: The whiteboard's fixed numbers: 3 GB of 16-bit gradients (a 1.5B-parameter model), the book's network step
#: latency per ring hop (NCCL ring/Simple, 14 us).
GRAD_GB, LATENCY_US = 3.0, round(NETWORK_STEP_LATENCY * 1e6, 3)
BUCKETS_MB = (1.0, 5.0, 12.5, 25.0, 50.0, 100.0, 300.0, 1000.0, 3000.0)


def _curve(ax, *, n_devices: int, bandwidth_gbs: float, backward_s: float, colour: str, label: str) -> int:
    """Exposed all-reduce (ms) against bucket size (MB) for every bucket count of 1 MB or more; marks the best."""
    grad = GRAD_GB * 1e9
    link = dict(backward_time=backward_s, grad_bytes=grad, n_devices=n_devices, bandwidth=bandwidth_gbs * 1e9,
                latency=LATENCY_US * 1e-6)
    counts = np.arange(1, int(grad / 1e6) + 1)
    ax.plot(grad / counts / 1e6, exposed_allreduce(counts, **link) * 1e3, color=colour, label=label)
    best = best_bucket_count(**link, max_buckets=int(counts[-1]))
    ax.plot([grad / best / 1e6], [exposed_allreduce(best, **link) * 1e3], "*", color=colour, ms=11)
    return best


def _axes(ax, title: tuple[str, str]) -> None:
    ax.axvline(25, color="grey", lw=0.8, ls=":")
    ax.annotate(P.label("PyTorch DDP 默认 25 MB", "PyTorch DDP default 25 MB"), (25, 1.0), xytext=(4, 4),
                textcoords="offset points", fontsize=8, color="grey")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(0.8, GRAD_GB * 1e3 * 1.3)
    ax.set_ylim(0.5, 1e4)
    ax.set_xlabel(P.label("每个桶的大小（MB，对数刻度）", "bucket size (MB, log scale)"))
    ax.set_ylabel(P.label("反向结束后露出的通信（ms）", "communication left after backward (ms)"))
    ax.set_title(P.label(*title))
    ax.legend(loc="upper center", fontsize=8)


def bucket_whiteboard() -> Explorer:
    """Exposed gradient all-reduce against bucket size, with the chosen bucket and the best one marked."""
    def draw(ax, bucket_mb: float, n_devices: int, bandwidth_gbs: float, backward_s: float) -> str:
        _curve(ax, n_devices=n_devices, bandwidth_gbs=bandwidth_gbs, backward_s=backward_s, colour="#C44E52",
               label=P.label("露出的通信（★ 最好的桶）", "exposed communication (★ best bucket)"))
        k = max(1, round(GRAD_GB * 1e3 / bucket_mb))
        link = dict(backward_time=backward_s, grad_bytes=GRAD_GB * 1e9, n_devices=n_devices,
                    bandwidth=bandwidth_gbs * 1e9, latency=LATENCY_US * 1e-6)
        ax.plot([GRAD_GB * 1e3 / k], [exposed_allreduce(k, **link) * 1e3], "o", color="black", ms=6)
        _axes(ax, (f"每卡梯度 {GRAD_GB:g} GB，数据并行组 {n_devices} 个成员，{bandwidth_gbs:g} GB/s，"
                   f"反向 {backward_s:g} s",
                   f"{GRAD_GB:g} GB gradients, DP group of {n_devices}, {bandwidth_gbs:g} GB/s, "
                   f"backward {backward_s:g} s"))
        ax.minorticks_off()     # a log axis's minor ticks were half of each frame's drawing time (issue 18 #10)
        return bucket_readout(bucket_mb, grad_gb=GRAD_GB, n_devices=n_devices, bandwidth_gbs=bandwidth_gbs,
                              latency_us=LATENCY_US, backward_s=backward_s)

    return Explorer(draw, {"bucket_mb": dropdown("桶大小（MB）", list(BUCKETS_MB), 25.0),
                           "n_devices": dropdown("卡数", [8, 16, 32, 64, 128, 256], 64),
                           "bandwidth_gbs": slider("每卡带宽 GB/s", 10.0, 100.0, 5.0, 50.0, fmt=".0f"),
                           "backward_s": slider("每步反向 s", 0.05, 1.0, 0.05, 0.3, fmt=".2f")},
                    figsize=(7, 3.4))


def bucket_figure(bandwidths_gbs=(50.0, 25.0), *, n_devices: int = 64, backward_s: float = 0.3, ax=None):
    """Static copy of the whiteboard: one curve of exposed all-reduce against bucket size per bandwidth, the best
    bucket of each starred and PyTorch DDP's default 25 MB dotted. Returns the axes."""
    widths = [check_positive("bandwidths_gbs", b, high=1e4) for b in check_sequence("bandwidths_gbs", bandwidths_gbs)]
    check_int("n_devices", n_devices, low=2, high=100_000)
    check_nonnegative("backward_s", backward_s, high=1e4)
    ax = P.new_axes(ax, figsize=(7.5, 3.6))
    colours = ["#C44E52", "#4C72B0", "#55A868", "#8172B3"]
    for i, width in enumerate(widths):
        best = best_bucket_count(backward_time=backward_s, grad_bytes=GRAD_GB * 1e9, n_devices=n_devices,
                                 bandwidth=width * 1e9, latency=LATENCY_US * 1e-6, max_buckets=int(GRAD_GB * 1e3))
        _curve(ax, n_devices=n_devices, bandwidth_gbs=width, backward_s=backward_s, colour=colours[i % len(colours)],
               label=P.label(f"每卡 {width:g} GB/s（最好的桶 {GRAD_GB * 1e3 / best:.3g} MB）",
                             f"{width:g} GB/s per GPU (best bucket {GRAD_GB * 1e3 / best:.3g} MB)"))
    _axes(ax, (f"每卡梯度 {GRAD_GB:g} GB，数据并行组 {n_devices} 个成员（每台机器一个），反向 {backward_s:g} s",
               f"{GRAD_GB:g} GB gradients per GPU, DP group of {n_devices} (one per machine), "
               f"backward {backward_s:g} s"))
    return ax


def serving_roofline_figure(hidden: int = 8192, prefill_tokens: int = 4096, decode_batches=(1, 64), ax=None):
    """The BF16 rooflines of the H100 and H200 SXM (datasheets, :data:`hetlab.models.hardware.GPUS`) with a
    ``hidden x hidden`` weight matrix placed on them: decoding ``decode_batches`` sequences (one token each) and
    prefilling ``prefill_tokens`` tokens. Returns the axes."""
    h = check_int("hidden", hidden, low=1, high=10 ** 6)
    tokens = check_int("prefill_tokens", prefill_tokens, low=1, high=10 ** 7)
    batches = [check_int("decode_batches", b, low=1, high=10 ** 7) for b in check_sequence("decode_batches",
                                                                                            decode_batches)]
    ax = P.new_axes(ax, figsize=(7.5, 3.6))
    grid = np.logspace(-0.5, 4, 200)
    for name, style in (("H100 SXM", "-"), ("H200 SXM", "--")):
        g = H.GPUS[name]
        ax.plot(grid, attainable(grid, g.bf16_flops, g.memory_bandwidth) / 1e12, style, color="black", lw=1.5,
                label=P.label(f"{name}：峰值 {g.bf16_flops / 1e12:.0f} TFLOP/s，{g.memory_bandwidth / 1e12:g} TB/s",
                              f"{name}: {g.bf16_flops / 1e12:.0f} TFLOP/s, {g.memory_bandwidth / 1e12:g} TB/s"))
    h100 = H.GPUS["H100 SXM"]
    points = [(P.label(f"解码，批 {b}", f"decode, batch {b}"), b, "#C44E52") for b in batches]
    points.append((P.label(f"预填充 {tokens} 词元", f"prefill {tokens} tokens"), tokens, "#4C72B0"))
    for text, rows, colour in points:
        i = dense_layer_intensity(h, h, rows, 2.0)
        y = float(attainable(i, h100.bf16_flops, h100.memory_bandwidth)) / 1e12
        ax.plot([i], [y], "o", color=colour)
        right = rows > 1000      # the prefill point sits near the right edge: its label goes to the left
        ax.annotate(f"{text}\n{i:.0f} FLOP/B", (i, y), xytext=(-8 if right else 8, -26),
                    textcoords="offset points", fontsize=8, color=colour, ha="right" if right else "left")
    ridge = h100.bf16_flops / h100.memory_bandwidth
    ax.axvline(ridge, color="grey", lw=0.8, ls=":")
    ax.annotate(P.label(f"H100 拐点 {ridge:.0f}", f"H100 ridge {ridge:.0f}"), (ridge, 1.2), xytext=(4, 0),
                textcoords="offset points", fontsize=8, color="grey")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(P.label("算术强度（FLOP/字节，对数刻度）", "arithmetic intensity (FLOP/byte, log scale)"))
    ax.set_ylabel(P.label("可达算力（TFLOP/s）", "attainable (TFLOP/s)"))
    ax.set_title(P.label(f"BF16 屋顶线上的一个 {h}×{h} 权重矩阵", f"one {h}x{h} weight matrix on BF16 rooflines"))
    ax.legend(loc="upper left", fontsize=8)
    return ax


#: (chapter, factory) for each widget of this module.
VIEWS = [(13, bucket_whiteboard)]
