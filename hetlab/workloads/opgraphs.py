"""Small operator graphs of real AI workloads, with per-operator times from a roofline estimate.

:func:`transformer_layer` is the forward pass of one (unfused) Transformer layer as a task graph: each
operator is a :class:`~hetlab.tasks.Task` whose work is its ideal time in microseconds on one device, so
:mod:`hetlab.schedulers.bounds` gives the layer's work ``W``, span ``D``, average parallelism ``W/D`` and peak width.
:func:`transformer_costs` gives each operator's floating-point operations and bytes moved.

Times follow the roofline model at 100 % efficiency (Williams et al. 2009): an operator takes
``max(FLOPs / peak, bytes moved / memory bandwidth)``, whichever of compute and memory traffic binds, with
16-bit values each read once and written once. Real kernels run slower, and fused kernels (FlashAttention,
fused LayerNorm, one QKV GEMM) merge several of these operators; the *shape* of the graph is what the chapter
uses.
"""
from __future__ import annotations

from hetlab._validate import check_int, check_positive
from hetlab.tasks import Task, TaskGraph

__all__ = ["transformer_layer", "transformer_costs", "TRANSFORMER_EDGES"]

#: The dependencies of one pre-LayerNorm Transformer layer (forward pass), operator by operator.
TRANSFORMER_EDGES = (
    ("LN1", "Q"), ("LN1", "K"), ("LN1", "V"),
    ("Q", "QK^T"), ("K", "QK^T"), ("QK^T", "softmax"), ("softmax", "AV"), ("V", "AV"),
    ("AV", "O"), ("O", "add1"), ("add1", "LN2"), ("LN2", "FC1"), ("FC1", "GELU"), ("GELU", "FC2"),
    ("FC2", "add2"),
)


#: Rough floating-point operations per element of the element-wise operators (add, LayerNorm, softmax, GELU):
#: each has an arithmetic intensity of a few FLOP per byte, far below any GPU's ridge point, so only its
#: bytes set its time and these counts only fill the table.
_ELEMENTWISE_FLOPS = {"add": 1, "layernorm": 5, "softmax": 5, "gelu": 8}


def transformer_costs(*, hidden: int = 4096, sequence: int = 2048, heads: int = 32,
                      bytes_per_value: int = 2) -> dict[str, tuple[float, float]]:
    """Floating-point operations and bytes moved by each operator of one Transformer layer's forward pass:
    ``{name: (flops, bytes)}`` in :data:`TRANSFORMER_EDGES`' operators, for :func:`transformer_layer`.

    A product of an ``(m x k)`` and a ``(k x n)`` matrix costs ``2 m k n`` FLOPs and moves its two inputs and
    its output once. The attention scores are ``heads`` matrices of ``s x s``: ``QK^T`` reads Q and K
    (``s x h`` each) and writes them, ``AV`` reads them and V and writes ``s x h``. Element-wise operators read
    and write their values once (an add reads two inputs); their FLOP counts are rough (see the module).
    Raises ``ValueError`` / ``TypeError`` naming the parameter.

    >>> costs = transformer_costs()                     # h = 4096, s = 2048, 32 heads, 16-bit values
    >>> flops, moved = costs["QK^T"]                    # 2 s^2 h FLOPs; Q, K and 32 score matrices
    >>> round(flops / 1e9, 1), round(moved / 1e6, 1)    # GFLOP, MB
    (34.4, 302.0)
    """
    h = check_int("hidden", hidden, low=1, high=1 << 20)
    s = check_int("sequence", sequence, low=1, high=1 << 22)
    a = check_int("heads", heads, low=1, high=h)
    if h % a:
        raise ValueError(f"heads must divide hidden ({h}), got {a}")
    b = check_int("bytes_per_value", bytes_per_value, low=1, high=8)

    def matmul(m: int, k: int, n: int) -> tuple[float, float]:
        return 2.0 * m * k * n, float(m * k + k * n + m * n) * b

    def elementwise(kind: str, read: float, written: float, elements: float) -> tuple[float, float]:
        return _ELEMENTWISE_FLOPS[kind] * elements, (read + written) * b

    sh, scores = s * h, a * s * s
    return {
        "LN1": elementwise("layernorm", sh, sh, sh),
        "Q": matmul(s, h, h), "K": matmul(s, h, h), "V": matmul(s, h, h),
        "QK^T": (2.0 * s * s * h, float(2 * sh + scores) * b),       # all heads: heads x (s x h/heads x s)
        "softmax": elementwise("softmax", scores, scores, scores),
        "AV": (2.0 * s * s * h, float(scores + 2 * sh) * b),         # scores and V in, s x h out
        "O": matmul(s, h, h),
        "add1": elementwise("add", 2 * sh, sh, sh),
        "LN2": elementwise("layernorm", sh, sh, sh),
        "FC1": matmul(s, h, 4 * h),
        "GELU": elementwise("gelu", 4 * sh, 4 * sh, 4 * sh),
        "FC2": matmul(s, 4 * h, h),
        "add2": elementwise("add", 2 * sh, sh, sh),
    }


def transformer_layer(*, hidden: int = 4096, sequence: int = 2048, heads: int = 32, tflops: float = 312.0,
                      bandwidth_tbs: float = 2.0, bytes_per_value: int = 2) -> TaskGraph:
    """One Transformer layer's forward pass as a task graph; each task's work is its time in microseconds,
    ``max(FLOPs / peak, bytes / bandwidth)`` of :func:`transformer_costs` (the roofline at full efficiency).

    Operators: LayerNorm (``LN1``), the Q, K and V projections (three ``h x h`` matrix multiplications that
    only need ``LN1``'s output, so they may run side by side), the attention scores ``QK^T``, ``softmax``
    over the ``heads x s x s`` scores, ``AV``, the output projection ``O``, the residual ``add1``, ``LN2``,
    the MLP (``FC1`` to ``4h``, ``GELU``, ``FC2`` back to ``h``) and the residual ``add2``. Micro-batch 1.

    Parameters: ``hidden`` h and ``sequence`` s (tokens), ``heads`` (attention heads, must divide
    ``hidden``), ``tflops`` (the device's dense 16-bit peak, TFLOP/s; 312 is an A100's),
    ``bandwidth_tbs`` (memory bandwidth, TB/s; 2.039 on an A100 80 GB SXM) and ``bytes_per_value``.
    Raises ``ValueError`` / ``TypeError`` naming the parameter.

    >>> layer = transformer_layer()                     # A100: 312 TFLOP/s, 2.0 TB/s
    >>> layer.task("Q").work, layer.task("QK^T").work   # Q bound by compute; QK^T by memory (151 > 110)
    (220.3, 151.0)
    """
    peak = check_positive("tflops", tflops, high=1e6) * 1e12          # FLOP/s
    bw = check_positive("bandwidth_tbs", bandwidth_tbs, high=1e4) * 1e12  # bytes/s
    costs = transformer_costs(hidden=hidden, sequence=sequence, heads=heads, bytes_per_value=bytes_per_value)
    times = {name: max(flops / peak, moved / bw) * 1e6 for name, (flops, moved) in costs.items()}
    return TaskGraph([Task(name, round(t, 1)) for name, t in times.items()], list(TRANSFORMER_EDGES))
