"""Chapter 8 (data, tensor and pipeline parallelism): pipeline timelines, memory per device, the tensor-parallel
split and the ring all-reduce's two terms."""
from __future__ import annotations

import numpy as np

from hetlab import plotting as P
from hetlab.book.readings.ch08 import memory_verdict
from hetlab.communication import NETWORK_STEP_LATENCY
from hetlab.models import pipelines as PL
from hetlab.models import training as T
from hetlab.widgets import Explorer, dropdown, int_slider, slider

__all__ = ['pipeline_explorer', 'memory_explorer', 'pipeline_pair_figure', 'allreduce_figure',
           'memory_figure', 'tp_split_figure', 'MODELS']

#: Reference transformer shapes (parameters, layers, hidden size, attention heads): LLaMA 7B/13B/70B
#: (Touvron et al. 2023) and GPT-3 175B (Brown et al. 2020).
MODELS = {"7B": (7e9, 32, 4096, 32), "13B": (13e9, 40, 5120, 40), "70B": (70e9, 80, 8192, 64),
          "175B": (175e9, 96, 12288, 96)}
_RECOMPUTE = {"不重计算": "none", "选择性重计算": "selective", "完全重计算": "full"}
_SCHEDULE = {"GPipe": "gpipe", "1F1B": "1f1b"}


def _timeline(schedule, ax=None, title: str | None = None):
    """A pipeline schedule's timeline without box labels (they overflow small boxes), Chinese legend."""
    from matplotlib.patches import Patch

    bubble = schedule.info["bubble_fraction"]
    name = {"gpipe": "GPipe", "1f1b": "1F1B"}.get(schedule.policy, schedule.policy)
    ax = P.gantt(schedule, ax, show_names=False,
                 title=title or P.label(f"{name}：{schedule.info['stages']} 段，{schedule.info['micro_batches']} 个"
                                        f"微批次，气泡占比 {bubble:.1%}",
                                        f"{name}: bubble {bubble:.1%}"))
    ax.set_yticks(range(schedule.info["stages"]),
                  [P.label(f"第 {s} 段", f"stage {s}") for s in reversed(range(schedule.info["stages"]))])
    ax.legend(handles=[Patch(color=P.KIND_COLOURS["forward"], label=P.label("前向 F", "forward")),
                       Patch(color=P.KIND_COLOURS["backward"], label=P.label("反向 B", "backward"))],
              loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    return ax


def pipeline_pair_figure(stages: int = 4, micro_batches: int = 6):
    """GPipe (top) and 1F1B (bottom) on the same equal stages; each box names its micro-batch (F3 = forward of
    micro-batch 3, from 0), each stage's peak activations are written at its end."""
    import matplotlib.pyplot as plt

    P.use_cjk_font()
    fig, axes = plt.subplots(2, 1, figsize=(9.5, 4.8), layout="constrained", sharex=True)
    for ax, method in zip(axes, ["gpipe", "1f1b"]):
        s = PL.pipeline_schedule(np.ones(stages), micro_batches, method=method).validate()
        _timeline(s, ax)
        for i, task in enumerate(s.graph.tasks):          # "F3@S0": micro-batch 3 on stage 0
            kind, mb = task.name[0], task.name[1:].split("@")[0]
            ax.text((s.start[i] + s.end[i]) / 2, stages - 1 - int(s.device_of[i]), f"{kind}{mb}",
                    ha="center", va="center", fontsize=6.5 if kind == "F" else 7.5, color="white")
        if ax is axes[0]:
            ax.set_xlabel("")
        for stage, peak in enumerate(s.info["peak_activations"]):
            ax.text(s.makespan + 0.3, stages - 1 - stage, P.label(f"峰值 {peak} 份", f"peak {peak}"),
                    va="center", fontsize=8)
        ax.set_xlim(0, s.makespan + 3.2)
    axes[1].set_xlabel(P.label("时间（前向 = 1 个时间单位，反向 = 2）", "time (forward = 1, backward = 2)"))
    return fig


def allreduce_figure(bandwidth: float = 25e9, latency: float = NETWORK_STEP_LATENCY, sizes=(1e9, 1e7)):
    """Bandwidth and latency terms of a ring all-reduce against the number of devices, with their crossovers."""
    ax = P.new_axes(figsize=(7.5, 3.6))
    n = np.unique(np.logspace(1, 14, 300, base=2).astype(int))
    lat = [T.ring_allreduce(int(k), 1.0, bandwidth, latency)["latency_term"] * 1e3 for k in n]
    ax.plot(n, lat, color="crimson", label=P.label("延迟项 2(N−1)α（与 M 无关）", "latency term"))
    for k, (size, colour) in enumerate(zip(sizes, ["#4C72B0", "#55A868"])):
        band = [T.ring_allreduce(int(k), size, bandwidth, latency)["bandwidth_term"] * 1e3 for k in n]
        gb = f"{size / 1e9:g} GB" if size >= 1e9 else f"{size / 1e6:g} MB"
        ax.plot(n, band, color=colour, label=P.label(f"带宽项，M = {gb}", f"bandwidth term, M = {gb}"))
        cross = size / (bandwidth * latency)        # (N-1)a = (N-1)/N M/B  <=>  N = M / (B a)
        ax.axvline(cross, color=colour, ls=":", lw=1)
        ax.text(cross * 1.08, 0.06 + 0.08 * k, P.label(f"交叉 N ≈ {cross:.0f}", f"N = {cross:.0f}"),
                transform=ax.get_xaxis_transform(), fontsize=8, color=colour)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(P.label("设备数 N（对数轴）", "devices N (log)"))
    ax.set_ylabel(P.label("时间（毫秒，对数轴）", "time (ms, log)"))
    ax.set_title(P.label(f"环形全归约：B = {bandwidth / 1e9:g} GB/s，α = {latency * 1e6:g} µs",
                         f"ring all-reduce: B = {bandwidth / 1e9:g} GB/s, alpha = {latency * 1e6:g} us"))
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return ax.figure


def memory_figure(configs=((512, 1, 1), (64, 8, 1), (32, 1, 16), (4, 8, 16)), model: str = "70B",
                  recompute: str = "selective", zero_stage: int = 1):
    """Memory per GPU (model states + activations) of several DP x TP x PP splits, against 80 GB."""
    ax = P.new_axes(figsize=(7.5, 3.0))
    psi, layers, hidden, heads = MODELS[model]
    rows = [T.memory_per_device(psi, dp=d, tp=t, pp=p, zero_stage=zero_stage, layers=layers, hidden=hidden,
                                heads=heads, sequence=2048, recompute=recompute) for d, t, p in configs]
    states = np.array([r["model_states"] for r in rows]) / 1e9
    act = np.array([r["activations"] for r in rows]) / 1e9
    y = np.arange(len(configs))
    ax.barh(y, states, color="#4C72B0", label=P.label("模型状态", "model states"))
    ax.barh(y, act, left=states, color="#DD8452", label=P.label("激活", "activations"))
    for k, total in enumerate(states + act):
        ax.text(total + 3, k, f"{total:.1f} GB", va="center", fontsize=8)
    ax.axvline(80, color="crimson", ls="--", lw=1, label=P.label("A100 显存 80 GB", "A100 80 GB"))
    ax.set_yticks(y, [f"DP {d} × TP {t} × PP {p}" for d, t, p in configs])
    ax.invert_yaxis()
    ax.set_xlim(0, float((states + act).max()) * 1.15)
    ax.set_xlabel(P.label("每张 GPU 的显存（GB，1 GB = 1e9 字节）", "memory per GPU (GB)"))
    ax.set_title(P.label(f"{model} 模型、512 张 GPU、ZeRO-{zero_stage}、选择性重计算：每卡显存",
                         f"{model} on 512 GPUs, ZeRO-{zero_stage}: memory per GPU"))
    ax.legend(fontsize=8, loc="lower right")
    return ax.figure


def tp_split_figure():
    """Megatron-LM's feed-forward block on 2 GPUs: ``A`` split by columns, ``B`` by rows, so each GPU computes
    ``GeLU(X A_i) B_i`` alone and one all-reduce sums the two partial results (Shoeybi et al. 2019, Figure 3a)."""
    from matplotlib.patches import FancyArrowPatch, Rectangle

    ax = P.new_axes(figsize=(9.5, 3.6))
    blue, orange, green = "#4C72B0", "#DD8452", "#55A868"

    def box(x, y, w, h, colour, text, alpha=0.85):
        ax.add_patch(Rectangle((x, y), w, h, facecolor=colour, edgecolor="black", lw=0.8, alpha=alpha))
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=9, color="white")

    def arrow(x0, y0, x1, y1, text=""):
        ax.add_patch(FancyArrowPatch((x0, y0), (x1, y1), arrowstyle="-|>", mutation_scale=10, lw=1, color="black"))
        if text:
            ax.text((x0 + x1) / 2, (y0 + y1) / 2 + 0.22, text, ha="center", fontsize=8)

    for gpu, y in ((0, 3.2), (1, 0.4)):
        i = gpu + 1
        ax.text(-0.2, y + 0.6, P.label(f"GPU {gpu}", f"GPU {gpu}"), ha="right", va="center", fontsize=9)
        box(0.0, y, 1.6, 1.2, "gray", P.label("$X$（整份）", "$X$ (whole)"))
        box(2.4, y - 0.2, 0.8, 1.6, blue, f"$A_{i}$")
        arrow(3.3, y + 0.6, 4.3, y + 0.6, "GeLU")
        box(4.4, y, 0.8, 1.2, blue, f"$Y_{i}$")
        box(6.0, y + 0.2, 1.6, 0.8, orange, f"$B_{i}$")
        arrow(7.7, y + 0.6, 8.6, y + 0.6)
        box(8.7, y, 1.6, 1.2, orange, f"$Y_{i}B_{i}$", alpha=0.6)
        arrow(10.4, y + 0.6, 11.4, 2.4)
        for x in (2.0, 5.6):
            ax.text(x, y + 0.6, "×", ha="center", va="center", fontsize=12)
    ax.add_patch(Rectangle((11.5, 1.8), 1.2, 1.2, facecolor="white", edgecolor="crimson", lw=1.5))
    ax.text(12.1, 2.4, P.label("全归约\nΣ", "all-\nreduce"), ha="center", va="center", fontsize=9, color="crimson")
    arrow(12.8, 2.4, 13.6, 2.4)
    box(13.7, 1.8, 1.6, 1.2, green, "$Z$")
    ax.text(2.8, 5.05, P.label("A 按列切：各算各的", "A split by columns"), ha="center", fontsize=8.5, color=blue)
    ax.text(6.8, 5.05, P.label("B 按行切：得到部分和", "B split by rows"), ha="center", fontsize=8.5, color=orange)
    ax.text(12.1, 3.3, P.label("唯一一次通信", "the only communication"), ha="center", fontsize=8.5, color="crimson")
    ax.set_xlim(-1.3, 15.6)
    ax.set_ylim(0.0, 5.5)
    ax.set_aspect("equal")
    ax.set_axis_off()
    ax.set_title(P.label("张量并行的前馈层 Z = GeLU(XA)·B，切到 2 张 GPU 上", "tensor-parallel MLP on 2 GPUs"),
                 fontsize=10)
    return ax.figure


def pipeline_explorer() -> Explorer:
    """Pipeline parallel timeline: stages, micro-batches, GPipe or 1F1B, and one slow stage."""
    def draw(ax, stages: int, micro_batches: int, method: str, slow: float) -> str:
        times = np.ones(stages)
        times[stages // 2] *= slow          # stage p // 2 (from 0): a middle stage for p >= 3, the last for p = 2
        s = PL.pipeline_schedule(times, micro_batches, method=_SCHEDULE[method]).validate()
        bubble = s.info["bubble_fraction"]
        title = None if slow == 1 else P.label(     # name the slow stage in the figure, not only in the caption
            f"{method}：第 {stages // 2} 段耗时是其他段的 {slow:g} 倍，{micro_batches} 个微批次，气泡占比 {bubble:.1%}",
            f"{method}: stage {stages // 2} takes {slow:g}x as long, bubble {bubble:.1%}")
        _timeline(s, ax, title)
        ax.set_xlabel(P.label("时间（前向 = 1 个时间单位，反向 = 2）", "time (forward = 1, backward = 2)"))
        formula = T.bubble_fraction(stages, micro_batches)
        # t_i of section 8.6: one micro-batch's forward and backward on stage i (backward = 2 forwards)
        return (f"第 {stages // 2} 段每个微批次 t = {3 * times.max():.2f}（前向 + 反向），其余各段 3；"
                f"模拟气泡 {s.info['bubble_fraction']:.3f}（等长各段的公式 (p-1)/(m+p-1) = {formula:.3f}），"
                f"各段峰值激活份数 {s.info['peak_activations']}")

    return Explorer(draw, {"stages": int_slider("段数 p", 1, 8, 4),
                           "micro_batches": int_slider("微批次 m", 1, 16, 8),
                           "method": dropdown("调度方式", list(_SCHEDULE), "1F1B"),
                           "slow": slider("第 ⌊p/2⌋ 段耗时倍数", 1.0, 3.0, 0.25, 1.0)}, figsize=(8, 3.2))


def memory_explorer() -> Explorer:
    """Bytes per GPU of a transformer under DP x TP x PP and ZeRO 0-3, against an 80 GB A100; with a pipeline,
    ZeRO-2/3 are drawn hatched and never offered (:data:`hetlab.models.training.PIPELINE_ZERO_STAGES`)."""
    colours = ["#4C72B0", "#DD8452", "#55A868", "#C44E52"]
    parts = [("params", "参数", "params"), ("grads", "梯度", "grads"), ("optimizer", "优化器状态", "optimizer"),
             ("activations", "激活", "activations")]

    def draw(ax, model: str, dp: int, tp: int, pp: int, recompute: str, micro_batch: int) -> str:
        psi, layers, hidden, heads = MODELS[model]
        pp = min(pp, layers)
        if layers % pp or heads % tp:        # Megatron-LM splits whole layers and whole attention heads
            ax.set_axis_off()
            return (f"{model} 的 {layers} 层、{heads} 个注意力头切不成 PP {pp} × TP {tp}：每段流水线须是整数层，"
                    f"每路张量并行须是整数个头；请换一个 PP 或 TP")
        rows = [T.memory_per_device(psi, dp=dp, tp=tp, pp=pp, zero_stage=z, layers=layers, hidden=hidden,
                                    heads=heads, sequence=2048, micro_batch=micro_batch,
                                    recompute=_RECOMPUTE[recompute]) for z in range(4)]
        # With a pipeline, ZeRO-2/3's savings cost a collective per micro-batch, or are given back within the step
        # (PyTorch FSDP keeps parameters and gradients whole): hatched bars, starred labels.
        barred = [z for z in range(4) if pp > 1 and z not in T.PIPELINE_ZERO_STAGES]
        left = np.zeros(4)
        for (key, zh, en), colour in zip(parts, colours):
            values = np.array([r[key] for r in rows]) / 1e9
            bars = ax.barh(range(4), values, left=left, color=colour, label=P.label(zh, en))
            for z in barred:
                bars[z].set_alpha(0.35)
                bars[z].set_hatch("//")
            left += values
        for z in barred:
            ax.text(max(left[z], 80.0) + 1.5, z, P.label("流水线下省不下", "not saved with PP"), va="center",
                    fontsize=8, color="dimgray")       # right of the 80 GB line, never across it
        ax.axvline(80, color="crimson", ls="--", lw=1, label=P.label("A100 显存 80 GB", "A100 80 GB"))
        ax.set_yticks(range(4), [f"ZeRO-{z}{'*' if z in barred else ''}" for z in range(4)])
        ax.invert_yaxis()
        ax.set_xlim(0, max(112.0 if barred else 100.0, float(left.max()) * (1.3 if barred else 1.05)))
        ax.set_xlabel(P.label("每张 GPU 的显存（GB，1 GB = 1e9 字节）", "memory per GPU (GB)"))
        ax.set_title(P.label(f"{model} 模型：DP {dp} × TP {tp} × PP {pp} = {dp * tp * pp} 张 GPU，序列 2048",
                             f"{model}: DP {dp} x TP {tp} x PP {pp}"))
        ax.legend(loc="lower right", fontsize=8)
        return memory_verdict([r["total"] for r in rows], rows[0]["activations"], pp=pp)

    return Explorer(draw, {"model": dropdown("模型", list(MODELS), "70B"),
                           "dp": dropdown("数据并行 DP", [1, 2, 4, 8, 16, 32, 64], 8),
                           "tp": dropdown("张量并行 TP（≤ 单机 8 卡）", [1, 2, 4, 8], 1),
                           "pp": dropdown("流水线并行 PP", [1, 2, 4, 8, 16], 1),
                           "recompute": dropdown("激活重计算", list(_RECOMPUTE), "选择性重计算"),
                           "micro_batch": int_slider("每个微批次的样本数", 1, 8, 1)}, figsize=(8, 3.4))


#: (chapter, factory) for each widget of this module.
VIEWS = [(8, pipeline_explorer), (8, memory_explorer)]
