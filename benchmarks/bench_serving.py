"""Benchmark: LLM serving simulation of 100,000 requests (hetlab.models.serving), against a bare heapq loop.

Baselines in the same run, both bare heapq loops with no batching logic:
- per request: push and pop an arrival and a completion for every request (the least any event-driven
  simulator of these requests does); the ratio is what the batching, KV-cache and dispatch logic cost;
- per token: one push and pop per output token (what a simulator stepping every decode iteration of every
  request at least costs), timed on the first 10% of the requests and scaled by the token count; the ratio
  shows what jumping over runs of identical iterations buys.

Then chapter 10's serving widget (``hetlab.book.views.ch10.serving_explorer``), one new frame per value of its
rate slider (the walk of bench_widget_latency.py): the simulation with the curves and readout, then the PNG,
blitted over the kept ticks and labels. Baselines in the same run: the same figure rendered in full
(``figure.savefig``, every artist drawn, what each frame cost before blitting) and the bare per-request loop on
the same requests.
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
    return {"requests": n, **results, "bare_request": t_req, "bare_token": t_tok, "widget": widget_frames()}


def widget_frames(repeat: int = 3) -> list[dict]:
    """Seconds per new frame of the chapter-10 widget at each rate (continuous batching, max batch 32, stealing):
    computing it (simulation, curves, readout: the cache emptied first), its PNG, and the baselines."""
    import io

    from hetlab.book.views import ch10

    explorer = ch10.serving_explorer()
    explorer.png()

    def full_render() -> bytes:
        buffer = io.BytesIO()
        explorer.figure.savefig(buffer, format="png", dpi=explorer.dpi, pil_kwargs={"compress_level": 1})
        return buffer.getvalue()

    def compute(rate: int) -> str:
        ch10._serving_curves.cache_clear()
        return explorer.update(rate=rate)

    rows = []
    print(f"[serving widget] new frame per rate (best of {repeat}): compute (simulate) + PNG; baselines in the "
          "same run")
    for rate in range(1, 7):
        w = ch10.serving_workload(rate)
        t_sim, _ = best_of(lambda w=w: SV.simulate(w.arrivals, w.prompt, w.output, **ch10.SERVING), repeat)
        t_bare, _ = best_of(lambda w=w: bare_request_loop(w.arrivals), repeat)
        t_compute, _ = best_of(lambda rate=rate: compute(rate), repeat)
        t_png, frame = best_of(explorer.png, repeat)
        t_full, full = best_of(full_render, repeat)
        assert frame == full                       # blitting paints what a full render paints
        explorer.png()                             # savefig left the figure stale: render the background again
        rows.append(dict(rate=rate, requests=len(w), simulate=t_sim, bare_request=t_bare, compute=t_compute,
                         png=t_png, full_render=t_full))
        print(f"  rate {rate} ({len(w):5,} requests): simulate {t_sim * 1e3:5.1f} ms = {t_sim / t_bare:4.1f}x the "
              f"per-request loop; frame {(t_compute + t_png) * 1e3:5.1f} ms = compute {t_compute * 1e3:5.1f} + PNG "
              f"{t_png * 1e3:4.1f} (full render {t_full * 1e3:4.1f}, {t_png / t_full:.2f}x)")
    return rows


if __name__ == "__main__":
    main()
