"""Simulators for the AI scenarios: pipeline and data parallel training, and an inference server.

Timelines are :class:`~hetlab.schedule.Schedule` objects, so the same Gantt chart,
validation and metrics apply to them as to any scheduler's result.

>>> s = pipeline_schedule([1, 1, 1, 1], micro_batches=8, method="gpipe")
>>> round(s.info["bubble_fraction"], 4)     # (p - 1) / (m + p - 1) = 3 / 11
0.2727
"""
from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from hetlab._validate import (
    as_float_array,
    check_bool,
    check_choice,
    check_finite_result,
    check_instance,
    check_int,
    check_nonnegative,
    check_positive,
    check_seed,
)
from hetlab.devices import Device, Link
from hetlab.schedule import Schedule
from hetlab.schedulers import execute_plan
from hetlab.tasks import Task, TaskGraph

__all__ = ["pipeline_schedule", "data_parallel_step", "training_throughput", "bursty_arrivals", "serve",
           "ServeResult"]


#: Size limits: a pipeline timeline of more tasks, or a serving run of more requests, takes seconds to build.
MAX_STAGES = 1_000
MAX_MICRO_BATCHES = 10_000
MAX_PIPELINE_TASKS = 200_000
MAX_REQUESTS = 2_000_000
MAX_SERVERS = 10_000

# --- pipeline parallel -------------------------------------------------------------------------

def pipeline_schedule(stage_times: Sequence[float], micro_batches: int, *, method: str = "gpipe",
                      backward_ratio: float = 2.0, activation: float = 0.0, link: Link | None = None) -> Schedule:
    """Timeline of one training step of a pipeline with one stage per device.

    Each micro-batch ``k`` runs forward ``F{k}@S{s}`` through stages ``s = 0 .. p-1``, then backward
    ``B{k}@S{s}`` from the last stage back to the first; a backward pass takes ``backward_ratio`` times
    the stage's forward time (``0`` gives a forward-only, inference pipeline). ``activation`` is
    the data each micro-batch sends to the next stage, moved over ``link``.

    ``method``: ``"gpipe"`` (Huang et al. 2019): all forwards, then all backwards;
    ``"1f1b"`` (PipeDream-Flush, Narayanan et al. 2021): after ``p - s - 1`` warm-up forwards each
    stage alternates one forward and one backward, so at most ``p - s`` micro-batches' activations
    are held at once. ``info`` reports ``bubble_fraction`` (idle share of devices x makespan) and
    ``peak_activations`` per stage.
    """
    times = as_float_array("stage_times", stage_times, low=0.0, low_open=True, finite=True)
    if times.ndim != 1 or times.size == 0:
        raise ValueError(f"stage_times must be a non-empty 1-D sequence, got shape {times.shape}")
    if times.size > MAX_STAGES:
        raise ValueError(f"stage_times must list at most {MAX_STAGES} stages, got {times.size}")
    m = check_int("micro_batches", micro_batches, low=1, high=MAX_MICRO_BATCHES)
    ratio = check_nonnegative("backward_ratio", backward_ratio, high=100.0)
    check_choice("method", method, ("gpipe", "1f1b"))
    activation = check_nonnegative("activation", activation)
    if link is not None:
        check_instance("link", link, Link)
    p = times.size
    if p * m > MAX_PIPELINE_TASKS // 2:
        raise ValueError(f"stage_times x micro_batches must be at most {MAX_PIPELINE_TASKS // 2:,} forward passes "
                         f"(a timeline of that many tasks takes seconds to build), got {p} x {m} = {p * m:,}")
    if not np.isfinite(times.sum() * (1.0 + ratio) * (m + p)) or times.sum() * (1.0 + ratio) * (m + p) > 1e300:
        raise ValueError(f"stage_times, backward_ratio and micro_batches give a step longer than 1e300 "
                         f"(stage_times sum {times.sum():g}, backward_ratio={ratio:g}, micro_batches={m}): rescale")
    link = link or Link()
    devices = [Device(f"S{s}", "GPU", link=link) for s in range(p)]
    tasks, edges = [], []
    for s in range(p):
        for k in range(m):
            tasks.append(Task(f"F{k}@S{s}", times={f"S{s}": float(times[s])}, op="forward"))
            if s > 0:
                edges.append((f"F{k}@S{s - 1}", f"F{k}@S{s}", activation))
            if ratio > 0:
                tasks.append(Task(f"B{k}@S{s}", times={f"S{s}": float(times[s]) * ratio}, op="backward"))
    if ratio > 0:
        for k in range(m):
            edges.append((f"F{k}@S{p - 1}", f"B{k}@S{p - 1}", 0.0))
            for s in range(p - 1):
                edges.append((f"B{k}@S{s + 1}", f"B{k}@S{s}", activation))
    sequences = {}
    for s in range(p):
        forwards = [f"F{k}@S{s}" for k in range(m)]
        backwards = [f"B{k}@S{s}" for k in range(m)] if ratio > 0 else []
        if method == "gpipe" or ratio == 0:
            sequences[f"S{s}"] = forwards + backwards
        else:
            warm = min(p - s - 1, m)
            seq = forwards[:warm]
            for k in range(m - warm):
                seq += [forwards[warm + k], backwards[k]]
            sequences[f"S{s}"] = seq + backwards[m - warm:]
    graph = TaskGraph(tasks, edges)
    plan = execute_plan(graph, devices, sequences, policy=method)
    bubble = 1.0 - plan.busy.sum() / (p * plan.makespan)
    peaks = [_peak_in_flight(plan, s, m) for s in range(p)] if ratio > 0 else [1] * p
    info = {"bubble_fraction": float(bubble), "peak_activations": peaks, "stages": p, "micro_batches": m}
    return Schedule(graph, plan.devices, plan.device_of, plan.start, plan.end, method, info=info)


def _peak_in_flight(plan: Schedule, s: int, m: int) -> int:
    # A micro-batch's activations live on stage s from its forward's start to its backward's end.
    idx = plan.graph.index
    starts = [plan.start[idx[f"F{k}@S{s}"]] for k in range(m)]
    ends = [plan.end[idx[f"B{k}@S{s}"]] for k in range(m)]
    events = sorted([(t, 1) for t in starts] + [(t, -1) for t in ends], key=lambda e: (e[0], e[1]))
    live = peak = 0
    for _, delta in events:
        live += delta
        peak = max(peak, live)
    return peak


# --- data parallel -------------------------------------------------------------------------------

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
    from hetlab.communication import ring_allreduce_time

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


def training_throughput(samples_per_step: float, compute_time: float, data_parallel: Any, pipeline_stages: Any,
                        micro_batches: Any, grad_size: Any, bandwidth: Any, latency: Any = 0.0,
                        overlap: float = 0.0) -> tuple[Any, Any]:
    """Samples per time unit of data parallel x pipeline parallel training, and the speed-up
    over one device: the model is cut into ``pipeline_stages`` equal stages (GPipe bubble
    ``(p - 1) / (m + p - 1)``), and ``data_parallel`` replicas all-reduce each stage's share of the
    gradients at the end of the step. Returns ``(throughput, speedup)``.
    """
    from hetlab.communication import ring_allreduce_time
    from hetlab.formulas import gpipe_bubble_fraction

    samples_per_step = check_positive("samples_per_step", samples_per_step)
    c = check_positive("compute_time", compute_time)
    d = as_float_array("data_parallel", data_parallel, low=1.0, finite=True, integer=True)
    p = as_float_array("pipeline_stages", pipeline_stages, low=1.0, finite=True, integer=True)
    m = as_float_array("micro_batches", micro_batches, low=1.0, finite=True, integer=True)
    g = as_float_array("grad_size", grad_size, low=0.0, finite=True)
    as_float_array("bandwidth", bandwidth, low=0.0, low_open=True)
    as_float_array("latency", latency, low=0.0, finite=True)
    o = check_nonnegative("overlap", overlap, high=1.0)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        busy = c / (d * p)                              # each device's share of the compute
        pipeline = busy / (1.0 - gpipe_bubble_fraction(p, m))
        comm = np.asarray(ring_allreduce_time(d, g / p, bandwidth, latency))
        step = pipeline + comm - np.minimum(o * comm, busy)
        throughput = samples_per_step / step
        speedup = c / step
    inputs = {"samples_per_step": samples_per_step, "compute_time": compute_time, "data_parallel": data_parallel,
              "pipeline_stages": pipeline_stages, "micro_batches": micro_batches, "grad_size": grad_size,
              "bandwidth": bandwidth, "latency": latency}
    check_finite_result(throughput, **inputs)
    check_finite_result(step, **inputs)
    if np.ndim(throughput) == 0:
        return float(throughput), float(speedup)
    return throughput, speedup


# --- inference serving --------------------------------------------------------------------------

def bursty_arrivals(rate: float, duration: float, *, burst_factor: float = 10.0, burst_share: float = 0.1,
                    mean_burst: float = 1.0, seed: int = 0) -> np.ndarray:
    """Request arrival times from a two-state Markov-modulated Poisson process.

    The process alternates between calm periods at ``rate`` and bursts at ``rate * burst_factor``
    (exponential lengths; bursts last ``mean_burst`` on average and take ``burst_share`` of the
    time). Vectorised: segment lengths, then Poisson counts, then sorted uniform times.
    """
    rate = check_positive("rate", rate)
    duration = check_positive("duration", duration)
    factor = check_positive("burst_factor", burst_factor)
    share = check_nonnegative("burst_share", burst_share)
    if share >= 1:
        raise ValueError(f"burst_share must be in [0, 1), got {share}")
    mean_burst = check_positive("mean_burst", mean_burst)
    rng = np.random.default_rng(check_seed("seed", seed))
    requests = rate * duration * ((1 - share) + share * factor)
    if not requests <= MAX_REQUESTS:
        raise ValueError(f"rate={rate:g}, duration={duration:g}, burst_factor={factor:g} and burst_share={share:g} "
                         f"expect {requests:.3g} requests; at most {MAX_REQUESTS:,} (lower the rate or the duration)")
    mean_calm = mean_burst * (1 - share) / share if share > 0 else duration
    segments = duration / (mean_burst + mean_calm)
    if not segments <= MAX_REQUESTS:
        raise ValueError(f"mean_burst={mean_burst:g} and burst_share={share:g} cut duration={duration:g} into "
                         f"{segments:.3g} calm/burst periods; at most {MAX_REQUESTS:,} (raise mean_burst)")
    expected = int(segments) + 4
    segments = []
    total = 0.0
    while total < duration:  # usually one pass; loops again only if the draw fell short
        calm = rng.exponential(mean_calm, expected)
        burst = rng.exponential(mean_burst, expected) if share > 0 else np.zeros(expected)
        pair = np.column_stack([calm, burst]).ravel()
        segments.append(pair)
        total += pair.sum()
    lengths = np.concatenate(segments)
    bounds = np.concatenate([[0.0], np.cumsum(lengths)])
    keep = bounds[:-1] < duration
    starts, ends = bounds[:-1][keep], np.minimum(bounds[1:][keep], duration)
    rates = np.where(np.arange(starts.size) % 2 == 0, rate, rate * factor)
    counts = rng.poisson(rates * (ends - starts))
    seg = np.repeat(np.arange(starts.size), counts)
    times = starts[seg] + rng.random(seg.size) * (ends - starts)[seg]
    return np.sort(times)


@dataclass(frozen=True)
class ServeResult:
    """Per-request latencies and per-device busy time of an inference-server run."""

    arrivals: np.ndarray
    finish: np.ndarray
    device_of: np.ndarray
    batches: list = field(repr=False)   # (device, start, end, request indices)
    busy: np.ndarray = field(repr=False)
    useful: np.ndarray = field(repr=False)
    horizon: float = 0.0

    def __post_init__(self) -> None:
        n = None
        for name in ("arrivals", "finish"):
            arr = as_float_array(name, getattr(self, name), low=0.0, finite=True)
            if arr.ndim != 1 or arr.size == 0 or (n is not None and arr.size != n):
                raise ValueError(f"arrivals and finish must be non-empty, 1-D, with one entry per request; {name} "
                                 f"has shape {arr.shape}")
            n = arr.size
            object.__setattr__(self, name, arr)
        if (self.finish < self.arrivals).any():
            raise ValueError("finish must not be earlier than arrivals for any request")
        device_of = as_float_array("device_of", self.device_of, low=0.0, finite=True, integer=True)
        if device_of.shape != (n,):
            raise ValueError(f"device_of must have one entry per request ({n}), got shape {device_of.shape}")
        object.__setattr__(self, "device_of", device_of.astype(int))
        check_instance("batches", self.batches, list)
        if not self.batches or not all(isinstance(b, tuple) and len(b) == 4 for b in self.batches):
            raise ValueError("batches must be a non-empty list of (device, start, end, request indices) tuples")
        for name in ("busy", "useful"):
            arr = as_float_array(name, getattr(self, name), low=0.0, finite=True)
            if arr.ndim != 1 or arr.size == 0:
                raise ValueError(f"{name} must be 1-D with one entry per device, got shape {arr.shape}")
            object.__setattr__(self, name, arr)
        if self.useful.shape != self.busy.shape:
            raise ValueError(f"busy and useful must have one entry per device each, got {self.busy.size} and "
                             f"{self.useful.size}")
        if self.horizon == 0.0:     # not given: the run ends with its last finish or arrival
            object.__setattr__(self, "horizon", float(max(self.finish.max(initial=0.0),
                                                          self.arrivals.max(initial=0.0))) or 1.0)
        object.__setattr__(self, "horizon", check_positive("horizon", self.horizon))

    @property
    def latency(self) -> np.ndarray:
        return self.finish - self.arrivals

    def percentile(self, q: float) -> float:
        """The ``q``-th percentile of the latencies, ``q`` in [0, 100]."""
        q = check_nonnegative("q", q, high=100.0)
        return float(np.percentile(self.latency, q)) if self.latency.size else 0.0

    @property
    def p50(self) -> float:
        return self.percentile(50)

    @property
    def p99(self) -> float:
        return self.percentile(99)

    @property
    def utilisation(self) -> np.ndarray:
        """Share of the run each device spends computing a batch."""
        return self.busy / self.horizon

    @property
    def batch_efficiency(self) -> float:
        """Share of the devices' busy time spent on per-request work rather than per-batch overhead."""
        total = self.busy.sum()
        return float(self.useful.sum() / total) if total > 0 else 0.0

    @property
    def mean_batch(self) -> float:
        return float(np.mean([len(b[3]) for b in self.batches])) if self.batches else 0.0

    @cached_property
    def schedule(self) -> Schedule:
        """The batches as a Schedule (one task per batch), for a Gantt chart."""
        n_dev = self.busy.size
        devices = [Device(f"GPU{j}", "GPU") for j in range(n_dev)]
        tasks = [Task(f"batch{k}", times={f"GPU{d}": e - s}, op=f"b{len(r)}")
                 for k, (d, s, e, r) in enumerate(self.batches)]
        dev = [b[0] for b in self.batches]
        return Schedule(TaskGraph(tasks), devices, dev, [b[1] for b in self.batches],
                        [b[2] for b in self.batches], "server")

    def summary(self) -> str:
        return (f"P50 {self.p50 * 1e3:.0f} ms, P99 {self.p99 * 1e3:.0f} ms, "
                f"mean batch {self.mean_batch:.1f}, busy {self.utilisation.mean():.0%}, "
                f"useful share of busy time {self.batch_efficiency:.0%}")


def serve(arrivals, n_devices: int = 4, *, max_batch: int = 8, max_wait: float = 0.01,
          batch_overhead: float = 0.02, per_request: float = 0.005, steal: bool = True,
          sizes=None) -> ServeResult:
    """Discrete-event simulation of a GPU inference server with dynamic batching.

    Requests are dispatched round-robin to per-device queues. A free device takes up to
    ``max_batch`` requests from its queue, once the batch is full or its oldest request has
    waited ``max_wait``; a batch takes ``batch_overhead + per_request * (sum of its sizes)``
    (weights are read once per batch, so bigger batches amortise it). ``sizes`` gives each
    request's relative cost (e.g. its token count; default 1). With ``steal``, a device whose
    queue is empty takes from the longest other queue. ``max_batch=1`` turns batching off.
    Times in seconds.
    """
    arr = as_float_array("arrivals", arrivals, low=0.0, finite=True, size_limit=MAX_REQUESTS)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"arrivals must be a non-empty 1-D sequence of request times, got shape {arr.shape}")
    order = np.argsort(arr, kind="stable")
    arr = arr[order]
    if sizes is None:
        size = np.ones(arr.size)
    else:
        size = as_float_array("sizes", sizes, low=0.0, finite=True)
        if size.shape != arr.shape:
            raise ValueError(f"sizes must have one entry per arrival ({arr.size}), got shape {size.shape}")
        size = size[order]
    n_dev = check_int("n_devices", n_devices, low=1, high=MAX_SERVERS)
    steal = check_bool("steal", steal)
    max_batch = check_int("max_batch", max_batch, low=1)
    max_wait = check_nonnegative("max_wait", max_wait)
    overhead = check_nonnegative("batch_overhead", batch_overhead)
    per_request = check_positive("per_request", per_request)
    longest = arr.max() + max_wait + arr.size * (overhead + per_request * float(size.max()))
    if not longest < 1e300:
        raise ValueError(f"arrivals, sizes, max_wait={max_wait:g}, batch_overhead={overhead:g} and "
                         f"per_request={per_request:g} could give finish times above 1e300: rescale them")
    n = arr.size
    queues = [deque() for _ in range(n_dev)]
    idle = [True] * n_dev
    timer = [np.inf] * n_dev
    finish = np.zeros(n)
    device_of = np.zeros(n, dtype=int)
    busy = np.zeros(n_dev)
    useful = np.zeros(n_dev)
    batches = []
    events: list[tuple[float, int, int, int]] = []  # (time, order, kind, device or request)
    ARRIVE, FREE, TIMER = 0, 1, 2
    for i in range(n):
        events.append((float(arr[i]), 0, ARRIVE, i))
    heapq.heapify(events)
    seq = 1

    def try_start(d: int, t: float) -> None:
        nonlocal seq
        q = queues[d]
        if not q and steal:
            longest = max(range(n_dev), key=lambda j: len(queues[j]))
            q = queues[longest]
        if not q:
            return
        if len(q) < max_batch and t < arr[q[0]] + max_wait:
            due = float(arr[q[0]] + max_wait)
            if due < timer[d]:
                timer[d] = due
                heapq.heappush(events, (due, seq, TIMER, d))
                seq += 1
            return
        take = [q.popleft() for _ in range(min(max_batch, len(q)))]
        work = per_request * float(size[take].sum())
        service = overhead + work
        finish[take] = t + service
        device_of[take] = d
        busy[d] += service
        useful[d] += work
        batches.append((d, t, t + service, take))
        idle[d] = False
        timer[d] = np.inf
        heapq.heappush(events, (t + service, seq, FREE, d))
        seq += 1

    while events:
        t, _, kind, x = heapq.heappop(events)
        if kind == ARRIVE:
            d = x % n_dev
            queues[d].append(x)
            if idle[d]:
                try_start(d, t)
            if steal:
                for j in range(n_dev):
                    if idle[j] and j != d:
                        try_start(j, t)
        elif kind == FREE:
            idle[x] = True
            try_start(x, t)
        elif idle[x] and t >= timer[x]:
            timer[x] = np.inf
            try_start(x, t)
    horizon = float(max(finish.max(), arr.max())) or 1.0
    return ServeResult(arr, finish, device_of, batches, busy, useful, horizon)
