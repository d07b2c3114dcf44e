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
  request joins or leaves in between and all return at the end (Yu et al. 2022, Orca, section 2);
- **iteration-level (continuous) batching** (``policy="continuous"``, Orca, OSDI 2022; vLLM, Kwon et al.,
  SOSP 2023): after every iteration finished sequences leave and queued ones join (their prefill rides in the
  next iteration), so no slot idles while requests wait;
- **KV cache**: each running sequence reserves ``prompt + output`` tokens of a GPU's ``kv_capacity`` (as Orca
  does; vLLM's paging reserves on demand, which admits more): memory bounds the running batch.

Reports TTFT, time per output token (TPOT), request latency percentiles, tokens/s, the GPUs' busy share and
the useful share (busy time spent on real sequences rather than on the padding slots of request-level
batches). Between events the batch is fixed, so the simulation jumps over runs of identical decode iterations
instead of stepping through them: its cost grows with the number of requests, not of tokens.

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

import heapq
import math
from collections import deque
from dataclasses import dataclass

import numpy as np

from hetlab._validate import as_float_array, check_bool, check_choice, check_int, check_nonnegative, check_positive

__all__ = ["simulate", "ServingResult", "POLICIES", "DISPATCH", "ITERATION_COSTS", "kv_cache_bytes"]

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

@dataclass(frozen=True)
class ServingResult:
    """Per-request times (s) and per-GPU busy/useful time of a :func:`simulate` run."""

    policy: str
    arrivals: np.ndarray
    ready: np.ndarray          # pre-processing done, request enters a GPU queue
    first_token: np.ndarray
    finish: np.ndarray
    gpu_of: np.ndarray
    prompt: np.ndarray
    output: np.ndarray
    busy: np.ndarray           # per GPU: seconds running iterations
    useful: np.ndarray         # per GPU: busy seconds weighted by the share of slots holding a real sequence
    slot_time: np.ndarray      # per GPU: sum over iterations of batch size x duration
    stolen: int                # requests a GPU took from another GPU's queue
    served: np.ndarray         # how many times each request was completed (1 for every request)

    def __post_init__(self) -> None:
        check_choice("policy", self.policy, POLICIES)
        arr = _vector("arrivals", self.arrivals, low=0.0)
        n = arr.size
        object.__setattr__(self, "arrivals", arr)
        for name in ("ready", "first_token", "finish"):
            value = _vector(name, getattr(self, name), low=0.0, size=n)
            object.__setattr__(self, name, value)
        if (self.ready < arr).any() or (self.first_token < self.ready).any() or (self.finish < self.first_token).any():
            raise ValueError("arrivals, ready, first_token and finish must not decrease for any request")
        for name in ("prompt", "output"):
            object.__setattr__(self, name, _tokens(name, getattr(self, name), n))
        busy = _vector("busy", self.busy, low=0.0)
        for name in ("busy", "useful", "slot_time"):
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
        """Mean time per output token after the first, over requests with more than one token."""
        many = self.output > 1
        if not many.any():
            return 0.0
        return float(np.mean((self.finish[many] - self.first_token[many]) / (self.output[many] - 1)))

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
    def useful_fraction(self) -> float:
        h = self.horizon
        return float(self.useful.sum() / (self.busy.size * h)) if h > 0 else 0.0

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


def _preprocess(arrivals: np.ndarray, cost: np.ndarray, workers: int) -> np.ndarray:
    """FIFO multi-server queue: when each request leaves the CPU pool."""
    if not cost.any():
        return arrivals.copy()
    if workers == 1:
        # Lindley's recursion ready_i = max(a_i, ready_{i-1}) + c_i unrolled: with S_i = c_0 + ... + c_i,
        # ready_i = S_i + max_{j <= i} (a_j - S_{j-1}), a running maximum -- vectorised.
        total = np.cumsum(cost)
        before = total - cost
        return total + np.maximum.accumulate(arrivals - before)
    heap = [0.0] * workers
    ready = np.empty_like(arrivals)
    for i, (a, c) in enumerate(zip(arrivals.tolist(), cost.tolist())):
        free = heap[0]
        done = (a if a > free else free) + c
        heapq.heapreplace(heap, done)
        ready[i] = done
    return ready


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
    ready_sorted = _preprocess(arr[order], np.full(n, cpu), workers)
    ready = np.empty(n)
    ready[order] = ready_sorted
    ready_order = order[np.argsort(ready_sorted, kind="stable")]   # requests in the order they reach a GPU

    sim = _Simulator(ready, p_tok, o_tok, n_gpu, max_batch, wait, kv_cap, base, per_seq, per_tok,
                     dispatch, steal, policy == "continuous", cost == "max")
    sim.run(ready_order)
    return ServingResult(policy, arr, ready, sim.first, sim.finish, sim.gpu_of, p_tok, o_tok,
                         sim.busy, sim.useful, sim.slots, sim.stolen, sim.served)


class _Simulator:
    """The event loop. Events: a request becomes ready, a GPU reaches a planned iteration boundary,
    a GPU's batching timer (request-level batching) expires. A GPU's planned boundary is cancelled
    (by a version number) when a new request could join earlier."""

    READY, BOUNDARY, TIMER, KICK = 0, 1, 2, 3   # at equal times: arrivals first, then boundaries, then starts

    def __init__(self, ready, prompt, output, n_gpu, max_batch, wait, kv_cap, base, per_seq, per_tok, dispatch,
                 steal, continuous, roofline=False):
        self.roofline = roofline
        self.ready_t, self.prompt, self.output = ready, prompt.tolist(), output.tolist()
        self.need = (prompt + output).tolist()
        self.G, self.B, self.wait, self.kv_cap = n_gpu, max_batch, wait, kv_cap
        self.base, self.per_seq, self.per_tok = base, per_seq, per_tok
        self.least_loaded, self.steal, self.continuous = dispatch == "least_loaded", steal, continuous
        n = ready.size
        self.first = np.zeros(n)
        self.finish = np.zeros(n)
        self.gpu_of = np.zeros(n, dtype=np.int64)
        self.served = np.zeros(n, dtype=np.int64)
        self.busy = np.zeros(n_gpu)
        self.useful = np.zeros(n_gpu)
        self.slots = np.zeros(n_gpu)
        self.stolen = 0
        self.queues = [deque() for _ in range(n_gpu)]
        self.load = [0] * n_gpu            # queued + running requests, for least-loaded dispatch
        self.running = [[] for _ in range(n_gpu)]   # heap of (finishing iteration, request)
        self.kv = [0] * n_gpu
        self.iters = [0] * n_gpu           # iterations completed
        self.active = [False] * n_gpu      # an iteration run is planned
        self.plan = [(0.0, 0.0, 0, 0)] * n_gpu   # (start, step duration, iterations, slots) of the planned run
        self.version = [0] * n_gpu
        self.joiners: list[list[int]] = [[] for _ in range(n_gpu)]
        self.timer = [math.inf] * n_gpu
        self.kicked = [False] * n_gpu
        self.events: list = []
        self.seq = 0
        self.rr = 0

    def push(self, t, kind, x, version=0):
        self.seq += 1
        heapq.heappush(self.events, (t, kind, self.seq, x, version))

    def run(self, ready_order):
        for i in ready_order.tolist():
            self.events.append((float(self.ready_t[i]), self.READY, i, i, 0))
        self.seq = len(self.events) + 1
        heapq.heapify(self.events)
        pop = heapq.heappop
        events = self.events
        while events:
            t, kind, _, x, version = pop(events)
            if kind == self.READY:
                self.arrive(t, x)
            elif kind == self.BOUNDARY:
                if version == self.version[x]:
                    self.boundary(t, x)
            elif kind == self.KICK:
                self.kicked[x] = False
                if not self.active[x]:
                    self.start(t, x)
            elif self.timer[x] == t and not self.active[x]:
                self.timer[x] = math.inf
                self.start(t, x)

    # -- dispatch ---------------------------------------------------------------------------------
    def arrive(self, t, i):
        if self.least_loaded:
            g = min(range(self.G), key=self.load.__getitem__)
        else:
            g = self.rr
            self.rr = (g + 1) % self.G
        self.queues[g].append(i)
        self.load[g] += 1
        self.poke(t, g)
        if self.steal:
            for h in range(self.G):
                if h != g and not self.queues[h]:
                    self.poke(t, h)

    def poke(self, t, g):
        """A request is waiting that ``g`` could take: start ``g`` if idle (after every arrival at this
        instant has been queued), or cut its planned run short."""
        if not self.active[g]:
            if not self.kicked[g]:
                self.kicked[g] = True
                self.push(t, self.KICK, g)
            return
        if not self.continuous or len(self.running[g]) >= self.B:
            return
        start, step, k, _ = self.plan[g]
        j = max(1, math.ceil((t - start) / step - 1e-12))
        if j < k:
            self.version[g] += 1
            self.plan[g] = (start, step, j, self.plan[g][3])
            self.push(start + j * step, self.BOUNDARY, g, self.version[g])

    def take(self, g, fits):
        """Oldest request of ``g``'s queue, or with stealing of the longest other queue, if ``fits`` it."""
        q = self.queues[g]
        if not q and self.steal:
            victim = max(range(self.G), key=lambda h: len(self.queues[h]))
            if self.queues[victim]:
                q = self.queues[victim]
                if fits(q[0]):
                    self.stolen += 1
                    self.load[victim] -= 1
                    self.load[g] += 1
                    return q.popleft()
                return None
        if q and fits(q[0]):
            return q.popleft()
        return None

    def iteration(self, size, prompt_tokens):
        """Time of one iteration with ``size`` running sequences and ``prompt_tokens`` to prefill."""
        memory = self.base + self.per_seq * size
        compute = self.per_tok * prompt_tokens
        return max(memory, compute) if self.roofline else memory + compute

    # -- request-level batching -----------------------------------------------------------------
    def start(self, t, g):
        if self.continuous:
            self.boundary(t, g, idle=True)
            return
        q = self.queues[g]
        if not q and not (self.steal and any(self.queues)):
            return
        if q and len(q) < self.B and self.wait > 0 and t < self.ready_t[q[0]] + self.wait:
            due = float(self.ready_t[q[0]] + self.wait)
            if due < self.timer[g]:
                self.timer[g] = due
                self.push(due, self.TIMER, g)
            return
        batch, kv = [], 0
        while len(batch) < self.B:
            i = self.take(g, lambda r, kv=kv: kv + self.need[r] <= self.kv_cap)
            if i is None:
                break
            batch.append(i)
            kv += self.need[i]
        if not batch:
            return
        size = len(batch)
        outs = [self.output[i] for i in batch]
        longest = max(outs)
        prefill = self.iteration(size, sum(self.prompt[i] for i in batch))
        step = self.base + self.per_seq * size
        end = t + prefill + (longest - 1) * step
        for i in batch:
            self.first[i] = t + prefill
            self.finish[i] = end      # request-level batching returns the batch together
            self.served[i] += 1
            self.gpu_of[i] = g
        decode_useful = (sum(outs) - size) / (size * (longest - 1)) if longest > 1 else 1.0
        busy = prefill + (longest - 1) * step
        self.busy[g] += busy
        self.useful[g] += min(busy, prefill + (longest - 1) * step * decode_useful)
        self.slots[g] += size * busy
        self.active[g] = True
        self.timer[g] = math.inf
        self.version[g] += 1
        self.running[g] = batch
        self.push(end, self.BOUNDARY, g, self.version[g])

    # -- iteration-level (continuous) batching and the end of a static batch ------------------------
    def boundary(self, t, g, idle=False):
        if not self.continuous:
            self.active[g] = False
            self.load[g] -= len(self.running[g])
            self.running[g] = []
            self.start(t, g)
            return
        run = self.running[g]
        if not idle and self.active[g]:
            start, step, k, size = self.plan[g]
            self.iters[g] += k
            self.busy[g] += k * step
            self.useful[g] += k * step
            self.slots[g] += k * step * size
            for i in self.joiners[g]:
                self.first[i] = start + step    # a joiner's prefill iteration yields its first token
            self.joiners[g] = []
            now = self.iters[g]
            while run and run[0][0] <= now:
                _, i = heapq.heappop(run)
                self.finish[i] = t
                self.served[i] += 1
                self.kv[g] -= self.need[i]
                self.load[g] -= 1
        elif self.active[g]:
            return                              # mid-run: poke() handles early joins
        joined = []
        while len(run) + len(joined) < self.B:
            kv = self.kv[g]
            i = self.take(g, lambda r, kv=kv: kv + self.need[r] <= self.kv_cap)
            if i is None:
                break
            self.kv[g] += self.need[i]
            joined.append(i)
        now = self.iters[g]
        for i in joined:
            self.gpu_of[i] = g
            # it yields token 1 in the next iteration (now + 1) and its last in iteration now + output
            heapq.heappush(run, (now + self.output[i], i))
        if not run:
            self.active[g] = False
            return
        size = len(run)
        if joined:
            step = self.iteration(size, sum(self.prompt[i] for i in joined))
            k = 1
        else:
            step = self.base + self.per_seq * size
            k = run[0][0] - now
        self.joiners[g] = joined
        self.active[g] = True
        self.plan[g] = (t, step, k, size)
        self.version[g] += 1
        self.push(t + k * step, self.BOUNDARY, g, self.version[g])
