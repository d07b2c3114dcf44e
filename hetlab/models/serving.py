"""LLM inference serving as a seeded discrete-event simulation.

One idea: how a batching policy turns a stream of generation requests into latency and GPU time.

A request arrives, is pre-processed on a CPU pool (tokenisation; FIFO over ``cpu_workers``), is dispatched to
one of ``gpus`` per-GPU queues (round robin or least loaded; with ``steal`` a GPU with room and an empty queue
takes the oldest request of the longest other queue), then generates ``output`` tokens after a ``prompt``:

- **prefill** processes the whole prompt in one iteration and yields the first token (compute-bound: cost
  grows with the prompt's tokens); **decode** yields one token per iteration for every running sequence
  (memory-bound: each iteration reads the weights once, so a bigger batch shares that cost). One iteration
  with ``B`` running sequences and ``P`` prompt tokens to prefill takes
  ``step_base + step_per_sequence * B + prefill_per_token * P`` (``cost="sum"``, the default: reading the
  weights and the prefill matmuls do not overlap, a conservative bound) or, roofline-style,
  ``max(step_base + step_per_sequence * B, prefill_per_token * P)`` (``cost="max"``: the weights stream in
  while the prefill computes, so an iteration takes the longer of memory and compute time);
- **request-level batching** (``policy="static"``; with ``max_wait > 0`` it is dynamic batching): a free GPU
  takes up to ``max_batch`` queued requests, prefills them together and decodes until the longest is done; no
  request joins or leaves in between and all return at the end (Yu et al. 2022, Orca, section 2), so a
  request's first token reaches its user with the whole batch (``first_token == finish``);
- **iteration-level (continuous) batching** (``policy="continuous"``, Orca, OSDI 2022; vLLM, Kwon et al.,
  SOSP 2023): every iteration first admits queued requests while the batch and the KV cache have room, then
  runs one step for every running sequence (a joiner's prefill rides in it and yields its first token, which is
  streamed to the user at once), then retires the sequences that produced their last token;
- **KV cache**: each running sequence reserves ``prompt + output`` tokens of a GPU's ``kv_capacity`` (as Orca
  does; vLLM's paging reserves on demand, which admits more): memory bounds the running batch.

Reports TTFT, time per output token (TPOT), request latency percentiles, tokens/s, the GPUs' busy share and
the time-average number of requests on the GPUs (with :attr:`ServingResult.admitted`, Little's law
``L = lambda W`` can be checked). :func:`throughput_bound` is the most output tokens per second continuous
batching can deliver, the yardstick for utilisation (busy share cannot be one: a decode iteration of one
sequence keeps a GPU as busy as one of ``max_batch``). Between events the batch is fixed, so the simulation
jumps over runs of identical decode iterations instead of stepping through them: its cost grows with the
number of requests, not of tokens.

:func:`kv_cache_bytes` sizes the KV cache of a model (what ``kv_capacity`` counts in tokens). Request streams
to feed the simulation are in :mod:`hetlab.workloads.requests`.

>>> from hetlab.workloads.requests import bursty_requests
>>> w = bursty_requests(rate=20, duration=10, seed=1)
>>> a = simulate(w.arrivals, w.prompt, w.output, policy="static", max_batch=8)
>>> b = simulate(w.arrivals, w.prompt, w.output, policy="continuous", max_batch=8)
>>> b.p99 < a.p99
True
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hetlab._validate import as_float_array, check_bool, check_choice, check_int, check_nonnegative, check_positive
from hetlab.models._serving_loop import preprocess, serve

__all__ = ["simulate", "ServingResult", "POLICIES", "DISPATCH", "ITERATION_COSTS", "kv_cache_bytes",
           "throughput_bound"]

POLICIES = ("static", "continuous")
DISPATCH = ("round_robin", "least_loaded")
ITERATION_COSTS = ("sum", "max")   # how an iteration combines weight-read time and prefill compute time
_MAX_REQUESTS = 10 ** 7
_MAX_TOKENS = 10 ** 7


def kv_cache_bytes(*, layers: int, kv_heads: int, head_dim: int, tokens: int = 1, batch: int = 1,
                   bytes_per_value: float = 2.0) -> float:
    """Bytes of KV cache for ``batch`` sequences of ``tokens`` tokens each: every layer keeps a key and a value
    vector (the 2) of ``kv_heads * head_dim`` numbers per token, ``2 * layers * kv_heads * head_dim *
    bytes_per_value * tokens * batch``. Full multi-head attention has ``kv_heads`` = query heads (``kv_heads *
    head_dim`` = hidden size); grouped-query attention shares each key/value head among several query heads
    (Ainslie et al. 2023), so ``kv_heads`` is smaller and the cache shrinks by the same factor.

    >>> kv_cache_bytes(layers=32, kv_heads=32, head_dim=128) / 2**20       # Llama-2-7B, 16-bit: MiB per token
    0.5
    >>> kv_cache_bytes(layers=80, kv_heads=8, head_dim=128, tokens=4096) / 1e9   # Llama-2-70B (GQA), 4k tokens
    1.34217728
    """
    n_layers = check_int("layers", layers, low=1, high=100_000)
    heads = check_int("kv_heads", kv_heads, low=1, high=100_000)
    dim = check_int("head_dim", head_dim, low=1, high=10 ** 6)
    n_tokens = check_int("tokens", tokens, low=1, high=10 ** 9)
    n_seq = check_int("batch", batch, low=1, high=10 ** 9)
    width = check_positive("bytes_per_value", bytes_per_value, high=8.0)
    return 2.0 * n_layers * heads * dim * width * n_tokens * n_seq


def throughput_bound(*, max_batch: int, step_base: float, step_per_sequence: float, prefill_per_token: float,
                     prompt_per_output: float = 0.0, gpus: int = 1) -> float:
    """Output tokens per second that continuous batching delivers at most (``cost="sum"``).

    At saturation every GPU runs ``B = max_batch`` sequences, and each iteration yields one token for each
    of them; over a long run the prompts to prefill add ``prompt_per_output`` (mean prompt over mean output
    length, ``P / O``) prompt tokens per output token. So ``B`` output tokens cost
    ``step_base + step_per_sequence B + prefill_per_token (P / O) B`` seconds:

        bound = gpus * B / (step_base + step_per_sequence * B + prefill_per_token * (P / O) * B).

    By Little's law (``L = lambda W``, Little 1961) the same number follows from the running requests:
    ``L = gpus * B`` requests each stay ``O`` iterations, so they finish at ``lambda = L / (O t_iter)`` per
    second and yield ``lambda O`` tokens per second. A KV cache that holds fewer than ``B`` requests lowers it.

    >>> throughput_bound(max_batch=32, step_base=0.02, step_per_sequence=0.0, prefill_per_token=0.0)
    1600.0
    """
    b = check_int("max_batch", max_batch, low=1, high=100_000)
    base = check_positive("step_base", step_base, high=3600.0)
    per_seq = check_nonnegative("step_per_sequence", step_per_sequence, high=3600.0)
    per_tok = check_nonnegative("prefill_per_token", prefill_per_token, high=3600.0)
    ratio = check_nonnegative("prompt_per_output", prompt_per_output, high=1e7)
    n_gpu = check_int("gpus", gpus, low=1, high=4096)
    return n_gpu * b / (base + per_seq * b + per_tok * ratio * b)


@dataclass(frozen=True)
class ServingResult:
    """Per-request times (s) and per-GPU busy time of a :func:`simulate` run."""

    policy: str
    arrivals: np.ndarray
    ready: np.ndarray          # pre-processing done, request enters a GPU queue
    admitted: np.ndarray       # the request joins a running batch: its prefill iteration starts
    prefilled: np.ndarray      # its prefill iteration ends: the first token is computed
    first_token: np.ndarray    # the user receives the first token (streamed, or with the whole batch)
    finish: np.ndarray
    gpu_of: np.ndarray
    prompt: np.ndarray
    output: np.ndarray
    busy: np.ndarray           # per GPU: seconds running iterations
    slot_time: np.ndarray      # per GPU: sum over iterations of batch size x duration
    stolen: int                # requests a GPU took from another GPU's queue
    served: np.ndarray         # how many times each request was completed (1 for every request)

    def __post_init__(self) -> None:
        check_choice("policy", self.policy, POLICIES)
        arr = _vector("arrivals", self.arrivals, low=0.0)
        n = arr.size
        object.__setattr__(self, "arrivals", arr)
        for name in ("ready", "admitted", "prefilled", "first_token", "finish"):
            value = _vector(name, getattr(self, name), low=0.0, size=n)
            object.__setattr__(self, name, value)
        steps = (arr, self.ready, self.admitted, self.prefilled, self.first_token, self.finish)
        if any((later < earlier).any() for earlier, later in zip(steps, steps[1:])):
            raise ValueError("arrivals, ready, admitted, prefilled, first_token and finish must not decrease for "
                             "any request")
        for name in ("prompt", "output"):
            object.__setattr__(self, name, _tokens(name, getattr(self, name), n))
        busy = _vector("busy", self.busy, low=0.0)
        for name in ("busy", "slot_time"):
            object.__setattr__(self, name, _vector(name, getattr(self, name), low=0.0, size=busy.size))
        gpu_of = _vector("gpu_of", self.gpu_of, low=0.0, high=busy.size - 1, size=n, integer=True)
        object.__setattr__(self, "gpu_of", gpu_of.astype(np.int64))
        served = _vector("served", self.served, low=0.0, size=n, integer=True)
        object.__setattr__(self, "served", served.astype(np.int64))
        check_int("stolen", self.stolen, low=0)

    @property
    def latency(self) -> np.ndarray:
        return self.finish - self.arrivals

    @property
    def ttft(self) -> np.ndarray:
        """Time to first token of each request."""
        return self.first_token - self.arrivals

    @property
    def tpot(self) -> float:
        """Mean time per output token after the first was computed, over requests with more than one token."""
        many = self.output > 1
        if not many.any():
            return 0.0
        return float(np.mean((self.finish[many] - self.prefilled[many]) / (self.output[many] - 1)))

    @property
    def horizon(self) -> float:
        return float(self.finish.max() - self.arrivals.min()) if self.finish.size else 0.0

    def percentile(self, q: float) -> float:
        """The ``q``-th percentile (0-100) of request latency, in seconds."""
        return float(np.percentile(self.latency, check_nonnegative("q", q, high=100.0)))

    @property
    def p50(self) -> float:
        return self.percentile(50)

    @property
    def p99(self) -> float:
        return self.percentile(99)

    @property
    def tokens_per_s(self) -> float:
        h = self.horizon
        return float(self.output.sum() / h) if h > 0 else 0.0

    @property
    def busy_fraction(self) -> float:
        h = self.horizon
        return float(self.busy.sum() / (self.busy.size * h)) if h > 0 else 0.0

    @property
    def mean_running(self) -> float:
        """Time-average number of requests in the GPUs' batches over the horizon (all GPUs together)."""
        h = self.horizon
        return float(self.slot_time.sum() / h) if h > 0 else 0.0

    @property
    def mean_batch(self) -> float:
        """Time-weighted mean batch size while busy (padding slots included)."""
        total = self.busy.sum()
        return float(self.slot_time.sum() / total) if total > 0 else 0.0


def _vector(name: str, value, *, low: float, high: float | None = None, size: int | None = None,
            integer: bool = False) -> np.ndarray:
    """A finite, non-empty 1-D float array (of ``size`` entries if given)."""
    arr = as_float_array(name, value, low=low, high=high, finite=True, integer=integer, empty=False,
                         size_limit=_MAX_REQUESTS)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D sequence, got shape {arr.shape}")
    if size is not None and arr.size != size:
        raise ValueError(f"{name} must have {size} entries (one per request or GPU, like arrivals or busy), "
                         f"got {arr.size}")
    return arr


def _tokens(name: str, value, n: int) -> np.ndarray:
    arr = as_float_array(name, value, low=1.0, high=_MAX_TOKENS, integer=True)
    if arr.shape != (n,):
        raise ValueError(f"{name} must have one entry per request (arrivals has {n}), got shape {arr.shape}")
    return arr.astype(np.int64)


def simulate(arrivals, prompt, output, *, policy: str = "continuous", gpus: int = 1, max_batch: int = 32,
             max_wait: float = 0.0, kv_capacity: int = 100_000, step_base: float = 0.02,
             step_per_sequence: float = 2e-4, prefill_per_token: float = 5e-5, cpu_workers: int = 1,
             cpu_time: float = 0.0, dispatch: str = "round_robin", steal: bool = False,
             cost: str = "sum") -> ServingResult:
    """Serve generation requests on ``gpus`` GPUs; see the module docstring for the model.

    ``arrivals`` (s, any order), ``prompt`` and ``output`` (tokens, >= 1) give one entry per request.
    ``kv_capacity`` is each GPU's KV cache in tokens; a request needing more than it alone is refused.
    ``max_wait`` (request-level batching only): how long a GPU holding a partial batch waits for more.
    The default costs are illustrative (a 13B-class model on one A100: ~20 ms to read the weights per
    iteration); :func:`hetlab.models.roofline.llm_iteration_costs` derives them from a model and a GPU.
    ``cost`` is ``"sum"`` (memory time + prefill compute time, default) or ``"max"`` (the larger of the two,
    a roofline-style overlap). Deterministic: the same inputs give the same result.
    """
    arr = _vector("arrivals", arrivals, low=0.0)
    n = arr.size
    p_tok = _tokens("prompt", prompt, n)
    o_tok = _tokens("output", output, n)
    check_choice("policy", policy, POLICIES)
    check_choice("dispatch", dispatch, DISPATCH)
    steal = check_bool("steal", steal)
    check_choice("cost", cost, ITERATION_COSTS)
    n_gpu = check_int("gpus", gpus, low=1, high=4096)
    max_batch = check_int("max_batch", max_batch, low=1, high=100_000)
    kv_cap = check_int("kv_capacity", kv_capacity, low=2, high=10 ** 10)
    workers = check_int("cpu_workers", cpu_workers, low=1, high=100_000)
    # Times in seconds, at most an hour each (longer iterations or waits are a unit mistake).
    wait = check_nonnegative("max_wait", max_wait, high=3600.0)
    base = check_positive("step_base", step_base, high=3600.0)
    per_seq = check_nonnegative("step_per_sequence", step_per_sequence, high=3600.0)
    per_tok = check_nonnegative("prefill_per_token", prefill_per_token, high=3600.0)
    cpu = check_nonnegative("cpu_time", cpu_time, high=3600.0)
    need = p_tok + o_tok
    if need.max() > kv_cap:
        raise ValueError(f"kv_capacity must hold prompt + output of every request (>= {int(need.max())} tokens), "
                         f"got {kv_cap}")

    order = np.argsort(arr, kind="stable")
    ready = np.empty(n)
    ready[order] = preprocess(arr[order], np.full(n, cpu), workers)
    trace = serve(ready, p_tok, o_tok, gpus=n_gpu, max_batch=max_batch, wait=wait, kv_cap=kv_cap, base=base,
                  per_seq=per_seq, per_tok=per_tok, least_loaded=dispatch == "least_loaded", steal=steal,
                  continuous=policy == "continuous", roofline=cost == "max")
    admitted, prefilled, finish = np.array(trace.admitted), np.array(trace.prefilled), np.array(trace.finish)
    first = finish.copy() if policy == "static" else prefilled      # request-level: results return together
    return ServingResult(policy, arr, ready, admitted, prefilled, first, finish, np.array(trace.gpu_of), p_tok,
                         o_tok, np.array(trace.busy), np.array(trace.slots), trace.stolen, np.array(trace.served))
