"""Chapter 6 (sync and communication): copies overlapped with compute, waiting at a barrier, queueing for a
lock, Amdahl's law, the ring all-reduce and where the speed-up peaks once the all-reduce is in the step."""
from __future__ import annotations

import numpy as np

from hetlab import communication as C
from hetlab import formulas as F
from hetlab import plotting as P
from hetlab.models import sync
from hetlab.models.training import data_parallel_step
from hetlab.widgets import Explorer, dropdown, int_slider, slider

__all__ = ['amdahl_explorer', 'barrier_explorer', 'lock_explorer', 'comm_peak_explorer', 'comm_peak_figure',
           'alpha_label', 'bandwidth_ceiling', 'decimal_log_ticks', 'pipeline_figure', 'barrier_figure',
           'lock_figure', 'ring_figure', 'overlap_figure']

#: The all-reduce algorithms as the chapter names them (communication.ALLREDUCE_ALGORITHMS keys).
ALGORITHMS = {"ring": ("环形", "ring"), "halving_doubling": ("递归减半加倍", "halving-doubling")}

#: Chapter 6's data-parallel step: 64 s on one device, 1 GB of gradients over 10 GB/s links.
STEP = {"compute_time": 64.0, "grad_bytes": 1e9, "bandwidth": 10e9}

POWERS = [2 ** k for k in range(13)]     # 1, 2, 4, ..., 4096


def decimal_log_ticks(ax, *, x: bool = True, y: bool = True, top: int = 4096):
    """Label log-2 axes 1, 4, 16, ..., ``top`` in plain decimal instead of 2^k."""
    from matplotlib.ticker import FixedLocator, NullLocator, ScalarFormatter
    ticks = [4 ** k for k in range(8) if 4 ** k <= top]
    for on, axis in ((x, ax.xaxis), (y, ax.yaxis)):
        if on:
            axis.set_major_locator(FixedLocator(ticks))
            axis.set_major_formatter(ScalarFormatter())
            axis.set_minor_locator(NullLocator())
    return ax


def amdahl_explorer() -> Explorer:
    """Amdahl's law with p and N sliders, the ceiling 1/(1-p) and the chosen point marked."""
    def draw(ax, p: float, N: int) -> str:
        n = np.unique(np.round(np.geomspace(1, 4096, 160)))
        s = F.amdahl(p, N)
        ax.plot(n, F.amdahl(p, n), label=f"p = {p:.2f}")
        ax.plot(n, n, color="0.6", ls="--", lw=0.8, label=P.label("线性加速（虚线）", "linear (dashed)"))
        if p < 1:
            ax.axhline(F.amdahl_limit(p), color="crimson", ls=":",
                       label=P.label(f"上限 1/(1-p) = {F.amdahl_limit(p):.1f}（点线）",
                                     f"ceiling 1/(1-p) = {F.amdahl_limit(p):.1f} (dotted)"))
        ax.plot([N], [s], "o", color="crimson")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.set_ylim(1, 4096)
        ax.set_xlabel(P.label("设备数 N", "devices N"))
        ax.set_ylabel(P.label("加速比 S", "speed-up S"))
        decimal_log_ticks(ax)
        ax.legend(fontsize=8, loc="upper left")
        ax.set_title(P.label("Amdahl 定律", "Amdahl's law"))
        ceiling = f"{F.amdahl_limit(p):.3f}" if p < 1 else "无上限"
        return f"S = 1/((1-p) + p/N) = {s:.3f}；设备无限多时的上限 1/(1-p) = {ceiling}"

    return Explorer(draw, {"p": slider("可并行比例 p", 0.0, 1.0, 0.01, 0.95),
                           "N": dropdown("设备数 N", [(str(n), n) for n in POWERS], 1024)}, figsize=(7, 3.6))


def barrier_explorer() -> Explorer:
    """One barrier phase: each worker's compute time and its wait (max - own) stacked on top."""
    def draw(ax, workers: int, noise: float, seed: int) -> str:
        run = sync.barrier_run(workers, 20, noise=noise, seed=seed)
        _phase_bars(ax, run)
        ax.set_title(P.label(f"示例：第 1 个阶段（共 20 个），最慢者用时 {run.phase_times[0]:.2f}",
                             f"example: phase 1 of 20, slowest takes {run.phase_times[0]:.2f}"))
        return (f"20 个阶段共用时 {run.total:.2f}（若不需要屏障 {run.total_without_barriers:.2f}）；"
                f"全部设备时间中 {run.idle_fraction:.1%} 花在等待上；"
                f"公式预测（长期平均）{sync.predicted_idle_fraction(workers, noise):.1%}")

    return Explorer(draw, {"workers": int_slider("设备数", 2, 32, 8),
                           "noise": slider("耗时波动 σ", 0.0, 1.0, 0.05, 0.3),
                           "seed": int_slider("随机种子", 0, 9, 0)}, figsize=(7, 3.2))


def lock_bound(critical_share: float, noise: float, seed: int = 0) -> float:
    """The per-run bound (c̄₁ + h) / h on the lock's speed-up: the baseline's 30 rounds over 30 h of lock time."""
    h = critical_share
    return sync.lock_run(1, 30, compute=1.0 - h, critical=h, noise=noise, seed=seed).makespan / (30 * h)


def lock_explorer() -> Explorer:
    """Speed-up of workers sharing one lock against the worker count, with this run's bound (c̄₁ + h) / h and the
    noise-free bound 1 / h."""
    art: dict = {}
    n = np.arange(1, 33)

    def draw(ax, critical_share: float, noise: float) -> str:
        h = critical_share
        s = sync.lock_speedups(32, iterations=30, compute=1.0 - h, critical=h, noise=noise)
        bound, nominal = lock_bound(h, noise), 1.0 / h
        if not art:
            art["curve"], = ax.plot(n, s, "o-", ms=3, label=P.label("模拟加速比", "simulated speed-up"))
            art["linear"], = ax.plot(n, n, color="0.6", ls="--", lw=0.8, label=P.label("线性加速", "linear"))
            art["bound"] = ax.axhline(bound, color="crimson", ls=":",
                                      label=P.label(r"这次运行的上限 $(\bar{c}_1+h)/h$",
                                                    r"this run's bound $(\bar{c}_1+h)/h$"))
            art["nominal"] = ax.axhline(nominal, color="crimson", lw=0.6, alpha=0.5,
                                        label=P.label("无波动时的上限 1/h", "noise-free bound 1/h"))
            ax.set_xlim(1, 32)
            ax.set_ylim(0, 33)
            ax.set_xlabel(P.label("设备数 N", "devices N"))
            ax.set_ylabel(P.label("加速比", "speed-up"))
            ax.legend(fontsize=8, loc="upper left")
        art["curve"].set_ydata(s)
        art["bound"].set_ydata([bound, bound])
        art["nominal"].set_ydata([nominal, nominal])
        ax.set_title(P.label(f"共用一把锁：临界区占每轮 {h:.0%}", f"one shared lock: critical section {h:.0%}"))
        return (f"临界区占比 h = {h:.2f}：这次运行的上限 (c̄₁+h)/h = {bound:.2f}，"
                f"无波动时的上限 1/h = {nominal:.1f}；8 台设备 {s[7]:.2f}x，32 台设备 {s[31]:.2f}x")

    return Explorer(draw, {"critical_share": slider("临界区占比 h", 0.02, 0.5, 0.01, 0.1),
                           "noise": slider("耗时波动 σ", 0.0, 1.0, 0.05, 0.2)}, figsize=(7, 3.4), clear=False)


def _algo(name: str) -> str:
    return P.label(*ALGORITHMS[name])


def alpha_label(alpha: float) -> str:
    """A per-step latency in seconds as the chapter writes it: "14 µs", "1 ms"."""
    return f"{alpha * 1e6:g} µs" if alpha < 1e-3 else f"{alpha * 1e3:g} ms"


def _exaggerated(alpha: float) -> bool:
    """True for a per-step latency well above NCCL's network figure (kept only to show the latency term)."""
    return alpha > 5 * C.NETWORK_STEP_LATENCY


def bandwidth_ceiling(p: float) -> float:
    """The speed-up that the serial part and the all-reduce's bandwidth term allow with any number of devices
    and no latency: ``C / (C (1 - p) + 2 G / B)`` with :data:`STEP`'s numbers."""
    c = STEP["compute_time"]
    return c / (c * (1 - p) + 2 * STEP["grad_bytes"] / STEP["bandwidth"])


def _peak_curves(ax, p: float, curves) -> list[tuple[str, int, float]]:
    """Plain Amdahl, the ceiling of the serial part plus the bandwidth term, and, for each ``(algorithm,
    latency_s)``, Amdahl + that all-reduce with its peak marked (dashed when the latency is exaggerated).
    Returns ``(algorithm, peak N, peak S)`` per curve."""
    n = np.arange(1, 2 ** 16 + 1)
    ax.plot(n, F.amdahl(p, n), color="0.5", ls="--", label=P.label(f"Amdahl，p = {p:g}（不计通信）",
                                                                  f"Amdahl, p = {p:g} (no communication)"))
    top = bandwidth_ceiling(p)
    ax.axhline(top, color="0.3", ls=":", lw=1,
               label=P.label(f"串行部分 + 带宽项给的上限 {top:.0f}", f"serial part + bandwidth term: {top:.0f}"))
    colours = {"ring": "#4C72B0", "halving_doubling": "#C44E52"}
    peaks = []
    for algorithm, alpha in curves:
        s = C.speedup_with_allreduce(p, n, **STEP, latency=alpha, algorithm=algorithm)
        best = int(n[np.argmax(s)])
        loud = _exaggerated(alpha)
        tag = P.label("（故意放大）", " (exaggerated)") if loud else ""
        where = (P.label(f"峰值 N = {best:,}", f"peak N = {best:,}") if best < n[-1]
                 else P.label("图内无峰值", "no peak in range"))
        line, = ax.plot(n, s, color=colours[algorithm], ls="-." if loud else "-", lw=1.1 if loud else 1.6,
                        alpha=0.75 if loud else 1.0,
                        label=P.label(f"+ {_algo(algorithm)}，α = {alpha_label(alpha)}{tag}：{where}",
                                      f"+ {_algo(algorithm)}, alpha = {alpha_label(alpha)}{tag}: {where}"))
        if best < n[-1]:
            ax.plot([best], [s.max()], "o", color=line.get_color())
        peaks.append((algorithm, best, float(s.max())))
    return peaks


#: Figure 6-7's curves: the book's per-step latency (NCCL, across nodes) and 1 ms, exaggerated to show the term.
PEAK_CURVES = (("ring", C.NETWORK_STEP_LATENCY), ("halving_doubling", C.NETWORK_STEP_LATENCY),
               ("ring", 1e-3), ("halving_doubling", 1e-3))


def comm_peak_figure(p: float = 0.99, curves=PEAK_CURVES, ax=None):
    """Plain Amdahl against Amdahl + an all-reduce (C = 64 s, 1 GB, 10 GB/s) for each ``(algorithm, latency in
    seconds)`` of ``curves``, each curve's peak marked, with the ceiling of the serial part and the bandwidth
    term; 1 to 65,536 devices. Latencies far above NCCL's are drawn dash-dotted and labelled exaggerated."""
    ax = P.new_axes(ax, figsize=(7.5, 5.2))
    _peak_curves(ax, p, curves)
    _speedup_axes(ax, P.label("把全归约放进 Amdahl：真实的 α 与放大的 α",
                              "Amdahl with the all-reduce: realistic and exaggerated alpha"))
    return ax


def _speedup_axes(ax, title: str) -> None:
    """Log-log speed-up axes of the all-reduce figures (static and widget): 1-65,536 devices, S up to 128;
    the legend below the axes, clear of the curves."""
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_ylim(1, 128)
    ax.set_xlim(1, 2 ** 16)
    decimal_log_ticks(ax, top=2 ** 16)
    ax.tick_params(axis="x", labelsize=8)
    ax.set_xlabel(P.label("设备数 N", "devices N"))
    ax.set_ylabel(P.label("加速比 S", "speed-up S"))
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7.5, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)


#: The widget's per-step latencies: NCCL's NVLink and network figures, their neighbours, and exaggerated ones.
ALPHAS_US = (3.4, 5.0, 14.0, 20.0, 100.0, 1000.0, 10000.0)


def comm_peak_explorer() -> Explorer:
    """Amdahl with an all-reduce in the step time (:mod:`hetlab.communication`) against plain Amdahl, with the
    peak device count marked; controls for p, the per-step latency alpha (in µs, default the book's
    :data:`~hetlab.communication.NETWORK_STEP_LATENCY`) and the all-reduce algorithm."""
    def draw(ax, p: float, latency_us: float, algorithm: str) -> str:
        alpha = latency_us * 1e-6
        (_, best, top), = _peak_curves(ax, p, [(algorithm, alpha)])
        _speedup_axes(ax, P.label(f"C = 64 s，梯度 1 GB，带宽 10 GB/s，{_algo(algorithm)}，α = {alpha_label(alpha)}",
                                  f"C = 64 s, 1 GB, 10 GB/s, {_algo(algorithm)}, alpha = {alpha_label(alpha)}"))
        formula = C.peak_devices(p, **STEP, latency=alpha, algorithm=algorithm)
        at_1024 = C.speedup_with_allreduce(p, 1024, **STEP, latency=alpha, algorithm=algorithm)
        where = (f"峰值在 N = {best:,}（连续公式 {formula:,.1f}）" if best < 2 ** 16
                 else f"到 65,536 张卡仍未见顶（连续公式 {formula:,.0f}）")
        return (f"{where}，{best:,} 张卡时加速比 {top:.2f}；N = 1024 时 {at_1024:.2f}，"
                f"Amdahl 给 {F.amdahl(p, 1024):.2f}，串行部分 + 带宽项的上限 {bandwidth_ceiling(p):.1f}")

    def name(us: float) -> str:
        note = {3.4: "（NVLink）", 14.0: "（跨节点，本书取值）"}.get(us, "（放大）" if us > 70 else "")
        return alpha_label(us * 1e-6) + note

    return Explorer(draw, {"p": slider("可并行比例 p", 0.9, 0.999, 0.001, 0.99, fmt=".3f"),
                           "latency_us": dropdown("每步延迟 α", [(name(a), a) for a in ALPHAS_US], 14.0),
                           "algorithm": dropdown("全归约算法", [(zh, k) for k, (zh, _) in ALGORITHMS.items()],
                                                 "ring")},
                    figsize=(7.5, 5.2))


def pipeline_figure(batches: int = 4, copy: float = 0.7e-3, compute: float = 2e-3, ax=None):
    """Timeline of ``batches`` host-to-device copies and their computations, one after the other (top two
    rows) and double-buffered on two streams (bottom two rows): the copy of batch i + 1 runs during the
    compute of batch i. Times in seconds, drawn in ms; totals from :func:`communication.copy_compute_pipeline`."""
    ax = P.new_axes(ax, figsize=(7.5, 2.8))
    serial, piped = C.copy_compute_pipeline(batches, copy, compute)
    ms = 1e3
    rows = {"serial_copy": 3, "serial_comp": 2, "piped_copy": 1, "piped_comp": 0}
    for i in range(batches):
        start = i * (copy + compute)
        ax.barh(rows["serial_copy"], copy * ms, left=start * ms, color="#DD8452", edgecolor="white")
        ax.barh(rows["serial_comp"], compute * ms, left=(start + copy) * ms, color="#4C72B0", edgecolor="white")
        # copy i + 1 starts as soon as copy i is done and batch i starts computing (its buffer is then free)
        c0 = max(i * copy, (i - 1) * max(copy, compute) + copy) if i else 0.0
        k0 = copy + i * max(copy, compute)
        ax.barh(rows["piped_copy"], copy * ms, left=c0 * ms, color="#DD8452", edgecolor="white")
        ax.barh(rows["piped_comp"], compute * ms, left=k0 * ms, color="#4C72B0", edgecolor="white")
        for row, left, width in ((rows["serial_comp"], start + copy, compute), (rows["piped_comp"], k0, compute)):
            ax.text((left + width / 2) * ms, row, str(i + 1), ha="center", va="center", color="white", fontsize=8)
    for total, row in ((serial, 2), (piped, 0)):
        ax.text(total * ms, row, f" {total * ms:.1f} ms", fontsize=8, va="center")
    ax.set_yticks([3, 2, 1, 0], [P.label("顺序：拷贝", "serial: copy"), P.label("顺序：计算", "serial: compute"),
                                 P.label("重叠：拷贝流", "overlap: copy stream"),
                                 P.label("重叠：计算流", "overlap: compute stream")], fontsize=8)
    ax.axhline(1.5, color="0.7", lw=0.8)
    ax.set_xlabel(P.label("时间（ms）", "time (ms)"))
    ax.set_xlim(0, serial * ms * 1.15)
    ax.set_title(P.label(f"{batches} 个批次：拷贝（橙）与计算（蓝）",
                         f"{batches} batches: copy (orange), compute (blue)"), fontsize=10)
    return ax


def barrier_figure(sigmas=(0.3, 1.0), counts=(2, 4, 8, 16, 32), phases: int = 20, seeds: int = 20):
    """Two panels. Left: the barrier widget's default picture (8 devices, sigma 0.3, seed 0, the first phase).
    Right: the share of device time spent waiting against the device count, the mean +- standard deviation of
    ``seeds`` seeded runs of ``phases`` phases for each sigma, with the exact prediction (line) and the
    one-line estimate (dashed)."""
    import matplotlib.pyplot as plt
    P.use_cjk_font()
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.4), layout="constrained",
                                      gridspec_kw={"width_ratios": [1, 1.2]})
    _phase_bars(left, sync.barrier_run(8, phases, noise=0.3, seed=0))
    grid = np.arange(2, max(counts) + 1)
    for sigma, colour in zip(sigmas, ("#4C72B0", "#C44E52")):
        stats = [sync.mean_idle_fraction(n, phases, noise=sigma, seeds=seeds) for n in counts]
        right.errorbar(counts, [100 * m for m, _ in stats], yerr=[100 * sd for _, sd in stats], fmt="o", ms=4,
                       capsize=3, color=colour,
                       label=P.label(f"σ = {sigma:g}：{seeds} 个种子的均值 ± 标准差",
                                     f"sigma = {sigma:g}: mean +- sd of {seeds} seeds"))
        right.plot(grid, [100 * sync.predicted_idle_fraction(n, sigma) for n in grid], color=colour, lw=1.2,
                   label=P.label("精确式", "exact") if sigma == sigmas[0] else None)
        right.plot(grid, [100 * sync.predicted_idle_fraction(n, sigma, exact=False) for n in grid], color=colour,
                   lw=1, ls="--", label=P.label("一行近似式", "one-line estimate") if sigma == sigmas[0] else None)
    right.set_xscale("log", base=2)
    right.set_xticks(counts, [str(n) for n in counts])
    right.set_ylim(0, 100)
    right.set_xlabel(P.label("设备数 N", "devices N"))
    right.set_ylabel(P.label("等待占全部设备时间（%）", "waiting, % of device time"))
    right.set_title(P.label("等待占比：模拟与公式", "waiting share: simulated and predicted"), fontsize=10)
    right.legend(fontsize=7.5, loc="lower right")
    return fig


def _phase_bars(ax, run) -> None:
    """The first phase of a barrier run: compute bars with the wait (max - own) stacked on top."""
    x = np.arange(run.times.shape[1])
    ax.bar(x, run.times[0], color="#4C72B0", label=P.label("计算", "compute"))
    ax.bar(x, run.waits[0], bottom=run.times[0], color="#DD8452", hatch="//",
           label=P.label("在屏障处等待 = max − 自己", "wait at barrier = max − own"))
    ax.axhline(run.phase_times[0], color="black", lw=1, ls="--")
    ax.set_xticks(x, [str(i) for i in x])
    ax.set_xlabel(P.label("设备编号", "device"))
    ax.set_ylabel(P.label("时间（时间单位）", "time (time units)"))
    ax.set_ylim(0, max(2.5, run.phase_times[0] * 1.45))     # head-room: the legend sits above the bars
    ax.legend(fontsize=8, loc="upper left", ncol=2)


def lock_figure(shares=(0.1, 0.2), noise: float = 0.2, ax=None):
    """Speed-up of 1..32 devices sharing one lock (weak scaling: 30 rounds per device, seed 0) for each critical
    share h, with this run's bound (c̄₁ + h) / h (dotted), the noise-free bound 1 / h (thin) and Amdahl's law for
    the same 1 - p = h (dashed)."""
    ax = P.new_axes(ax, figsize=(7, 3.4))
    n = np.arange(1, 33)
    for h, colour in zip(shares, ("#4C72B0", "#C44E52")):
        s = sync.lock_speedups(32, iterations=30, compute=1.0 - h, critical=h, noise=noise)
        ax.plot(n, s, "o-", ms=3, color=colour, label=P.label(f"锁模拟，h = {h:g}", f"lock, h = {h:g}"))
        ax.axhline(lock_bound(h, noise), color=colour, ls=":", lw=1)
        ax.axhline(1.0 / h, color=colour, lw=0.6, alpha=0.5)
        ax.plot(n, F.amdahl(1.0 - h, n), color=colour, ls="--", lw=0.9,
                label=P.label(f"Amdahl，1 − p = {h:g}", f"Amdahl, 1 - p = {h:g}"))
    ax.plot(n, n, color="0.6", lw=0.8, label=P.label("线性加速 S = N", "linear S = N"))
    ax.set_xlim(1, 32)
    ax.set_ylim(0, 16)
    ax.set_xlabel(P.label("设备数 N", "devices N"))
    ax.set_ylabel(P.label("加速比", "speed-up"))
    ax.set_title(P.label(r"共用一把锁：点线是这次运行的上限 $(\bar{c}_1+h)/h$，细线是无波动时的上限 $1/h$",
                         r"one shared lock: dotted, this run's bound $(\bar{c}_1+h)/h$; thin, the noise-free $1/h$"),
                 fontsize=10)
    ax.legend(fontsize=7.5, loc="upper left")
    return ax


def _ring_states(n: int) -> list[tuple[str, list[list[frozenset]]]]:
    """Which devices' gradients each device holds for each chunk, at four moments of a ring all-reduce."""
    held = [[frozenset([i]) for _ in range(n)] for i in range(n)]
    states = [(P.label("开始：各有自己的梯度", "start: own gradients"), [row[:] for row in held])]
    for step in range(n - 1):                      # reduce-scatter: add what arrives
        sent = [(i, (i - step) % n, held[i][(i - step) % n]) for i in range(n)]
        for i, j, part in sent:
            held[(i + 1) % n][j] = held[(i + 1) % n][j] | part
        if step == 0:
            states.append((P.label("归约散射第 1 步后", "after reduce-scatter step 1"), [r[:] for r in held]))
    states.append((P.label(f"归约散射 {n - 1} 步后", f"after {n - 1} reduce-scatter steps"), [r[:] for r in held]))
    for step in range(n - 1):                      # all-gather: overwrite with the finished chunk
        sent = [(i, (i + 1 - step) % n, held[i][(i + 1 - step) % n]) for i in range(n)]
        for i, j, part in sent:
            held[(i + 1) % n][j] = part
    states.append((P.label(f"再全收集 {n - 1} 步后", f"after {n - 1} more all-gather steps"), [r[:] for r in held]))
    return states


def ring_figure(n: int = 4):
    """Four panels of a ring all-reduce on ``n`` devices, each gradient cut into ``n`` chunks: a cell (device,
    chunk) shows whose gradients that device holds summed for that chunk (darker: more of them)."""
    import matplotlib.pyplot as plt
    P.use_cjk_font()
    states = _ring_states(n)
    fig, axes = plt.subplots(1, len(states), figsize=(11, 3.6), layout="constrained")
    for ax, (title, held) in zip(axes, states):
        counts = np.array([[len(c) for c in row] for row in held])
        ax.imshow(counts, cmap="Blues", vmin=0, vmax=n + 1)
        for i in range(n):
            for j in range(n):
                text = "+".join(str(k) for k in sorted(held[i][j]))
                ax.text(j, i, text, ha="center", va="center", fontsize=8.5 if len(held[i][j]) > 2 else 10,
                        color="white" if counts[i, j] > n / 2 else "black")
        ax.set_xticks(range(n), [str(j) for j in range(n)], fontsize=8)
        ax.set_yticks(range(n), [str(i) for i in range(n)], fontsize=8)
        ax.set_xlabel(P.label("梯度块编号", "chunk"), fontsize=8)
        ax.set_title(title, fontsize=9)
    axes[0].set_ylabel(P.label("设备编号（格子里：已加进来的设备）", "device (cell: devices summed in)"), fontsize=8)
    return fig


def overlap_figure(n_devices: int = 64, overlap: float = 0.8, backward_share: float = 2 / 3, computes=(64.0, 1.0),
                   latency: float = C.NETWORK_STEP_LATENCY):
    """One data-parallel step per one-device compute time ``C`` of ``computes`` (1 GB of gradients, 10 GB/s,
    ``latency`` per ring step, the book's 14 µs by default): the compute row (forward, then backward) and the
    all-reduce row, whose hidden part ``min(o T_comm, beta C / N)`` runs under the end of the backward pass and
    whose rest sticks out after it. One legend under both panels, clear of the bars."""
    import matplotlib.pyplot as plt
    P.use_cjk_font()
    comm = C.ring_allreduce_time(n_devices, 1.0, 10.0, latency)
    fig, axes = plt.subplots(1, len(computes), figsize=(9, 2.8), layout="constrained")
    for ax, c in zip(np.atleast_1d(axes), computes):
        local = c / n_devices
        forward, backward = (1 - backward_share) * local, backward_share * local
        hidden = min(overlap * comm, backward)
        start = forward + backward - hidden
        step = data_parallel_step(c, n_devices, grad_size=1.0, bandwidth=10.0, latency=latency, overlap=overlap,
                                  backward_share=backward_share)
        ax.barh(1, forward, color="#8FAADC", label=P.label("前向", "forward"))
        ax.barh(1, backward, left=forward, color="#4C72B0", label=P.label("反向", "backward"))
        ax.barh(0, hidden, left=start, color="#F2B880", hatch="//", label=P.label("被反向遮住的通信", "hidden"))
        ax.barh(0, comm - hidden, left=start + hidden, color="#C44E52", label=P.label("露在外面的通信", "exposed"))
        ax.axvline(step, color="0.3", ls=":", lw=0.8)
        ax.set_yticks([1, 0], [P.label("计算", "compute"), P.label("全归约", "all-reduce")], fontsize=8)
        ax.set_xlim(0, step * 1.05)
        ax.set_xlabel(P.label("时间（s）", "time (s)"), fontsize=8)
        kind = P.label("计算受限", "compute-bound") if backward >= overlap * comm else P.label("通信受限", "comm-bound")
        ax.set_title(P.label(f"{kind}：C = {c:g} s，每步 {step:.3f} s", f"{kind}: C = {c:g} s, step {step:.3f} s"),
                     fontsize=9)
    fig.legend(*np.atleast_1d(axes)[-1].get_legend_handles_labels(), fontsize=7.5, loc="outside lower center",
               ncol=4, frameon=False)
    return fig


#: (chapter, factory) for each widget of this module.
VIEWS = [(6, amdahl_explorer), (6, barrier_explorer), (6, lock_explorer), (6, comm_peak_explorer)]
