"""Two CUDA streams on one GPU: do two matrix products finish in the time of one? (chapter 2, section 2.6)

For each shape ``(m x k) @ (k x n)`` in bf16, three CUDA graphs are timed (a graph replays its kernels with about
a microsecond between them, so launch cost does not hide the kernels):

- ``alone``: ``R`` products on one stream;
- ``one_after_another``: ``2R`` products on one stream;
- ``side_by_side``: ``R`` products on each of two streams (the graph's two branches run concurrently).

The ratio ``side_by_side / one_after_another`` is the answer: about 1 when each product fills every SM (two
streams share the same SMs), well below 1 when a product leaves SMs idle and the other stream's kernels fill them.
Times are the mean over ``REPLAYS`` replays after a warm-up, from CUDA events, in microseconds per replay.

Needs PyTorch with a CUDA device (not part of ``run_all.py``). Usage: ``python benchmarks/bench_streams.py [OUT.json]``.
The stored reading is hetlab/data/readings/h200-2026-12-04/streams.json.
"""
from __future__ import annotations

import json
import sys

#: (m, k, n): the chapter's Q projection (s x h x h, s = 2048, h = 4096), then products too small to fill the GPU.
SHAPES = [(2048, 4096, 4096), (256, 4096, 4096), (64, 1024, 1024)]
#: Products per stream in one graph, and timed replays of each graph.
R, REPLAYS = 20, 20


def _graph(torch, m: int, k: int, n: int, streams: int, per_stream: int):
    """A CUDA graph of ``per_stream`` products on each of ``streams`` streams (independent inputs per stream)."""
    a = [torch.randn(m, k, device="cuda", dtype=torch.bfloat16) for _ in range(streams)]
    b = [torch.randn(k, n, device="cuda", dtype=torch.bfloat16) for _ in range(streams)]
    out = [torch.empty(m, n, device="cuda", dtype=torch.bfloat16) for _ in range(streams)]
    for s in range(streams):                       # cuBLAS picks and caches its kernel outside the capture
        torch.matmul(a[s], b[s], out=out[s])
    torch.cuda.synchronize()
    side = [torch.cuda.Stream() for _ in range(streams - 1)]
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        main = torch.cuda.current_stream()
        for stream in side:                        # fork: each side stream starts after the capture began
            stream.wait_stream(main)
        for _ in range(per_stream):
            torch.matmul(a[0], b[0], out=out[0])
        for j, stream in enumerate(side, 1):
            with torch.cuda.stream(stream):
                for _ in range(per_stream):
                    torch.matmul(a[j], b[j], out=out[j])
        for stream in side:                        # join before the capture ends
            main.wait_stream(stream)
    return graph, (a, b, out)


def _time_us(torch, graph) -> float:
    graph.replay()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(REPLAYS):
        graph.replay()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / REPLAYS * 1e3


def main(out_path: str | None = None) -> dict:
    import torch

    if not torch.cuda.is_available():
        raise SystemExit("bench_streams needs a CUDA device")
    props = torch.cuda.get_device_properties(0)
    result = {"device": props.name, "sms": props.multi_processor_count, "torch": torch.__version__,
              "dtype": "bf16", "products_per_stream": R, "replays": REPLAYS, "unit": "microseconds per replay",
              "shapes": []}
    for m, k, n in SHAPES:
        row = {"m": m, "k": k, "n": n}
        for name, streams, per_stream in (("alone", 1, R), ("one_after_another", 1, 2 * R),
                                          ("side_by_side", 2, R)):
            graph, keep = _graph(torch, m, k, n, streams, per_stream)
            row[name] = round(_time_us(torch, graph), 2)
            del graph, keep
        row["ratio"] = round(row["side_by_side"] / row["one_after_another"], 3)
        row["tflops_alone"] = round(2.0 * m * k * n * R / (row["alone"] * 1e-6) / 1e12, 1)
        result["shapes"].append(row)
        print(f"{m} x {k} x {n}: alone {row['alone']:.1f} us, one after another {row['one_after_another']:.1f} us, "
              f"side by side {row['side_by_side']:.1f} us (ratio {row['ratio']:.3f}), "
              f"{row['tflops_alone']} TFLOP/s alone", flush=True)
    if out_path:
        with open(out_path, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
            f.write("\n")
    return result


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
