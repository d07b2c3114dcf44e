"""Chapter 10 (AI scenarios): one-line readings of a training step and of a serving run."""
from __future__ import annotations

import numpy as np

from hetlab._validate import check_instance, check_positive
from hetlab.models.serving import ServingResult
from hetlab.models.training import TrainingStep

__all__ = ["training_summary", "serving_summary", "POLICY_NAMES"]

#: The batching policies of :func:`hetlab.models.serving.simulate` as the chapter names them.
POLICY_NAMES = {"static": "请求级批处理", "continuous": "连续批处理"}


def training_summary(step: TrainingStep) -> str:
    """One line: the split, then the step time, speed-up and memory per GPU, or why the split does not fit.

    >>> from hetlab.models.training import step_time
    >>> shape = dict(devices=8, dp=8, global_batch=64, micro_batches=1, layers=80, hidden=8192, heads=64)
    >>> print(training_summary(step_time(70e9, **shape)))
    DP 8 × TP 1 × PP 1，微批次 1 个（每个 8 样本）：不可行——每卡需 750.1 GB，超过显存 80 GB
    """
    check_instance("step", step, TrainingStep)
    head = f"DP {step.dp} × TP {step.tp} × PP {step.pp}，微批次 {step.micro_batches} 个（每个 {step.micro_batch} 样本）"
    if step.feasible:
        memory = step.memory["total"] / 1e9
        return f"{head}：每步 {step.time:.2f} s，加速 {step.speedup:.1f} 倍，显存 {memory:.1f} GB/卡"
    reasons = {"memory": f"每卡需 {step.memory['total'] / 1e9:.1f} GB，超过显存 {step.device_memory / 1e9:.0f} GB",
               "tp_across_nodes": f"张量并行 {step.tp} 路超过单节点 {step.gpus_per_node} 张卡，只能走慢速的节点间网络"}
    return f"{head}：不可行——" + "；".join(reasons[x] for x in step.limits)


def serving_summary(result: ServingResult, bound: float | None = None) -> str:
    """One line: time to first token, latency percentiles, time per output token (for request-level batching,
    the time from the first token to the batch's end per token, padding wait included), throughput (with ``bound``,
    as a share of :func:`hetlab.models.serving.throughput_bound`), the GPUs' busy share and the mean batch.

    >>> from hetlab.models.serving import simulate
    >>> line = serving_summary(simulate([0.0], [100], [10], step_base=0.02, step_per_sequence=0.0,
    ...                                 prefill_per_token=0.0), bound=1600.0)
    >>> for part in line.split("，每词元"):      # the line in two halves, to fit the page
    ...     print(part)
    连续批处理：首字延迟 P99 20 ms，延迟 P50 200 ms、P99 200 ms
     20.0 ms，50 词元/秒（吞吐上限的 3%），GPU 忙碌 100%，平均批 1.0
    """
    check_instance("result", result, ServingResult)
    r = result
    # request-level batching returns the batch at once: its per-token figure includes the wait for the batch's
    # longest request, so it is named as a share ("摊到", padding included), not as a generation time
    per_token = "每词元" if r.policy == "continuous" else "每词元平均用时（含填充）"
    share = ""
    if bound is not None:
        share = f"（吞吐上限的 {r.tokens_per_s / check_positive('bound', bound):.0%}）"
    return (f"{POLICY_NAMES[r.policy]}：首字延迟 P99 {np.percentile(r.ttft, 99) * 1e3:.0f} ms，"
            f"延迟 P50 {r.p50 * 1e3:.0f} ms、P99 {r.p99 * 1e3:.0f} ms，{per_token} {r.tpot * 1e3:.1f} ms，"
            f"{r.tokens_per_s:.0f} 词元/秒{share}，GPU 忙碌 {r.busy_fraction:.0%}，平均批 {r.mean_batch:.1f}")
