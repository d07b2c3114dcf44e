"""Chapter 12 (misconceptions): strong scaling with an all-reduce, and the cost of offloading."""
from __future__ import annotations

import numpy as np

from hetlab import communication as C
from hetlab import formulas as F
from hetlab import plotting as P
from hetlab.widgets import Explorer, int_slider, slider

__all__ = ["scaling_reality", "scaling_reality_figure", "transfer_cost", "transfer_cost_figure",
           "split_timing_figure"]


#: The widget's default alpha in microseconds: the book's network step latency (NCCL ring/Simple, chapter 8).
_ALPHA_US = round(C.NETWORK_STEP_LATENCY * 1e6, 3)


def _offload_ms(n, **knobs):
    """:func:`hetlab.communication.matmul_offload_time` in milliseconds, this view's unit."""
    return tuple(t * 1e3 for t in C.matmul_offload_time(n, **knobs))


def _scaling_draw():
    """The draw function of :func:`scaling_reality` and the artists it keeps (shared with the static figure)."""
    counts = np.unique(np.round(2.0 ** np.arange(0, 10.01, 0.125))).astype(int)
    art: dict = {}

    def draw(ax, p: float, grad_gb: float, alpha_us: float, log2_n: float) -> str:
        n = int(round(2.0 ** log2_n))
        link = dict(grad_bytes=grad_gb * 1e9, latency=alpha_us * 1e-6)
        amdahl, real = F.amdahl(p, counts), C.speedup_with_allreduce(p, counts, **link)
        best = C.best_device_count(p, max_devices=1024, **link)
        if not art:
            art["amdahl"], = ax.plot(counts, amdahl, label=P.label("Amdahl（无通信）", "Amdahl (no communication)"))
            art["real"], = ax.plot(counts, real, label=P.label("加上环形全归约", "with ring all-reduce"))
            art["now"] = ax.axvline(n, color="crimson", lw=0.8,
                                    label=P.label("当前卡数 N（滑块）", "current N (slider)"))
            art["best"], = ax.plot([best], [C.speedup_with_allreduce(p, best, **link)], "o", color="crimson",
                                   label=P.label("通信模型的最佳卡数", "best N with communication"))
            ax.set_xscale("log", base=2)
            ax.set_xlabel(P.label("卡数 N", "devices N"))
            ax.set_ylabel(P.label("加速比", "speed-up"))
            ax.legend(fontsize=8, loc="upper left")
        art["amdahl"].set_ydata(amdahl)
        art["real"].set_ydata(real)
        ax.set_ylim(0, 1.1 * float(np.max(amdahl)))
        art["now"].set_xdata([n, n])
        art["best"].set_data([best], [C.speedup_with_allreduce(p, best, **link)])
        ax.set_title(P.label(f"强扩展：p = {p:g}，梯度 {grad_gb:.1f} GB，α = {alpha_us:g} µs",
                             f"Strong scaling: p = {p:g}, gradients {grad_gb:.1f} GB, alpha = {alpha_us:g} us"))
        now, top = C.speedup_with_allreduce(p, n, **link), C.speedup_with_allreduce(p, best, **link)
        return (f"N = {n}：Amdahl 加速比 {F.amdahl(p, n):.2f}x，加上全归约 {now:.2f}x；"
                f"通信模型下 {best} 张卡最快（{top:.2f}x）")

    return draw, art


def scaling_reality() -> Explorer:
    """Amdahl's speed-up against the same step with a ring all-reduce of the gradients, N = 1 ... 1024."""
    draw, _ = _scaling_draw()
    return Explorer(draw, {"p": slider("并行比例 p", 0.5, 0.999, 0.001, 0.95, fmt=".3f"),
                           "grad_gb": slider("梯度量 (GB)", 0.0, 4.0, 0.1, 0.5, fmt=".1f"),
                           "alpha_us": slider("每轮链路延迟 α (µs)", 0.0, 50.0, 1.0, _ALPHA_US, fmt=".0f"),
                           "log2_n": slider("log2 卡数", 0.0, 10.0, 1.0, 10.0, fmt=".0f")},
                    figsize=(7, 3.2), clear=False)


def scaling_reality_figure():
    """The widget's default picture (p = 0.95, 0.5 GB, the book's network step alpha = 14 us) as a static figure,
    N-dagger marked: drawn by the widget's own draw function, for reading the chapter without a kernel."""
    draw, art = _scaling_draw()
    ax = P.new_axes(figsize=(7, 3.2))
    draw(ax, 0.95, 0.5, _ALPHA_US, 10.0)
    art["now"].set_visible(False)
    best = C.best_device_count(0.95, max_devices=1024, grad_bytes=0.5e9, latency=C.NETWORK_STEP_LATENCY)
    top = float(C.speedup_with_allreduce(0.95, best, grad_bytes=0.5e9, latency=C.NETWORK_STEP_LATENCY))
    ax.annotate(rf"$N^\dagger$ = {best} ({top:.2f}×)", (best, top), xytext=(0, -22), textcoords="offset points",
                ha="center", fontsize=8, color="crimson")
    ax.legend(handles=[art["amdahl"], art["real"], art["best"]], fontsize=8, loc="upper left")
    return ax.figure


def _transfer_draw():
    """The draw function of :func:`transfer_cost` and the artists it keeps (shared with the static figure)."""
    sizes = 2.0 ** np.arange(4, 13.01, 0.25)
    art: dict = {}
    sizes_fine = np.arange(8, 8193)

    def draw(ax, log2_n: float, cpu_gflops: float, copies: int) -> str:
        n = 2.0 ** log2_n
        copies = int(copies)
        knobs = dict(cpu_flops=cpu_gflops * 1e9, copies=copies)
        cpu, gpu, copy = _offload_ms(sizes, **knobs)
        cpu_fine, gpu_fine, _ = _offload_ms(sizes_fine, **knobs)
        faster = gpu_fine < cpu_fine
        cross = float(sizes_fine[np.argmax(faster)]) if faster.any() else float("nan")
        if not art:
            art["cpu"], = ax.plot(sizes, cpu, label="CPU")
            art["gpu"], = ax.plot(sizes, gpu, label=P.label("GPU（含拷贝）", "GPU incl. copies"))
            # review ch12-18/19: drawn above the GPU line, where small n is almost all copy and the two coincide
            art["copy"], = ax.plot(sizes, np.maximum(copy, 1e-9), ls=":", lw=2.2, color="#1a7a1a", zorder=3,
                                   label=P.label("其中拷贝", "of which copies"))
            art["now"] = ax.axvline(n, color="crimson", lw=0.8,
                                    label=P.label("当前边长 n（滑块）", "current n (slider)"))
            art["cross"] = ax.axvline(cross, color="gray", lw=0.8, ls="--",
                                      label=P.label("交叉点（GPU 开始更快）", "crossover (GPU faster)"))
            ax.set_xscale("log", base=2)
            ax.set_xlim(sizes[0], sizes[-1])
            ax.set_yscale("log")
            ax.set_ylim(1e-6, 1e5)
            ax.set_xlabel(P.label("矩阵边长 n", "matrix size n"))
            ax.set_ylabel(P.label("时间（毫秒）", "time (ms)"))
            ax.legend(fontsize=8, loc="upper left")
        art["cpu"].set_ydata(cpu)
        art["gpu"].set_ydata(gpu)
        art["copy"].set_ydata(np.maximum(copy, 1e-9))
        art["copy"].set_visible(copies > 0)
        art["cross"].set_xdata([cross, cross])
        everywhere = bool(faster[0])
        art["cross"].set_visible(faster.any() and not everywhere)
        shown = [h for h in (art["cpu"], art["gpu"], art["copy"], art["now"], art["cross"]) if h.get_visible()]
        ax.legend(handles=shown, fontsize=8, loc="upper left")
        art["now"].set_xdata([n, n])
        ax.set_title(P.label(f"一次 FP32 矩阵乘：CPU {cpu_gflops:.0f} GFLOP/s，{copies} 次拷贝",
                             f"One FP32 matmul: CPU {cpu_gflops:.0f} GFLOP/s, {copies} copies"))
        c, g, k = _offload_ms(n, **knobs)
        winner = "GPU" if g < c else "CPU"
        where = ("所有尺寸上 GPU 都更快" if everywhere else
                 f"交叉点 n ≈ {cross:.0f}" if faster.any() else "n ≤ 8192 内 GPU 都不更快")
        return (f"n = {n:.0f}：CPU {c:.3g} 毫秒，GPU {g:.3g} 毫秒（其中拷贝 {k:.3g} 毫秒）：{winner} 更快；"
                f"{where}（不含核函数的发射：{_launch_note()}）")

    return draw, art


def _launch_note() -> str:
    """The stored H200 reading of one tiny PyTorch operation's launch (framework dispatch included)."""
    from hetlab.book.reference import load

    launch = load("h200").extra["launch"]
    return (f"H200 上一个 PyTorch 小算子实测 {launch['per_launch_async_us']:.1f} µs，"
            f"等它完成 {launch['per_launch_with_sync_us']:.1f} µs")


def transfer_cost() -> Explorer:
    """CPU vs GPU for one matrix multiply of size n, counting the PCIe copies both ways."""
    draw, _ = _transfer_draw()
    return Explorer(draw, {"log2_n": slider("log2 矩阵边长（n = 2^值）", 4.0, 13.0, 0.25, 6.0),
                           "cpu_gflops": slider("CPU 持续算力 (GFLOP/s)", 50.0, 2000.0, 50.0, 1000.0, fmt=".0f"),
                           "copies": int_slider("拷贝次数", 0, 3, 3)},
                    figsize=(7, 3.4), clear=False)


def transfer_cost_figure():
    """The widget's default picture (CPU 1 TFLOP/s, 3 copies) as a static figure, the crossover marked:
    drawn by the widget's own draw function, for reading the chapter without a kernel."""
    draw, art = _transfer_draw()
    ax = P.new_axes(figsize=(7, 3.4))
    draw(ax, 6.0, 1000.0, 3)
    art["now"].set_visible(False)
    cross = float(art["cross"].get_xdata()[0])
    ax.annotate(f"n ≈ {cross:.0f}", (cross, 1e3), xytext=(4, 0), textcoords="offset points", fontsize=8,
                color="gray")
    ax.legend(handles=[art["cpu"], art["gpu"], art["copy"], art["cross"]], fontsize=8, loc="upper left")
    return ax.figure


def split_timing_figure(timing, reference=None):
    """12.2's figure: the thread pool's wall time and the pure computation's CPU time, each relative to its
    value at the fewest pieces, against the piece count, on a linear axis; a stored reading
    (:class:`hetlab.real.split_timing.SplitTiming`) in open markers when given."""
    from hetlab.real.split_timing import SplitTiming

    if not isinstance(timing, SplitTiming):
        raise TypeError(f"timing must be a SplitTiming, got {type(timing).__name__}")
    if reference is not None and not isinstance(reference, SplitTiming):
        raise TypeError(f"reference must be a SplitTiming or None, got {type(reference).__name__}")
    ax = P.new_axes(figsize=(7, 3.2))
    for t, style, who in ((timing, "-", ("本机", "here")), (reference, ":", ("参照", "stored"))):
        if t is None:
            continue
        fill = "full" if style == "-" else "none"
        ax.plot(t.pieces, np.asarray(t.pool) / t.pool[0], "o" + style, color="#4C72B0", fillstyle=fill,
                label=P.label(f"{who[0]}：线程池墙钟（{t.workers} 个线程）", f"{who[1]}: thread pool, wall"))
        ax.plot(t.pieces, np.asarray(t.kernel) / t.kernel[0], "s" + style, color="#DD8452", fillstyle=fill,
                label=P.label(f"{who[0]}：纯计算 CPU 时间（一个线程）", f"{who[1]}: computation alone, CPU"))
    ax.axhline(1.0, color="0.6", lw=0.8)
    ax.set_xscale("log")
    ax.set_ylim(bottom=0)
    ax.set_xlabel(P.label("块数 N（对数轴）", "pieces N (log)"))
    ax.set_ylabel(P.label(f"相对 N = {timing.pieces[0]} 的倍数", "relative to the fewest pieces"))
    size = f"{timing.n}×{timing.n}"
    ax.set_title(P.label(f"{size} 矩阵乘按行切成 N 块（实测）：块变薄，计算本身大体变慢",
                         f"{size} matmul split by rows (measured)"), fontsize=9)
    ax.legend(fontsize=8)
    return ax.figure


#: (chapter, factory) for each widget of this module.
VIEWS = [(12, scaling_reality), (12, transfer_cost)]
