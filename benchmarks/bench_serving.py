"""Benchmark: LLM serving simulation of 100,000 requests (hetlab.models.serving), against a bare heapq loop.

Baselines in the same run, both bare heapq loops with no batching logic:
- per request: push and pop an arrival and a completion for every request (the least any event-driven
  simulator of these requests does); the ratio is what the batching, KV-cache and dispatch logic cost;
- per token: one push and pop per output token (what a simulator stepping every decode iteration of every
  request at least costs), timed on the first 10% of the requests and scaled by the token count; the ratio
  shows what jumping over runs of identical iterations buys.
"""
from __future__ import annotations

import heapq
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import best_of  # noqa: E402

from hetlab.models import serving as SV  # noqa: E402
from hetlab.workloads.requests import bursty_requests  # noqa: E402


def bare_token_loop(arrivals, output) -> int:
    heap = [(float(a), k, int(o)) for k, (a, o) in enumerate(zip(arrivals.tolist(), output.tolist()))]
    heapq.heapify(heap)
    seq, pops = len(heap), 0
    while heap:
        t, _, left = heapq.heappop(heap)
        pops += 1
        if left > 0:
            heapq.heappush(heap, (t + 0.02, seq, left - 1))
            seq += 1
    return pops


def bare_request_loop(arrivals) -> int:
    heap = [(float(a), k, 0) for k, a in enumerate(arrivals.tolist())]
    heapq.heapify(heap)
    seq, pops = len(heap), 0
    while heap:
        t, _, done = heapq.heappop(heap)
        pops += 1
        if not done:
            heapq.heappush(heap, (t + 1.0, seq, 1))
            seq += 1
    return pops


def main(rate: float = 60.0, gpus: int = 8) -> dict:
    w = bursty_requests(rate, 100_000 / (rate * 1.9), burst_share=0.1, seed=0)   # ~1.9x the calm rate on average
    n = len(w)
    results = {}
    for policy in SV.POLICIES:
        options = dict(policy=policy, gpus=gpus, max_batch=64, dispatch="least_loaded", steal=True)
        t, r = best_of(lambda options=options: SV.simulate(w.arrivals, w.prompt, w.output, **options), repeat=2)
        results[policy] = t
        assert (r.served == 1).all()
    t_req, _ = best_of(lambda: bare_request_loop(w.arrivals), repeat=2)
    # the per-token loop takes over ten seconds on all requests: time it on the first 10% and scale by tokens
    k = n // 10
    t_part, pops = best_of(lambda: bare_token_loop(w.arrivals[:k], w.output[:k]), repeat=2)
    t_tok = t_part * float(w.output.sum() + n) / float(w.output[:k].sum() + k)
    print(f"[serving] {n:,} requests ({int(w.output.sum()):,} output tokens) on {gpus} GPUs (best of 2)")
    print(f"  bare heapq loop, 2 events per request: {t_req:.2f} s; 1 event per token: {t_tok:.2f} s "
          f"(scaled from {pops:,} pops on the first {k:,} requests)")
    for policy, t in results.items():
        print(f"  {policy:<10}: {t:6.2f} s = {t / t_req:5.1f}x the per-request loop, "
              f"{t / t_tok:.2f}x the per-token loop")
    return {"requests": n, **results, "bare_request": t_req, "bare_token": t_tok}


if __name__ == "__main__":
    main()
