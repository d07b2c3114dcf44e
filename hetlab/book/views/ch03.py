"""Chapter 3 (hardware): peak compute at one precision, the roofline model, the offload break-even and a
measured point of the reader's machine beside the stored H200 machine."""
from __future__ import annotations

import numpy as np

from hetlab import plotting as P
from hetlab._validate import check_int, check_positive
from hetlab.models import hardware as H
from hetlab.models import roofline as R
from hetlab.widgets import Explorer, dropdown, int_slider, slider

__all__ = ['peak_compute_explorer', 'roofline_explorer', 'peak_table', 'roofline_figure', 'peak_bars_figure',
           'offload_figure', 'measured_roofline_figure', 'h200_one_core_matmul']

_DECADES = [1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0, 1000.0]
#: One colour per engine in every figure and widget of the chapter.
_EPYC, _A100, _TENSOR, _YOURS = "#C44E52", "#4C72B0", "#8172B2", "#DD8452"


def peak_table() -> str:
    """Every engine of ``hardware.ENGINES``: computed peak next to the datasheet figure, columns aligned
    by display width (CJK characters count two)."""
    engine_name = {"vector": "向量单元", "tensor": "张量核心"}
    clock_name = {"base": "基础", "boost": "加速"}
    head = ["芯片", "精度", "单元", "核心/SM", "频率 GHz", "每核(SM)每周期 FLOP", "算得峰值", "手册峰值"]
    rows = []
    for e in H.ENGINES:
        unit = "TOPS" if e.precision == "INT8" else "TFLOP/s"
        sheet = f"{e.datasheet / 1e12:g} {unit}" if e.datasheet else "未公布"
        rows.append([e.chip, e.precision, engine_name[e.engine], str(e.cores),
                     f"{e.frequency_hz / 1e9:.2f}（{clock_name[e.clock]}）", str(e.flops_per_cycle),
                     f"{e.peak / 1e12:.2f} {unit}", sheet])
    widths = [max(P.display_width(r[k]) for r in rows + [head]) for k in range(len(head))]
    right = [False, False, False, True, False, True, True, True]
    return "\n".join("  ".join(P.pad(c, w, right=r) for c, w, r in zip(row, widths, right)) for row in [head] + rows)


def peak_compute_explorer() -> Explorer:
    """P = N_cores x f x FLOPs/cycle, FLOPs/cycle = FMA units x SIMD lanes x 2, as a bar next to the vector
    units of the EPYC 7763 and the A100 at the same precision (linear axis, bars updated in place); the
    readout gives the ratios to both."""
    art: dict = {}
    names = ["EPYC 7763", P.label("A100 向量单元", "A100 vector units"), P.label("你的芯片", "yours")]

    def draw(ax, cores: int, ghz: float, fma: int, lanes: int, precision: str) -> str:
        per_cycle = H.flops_per_cycle(fma, lanes)
        mine = H.peak_flops(cores, ghz * 1e9, per_cycle)
        epyc, a100 = H.entry("EPYC 7763", precision).peak, H.entry("A100", precision).peak
        values = [epyc / 1e12, a100 / 1e12, mine / 1e12]
        if not art:
            art["bars"] = ax.barh(range(3), values, color=[_EPYC, _A100, _YOURS], height=0.6)
            ax.invert_yaxis()
            ax.set_yticks(range(3), names)
            ax.set_xlabel(P.label("理论峰值（TFLOP/s，线性轴）", "peak (TFLOP/s, linear axis)"))
            art["labels"] = [ax.text(0, k, "", va="center", fontsize=8) for k in range(3)]
        top = max(values)
        ax.set_xlim(0, 1.25 * top)
        ax.set_title(P.label(f"{precision} 峰值：P = 核心数 × 频率 × 每周期浮点运算数",
                             f"{precision} peaks: P = cores x f x FLOPs/cycle"), fontsize=10)
        for bar, text, v in zip(art["bars"], art["labels"], values):
            bar.set_width(v)
            text.set_x(v + 0.01 * top)
            text.set_text(f"{v:.3g}")
        return (f"每周期浮点运算数 = {fma} × {lanes} × 2 = {per_cycle}；P = {cores} 核 × {ghz:.2f} GHz × "
                f"{per_cycle} = {mine / 1e12:.3g} TFLOP/s，是 EPYC 的 {mine / epyc:.2f} 倍、"
                f"A100 向量单元的 {mine / a100:.2f} 倍")

    return Explorer(draw, {"cores": int_slider("核心数", 1, 256, 64),
                           "ghz": slider("频率 GHz", 0.5, 5.0, 0.01, 2.45),
                           "fma": int_slider("每核 FMA 单元", 1, 4, 2),
                           "lanes": int_slider("SIMD 通道数", 1, 64, 4),
                           "precision": dropdown("精度", ["FP64", "FP32"])},
                    figsize=(7.5, 2.4), clear=False)


#: Kernels placed on the roofline: (label zh, label en, intensity in FLOP/byte).
KERNELS = [("逐元素 c=a+b（FP32）", "elementwise a+b (FP32)", R.elementwise_intensity()),
           ("矩阵乘 n=64（FP32）", "matmul n=64 (FP32)", R.matmul_intensity(64)),
           ("矩阵乘 n=4096（FP32）", "matmul n=4096 (FP32)", R.matmul_intensity(4096))]
#: One marker per kernel of ``KERNELS``, the same in figure 3-3 and the roofline widget.
_KERNEL_MARKERS = ["o", "s", "^"]


def roofline_explorer() -> Explorer:
    """Attainable FLOP/s = min(peak, I x bandwidth) on log axes; the book's kernels as points,
    a movable kernel of intensity I, the ridge point marked (artists updated in place)."""
    art: dict = {}
    grid = np.logspace(-2, 3, 200)

    def draw(ax, log_intensity: float, bandwidth: float, peak: float) -> str:
        peak_f, bw = peak * 1e12, bandwidth * 1e9
        roof = R.attainable(grid, peak_f, bw) / 1e12
        ridge = R.ridge_point(peak_f, bw)
        i = 10.0 ** log_intensity
        mine = R.attainable(i, peak_f, bw) / 1e12
        points = [R.attainable(k[2], peak_f, bw) / 1e12 for k in KERNELS]
        if not art:
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlim(grid[0], grid[-1])
            ax.set_ylim(1e-3, 1e3)
            ax.minorticks_off()          # log axes' minor tick labels dominate redraw time
            ax.set_xticks(_DECADES[1:], [f"{v:g}" for v in _DECADES[1:]])   # plain labels: no mathtext to render
            ax.set_yticks(_DECADES, [f"{v:g}" for v in _DECADES])
            art["roof"], = ax.plot(grid, roof, color="black", lw=2, label=P.label("屋顶线", "roofline"))
            art["ridge"] = ax.axvline(ridge, color="0.5", ls=":", lw=1)
            art["ridge_note"] = ax.text(ridge * 1.15, 2e-3, "", fontsize=8, color="0.35")
            # the shapes of figure 3-3 (circle, square, triangle), in the legend grey of that figure
            art["kernels"] = [ax.plot([k[2]], [p], m, color="0.7", mec="black", mew=0.5, ms=7, zorder=3)[0]
                              for k, p, m in zip(KERNELS, points, _KERNEL_MARKERS)]
            art["names"] = [ax.annotate(P.label(k[0], k[1]), (k[2], p), textcoords="offset points",
                                        xytext=(-4 if last else 4, -12), ha="right" if last else "left", fontsize=7)
                            for last, k, p in zip([False, False, True], KERNELS, points)]
            art["mine"], = ax.plot([i], [mine], "o", mfc="none", mec="crimson", mew=2, ms=11,
                                   label=P.label("你的核函数", "your kernel"))
            ax.set_xlabel(P.label("算术强度 I（FLOP/字节，对数轴）", "arithmetic intensity I (FLOP/byte, log)"))
            ax.set_ylabel(P.label("可达性能（TFLOP/s）", "attainable (TFLOP/s)"))
            ax.set_title(P.label("屋顶线模型：可达 = min(峰值, I × 带宽)", "roofline: min(peak, I x bandwidth)"))
            ax.legend(loc="upper left", fontsize=8, frameon=False)
        art["roof"].set_ydata(roof)
        art["ridge"].set_xdata([ridge, ridge])
        art["ridge_note"].set_x(ridge * 1.15)
        art["ridge_note"].set_text(P.label(f"屋脊点 I* = {ridge:.3g}", f"ridge I* = {ridge:.3g}"))
        for line, k, p in zip(art["kernels"], KERNELS, points):
            line.set_data([k[2]], [p])
        for note, k, p in zip(art["names"], KERNELS, points):
            note.xy = (k[2], p)
        art["mine"].set_data([i], [mine])
        where = "受内存带宽限制" if i < ridge else "受算力限制"
        return f"I = {i:.3g} FLOP/字节，屋脊点 I* = 峰值/带宽 = {ridge:.3g}；可达 {mine:.3g} TFLOP/s（{where}）"

    return Explorer(draw, {"log_intensity": slider("log10 算术强度", -2.0, 3.0, 0.01, 0.0,
                                                   fmt=".2f"),
                           "bandwidth": slider("内存带宽 GB/s", 50.0, 3000.0, 5.0, 1555.0,
                                               fmt=".0f"),
                           "peak": slider("峰值 TFLOP/s", 1.0, 320.0, 0.5, 19.5, fmt=".1f")},
                    figsize=(7.5, 3.6), clear=False)


def roofline_figure(ax=None):
    """Static figure: the FP32 rooflines of the A100 40GB (HBM2) and the EPYC 7763 (8 x DDR4-3200) on one
    log-log plot, the book's three kernels on each roof and both ridge points marked."""
    ax = P.new_axes(ax, figsize=(7.5, 4.2))
    grid = np.logspace(-2, 3, 300)
    chips = [("A100 40GB", "A100 40GB", H.entry("A100", "FP32").peak, H.memory("A100 40GB HBM2").bandwidth,
              _A100),
             ("EPYC 7763", "EPYC 7763", H.entry("EPYC 7763", "FP32").peak, H.memory("EPYC 7763 DDR4").bandwidth,
              _EPYC)]
    markers = _KERNEL_MARKERS
    for zh, en, peak, bw, colour in chips:
        ridge = R.ridge_point(peak, bw)
        ax.plot(grid, R.attainable(grid, peak, bw) / 1e12, color=colour, lw=2,
                label=P.label(f"{zh}（FP32 {peak / 1e12:.1f} TFLOP/s，{bw / 1e9:.0f} GB/s）",
                              f"{en} (FP32 {peak / 1e12:.1f} TFLOP/s, {bw / 1e9:.0f} GB/s)"))
        ax.axvline(ridge, color=colour, ls=":", lw=1)
        left = colour == chips[0][4]
        ax.annotate(P.label(f"屋脊点 {ridge:.1f}", f"ridge {ridge:.1f}"), (ridge, 2e-3),
                    textcoords="offset points", xytext=(-3 if left else 3, 0), ha="right" if left else "left",
                    fontsize=8, color=colour)
        for (_zh, _en, i), m in zip(KERNELS, markers):
            ax.plot([i], [R.attainable(i, peak, bw) / 1e12], m, color=colour, ms=7, mec="black", mew=0.5)
    for (kzh, ken, _i), m in zip(KERNELS, markers):
        ax.plot([], [], m, color="0.7", mec="black", mew=0.5, label=P.label(kzh, ken))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(grid[0], grid[-1])
    ax.set_ylim(1e-3, 100)
    ax.set_xlabel(P.label("算术强度 I（FLOP/字节，对数轴）", "arithmetic intensity I (FLOP/byte, log)"))
    ax.set_ylabel(P.label("可达性能（TFLOP/s，对数轴）", "attainable (TFLOP/s, log)"))
    ax.set_title(P.label("FP32 屋顶线：A100 与 EPYC 7763（同一精度）", "FP32 rooflines: A100 vs EPYC 7763"))
    ax.legend(fontsize=7.5, loc="upper left", frameon=False)
    return ax


def peak_bars_figure():
    """Static bars of the datasheet engines, one panel per comparison that is allowed: FP64 (both chips'
    vector units and the A100's FP64 tensor cores), FP32 vector units, and the tensor cores' low-precision
    formats (matrix products only, not to be compared with the panels above). Linear axes, so a bar twice
    as long is twice the peak. Returns the three Axes."""
    import matplotlib.pyplot as plt

    P.use_cjk_font()
    unit = {"vector": ("向量单元", "vector"), "tensor": ("张量核心", "tensor cores")}
    colour = {"vector": {"EPYC 7763": _EPYC, "A100": _A100}, "tensor": {"A100": _TENSOR}}
    groups = [(P.label("FP64：同一精度，可以直接比", "FP64: one precision, comparable"),
               [("EPYC 7763", "FP64", "vector"), ("A100", "FP64", "vector"), ("A100", "FP64", "tensor")]),
              (P.label("FP32：同一精度，可以直接比", "FP32: one precision, comparable"),
               [("EPYC 7763", "FP32", "vector"), ("A100", "FP32", "vector")]),
              (P.label("张量核心的低精度格式：只做矩阵乘，不与上面两组比",
                       "tensor-core low precisions: matmul only, not comparable with the panels above"),
               [("A100", "TF32", "tensor"), ("A100", "FP16/BF16", "tensor"), ("A100", "INT8", "tensor")])]
    fig, axes = plt.subplots(3, 1, figsize=(7.5, 5.0), layout="constrained", height_ratios=[3, 2, 3])
    for ax, (title, rows) in zip(axes, groups):
        values = [H.entry(*row).peak / 1e12 for row in rows]
        ax.barh(range(len(rows)), values, height=0.6, color=[colour[e][c] for c, _, e in rows])
        ax.set_yticks(range(len(rows)), [P.label(f"{c} {p} {unit[e][0]}", f"{c} {p} {unit[e][1]}")
                                         for c, p, e in rows], fontsize=8)
        ax.invert_yaxis()
        ax.set_xlim(0, 1.2 * max(values))
        for k, (v, (_c, p, _e)) in enumerate(zip(values, rows)):
            ax.text(v + 0.01 * max(values), k, f"{v:.3g}" + (" TOPS" if p == "INT8" else ""), va="center",
                    fontsize=8)
        ax.set_title(title, fontsize=9, loc="left")
        ax.tick_params(axis="x", labelsize=8)
    axes[-1].set_xlabel(P.label("稠密峰值（TFLOP/s，INT8 为 TOPS；每组线性轴）",
                                "dense peak (TFLOP/s; TOPS for INT8; linear axis per panel)"))
    for ax in axes[:-1]:
        ax.set_xlabel("TFLOP/s", fontsize=8)
    fig.suptitle(P.label("同一精度才可比：EPYC 7763 与 A100 的理论峰值",
                         "compare at one precision: EPYC 7763 and A100"), fontsize=10)
    return axes


def offload_figure(ax=None, latency: float = 30e-6):
    """Static figure: time to offload ``c = a + b``-shaped work (12 bytes per element over PCIe 4.0 x16, then
    the A100's FP32 roofline time, plus a fixed ``latency`` per offload) over the EPYC 7763's FP32 roofline time
    on its DDR4, against FLOP per element, one curve per size. Without the fixed cost every size gives the
    same curve, crossing 1 at the break-even intensity; the fixed cost moves small sizes' crossings right."""
    ax = P.new_axes(ax, figsize=(7.5, 3.8))
    flops = np.logspace(0, 5.5, 240)
    cpu_p, cpu_b = H.entry("EPYC 7763", "FP32").peak, H.memory("EPYC 7763 DDR4").bandwidth

    def ratio(n: int, fixed: float) -> list[float]:
        times = [H.offload_times(n, flops_per_element=f, latency=fixed) for f in flops]
        return [(t["copy"] + t["kernel"]) / R.kernel_time(n * f, 12 * n, cpu_p, cpu_b)
                for f, t in zip(flops, times)]

    ax.plot(flops, ratio(2**20, 0.0), color="black", lw=2.5,
            label=P.label("不计固定开销：任何规模都是这一条", "no fixed cost: every size"))
    for n, colour in ((2**12, "#DD8452"), (2**16, "#55A868"), (2**20, "#4C72B0")):
        ax.plot(flops, ratio(n, latency), color=colour, lw=1.5, ls="--",
                label=P.label(f"固定开销 {latency * 1e6:.0f} µs，n = $2^{{{n.bit_length() - 1}}}$",
                              f"fixed {latency * 1e6:.0f} us, n = $2^{{{n.bit_length() - 1}}}$"))
    ax.axhline(1.0, color="0.5", lw=0.8)
    # the black line crosses 1 where F/B = (1/link) / (1/P_cpu - 1/P_gpu), at 12 bytes per element
    gpu_p, link = H.entry("A100", "FP32").peak, H.memory("PCIe 4.0 x16").bandwidth
    i_off = (1 / link) / (1 / cpu_p - 1 / gpu_p)
    ax.axvline(12 * i_off, color="black", lw=0.8, ls=":")
    ax.text(12 * i_off / 1.1, 0.3, P.label(f"盈亏点 {12 * i_off:,.0f} FLOP/元素\n（= {i_off:.0f} FLOP/字节 × 12）",
                                            f"break-even {12 * i_off:,.0f} FLOP/element\n(= {i_off:.0f} FLOP/B x 12)"),
            fontsize=8, ha="right")
    ax.text(1.2, 1.15, P.label("线上方：留在 CPU 更快", "above: CPU faster"), fontsize=8, color="0.35")
    ax.text(1.2, 0.6, P.label("线下方：卸载更快", "below: offload faster"), fontsize=8, color="0.35")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(flops[0], flops[-1])
    ax.set_xlabel(P.label("每个元素的运算次数（FLOP/元素，对数轴；每个元素搬 12 字节）",
                          "FLOP per element (log; 12 bytes moved per element)"))
    ax.set_ylabel(P.label("卸载用时 ÷ CPU 用时", "offload time / CPU time"))
    ax.set_title(P.label("卸载划不划算看强度：EPYC 7763 对 A100（FP32，经 PCIe 4.0）",
                         "offloading pays by intensity: EPYC 7763 vs A100 (FP32, PCIe 4.0)"), fontsize=10)
    ax.legend(fontsize=7.5, loc="upper right", frameon=False)
    return ax


def _h200_fp64_matmuls(smallest: int = 64) -> list[dict]:
    """The stored H200 machine's FP64 matmul rows from ``n = smallest`` (its n = 32 took longer than n = 64:
    a first-call cost)."""
    from hetlab.real.readings import reading

    return [r for r in reading("h200")["matmul"]["rows"] if r["dtype"] == "float64" and r["n"] >= smallest]


def h200_one_core_matmul(n: int = 256) -> float:
    """FLOP/s of one CPU core of the stored H200 machine on an ``n x n x n`` FP64 product: the GEMM tile of its
    tiled Cholesky with tile size ``n`` (``2 n**3`` FLOP), timed on one thread (``cpu1_s``). ``n`` is a stored
    tile size (256 or 512)."""
    from hetlab.real.readings import reading

    sections = reading("h200")["cholesky"]
    sizes = {int(key.rsplit("_b", 1)[1]): key for key in sections}
    n = check_int("n", n, low=1, high=10**6)
    if n not in sizes:
        raise ValueError(f"n must be a stored tile size {sorted(sizes)}, got {n}")
    return 2 * n**3 / sections[sizes[n]]["op_costs"]["gemm"]["cpu1_s"]


def measured_roofline_figure(matmul: float, bandwidth: float, add: float, *, n: int = 256):
    """Two panels. Left: one CPU core's roofline built from two measurements, ``matmul`` (FLOP/s of an
    ``n x n`` FP64 product on one thread: the flat roof) and ``bandwidth`` (bytes/s of a STREAM-like kernel:
    the slope), with the measured ``add`` (FLOP/s of an FP64 ``c = a + b``, 1/24 FLOP per byte) and one core of
    the stored H200 machine on the same product. Right: the H200's FP64 datasheet roofline with the machine's
    measured FP64 matmuls (2026-12-04). Returns the two Axes."""
    import matplotlib.pyplot as plt

    for name, value in (("matmul", matmul), ("bandwidth", bandwidth), ("add", add)):
        check_positive(name, value)
    P.use_cjk_font()
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.5, 3.8), layout="constrained")
    grid = np.logspace(-2, 3, 200)
    left.plot(grid, R.attainable(grid, matmul, bandwidth) / 1e9, color=_YOURS, lw=2,
              label=P.label("你的屋顶：min(矩阵乘实测, I × 带宽实测)", "yours: min(matmul, I x bandwidth)"))
    left.plot([1 / 24], [add / 1e9], "o", color=_YOURS, mec="black", ms=8,
              label=P.label("逐元素加法（实测）", "elementwise add (measured)"))
    left.plot([n / 12], [matmul / 1e9], "s", color=_YOURS, mec="black", ms=8,
              label=P.label(f"矩阵乘 n = {n}（实测）", f"matmul n = {n} (measured)"))
    stored = h200_one_core_matmul(n) / 1e9
    left.plot([n / 12], [stored], "D", color="0.6", mec="black", ms=7,
              label=P.label("H200 机器的一个 CPU 核，同样的矩阵乘", "one core of the H200 machine, same matmul"))
    low = min(add, grid[0] * bandwidth) / 1e9
    left.set_ylim(low / 2, 30 * max(matmul / 1e9, stored))       # head room for the legend
    left.set_title(P.label("你的机器的一个 CPU 核（FP64）", "one core of your machine (FP64)"), fontsize=10)
    left.set_ylabel(P.label("可达性能（GFLOP/s，对数轴）", "attainable (GFLOP/s, log)"))
    peak, hbm = H.H200_FP64_TENSOR.value, H.GPUS["H200 SXM"].memory_bandwidth
    right.plot(grid, R.attainable(grid, peak, hbm) / 1e12, color=_A100, lw=2,
               label=P.label("数据手册：FP64 张量核心 67、HBM3e 4.8 TB/s", "datasheet: FP64 TC 67, 4.8 TB/s"))
    right.axhline(H.H200_FP64.value / 1e12, color=_A100, lw=1, ls=":",
                  label=P.label("FP64 向量单元 34", "FP64 vector units 34"))
    rows = _h200_fp64_matmuls()
    right.plot([r["n"] / 12 for r in rows], [r["gpu_tflops"] for r in rows], "s-", color=_TENSOR, mec="black",
               ms=6, label=P.label("实测矩阵乘（FP64）", "measured matmul (FP64)"))
    for r in rows:
        right.annotate(f"n={r['n']}", (r["n"] / 12, r["gpu_tflops"]), textcoords="offset points",
                       xytext=(4, -9), fontsize=7)
    right.set_title(P.label("H200 + 16 核 CPU 的机器（2026-12-04 实测）", "H200 machine (measured 2026-12-04)"),
                    fontsize=10)
    right.set_ylabel(P.label("可达性能（TFLOP/s，对数轴）", "attainable (TFLOP/s, log)"))
    right.set_ylim(0.01, 2000)
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(grid[0], grid[-1])
        ax.set_xlabel(P.label("算术强度 I（FLOP/字节，对数轴）", "arithmetic intensity I (FLOP/byte, log)"))
        ax.legend(fontsize=7, loc="upper left", frameon=False)
    return left, right


#: (chapter, factory) for each widget of this module.
VIEWS = [(3, peak_compute_explorer), (3, roofline_explorer)]
