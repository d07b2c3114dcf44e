"""Training at scale as formulas: memory per device and the step time of DP x TP x PP.

One idea: what a data x tensor x pipeline parallel training job costs per device, in bytes and in seconds.

- :func:`memory_per_device`: parameters, gradients, optimizer states (mixed-precision Adam, 2 + 2 + 12
  bytes per parameter, Rajbhandari et al. 2020) sharded by ZeRO stages 0-3 over the data-parallel group and
  split by tensor and pipeline parallelism, plus activations (Korthikanti et al. 2022).
- :func:`activation_memory`: activation bytes of one micro-batch in one transformer layer.
- :func:`ring_allreduce`: ring all-reduce as reduce-scatter + all-gather (Patarasuk & Yuan 2009), the phases of
  :func:`hetlab.communication.ring_allreduce_time`.
- :func:`bubble_fraction`: idle share of a pipeline (GPipe, 1F1B, interleaved 1F1B; Narayanan et al. 2021).
- :func:`zero_traffic`: bytes each device sends per step to synchronise its data-parallel group, by ZeRO stage and
  micro-batch count; :data:`PIPELINE_ZERO_STAGES` the stages pipeline engines accept.
- :func:`step_time`: one step of DP x TP x PP with the pipeline bubble, TP's all-reduces on the fast
  intra-node link and DP's gradient all-reduce overlapped with compute, checked for feasibility.
- :func:`data_parallel_step`: the step time of plain data parallelism with a fixed global batch, the part of the
  gradient all-reduce hidden behind the backward pass (accepts arrays, for curves); how buckets set that share is
  :func:`hetlab.communication.exposed_allreduce`.

Tensor parallelism splits attention heads and pipeline parallelism splits layers, so ``heads`` must be a
multiple of ``tp``, ``layers`` a multiple of ``pp`` and ``hidden`` a multiple of ``heads`` (Megatron-LM refuses
other splits); a ValueError says so.

Sizes are bytes, times seconds, bandwidths bytes per second. GB in the ZeRO paper means 1e9 bytes.

>>> m = memory_per_device(7.5e9, dp=64, zero_stage=1, activations=False)
>>> round(m["total"] / 1e9, 1)   # Rajbhandari et al. 2020, Figure 1: 31.4 GB
31.4
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hetlab._validate import (
    as_float_array,
    check_fields,
    check_finite_result,
    check_int,
    check_nonnegative,
    check_positive,
    check_real,
)
from hetlab.communication import NETWORK_STEP_LATENCY, NVLINK_STEP_LATENCY, ring_allreduce_time

__all__ = ["memory_per_device", "activation_memory", "ring_allreduce", "bubble_fraction", "step_time",
           "micro_batch_options", "TrainingStep", "SCHEDULES", "RECOMPUTE", "LIMITS", "kernel_efficiency",
           "data_parallel_step", "zero_traffic", "PIPELINE_ZERO_STAGES"]

#: Pipeline schedules understood by :func:`bubble_fraction` and :func:`step_time`.
SCHEDULES = ("gpipe", "1f1b", "interleaved")
#: Activation recomputation modes of :func:`activation_memory` (Korthikanti et al. 2022).
RECOMPUTE = ("none", "selective", "full")
#: Why :func:`step_time` can find a configuration infeasible (:attr:`TrainingStep.limits`): the memory per
#: device exceeds ``device_memory``, or tensor parallelism spans more GPUs than one node holds.
LIMITS = ("memory", "tp_across_nodes")
#: ZeRO stages that pipeline-parallel engines accept. A pipeline stage runs many micro-batches per step, so
#: ZeRO-2 would reduce-scatter its gradients after every micro-batch and ZeRO-3 gather its parameters for every
#: forward and backward pass (:func:`zero_traffic`). DeepSpeed's ``PipelineEngine`` asserts ``zero_stage < 2``
#: ("ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism", deepspeed/runtime/pipe/engine.py), and
#: Megatron-LM pairs pipelines with its distributed optimizer, which shards the optimizer states only (ZeRO-1).
PIPELINE_ZERO_STAGES = (0, 1)

_MAX_PARAMS = 1e15      # a quadrillion parameters: beyond any model, rejects absurd sizes
_MAX_DEVICES = 10 ** 7


def _choice(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return value


def _divides(name: str, value: int, by_name: str, by: int, what: str) -> None:
    if value % by:
        raise ValueError(f"{name} must be a multiple of {by_name} = {by} ({what}), got {name} = {value} and "
                         f"{by_name} = {by}")


def _ring(n: int, nbytes: float, bandwidth: float, latency: float, name: str, latency_name: str) -> float:
    """:func:`~hetlab.communication.ring_allreduce_time`, its overflow reported under the caller's names."""
    try:
        return ring_allreduce_time(n, nbytes, bandwidth, latency)
    except ValueError:
        raise ValueError(f"{name} = {bandwidth!r} and {latency_name} = {latency!r} make the all-reduce of "
                         f"{nbytes:g} bytes over {n} devices longer than any float: raise {name}") from None


def _params(params: Any) -> float:
    psi = check_positive("params", params)
    if psi > _MAX_PARAMS:
        raise ValueError(f"params must be in (0, {_MAX_PARAMS:g}], got {psi:g}")
    return psi


def activation_memory(*, sequence: int, micro_batch: int, hidden: int, heads: int, tp: int = 1,
                      sequence_parallel: bool = False, recompute: str = "none") -> float:
    """Bytes of activations one transformer layer keeps for one micro-batch (16-bit values).

    Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer Models", eq. 1-6),
    with ``s`` = sequence, ``b`` = micro_batch, ``h`` = hidden, ``a`` = heads, ``t`` = tp:

    - no recomputation, no parallelism: ``s b h (34 + 5 a s / h)``;
    - tensor parallel: ``s b h (10 + 24 / t + 5 a s / (h t))`` (layer norms and dropouts stay replicated);
    - tensor + sequence parallel: ``s b h (34 + 5 a s / h) / t``;
    - selective recomputation (attention scores recomputed): the ``5 a s / h`` term disappears;
    - full recomputation: only each layer's input, ``2 s b h`` (divided by ``t`` with sequence parallel).

    >>> activation_memory(sequence=2048, micro_batch=1, hidden=4096, heads=32) / 2**20   # MiB
    912.0
    """
    s = check_int("sequence", sequence, low=1, high=10 ** 7)
    b = check_int("micro_batch", micro_batch, low=1, high=10 ** 6)
    h = check_int("hidden", hidden, low=1, high=10 ** 7)
    a = check_int("heads", heads, low=1, high=h)
    _divides("hidden", h, "heads", a, "each attention head has hidden / heads dimensions")
    t = check_int("tp", tp, low=1, high=h)
    _divides("heads", a, "tp", t, "each tensor-parallel rank holds whole attention heads")
    if not isinstance(sequence_parallel, bool):
        raise TypeError(f"sequence_parallel must be a bool, got {sequence_parallel!r}")
    mode = _choice("recompute", recompute, RECOMPUTE)
    sbh = float(s) * b * h
    if mode == "full":
        return 2.0 * sbh / (t if sequence_parallel else 1)
    attention = 0.0 if mode == "selective" else 5.0 * a * s / h
    if sequence_parallel:
        return sbh * (34.0 + attention) / t
    return sbh * (10.0 + 24.0 / t + attention / t)


def memory_per_device(params: float, *, dp: int = 1, tp: int = 1, pp: int = 1, zero_stage: int = 0,
                      activations: bool = True, layers: int | None = None, hidden: int | None = None,
                      sequence: int | None = None, heads: int | None = None, micro_batch: int = 1,
                      micro_batches: int | None = None, schedule: str = "1f1b", chunks: int = 1,
                      recompute: str = "none", sequence_parallel: bool = False, param_bytes: float = 2.0,
                      grad_bytes: float = 2.0, optimizer_bytes: float = 12.0) -> dict[str, float]:
    """Bytes each device holds when training a model of ``params`` parameters.

    Model states (Rajbhandari et al. 2020, "ZeRO", section 3): 16-bit parameters (``param_bytes`` = 2) and
    gradients (``grad_bytes`` = 2), and Adam's fp32 master weights, momentum and variance
    (``optimizer_bytes`` = K = 12). Tensor (``tp``) and pipeline (``pp``) parallelism split the model, so each
    device keeps ``1 / (tp * pp)`` of every state; ZeRO then shards over the ``dp`` replicas: stage 1 the
    optimizer states, stage 2 also the gradients, stage 3 also the parameters (``zero_stage`` 0 = plain DP).

    Activations (``activations=True`` needs ``layers``, ``hidden``, ``sequence`` and ``heads``): the stage's
    ``layers / pp`` layers times :func:`activation_memory` times the micro-batches in flight on the first
    stage: ``micro_batches`` for GPipe, ``min(pp, micro_batches)`` for 1F1B (Narayanan et al. 2021), and for
    the interleaved schedule with ``chunks`` = v model chunks per device ``pp * (1 + (pp - 1) / (pp v))``
    micro-batches' worth (Korthikanti et al. 2022, section 4.2.3). ``micro_batches`` defaults to ``pp``.
    ``recompute="full"`` adds once the layer being recomputed, its whole activations for one micro-batch
    (``activation_memory(recompute="none")``; selective's smaller transient is left out, as by Korthikanti et al.).

    Returns a dict with ``"params"``, ``"grads"``, ``"optimizer"``, ``"model_states"``, ``"activations"``
    and ``"total"``, in bytes.
    """
    psi = _params(params)
    dp = check_int("dp", dp, low=1, high=_MAX_DEVICES)
    tp = check_int("tp", tp, low=1, high=_MAX_DEVICES)
    pp = check_int("pp", pp, low=1, high=_MAX_DEVICES)
    stage = check_int("zero_stage", zero_stage, low=0, high=3)
    for name, value in (("param_bytes", param_bytes), ("grad_bytes", grad_bytes),
                        ("optimizer_bytes", optimizer_bytes)):
        check_nonnegative(name, value)
        if value > 64:
            raise ValueError(f"{name} must be in [0, 64], got {value!r}")
    if not isinstance(activations, bool):
        raise TypeError(f"activations must be a bool, got {activations!r}")
    shard = psi / (tp * pp)                      # parameters this device's model slice holds
    states = {
        "params": float(param_bytes) * shard / (dp if stage >= 3 else 1),
        "grads": float(grad_bytes) * shard / (dp if stage >= 2 else 1),
        "optimizer": float(optimizer_bytes) * shard / (dp if stage >= 1 else 1),
    }
    act = 0.0
    if activations:
        missing = [n for n, v in (("layers", layers), ("hidden", hidden), ("sequence", sequence),
                                  ("heads", heads)) if v is None]
        if missing:
            raise ValueError(f"activations=True needs {', '.join(missing)} (or pass activations=False), got None")
        n_layers = check_int("layers", layers, low=1, high=10 ** 6)
        if n_layers < pp:
            raise ValueError(f"layers must be in [pp, 1000000] = [{pp}, 1000000], got {n_layers}")
        _divides("layers", n_layers, "pp", pp, "each pipeline stage holds whole layers")
        sched = _choice("schedule", schedule, SCHEDULES)
        v = check_int("chunks", chunks, low=1, high=n_layers)
        m = pp if micro_batches is None else check_int("micro_batches", micro_batches, low=1, high=10 ** 7)
        per_layer = activation_memory(sequence=sequence, micro_batch=micro_batch, hidden=hidden, heads=heads,
                                      tp=tp, sequence_parallel=sequence_parallel, recompute=recompute)
        if sched == "gpipe":
            in_flight = float(m)
        elif sched == "1f1b":
            in_flight = float(min(pp, m))
        else:
            in_flight = min(pp, m) * (1.0 + (pp - 1) / (pp * v))
        act = per_layer * (n_layers / pp) * in_flight
        if recompute == "full":
            act += activation_memory(sequence=sequence, micro_batch=micro_batch, hidden=hidden, heads=heads, tp=tp,
                                     sequence_parallel=sequence_parallel, recompute="none")
    model_states = sum(states.values())
    return {**states, "model_states": model_states, "activations": act, "total": model_states + act}


def ring_allreduce(n_devices: int, size: float, bandwidth: float, latency: float = 0.0) -> dict[str, float]:
    """Ring all-reduce of ``size`` bytes over ``n_devices``, as its two phases (Patarasuk & Yuan 2009).

    Reduce-scatter: ``n - 1`` steps, each sending ``size / n`` to the next device, leaves each device one
    summed shard; all-gather: ``n - 1`` more steps circulate the shards. Each phase costs
    ``(n - 1) / n * size / bandwidth + (n - 1) * latency``; the total
    ``2 (n - 1) / n * size / bandwidth + 2 (n - 1) latency`` has a bandwidth term bounded by
    ``2 size / bandwidth`` but a latency term growing with ``n``.

    >>> r = ring_allreduce(4, 1e9, 1e9)
    >>> r["reduce_scatter"], r["all_gather"], r["total"]
    (0.75, 0.75, 1.5)
    """
    n = check_int("n_devices", n_devices, low=1, high=_MAX_DEVICES)
    m = check_nonnegative("size", size)
    b = check_positive("bandwidth", bandwidth)
    a = check_nonnegative("latency", latency)
    total = ring_allreduce_time(n, m, b, a)
    return {"reduce_scatter": total / 2, "all_gather": total / 2, "total": total,
            "bandwidth_term": ring_allreduce_time(n, m, b), "latency_term": 2.0 * (n - 1) * a}


def bubble_fraction(stages: int, micro_batches: int, schedule: str = "1f1b", chunks: int = 1) -> float:
    """Idle share of a pipeline step with equal stages (Narayanan et al. 2021, section 2.2).

    The bubble lasts ``(p - 1)`` stage-times for GPipe (Huang et al. 2019) and for 1F1B (same bubble, fewer
    micro-batches in flight), and ``(p - 1) / v`` for the interleaved schedule with ``v`` model chunks per
    device; the step does ``m`` stage-times of useful work, so the idle share is
    ``(p - 1) / (v m + p - 1)`` (``v = 1`` for GPipe and 1F1B). Narayanan et al. quote the ratio of bubble to
    useful time, ``(p - 1) / (v m)``. The interleaved schedule runs the micro-batches in groups of ``p``, so
    ``micro_batches`` must be a multiple of ``stages`` there (Narayanan et al. 2021, section 2.2.2; Megatron-LM
    refuses other counts with its default group size).

    >>> bubble_fraction(4, 8)
    0.2727272727272727
    """
    p = check_int("stages", stages, low=1, high=_MAX_DEVICES)
    m = check_int("micro_batches", micro_batches, low=1, high=10 ** 9)
    sched = _choice("schedule", schedule, SCHEDULES)
    v = check_int("chunks", chunks, low=1, high=10 ** 6)
    if sched != "interleaved" and v != 1:
        raise ValueError(f"chunks must be 1 unless schedule='interleaved', got {v}")
    if sched == "interleaved" and m % p:
        raise ValueError(f"micro_batches must be a multiple of stages = {p} for the interleaved schedule, got {m}")
    return (p - 1) / (v * m + p - 1)


def zero_traffic(params: float, *, dp: int, tp: int = 1, pp: int = 1, zero_stage: int = 0,
                 micro_batches: int = 1, param_bytes: float = 2.0, grad_bytes: float = 2.0) -> float:
    """Bytes each device sends per step to keep its data-parallel group in step (ring collectives).

    The device's model slice holds ``params / (tp pp)`` parameters: ``G`` bytes of 16-bit gradients and ``W``
    bytes of 16-bit parameters. A ring reduce-scatter or all-gather over ``dp`` devices sends ``(dp - 1) / dp`` of
    the buffer from each device, an all-reduce twice that (Patarasuk & Yuan 2009). With ``m`` micro-batches
    (gradient accumulation, or the micro-batches a pipeline needs) per step:

    - ZeRO-0: one all-reduce of the accumulated gradients, ``2 (dp - 1) / dp G``;
    - ZeRO-1: a reduce-scatter of the accumulated gradients, each device updates its shard, an all-gather of
      the parameters: ``(dp - 1) / dp (G + W)``, the same bytes;
    - ZeRO-2: only a gradient shard is kept, so the gradients are reduce-scattered after every micro-batch's
      backward pass: ``(dp - 1) / dp (m G + W)``;
    - ZeRO-3: the parameters are also gathered before every micro-batch's forward and backward pass (they are
      not kept whole in between, which would give the memory back): ``(dp - 1) / dp (m G + 2 m W)``.

    With ``m = 1`` stages 0-2 send what plain data parallelism sends and ZeRO-3 1.5 times that (Rajbhandari et
    al. 2020, section 7); the ``m``-fold terms are why pipelines keep to stages 0 and 1
    (:data:`PIPELINE_ZERO_STAGES`).

    >>> zero_traffic(1e9, dp=2) / 1e9                       # all-reduce 2 GB of gradients over 2 devices
    2.0
    >>> [zero_traffic(1e9, dp=8, zero_stage=z) / zero_traffic(1e9, dp=8) for z in range(4)]   # ZeRO paper
    [1.0, 1.0, 1.0, 1.5]
    >>> zero_traffic(1e9, dp=8, zero_stage=2, micro_batches=16) / zero_traffic(1e9, dp=8, zero_stage=1)
    8.5
    """
    psi = _params(params)
    d = check_int("dp", dp, low=1, high=_MAX_DEVICES)
    t = check_int("tp", tp, low=1, high=_MAX_DEVICES)
    p = check_int("pp", pp, low=1, high=_MAX_DEVICES)
    stage = check_int("zero_stage", zero_stage, low=0, high=3)
    m = check_int("micro_batches", micro_batches, low=1, high=10 ** 9)
    for name, value in (("param_bytes", param_bytes), ("grad_bytes", grad_bytes)):
        check_nonnegative(name, value)
        if value > 64:
            raise ValueError(f"{name} must be in [0, 64], got {value!r}")
    share = (d - 1) / d
    g, w = float(grad_bytes) * psi / (t * p), float(param_bytes) * psi / (t * p)
    sent = {0: 2.0 * g, 1: g + w, 2: m * g + w, 3: m * g + 2.0 * m * w}[stage]
    return share * sent


def micro_batch_options(global_batch: int, dp: int) -> list[int]:
    """The micro-batch counts :func:`step_time` accepts: divisors of the samples per replica.

    >>> micro_batch_options(1024, 32)
    [1, 2, 4, 8, 16, 32]
    """
    batch = check_int("global_batch", global_batch, low=1, high=10 ** 9)
    dp = check_int("dp", dp, low=1, high=batch)
    if batch % dp:
        raise ValueError(f"global_batch must be a multiple of dp = {dp}, got {batch}")
    per_replica = batch // dp
    return [m for m in range(1, per_replica + 1) if per_replica % m == 0]


@dataclass(frozen=True)
class TrainingStep:
    """One training step of a DP x TP x PP job (see :func:`step_time`). Times in seconds, memory in bytes."""

    dp: int
    tp: int
    pp: int
    micro_batches: int
    micro_batch: int
    time: float                 # the step's wall-clock time
    compute: float              # useful compute per device
    bubble: float               # pipeline idle time
    tp_comm: float              # tensor-parallel all-reduces (on the critical path)
    dp_comm: float              # gradient all-reduce, before overlap
    dp_exposed: float           # the part of dp_comm not hidden behind compute
    efficiency: float           # speedup / devices
    samples_per_s: float
    speedup: float              # over one device at full kernel efficiency holding the whole model
    memory: dict = field(repr=False)
    device_memory: float = 80e9      # bytes one device holds
    gpus_per_node: int = 8
    limits: tuple[str, ...] = ()     # why not feasible: entries of LIMITS, empty when the step fits

    def __post_init__(self) -> None:
        check_fields(self)
        for name in ("dp", "tp", "pp", "micro_batches", "micro_batch", "gpus_per_node"):
            check_int(name, getattr(self, name), low=1, high=10 ** 9)
        check_positive("device_memory", self.device_memory)
        if not isinstance(self.memory, dict) or "total" not in self.memory:
            raise TypeError(f"memory must be a dict of byte counts with a 'total' entry, got {self.memory!r:.80}")
        for key, value in self.memory.items():
            check_nonnegative(f"memory[{key!r}]", value)
        if not isinstance(self.limits, tuple) or any(x not in LIMITS for x in self.limits):
            raise ValueError(f"limits must be a tuple of entries of {LIMITS}, got {self.limits!r}")
        expected = tuple(x for x, hit in zip(LIMITS, (self.memory["total"] > self.device_memory,
                                                      self.tp > self.gpus_per_node)) if hit)
        if self.limits != expected:
            raise ValueError(f"limits must be {expected} for memory {self.memory['total']:g} bytes of "
                             f"device_memory {self.device_memory:g} and tp {self.tp} on gpus_per_node "
                             f"{self.gpus_per_node}, got {self.limits!r}")

    @property
    def feasible(self) -> bool:
        """True when the step fits in memory and its tensor parallelism stays within a node."""
        return not self.limits


def kernel_efficiency(tokens: float, peak_efficiency: float = 0.5, half_tokens: float = 256.0) -> float:
    """Share of peak that :func:`step_time` assumes for a GEMM with ``tokens`` rows (micro-batch x sequence):
    ``peak_efficiency * tokens / (tokens + half_tokens)`` (an illustrative assumption)."""
    tokens = check_positive("tokens", tokens)
    peak = check_positive("peak_efficiency", peak_efficiency)
    if peak > 1:
        raise ValueError(f"peak_efficiency must be in (0, 1], got {peak:g}")
    return _kernel_efficiency(tokens, peak, check_positive("half_tokens", half_tokens))


def _kernel_efficiency(tokens: float, peak_efficiency: float, half_tokens: float) -> float:
    # Small matrices under-use the GPU: model the achieved share of peak as saturating in the rows
    # (tokens) of each GEMM, reaching half of peak_efficiency at half_tokens (an assumption).
    return peak_efficiency * tokens / (tokens + half_tokens)


def step_time(params: float, *, devices: int, dp: int, tp: int = 1, pp: int = 1, global_batch: int,
              micro_batches: int = 1, sequence: int = 2048, layers: int, hidden: int, heads: int,
              peak_flops: float = 312e12, peak_efficiency: float = 0.5, half_tokens: float = 256.0,
              device_memory: float = 80e9, gpus_per_node: int = 8, intra_bandwidth: float = 300e9,
              inter_bandwidth: float = 25e9, intra_latency: float = NVLINK_STEP_LATENCY,
              inter_latency: float = NETWORK_STEP_LATENCY, schedule: str = "1f1b", chunks: int = 1,
              zero_stage: int = 1, recompute: str = "selective", sequence_parallel: bool = False,
              overlap: float = 0.5) -> TrainingStep:
    """Time of one step of DP x TP x PP training of a ``params``-parameter transformer.

    Model (Shoeybi et al. 2019; Narayanan et al. 2021):

    - compute: ``6 params tokens`` FLOPs per step (``8`` with full recomputation), split over all devices, at
      ``peak_flops`` times a kernel efficiency that rises with the micro-batch's tokens ``b s``
      (``peak_efficiency * b s / (b s + half_tokens)``: small micro-batches run less efficiently);
    - tensor parallelism: per layer and micro-batch, two all-reduces of the ``b s h`` activations forward and
      two backward (Megatron-LM's column-then-row split), on the intra-node link; on the critical path;
    - pipeline: ``m`` micro-batches of ``b`` samples each make the step last ``(m + (p - 1) / v)`` micro-batch
      times (:func:`bubble_fraction`); point-to-point activation sends between stages are ignored;
    - data parallelism: a ring all-reduce (:func:`~hetlab.communication.ring_allreduce_time`) of the stage's 16-bit
      gradients on the inter-node link, of which ``overlap`` hides behind compute, capped by the compute time.

    Links: ``intra_*`` within a node, ``inter_*`` between nodes; step latencies default to the book's NCCL ring
    estimates (:data:`~hetlab.communication.NVLINK_STEP_LATENCY`, :data:`~hetlab.communication.NETWORK_STEP_LATENCY`).
    ``speedup`` is over one hypothetical device holding the whole model at ``peak_efficiency`` with no
    recomputation (``6 params tokens`` FLOPs, like for like).

    ``dp * tp * pp`` must equal ``devices``; ``global_batch`` must split evenly into ``dp`` replicas and each
    replica's samples into ``micro_batches`` (so ``micro_batches <= global_batch / dp``): otherwise ValueError.
    A configuration whose memory (:func:`memory_per_device`) exceeds ``device_memory``, or whose ``tp`` spans
    more than ``gpus_per_node`` GPUs, comes back with ``feasible=False`` and the reasons in ``limits``.
    """
    psi = _params(params)
    n = check_int("devices", devices, low=1, high=_MAX_DEVICES)
    dp = check_int("dp", dp, low=1, high=n)
    tp = check_int("tp", tp, low=1, high=n)
    pp = check_int("pp", pp, low=1, high=n)
    if dp * tp * pp != n:
        raise ValueError(f"dp * tp * pp must equal devices = {n}, got {dp} * {tp} * {pp} = {dp * tp * pp}")
    batch = check_int("global_batch", global_batch, low=1, high=10 ** 9)
    if batch % dp:
        raise ValueError(f"global_batch must be a multiple of dp = {dp}, got {batch}")
    per_replica = batch // dp
    m = check_int("micro_batches", micro_batches, low=1, high=per_replica)
    if per_replica % m:
        raise ValueError(f"micro_batches must divide the samples per replica ({per_replica}), got {m}")
    b = per_replica // m
    s = check_int("sequence", sequence, low=1, high=10 ** 7)
    n_layers = check_int("layers", layers, low=pp, high=10 ** 6)
    _divides("layers", n_layers, "pp", pp, "each pipeline stage holds whole layers")
    h = check_int("hidden", hidden, low=1, high=10 ** 7)
    _divides("heads", check_int("heads", heads, low=1, high=h), "tp", tp,
             "each tensor-parallel rank holds whole attention heads")
    peak = check_positive("peak_flops", peak_flops)
    eff_max = check_positive("peak_efficiency", peak_efficiency)
    if eff_max > 1:
        raise ValueError(f"peak_efficiency must be in (0, 1], got {eff_max}")
    half = check_nonnegative("half_tokens", half_tokens)
    mem_cap = check_positive("device_memory", device_memory)
    per_node = check_int("gpus_per_node", gpus_per_node, low=1, high=_MAX_DEVICES)
    intra = check_positive("intra_bandwidth", intra_bandwidth)
    inter = check_positive("inter_bandwidth", inter_bandwidth)
    alpha_intra = check_nonnegative("intra_latency", intra_latency, high=1.0)
    alpha_inter = check_nonnegative("inter_latency", inter_latency, high=1.0)
    v = check_int("chunks", chunks, low=1, high=n_layers)
    ov = check_real("overlap", overlap)
    if not 0.0 <= ov <= 1.0:
        raise ValueError(f"overlap must be in [0, 1], got {ov}")
    recompute = _choice("recompute", recompute, RECOMPUTE)
    bubble_fraction(pp, m, schedule, v)          # validates schedule and chunks

    memory = memory_per_device(psi, dp=dp, tp=tp, pp=pp, zero_stage=zero_stage, layers=n_layers, hidden=h,
                               sequence=s, heads=heads, micro_batch=b, micro_batches=m, schedule=schedule,
                               chunks=v, recompute=recompute, sequence_parallel=sequence_parallel)
    tokens = float(batch) * s
    flops = (8.0 if recompute == "full" else 6.0) * psi * tokens
    eff = _kernel_efficiency(b * s, eff_max, half)
    compute = flops / (n * peak * eff)                       # per device, all micro-batches
    # Megatron-LM: 2 all-reduces forward + 2 backward per layer and micro-batch, b*s*h 16-bit values each.
    tp_one = _ring(tp, 2.0 * b * s * h, intra, alpha_intra, "intra_bandwidth", "intra_latency")
    tp_comm = 4.0 * (n_layers / pp) * m * tp_one
    per_micro = (compute + tp_comm) / m
    pipeline = per_micro * (m + (pp - 1) / v)
    bubble = pipeline - compute - tp_comm
    dp_comm = _ring(dp, 2.0 * psi / (tp * pp), inter, alpha_inter, "inter_bandwidth", "inter_latency")
    hidden_comm = min(ov * dp_comm, compute)
    exposed = dp_comm - hidden_comm
    total = pipeline + exposed
    single = 6.0 * psi * tokens / (peak * eff_max)          # like for like: the baseline never recomputes
    check_finite_result([total, single, compute, tp_comm, dp_comm], params=psi, peak_flops=peak,
                        intra_bandwidth=intra, inter_bandwidth=inter, half_tokens=half)
    limits = tuple(x for x, hit in zip(LIMITS, (memory["total"] > mem_cap, tp > per_node)) if hit)
    return TrainingStep(dp=dp, tp=tp, pp=pp, micro_batches=m, micro_batch=b, time=total, compute=compute,
                        bubble=bubble, tp_comm=tp_comm, dp_comm=dp_comm, dp_exposed=exposed,
                        efficiency=single / (total * n) if total > 0 else 0.0,
                        samples_per_s=batch / total, speedup=single / total, memory=memory,
                        device_memory=mem_cap, gpus_per_node=per_node, limits=limits)


def data_parallel_step(compute_time: Any, n_devices: Any, grad_size: Any, bandwidth: Any, latency: Any = 0.0,
                       overlap: Any = 0.0, backward_share: Any = 1.0) -> Any:
    """Step time of synchronous data parallel training with a fixed global batch.

    Each of ``n`` devices computes ``compute_time / n``, then the gradients (``grad_size``) are
    summed by ring all-reduce (:func:`~hetlab.communication.ring_allreduce_time`); a fraction
    ``overlap`` of the all-reduce hides behind the backward pass (Li et al. 2020, PyTorch DDP),
    up to the compute time. Accepts arrays for sliders and curves.

    ``backward_share`` (default 1: the whole compute can hide communication) is the share of the
    per-device compute that is backward pass; only the backward pass can hide the gradient
    all-reduce, so the hidden time is ``min(overlap * comm, backward_share * compute / n)``
    (about 2/3 for a transformer, whose backward pass costs about twice the forward pass).
    """
    c = as_float_array("compute_time", compute_time, low=0.0, finite=True)
    n = as_float_array("n_devices", n_devices, low=1.0, finite=True, integer=True)
    as_float_array("grad_size", grad_size, low=0.0, finite=True)
    as_float_array("bandwidth", bandwidth, low=0.0, low_open=True)
    as_float_array("latency", latency, low=0.0, finite=True)
    o = as_float_array("overlap", overlap, low=0.0, high=1.0)
    share = as_float_array("backward_share", backward_share, low=0.0, high=1.0)
    with np.errstate(over="ignore", invalid="ignore"):
        comm = np.asarray(ring_allreduce_time(n, grad_size, bandwidth, latency))
        local = c / n
        hidden = np.minimum(o * comm, share * local)
        step = local + comm - hidden
    check_finite_result(step, compute_time=compute_time, n_devices=n_devices, grad_size=grad_size,
                        bandwidth=bandwidth, latency=latency)
    return float(step) if step.ndim == 0 else step
