"""Chapter 8 (data, tensor and pipeline parallelism): what the memory widget says about a DP x TP x PP split."""
from __future__ import annotations

from collections.abc import Sequence

from hetlab._validate import check_int, check_nonnegative, check_positive, check_sequence
from hetlab.models.training import PIPELINE_ZERO_STAGES

__all__ = ["memory_verdict"]


def memory_verdict(totals: Sequence[float], activations: float, *, pp: int, capacity: float = 80e9) -> str:
    """Two lines: the bytes per GPU of ZeRO stages 0-3 (``totals``), the activations among them, and which stages
    fit in ``capacity``. With a pipeline (``pp > 1``) a stage outside
    :data:`~hetlab.models.training.PIPELINE_ZERO_STAGES` is marked with * and never counted as a choice: it fits
    on paper, but a pipeline keeps its savings only by a collective per micro-batch (DeepSpeed refuses it,
    Megatron-LM uses ZeRO-1) or gives them back within the step (PyTorch FSDP with pipelining keeps the
    parameters and gradients whole until the last micro-batch).

    >>> print(memory_verdict([115.6e9, 69.7e9, 62.0e9, 54.4e9], 45.6e9, pp=16))
    每卡合计（GB）：ZeRO-0 115.6，ZeRO-1 69.7，ZeRO-2* 62.0，ZeRO-3* 54.4；其中激活 45.6 GB
    放得下 80 GB 的可选阶段：ZeRO-1。*ZeRO-2/3 的账面数在流水线下省不下：要么每个微批次多一次归约散射
    （ZeRO-3 还要收集参数），要么一步之内让参数和梯度常驻，显存约回到 ZeRO-1
    """
    values = [check_nonnegative("totals", x) for x in check_sequence("totals", totals)]
    if len(values) != 4:
        raise ValueError(f"totals must hold the bytes of ZeRO stages 0-3 (4 numbers), got {len(values)}")
    act = check_nonnegative("activations", activations)
    stages = check_int("pp", pp, low=1, high=10 ** 7)
    cap = check_positive("capacity", capacity)
    barred = [z for z in range(4) if stages > 1 and z not in PIPELINE_ZERO_STAGES]
    listed = "，".join(f"ZeRO-{z}{'*' if z in barred else ''} {t / 1e9:.1f}" for z, t in enumerate(values))
    fits = [z for z, t in enumerate(values) if t <= cap and z not in barred]
    head = f"每卡合计（GB）：{listed}；其中激活 {act / 1e9:.1f} GB"
    if fits:
        choice = f"放得下 {cap / 1e9:.0f} GB 的可选阶段：{'、'.join(f'ZeRO-{z}' for z in fits)}"
    else:
        choice = f"没有哪个可选的 ZeRO 阶段放得下 {cap / 1e9:.0f} GB"
    if any(values[z] <= cap for z in barred):
        choice += ("。*ZeRO-2/3 的账面数在流水线下省不下：要么每个微批次多一次归约散射\n"
                   "（ZeRO-3 还要收集参数），要么一步之内让参数和梯度常驻，显存约回到 ZeRO-1")
    elif barred:
        choice += "。*ZeRO-2/3 的账面数在流水线下省不下（每个微批次多一次归约散射，或一步之内常驻）"
    return f"{head}\n{choice}"
