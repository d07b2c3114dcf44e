"""The event loop of :func:`hetlab.models.serving.simulate` (private: read the model in that module's docstring).

:func:`preprocess` is the CPU pool (a FIFO multi-server queue); :func:`serve` runs the GPUs' queues and
batches, request-level or iteration-level, and returns each request's times as a :class:`Trace`.

The loop is the hot path of the chapter-10 widget (one run per slider value), so it is written for CPython's
speed rather than brevity: one function whose state lives in local lists read by closures (no attribute look-ups),
requests that become ready read in order from a sorted list instead of passing through the event heap, and a
count of all queued requests so that a GPU with nothing to steal does not scan the other queues.
"""
from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass
from itertools import count

import numpy as np

__all__ = ["preprocess", "serve", "Trace"]

# Event kinds, in their order at equal times. A request becoming ready (kind 0) always comes first: those are
# not in the heap but merged in from a list sorted by (time, request); then the end of a planned run of
# iterations, then an expired batching timer, then the start of an idle GPU (after every arrival and every
# boundary at this instant, so that it sees all of them).
_BOUNDARY, _TIMER, _KICK = 1, 2, 3


def preprocess(arrivals: np.ndarray, cost: np.ndarray, workers: int) -> np.ndarray:
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


@dataclass(frozen=True)
class Trace:
    """What :func:`serve` records: per request (lists indexed by request) and per GPU."""

    admitted: list[float]
    prefilled: list[float]
    finish: list[float]
    gpu_of: list[int]
    served: list[int]
    busy: list[float]
    slots: list[float]
    stolen: int


def serve(ready: np.ndarray, prompt: np.ndarray, output: np.ndarray, *, gpus: int, max_batch: int, wait: float,
          kv_cap: int, base: float, per_seq: float, per_tok: float, least_loaded: bool, steal: bool,
          continuous: bool, roofline: bool) -> Trace:
    """Run the GPUs on requests that leave the CPU pool at ``ready`` (validated inputs, see ``simulate``).

    Events: a request becomes ready, a GPU reaches a planned iteration boundary, a GPU's batching timer
    (request-level batching) expires, an idle GPU starts. A planned boundary is cancelled (by a version
    number) when a new request could join earlier.
    """
    # Plain lists, not arrays: the loop reads and writes single entries, which lists do several times faster.
    n, n_gpu, cap = ready.size, gpus, kv_cap
    ready_t, prompt_t, output_t = ready.tolist(), prompt.tolist(), output.tolist()
    need = (prompt + output).tolist()
    arrival_order = np.lexsort((np.arange(n), ready)).tolist()    # by time, then request (the heap's order)
    arrival_times = [ready_t[i] for i in arrival_order]
    admitted, prefilled, finish = [0.0] * n, [0.0] * n, [0.0] * n
    gpu_of, served = [0] * n, [0] * n
    busy, slots = [0.0] * n_gpu, [0.0] * n_gpu
    queues: list[deque[int]] = [deque() for _ in range(n_gpu)]
    load = [0] * n_gpu                 # queued + running requests, for least-loaded dispatch
    # continuous: heap of (finishing iteration, request); request-level: the batch
    running: list[list] = [[] for _ in range(n_gpu)]
    kv = [0] * n_gpu
    iters = [0] * n_gpu                # iterations completed
    active = [False] * n_gpu           # an iteration run (or a request-level batch) is under way
    plan = [(0.0, 0.0, 0, 0)] * n_gpu  # (start, step duration, iterations, slots) of the planned run
    version = [0] * n_gpu
    joiners: list[list[int]] = [[] for _ in range(n_gpu)]
    timer = [math.inf] * n_gpu
    kicked = [False] * n_gpu
    events: list[tuple[float, int, int, int, int]] = []     # (time, kind, sequence number, GPU, version)
    ticket = count().__next__          # ties at equal time and kind go in the order of pushing
    push, pop, ceil = heapq.heappush, heapq.heappop, math.ceil
    queued = 0                         # requests in all queues together: stealing needs one
    stolen = 0

    def iteration(size: int, prompt_tokens: int) -> float:
        """Time of one iteration with ``size`` running sequences and ``prompt_tokens`` to prefill."""
        memory = base + per_seq * size
        compute = per_tok * prompt_tokens
        return max(memory, compute) if roofline else memory + compute

    def take(g: int, used: int) -> int | None:
        """Oldest request of ``g``'s queue, or with stealing (``g``'s queue empty) of the first of the longest
        other queues, if its KV cache fits beside ``used`` tokens; it leaves its queue."""
        nonlocal queued, stolen
        q = queues[g]
        if q:
            i = q[0]
            if used + need[i] > cap:
                return None
            q.popleft()
        elif steal and queued:
            lengths = [len(other) for other in queues]
            victim = lengths.index(max(lengths))
            q = queues[victim]
            i = q[0]
            if used + need[i] > cap:
                return None
            q.popleft()
            stolen += 1
            load[victim] -= 1
            load[g] += 1
        else:
            return None
        queued -= 1
        return i

    def poke(t: float, g: int) -> None:
        """A request is waiting that ``g`` could take: start ``g`` if idle (after every arrival at this
        instant has been queued), or cut its planned run short."""
        if not active[g]:
            if not kicked[g]:
                kicked[g] = True
                push(events, (t, _KICK, ticket(), g, 0))
            return
        if not continuous or len(running[g]) >= max_batch:
            return
        start, step, k, width = plan[g]
        j = ceil((t - start) / step - 1e-12)     # the first boundary at or after t
        if j < 1:                                # (the iteration under way runs to its end)
            j = 1
        if j < k:
            v = version[g] + 1
            version[g] = v
            plan[g] = (start, step, j, width)
            push(events, (start + j * step, _BOUNDARY, ticket(), g, v))

    # -- request-level batching -----------------------------------------------------------------
    def start_batch(t: float, g: int) -> None:
        q = queues[g]
        if not q and not (steal and queued):
            return
        if q and len(q) < max_batch and wait > 0 and t < ready_t[q[0]] + wait:
            due = ready_t[q[0]] + wait
            if due < timer[g]:
                timer[g] = due
                push(events, (due, _TIMER, ticket(), g, 0))
            return
        batch: list[int] = []
        used = 0
        while len(batch) < max_batch:
            i = take(g, used)
            if i is None:
                break
            batch.append(i)
            used += need[i]
        if not batch:
            return
        size = len(batch)
        longest = max(output_t[i] for i in batch)
        prefill = iteration(size, sum(prompt_t[i] for i in batch))
        step = base + per_seq * size
        end = t + prefill + (longest - 1) * step
        first = t + prefill
        for i in batch:
            admitted[i] = t
            prefilled[i] = first
            finish[i] = end      # request-level batching returns the batch together
            served[i] += 1
            gpu_of[i] = g
        seconds = prefill + (longest - 1) * step
        busy[g] += seconds
        slots[g] += size * seconds
        active[g] = True
        timer[g] = math.inf
        v = version[g] + 1
        version[g] = v
        running[g] = batch
        push(events, (end, _BOUNDARY, ticket(), g, v))

    def end_batch(t: float, g: int) -> None:
        active[g] = False
        load[g] -= len(running[g])
        running[g] = []
        start_batch(t, g)

    # -- iteration-level (continuous) batching ---------------------------------------------------------------
    def boundary(t: float, g: int, idle: bool = False) -> None:
        run = running[g]
        if not idle and active[g]:
            start, step, k, width = plan[g]
            now = iters[g] + k
            iters[g] = now
            busy[g] += k * step
            slots[g] += k * step * width
            for i in joiners[g]:
                admitted[i] = max(start, ready_t[i])   # a boundary computed within rounding of it
                prefilled[i] = start + step    # a joiner's prefill iteration yields its first token
            joiners[g] = []
            while run and run[0][0] <= now:
                i = pop(run)[1]
                finish[i] = t
                served[i] += 1
                kv[g] -= need[i]
                load[g] -= 1
        elif active[g]:
            return                              # mid-run: poke() handles early joins
        joined: list[int] = []
        size = len(run)
        now = iters[g]
        if size < max_batch and (queues[g] or (steal and queued)):     # someone may join
            used = kv[g]
            while size < max_batch:
                i = take(g, used)
                if i is None:
                    break
                used += need[i]
                joined.append(i)
                gpu_of[i] = g
                # it yields token 1 in the next iteration (now + 1) and its last in iteration now + output
                push(run, (now + output_t[i], i))
                size += 1
            kv[g] = used
        if not size:
            active[g] = False
            return
        if joined:
            step = iteration(size, sum(prompt_t[i] for i in joined))
            k = 1
        else:
            step = base + per_seq * size
            k = run[0][0] - now
        joiners[g] = joined
        active[g] = True
        plan[g] = (t, step, k, size)
        v = version[g] + 1
        version[g] = v
        push(events, (t + k * step, _BOUNDARY, ticket(), g, v))

    def start_gpu(t: float, g: int) -> None:
        if continuous:
            boundary(t, g, idle=True)
        else:
            start_batch(t, g)

    end_run = boundary if continuous else end_batch
    arrival_times.append(math.inf)     # after the last request: the heap's events alone
    p, rr = 0, 0
    while p < n or events:
        if events and events[0][0] < arrival_times[p]:
            t, kind, _, g, v = pop(events)
            if kind == _BOUNDARY:
                if v == version[g]:
                    end_run(t, g)
            elif kind == _KICK:
                kicked[g] = False
                if not active[g]:
                    start_gpu(t, g)
            elif timer[g] == t and not active[g]:
                timer[g] = math.inf
                start_gpu(t, g)
            continue
        # a request becomes ready: dispatch it (ties with a heap event: the request first)
        t, i = arrival_times[p], arrival_order[p]
        p += 1
        if least_loaded:
            g = load.index(min(load))                 # the first of the least loaded
        else:
            g = rr
            rr = (g + 1) % n_gpu
        queues[g].append(i)
        load[g] += 1
        queued += 1
        poke(t, g)
        if steal:
            for h in range(n_gpu):
                if h != g and not queues[h]:
                    poke(t, h)
    return Trace(admitted, prefilled, finish, gpu_of, served, busy, slots, stolen)
