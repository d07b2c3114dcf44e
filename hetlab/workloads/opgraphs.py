"""Small operator graphs of real AI workloads, with per-operator times from a roofline estimate.

:func:`transformer_layer` is the forward pass of one (unfused) Transformer layer as a task graph: each
operator is a :class:`~hetlab.tasks.Task` whose work is its ideal time in microseconds on one device, so
:mod:`hetlab.schedulers.bounds` gives the layer's work ``W``, span ``D``, average parallelism ``W/D`` and peak width.

Times are idealised: a matrix multiplication takes ``FLOPs / peak``, an element-wise or normalisation
operator takes ``bytes moved / memory bandwidth`` (16-bit values, each read once and written once), as in a
roofline model at 100 % efficiency. Real kernels run slower, and fused kernels (FlashAttention, fused
LayerNorm) merge several of these operators; the *shape* of the graph is what the chapter uses.
"""
from __future__ import annotations

from hetlab._validate import check_int, check_positive
from hetlab.tasks import Task, TaskGraph

__all__ = ["transformer_layer", "TRANSFORMER_EDGES"]

#: The dependencies of one pre-LayerNorm Transformer layer (forward pass), operator by operator.
TRANSFORMER_EDGES = (
    ("LN1", "Q"), ("LN1", "K"), ("LN1", "V"),
    ("Q", "QK^T"), ("K", "QK^T"), ("QK^T", "softmax"), ("softmax", "AV"), ("V", "AV"),
    ("AV", "O"), ("O", "add1"), ("add1", "LN2"), ("LN2", "FC1"), ("FC1", "GELU"), ("GELU", "FC2"),
    ("FC2", "add2"),
)


def transformer_layer(*, hidden: int = 4096, sequence: int = 2048, heads: int = 32, tflops: float = 312.0,
                      bandwidth_tbs: float = 2.0, bytes_per_value: int = 2) -> TaskGraph:
    """One Transformer layer's forward pass as a task graph; each task's work is its time in microseconds.

    Operators: LayerNorm (``LN1``), the Q, K and V projections (three ``h x h`` matrix multiplications that
    only need ``LN1``'s output, so they may run side by side), the attention scores ``QK^T``, ``softmax``
    over the ``heads x s x s`` scores, ``AV``, the output projection ``O``, the residual ``add1``, ``LN2``,
    the MLP (``FC1`` to ``4h``, ``GELU``, ``FC2`` back to ``h``) and the residual ``add2``. Micro-batch 1.

    Parameters: ``hidden`` h and ``sequence`` s (tokens), ``heads`` (attention heads, must divide
    ``hidden``), ``tflops`` (the device's dense 16-bit peak, TFLOP/s; 312 is an A100's),
    ``bandwidth_tbs`` (memory bandwidth, TB/s; about 2.0 on an A100 80 GB) and ``bytes_per_value``.
    Raises ``ValueError`` / ``TypeError`` naming the parameter.
    """
    h = check_int("hidden", hidden, low=1, high=1 << 20)
    s = check_int("sequence", sequence, low=1, high=1 << 22)
    a = check_int("heads", heads, low=1, high=h)
    if h % a:
        raise ValueError(f"heads must divide hidden ({h}), got {a}")
    peak = check_positive("tflops", tflops, high=1e6) * 1e12          # FLOP/s
    bw = check_positive("bandwidth_tbs", bandwidth_tbs, high=1e4) * 1e12  # bytes/s
    b = check_int("bytes_per_value", bytes_per_value, low=1, high=8)

    def matmul(m: int, k: int, n: int) -> float:        # microseconds for an (m x k) @ (k x n) product
        return 2.0 * m * k * n / peak * 1e6

    def moved(values_read: float, values_written: float) -> float:   # microseconds to stream the values
        return (values_read + values_written) * b / bw * 1e6

    sh = s * h
    times = {
        "LN1": moved(sh, sh),
        "Q": matmul(s, h, h), "K": matmul(s, h, h), "V": matmul(s, h, h),
        "QK^T": matmul(s, h, s),                         # all heads together: heads x (s x h/heads x s)
        "softmax": moved(a * s * s, a * s * s),
        "AV": matmul(s, s, h),
        "O": matmul(s, h, h),
        "add1": moved(2 * sh, sh),
        "LN2": moved(sh, sh),
        "FC1": matmul(s, h, 4 * h),
        "GELU": moved(4 * sh, 4 * sh),
        "FC2": matmul(s, 4 * h, h),
        "add2": moved(2 * sh, sh),
    }
    return TaskGraph([Task(name, round(t, 1)) for name, t in times.items()], list(TRANSFORMER_EDGES))
