"""Chapter 8 (data, tensor and pipeline parallelism): pipeline timelines and memory per device."""
from __future__ import annotations

import numpy as np

from .. import plotting as P
from .. import simulators as sim
from .. import training as T
from ..widgets import Explorer, dropdown, int_slider, slider

__all__ = ['pipeline', 'memory', 'pipeline_figure', 'MODELS']

#: Reference transformer shapes (parameters, layers, hidden size, attention heads): LLaMA 7B/13B/70B
#: (Touvron et al. 2023) and GPT-3 175B (Brown et al. 2020).
MODELS = {"7B": (7e9, 32, 4096, 32), "13B": (13e9, 40, 5120, 40), "70B": (70e9, 80, 8192, 64),
          "175B": (175e9, 96, 12288, 96)}
_RECOMPUTE = {"不重计算": "none", "选择性重计算": "selective", "完全重计算": "full"}
_SCHEDULE = {"GPipe": "gpipe", "1F1B": "1f1b"}


def pipeline_figure(schedule, ax=None, title: str | None = None):
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


def pipeline() -> Explorer:
    """Pipeline parallel timeline: stages, micro-batches, GPipe or 1F1B, and one slow stage."""
    def draw(ax, stages: int, micro_batches: int, method: str, slow: float) -> str:
        times = np.ones(stages)
        times[stages // 2] *= slow
        s = sim.pipeline_schedule(times, micro_batches, method=_SCHEDULE[method]).validate()
        pipeline_figure(s, ax)
        formula = T.bubble_fraction(stages, micro_batches)
        return (f"周期 max t_i = {times.max():.2f}，模拟气泡 {s.info['bubble_fraction']:.3f}"
                f"（等长阶段公式 (p-1)/(m+p-1) = {formula:.3f}），各段峰值激活份数 {s.info['peak_activations']}")

    return Explorer(draw, {"stages": int_slider("阶段数 p", 1, 8, 4),
                           "micro_batches": int_slider("微批次 m", 1, 16, 8),
                           "method": dropdown("调度方式", list(_SCHEDULE), "1F1B"),
                           "slow": slider("中间一段变慢倍数", 1.0, 3.0, 0.25, 1.0)}, figsize=(8, 3.2))


def memory() -> Explorer:
    """Bytes per GPU of a transformer under DP x TP x PP and ZeRO 0-3, against an 80 GB A100."""
    colours = ["#4C72B0", "#DD8452", "#55A868", "#C44E52"]
    parts = [("params", "参数", "params"), ("grads", "梯度", "grads"), ("optimizer", "优化器状态", "optimizer"),
             ("activations", "激活", "activations")]

    def draw(ax, model: str, dp: int, tp: int, pp: int, recompute: str, micro_batch: int) -> str:
        psi, layers, hidden, heads = MODELS[model]
        pp = min(pp, layers)
        rows = [T.memory_per_device(psi, dp=dp, tp=tp, pp=pp, zero_stage=z, layers=layers, hidden=hidden,
                                    heads=heads, sequence=2048, micro_batch=micro_batch,
                                    recompute=_RECOMPUTE[recompute]) for z in range(4)]
        left = np.zeros(4)
        for (key, zh, en), colour in zip(parts, colours):
            values = np.array([r[key] for r in rows]) / 1e9
            ax.barh(range(4), values, left=left, color=colour, label=P.label(zh, en))
            left += values
        ax.axvline(80, color="crimson", ls="--", lw=1, label=P.label("A100 显存 80 GB", "A100 80 GB"))
        ax.set_yticks(range(4), [f"ZeRO-{z}" for z in range(4)])
        ax.invert_yaxis()
        ax.set_xlim(0, max(100.0, float(left.max()) * 1.05))
        ax.set_xlabel(P.label("每张 GPU 的显存（GB，1 GB = 1e9 字节）", "memory per GPU (GB)"))
        ax.set_title(P.label(f"{model} 模型：DP {dp} × TP {tp} × PP {pp} = {dp * tp * pp} 张 GPU，序列 2048",
                             f"{model}: DP {dp} x TP {tp} x PP {pp}"))
        ax.legend(loc="lower right", fontsize=8)
        fits = [z for z in range(4) if rows[z]["total"] <= 80e9]
        verdict = f"能放下 80 GB 的 ZeRO 阶段：{', '.join(map(str, fits))}" if fits else "任何 ZeRO 阶段都放不下 80 GB"
        totals = "，".join(f"ZeRO-{z} {r['total'] / 1e9:.1f}" for z, r in enumerate(rows))
        return f"每卡合计（GB）：{totals}；其中激活 {rows[0]['activations'] / 1e9:.1f} GB；{verdict}"

    return Explorer(draw, {"model": dropdown("模型", list(MODELS), "70B"),
                           "dp": dropdown("数据并行 DP", [1, 2, 4, 8, 16, 32, 64], 8),
                           "tp": dropdown("张量并行 TP（≤ 单机 8 卡）", [1, 2, 4, 8], 1),
                           "pp": dropdown("流水线并行 PP", [1, 2, 4, 8, 16], 1),
                           "recompute": dropdown("激活重计算", list(_RECOMPUTE), "选择性重计算"),
                           "micro_batch": int_slider("每个微批次的样本数", 1, 8, 1)}, figsize=(8, 3.4))


#: (chapter, factory) for each widget of this module.
VIEWS = [(8, pipeline), (8, memory)]
