"""The event loop of :func:`hetlab.models.serving.simulate` (private: read the model in that module's docstring).

:func:`preprocess` is the CPU pool (a FIFO multi-server queue); :class:`Simulator` runs the GPUs' queues and
batches, request-level or iteration-level, and records each request's times.
"""
from __future__ import annotations

import heapq
import math
from collections import deque

import numpy as np

__all__ = ["preprocess", "Simulator"]


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


class Simulator:
    """The event loop. Events: a request becomes ready, a GPU reaches a planned iteration boundary,
    a GPU's batching timer (request-level batching) expires. A GPU's planned boundary is cancelled
    (by a version number) when a new request could join earlier."""

    READY, BOUNDARY, TIMER, KICK = 0, 1, 2, 3   # at equal times: arrivals first, then boundaries, then starts

    def __init__(self, ready, prompt, output, n_gpu, max_batch, wait, kv_cap, base, per_seq, per_tok, dispatch,
                 steal, continuous, roofline=False):
        self.roofline = roofline
        # plain lists, not arrays: the loop reads and writes single entries, which lists do several times faster
        self.ready_t, self.prompt, self.output = ready.tolist(), prompt.tolist(), output.tolist()
        self.need = (prompt + output).tolist()
        self.G, self.B, self.wait, self.kv_cap = n_gpu, max_batch, wait, kv_cap
        self.base, self.per_seq, self.per_tok = base, per_seq, per_tok
        self.least_loaded, self.steal, self.continuous = dispatch == "least_loaded", steal, continuous
        n = ready.size
        self.admitted = [0.0] * n
        self.prefilled = [0.0] * n
        self.finish = [0.0] * n
        self.gpu_of = [0] * n
        self.served = [0] * n
        self.busy = [0.0] * n_gpu
        self.slots = [0.0] * n_gpu
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
            self.events.append((self.ready_t[i], self.READY, i, i, 0))
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
            lengths = [len(other) for other in self.queues]
            victim = lengths.index(max(lengths))          # the first of the longest queues
            if lengths[victim]:
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
            due = self.ready_t[q[0]] + self.wait
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
            self.admitted[i] = t
            self.prefilled[i] = t + prefill
            self.finish[i] = end      # request-level batching returns the batch together
            self.served[i] += 1
            self.gpu_of[i] = g
        busy = prefill + (longest - 1) * step
        self.busy[g] += busy
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
            self.slots[g] += k * step * size
            for i in self.joiners[g]:
                self.admitted[i] = max(start, self.ready_t[i])   # a boundary computed within rounding of it
                self.prefilled[i] = start + step    # a joiner's prefill iteration yields its first token
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
        kv, need, cap = self.kv, self.need, self.kv_cap

        def fits(r):
            return kv[g] + need[r] <= cap

        while len(run) + len(joined) < self.B:
            i = self.take(g, fits)
            if i is None:
                break
            kv[g] += need[i]
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
