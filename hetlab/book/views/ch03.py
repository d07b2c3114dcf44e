"""Chapter 3 (hardware): peak compute at one precision, and the roofline model."""
from __future__ import annotations

import numpy as np

from hetlab import plotting as P
from hetlab.models import hardware as H
from hetlab.models import roofline as R
from hetlab.widgets import Explorer, dropdown, int_slider, slider

__all__ = ['peak_compute_explorer', 'roofline_explorer', 'peak_table', 'roofline_figure', 'peak_bars_figure']

_DECADES = [1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0, 1000.0]


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


def _reference(precision: str) -> list[tuple[str, float]]:
    """Datasheet chips at one precision (tensor cores listed separately: FP64 ones, or FP16/BF16 next to FP32)."""
    tensor = "FP64" if precision == "FP64" else "FP16/BF16"
    return [("EPYC 7763", H.entry("EPYC 7763", precision).peak),
            (P.label("A100 向量单元", "A100 vector units"), H.entry("A100", precision).peak),
            (P.label("A100 张量核心", "A100 tensor cores"), H.entry("A100", tensor, "tensor").peak)]


def peak_compute_explorer() -> Explorer:
    """P = N_cores x f x FLOPs/cycle, FLOPs/cycle = FMA units x SIMD lanes x 2, against datasheet chips
    at the chosen precision (bars updated in place)."""
    art: dict = {}

    def draw(ax, cores: int, ghz: float, fma: int, lanes: int, precision: str) -> str:
        per_cycle = H.flops_per_cycle(fma, lanes)
        mine = H.peak_flops(cores, ghz * 1e9, per_cycle)
        rows = _reference(precision)
        names = [n for n, _ in rows] + [P.label("你的芯片", "yours")]
        values = [v / 1e12 for _, v in rows] + [mine / 1e12]
        if not art:
            art["bars"] = ax.barh(range(4), values, color=["#4C72B0", "#55A868", "#8172B2", "#C44E52"])
            ax.set_xscale("log")
            ax.set_xlim(1e-3, 1e3)
            ax.minorticks_off()          # log axes' minor tick labels dominate redraw time
            ax.set_xticks(_DECADES, [f"{v:g}" for v in _DECADES])   # plain labels: no mathtext to render
            ax.invert_yaxis()
            ax.set_xlabel(P.label("峰值（TFLOP/s，对数轴）", "peak (TFLOP/s, log axis)"))
            ax.set_yticks(range(4), names)
            art["labels"] = [ax.text(1.2e-3, k, "", va="center", fontsize=8, color="white") for k in range(4)]
        tensor = "FP64" if precision == "FP64" else "FP16/BF16"
        ax.set_title(P.label(f"{precision} 峰值（张量核心为 {tensor}）：P = 核心数 × 频率 × 每周期浮点运算数",
                             f"{precision} peaks (tensor cores {tensor}): P = cores x f x FLOPs/cycle"), fontsize=10)
        for bar, text, v in zip(art["bars"], art["labels"], values):
            bar.set_width(v)
            text.set_text(f"{v:.3g}")
        return (f"每周期浮点运算数 = {fma} 个 FMA 单元 × {lanes} 条 SIMD 通道 × 2 = {per_cycle}；"
                f"P = {cores} 核 × {ghz:g} GHz × {per_cycle} = {mine / 1e12:.3g} TFLOP/s")

    return Explorer(draw, {"cores": int_slider("核心数", 1, 256, 64),
                           "ghz": slider("频率 GHz", 0.5, 5.0, 0.05, 2.45),
                           "fma": int_slider("每核 FMA 单元", 1, 4, 2),
                           "lanes": int_slider("SIMD 通道数", 1, 64, 4),
                           "precision": dropdown("精度", ["FP64", "FP32"])},
                    figsize=(7.5, 2.8), clear=False)


#: Kernels placed on the roofline: (label zh, label en, intensity in FLOP/byte).
KERNELS = [("逐元素 c=a+b（FP32）", "elementwise a+b (FP32)", R.elementwise_intensity()),
           ("矩阵乘 n=64（FP32）", "matmul n=64 (FP32)", R.matmul_intensity(64)),
           ("矩阵乘 n=4096（FP32）", "matmul n=4096 (FP32)", R.matmul_intensity(4096))]


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
            art["kernels"] = ax.scatter([k[2] for k in KERNELS], points, color=["#DD8452", "#8172B2", "#55A868"],
                                        zorder=3, s=30)
            art["names"] = [ax.annotate(P.label(k[0], k[1]), (k[2], p), textcoords="offset points",
                                        xytext=(-4 if last else 4, -12), ha="right" if last else "left", fontsize=7)
                            for last, k, p in zip([False, False, True], KERNELS, points)]
            art["mine"], = ax.plot([i], [mine], "o", mfc="none", mec="crimson", mew=2, ms=11,
                                   label=P.label("你的算子", "your kernel"))
            ax.set_xlabel(P.label("算术强度 I（FLOP/字节，对数轴）", "arithmetic intensity I (FLOP/byte, log)"))
            ax.set_ylabel(P.label("可达性能（TFLOP/s）", "attainable (TFLOP/s)"))
            ax.set_title(P.label("屋顶线模型：可达 = min(峰值, I × 带宽)", "roofline: min(peak, I x bandwidth)"))
            ax.legend(loc="upper left", fontsize=8, frameon=False)
        art["roof"].set_ydata(roof)
        art["ridge"].set_xdata([ridge, ridge])
        art["ridge_note"].set_x(ridge * 1.15)
        art["ridge_note"].set_text(P.label(f"屋脊点 I* = {ridge:.3g}", f"ridge I* = {ridge:.3g}"))
        art["kernels"].set_offsets(np.column_stack([[k[2] for k in KERNELS], points]))
        for note, k, p in zip(art["names"], KERNELS, points):
            note.xy = (k[2], p)
        art["mine"].set_data([i], [mine])
        where = "受内存带宽限制" if i < ridge else "受算力限制"
        return f"I = {i:.3g} FLOP/字节，屋脊点 I* = 峰值/带宽 = {ridge:.3g}；可达 {mine:.3g} TFLOP/s（{where}）"

    return Explorer(draw, {"log_intensity": slider("log10 算术强度", -2.0, 3.0, 0.1, 0.0,
                                                   fmt=".1f"),
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
              "#4C72B0"),
             ("EPYC 7763", "EPYC 7763", H.entry("EPYC 7763", "FP32").peak, H.memory("EPYC 7763 DDR4").bandwidth,
              "#C44E52")]
    markers = ["o", "s", "^"]
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


def peak_bars_figure(ax=None):
    """Static horizontal bars of the datasheet engines grouped by precision (FP64, FP32 next to the tensor
    formats), vector units and tensor cores coloured apart, log axis in TFLOP/s (TOPS for INT8)."""
    ax = P.new_axes(ax, figsize=(7.5, 3.8))
    rows = [("EPYC 7763", "FP64", "vector"), ("A100", "FP64", "vector"), ("A100", "FP64", "tensor"),
            ("EPYC 7763", "FP32", "vector"), ("A100", "FP32", "vector"), ("A100", "TF32", "tensor"),
            ("A100", "FP16/BF16", "tensor"), ("A100", "INT8", "tensor")]
    colours = {("EPYC 7763", "vector"): "#C44E52", ("A100", "vector"): "#4C72B0", ("A100", "tensor"): "#8172B2"}
    unit = {"vector": ("向量单元", "vector"), "tensor": ("张量核心", "tensor")}
    values = [H.entry(c, p, e).peak / 1e12 for c, p, e in rows]
    y = np.arange(len(rows)) + np.array([0, 0, 0, 0.5, 0.5, 0.5, 0.5, 0.5])
    ax.barh(y, values, color=[colours[(c, e)] for c, _, e in rows])
    names = [P.label(f"{c} {p} {unit[e][0]}", f"{c} {p} {unit[e][1]}") for c, p, e in rows]
    ax.set_yticks(y, names, fontsize=8)
    for yy, v, (_c, p, _e) in zip(y, values, rows):
        ax.text(v * 1.08, yy, f"{v:.3g}" + (" TOPS" if p == "INT8" else ""), va="center", fontsize=8)
    ax.axhline(2.75, color="0.6", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlim(1, 3000)
    ax.invert_yaxis()
    ax.set_xlabel(P.label("稠密峰值（TFLOP/s，INT8 为 TOPS；对数轴）", "dense peak (TFLOP/s; TOPS for INT8; log)"))
    ax.set_title(P.label("同一精度才可比：上组 FP64，下组 FP32 及张量核心的低精度格式",
                         "compare at one precision: FP64 above, FP32 and tensor formats below"), fontsize=10)
    return ax


#: (chapter, factory) for each widget of this module.
VIEWS = [(3, peak_compute_explorer), (3, roofline_explorer)]
