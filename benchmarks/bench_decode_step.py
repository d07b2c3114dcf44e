"""One LLM iteration on a real GPU: is decode flat in the batch and prefill linear in the prompt? (chapter 10.2)

The serving model of chapter 10 (hetlab.models.serving, costs from hetlab.models.roofline.llm_iteration_costs)
says one iteration with ``B`` running sequences and ``P`` prompt tokens costs ``t0 + c_seq B + c_prefill P``:
a decode iteration reads every weight once (memory-bound, nearly the same time for 1 or 32 sequences) and a
prefill does ``2 params`` FLOPs per prompt token (compute-bound, linear in ``P``). This script times the weight
products of a LLaMA-13B-shaped decoder (40 layers, hidden 5120, SwiGLU width 13824, a 32000-word output layer,
bf16: 13.0 billion weights, 12.8 billion of them read per iteration) with ``rows`` tokens going through it:

- decode: ``rows`` = B = 1 ... 128 sequences, one token each;
- prefill: ``rows`` = P = 256 ... 4096 prompt tokens.

Attention over the KV cache (the ``c_seq`` term) and element-wise operations are left out: the script measures
the two terms the chapter's argument rests on. Each layer has its own weights, so every iteration streams all of
them from HBM (the 50 MB L2 holds none of a 25 GB model). One iteration is captured in a CUDA graph (161 products
replayed without launch gaps) and timed with CUDA events over ``REPLAYS`` replays after a warm-up.

Needs PyTorch with a CUDA device and 30 GB of GPU memory (not part of ``run_all.py``).
Usage: ``python benchmarks/bench_decode_step.py [OUT.json]``.
The stored reading is hetlab/data/readings/h200-2026-12-04/decode_step.json.
"""
from __future__ import annotations

import json
import sys

#: LLaMA 13B (Touvron et al. 2023): layers, hidden size, SwiGLU width, vocabulary.
LAYERS, HIDDEN, FFN, VOCAB = 40, 5120, 13824, 32000
DECODE_ROWS = [1, 2, 4, 8, 16, 32, 64, 128]
PREFILL_ROWS = [256, 1024, 4096]
REPLAYS = 10


def weight_shapes() -> list[tuple[int, int]]:
    """(in, out) of every weight product of one iteration: per layer Q/K/V, output, gate+up, down; the output layer."""
    per_layer = [(HIDDEN, 3 * HIDDEN), (HIDDEN, HIDDEN), (HIDDEN, 2 * FFN), (FFN, HIDDEN)]
    return per_layer * LAYERS + [(HIDDEN, VOCAB)]


def _iteration_graph(torch, weights, rows: int):
    """A CUDA graph of one iteration's products for ``rows`` tokens (fixed inputs: the data flow does not change
    the time of a product, only its shape does)."""
    inputs = {k: torch.randn(rows, k, device="cuda", dtype=torch.bfloat16) for k in (HIDDEN, FFN)}
    outputs = {n: torch.empty(rows, n, device="cuda", dtype=torch.bfloat16) for _, n in weight_shapes()}
    for k, n in sorted(set(weight_shapes())):      # cuBLAS picks and caches its kernels outside the capture
        torch.matmul(inputs[k], weights[weight_shapes().index((k, n))], out=outputs[n])
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for w in weights:
            torch.matmul(inputs[w.shape[0]], w, out=outputs[w.shape[1]])
    return graph, (inputs, outputs)


def _time_ms(torch, graph) -> float:
    graph.replay()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(REPLAYS):
        graph.replay()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / REPLAYS


def main(out_path: str | None = None) -> dict:
    import torch

    if not torch.cuda.is_available():
        raise SystemExit("bench_decode_step needs a CUDA device")
    props = torch.cuda.get_device_properties(0)
    weights = [torch.randn(k, n, device="cuda", dtype=torch.bfloat16) * 0.02 for k, n in weight_shapes()]
    n_weights = sum(k * n for k, n in weight_shapes())
    result = {"device": props.name, "sms": props.multi_processor_count, "torch": torch.__version__,
              "dtype": "bf16", "model": {"layers": LAYERS, "hidden": HIDDEN, "ffn": FFN, "vocab": VOCAB},
              "weights_read": n_weights, "replays": REPLAYS, "unit": "milliseconds per iteration",
              "decode": [], "prefill": []}
    for kind, rows_list in (("decode", DECODE_ROWS), ("prefill", PREFILL_ROWS)):
        for rows in rows_list:
            graph, keep = _iteration_graph(torch, weights, rows)
            ms = min(_time_ms(torch, graph) for _ in range(3))
            del graph, keep
            row = {"rows": rows, "ms": round(ms, 4),
                   "weight_gb_per_s": round(2.0 * n_weights / (ms * 1e-3) / 1e9, 1),
                   "tflops": round(2.0 * n_weights * rows / (ms * 1e-3) / 1e12, 1)}
            result[kind].append(row)
            print(f"{kind} {rows:5d} rows: {ms:8.3f} ms, weights at {row['weight_gb_per_s']:7.1f} GB/s, "
                  f"{row['tflops']:6.1f} TFLOP/s", flush=True)
    if out_path:
        with open(out_path, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
            f.write("\n")
    return result


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
