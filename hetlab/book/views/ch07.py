"""Chapter 7 (metrics): efficiency, throughput against utilisation as devices are added, load imbalance,
latency at one server (M/M/1), and isoefficiency (how fast the work must grow to hold an efficiency)."""
from __future__ import annotations

import numpy as np

from hetlab import communication as C
from hetlab import formulas as F
from hetlab import plotting as P
from hetlab import schedulers as S
from hetlab.devices import identical
from hetlab.metrics import device_sweep
from hetlab.models import queueing as Q
from hetlab.widgets import Explorer, dropdown, int_slider, slider
from hetlab.workloads import skewed_tasks

__all__ = ['efficiency_explorer', 'metrics_explorer', 'imbalance_explorer', 'throughput_utilisation_figure',
           'split_figure', 'efficiency_figure', 'sweep_table', 'latency_figure', 'isoefficiency_overhead',
           'isoefficiency_figure', 'isoefficiency_explorer']

#: Chapter 7's data-parallel overhead model (chapter 6's numbers): a serial 0.64 s per step that does not shrink
#: with N, 1 GB of gradients over 10 GB/s links, the book's per-step latency across nodes (NCCL's ring/Simple,
#: 14 us, :data:`hetlab.communication.NETWORK_STEP_LATENCY`).
ISO = {"t_serial": 0.64, "grad_bytes": 1e9, "bandwidth": 10e9, "latency": C.NETWORK_STEP_LATENCY}
#: A per-step latency about 70 times NCCL's, kept only to make the ring's N^2 term visible within 1024 devices.
EXAGGERATED_LATENCY = 1e-3
#: The overhead models of the isoefficiency figure: key -> (Chinese label, English label).
ISO_MODELS = {"serial": ("只有固定串行时间", "fixed serial time only"),
              "ring": ("+ 环形全归约", "+ ring all-reduce"),
              "halving_doubling": ("+ 递归减半加倍全归约", "+ halving-doubling all-reduce")}

COUNTS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32)


def efficiency_explorer() -> Explorer:
    """Efficiency E = S/N = 1/(N(1-p)+p) against N, with the chosen point marked."""
    def draw(ax, p: float, N: int) -> str:
        n = np.unique(np.round(np.geomspace(1, 4096, 160)))
        e = F.amdahl_efficiency(p, N)
        ax.plot(n, F.amdahl_efficiency(p, n))
        ax.plot([N], [e], "o", color="crimson")
        ax.set_xscale("log", base=2)
        ax.set_ylim(0, 1.05)
        ax.set_xlabel(P.label("设备数 N", "devices N"))
        ax.set_ylabel(P.label("效率 E", "efficiency E"))
        ax.set_title(P.label(f"p = {p:.2f} 时的并行效率", f"efficiency at p = {p:.2f}"))
        return f"S = {F.amdahl(p, N):.3f}，E = S/N = {e:.4f}，串行阶段空等的设备 N−1 = {N - 1}"

    return Explorer(draw, {"p": slider("可并行比例 p", 0.0, 1.0, 0.01, 0.9),
                           "N": int_slider("设备数 N", 1, 4096, 16)}, figsize=(7, 3.2))


def metrics_explorer() -> Explorer:
    """Throughput and mean utilisation of one fixed job on N identical devices (LPT), N on the x axis."""
    art: dict = {}

    def draw(ax, tasks: int, spread: float) -> str:
        rows = device_sweep(skewed_tasks(tasks, spread=spread, seed=1), COUNTS)
        n = [r.n_devices for r in rows]
        thr = [r.throughput for r in rows]
        util = [r.utilisation for r in rows]
        if not art:
            art["right"] = ax.twinx()
            art["thr"], = ax.plot(n, thr, "o-", color="tab:blue", label=P.label("吞吐量", "throughput"))
            art["util"], = art["right"].plot(n, util, "s--", color="tab:red",
                                             label=P.label("平均利用率 = E", "mean utilisation = E"))
            ax.set_xscale("log", base=2)
            ax.set_xticks(n, [str(k) for k in n])
            ax.set_xlabel(P.label("设备数 N", "devices N"))
            ax.set_ylabel(P.label("吞吐量（任务/时间单位）", "throughput (tasks per time unit)"), color="tab:blue")
            art["right"].set_ylabel(P.label("平均利用率", "mean utilisation"), color="tab:red")
            art["right"].set_ylim(0, 1.05)
            ax.legend(handles=[art["thr"], art["util"]], fontsize=8, loc="center left")
        art["thr"].set_ydata(thr)
        art["util"].set_ydata(util)
        ax.set_ylim(0, max(thr) * 1.1)
        ax.set_title(P.label(f"{tasks} 个任务：加设备，吞吐升、利用率降", f"{tasks} tasks: more devices"))
        return _readout(rows)

    return Explorer(draw, {"tasks": int_slider("任务数", 8, 96, 32),
                           "spread": slider("任务大小差异", 0.0, 1.5, 0.1, 0.5)}, figsize=(7, 3.4), clear=False)


def _readout(rows) -> str:
    best = max(rows, key=lambda r: r.throughput)
    last = rows[-1]
    if best is last or last.throughput > 1.01 * rows[-2].throughput:
        return (f"在所选范围（≤ {last.n_devices} 台）内吞吐量仍在上升，尚未走平："
                f"N = {last.n_devices} 时吞吐量 {last.throughput:.2f}，利用率 {last.utilisation:.0%}")
    knee = next(r for r in rows if r.throughput >= 0.99 * best.throughput)
    word = "只剩" if last.utilisation < 0.6 else "为"
    return (f"吞吐量在 N = {knee.n_devices} 时已达最高值的 99%（{knee.throughput:.2f}），"
            f"此时利用率 {knee.utilisation:.0%}；"
            f"N = {last.n_devices} 时吞吐量 {last.throughput:.2f}，利用率{word} {last.utilisation:.0%}")


def sweep_table(graph, counts) -> str:
    """The device sweep of ``metrics.device_sweep`` as a table whose columns line up in display width."""
    head = ["设备数 N", "完成时间", "吞吐量（任务/时间单位）", "加速比 S", "平均利用率 U", "效率 E=S/N", "闲忙比 R"]
    rows = [[str(r.n_devices), f"{r.makespan:.2f}", f"{r.throughput:.2f}", f"{r.speedup:.2f} 倍",
             f"{r.utilisation:.0%}", f"{r.efficiency:.0%}", f"{r.idle_busy:.2f}"]
            for r in device_sweep(graph, counts)]
    widths = [max(P.display_width(x[k]) for x in rows + [head]) for k in range(len(head))]
    return "\n".join("  ".join(P.pad(c, w, right=True) for c, w in zip(row, widths)) for row in [head] + rows)


def throughput_utilisation_figure(tasks: int = 32, spread: float = 0.5, ax=None):
    """Static twin-axis figure: throughput and mean utilisation (= E) of ``tasks`` skewed tasks against N."""
    counts = tuple(range(1, 33))
    rows = device_sweep(skewed_tasks(tasks, spread=spread, seed=1), counts)
    ax = P.new_axes(ax, figsize=(7, 3.6))
    right = ax.twinx()
    n = [r.n_devices for r in rows]
    a, = ax.plot(n, [r.throughput for r in rows], "o-", ms=3, color="tab:blue", label=P.label("吞吐量", "throughput"))
    b, = right.plot(n, [100 * r.utilisation for r in rows], "s--", ms=3, color="tab:red",   # in %, as the table
                    label=P.label("平均利用率 = 效率 E", "mean utilisation = E"))
    floor = max(skewed_tasks(tasks, spread=spread, seed=1).work) / 10.0
    c = ax.axhline(tasks / floor, color="0.4", ls=":", lw=1,
                   label=P.label("上限 n / 最大任务时间", "ceiling n / longest task"))
    ax.set_xlabel(P.label("设备数 N", "devices N"))
    ax.set_ylabel(P.label("吞吐量（任务/时间单位）", "throughput (tasks per time unit)"), color="tab:blue")
    right.set_ylabel(P.label("平均利用率（%）", "mean utilisation (%)"), color="tab:red")
    right.set_ylim(0, 105)
    ax.set_ylim(0, tasks / floor * 1.15)
    ax.set_xlim(0, 33)
    ax.legend(handles=[a, b, c], fontsize=8, loc="lower center")
    ax.set_title(P.label(f"{tasks} 个任务：吞吐量碰到上限后，利用率按 1/N 下滑",
                         f"{tasks} tasks: once throughput hits its ceiling, utilisation falls as 1/N"))
    return ax


def split_figure(ax=None):
    """Static side-by-side bars: busy time of 4 identical devices before and after cutting the largest of
    16 skewed tasks (spread 0.8, seed 3) into 4, with each case's lower bound."""
    from hetlab.tasks import independent_tasks

    jobs = skewed_tasks(16, spread=0.8, seed=3)
    four = identical(4, speed=10.0)
    works = sorted(jobs.work.tolist())
    big = works.pop()
    split = independent_tasks(works + [big / 4] * 4)
    ax = P.new_axes(ax, figsize=(7, 3.4))
    x = np.arange(4)
    for shift, graph, colour, zh, en in ((-0.2, jobs, "#C44E52", "切开前", "before"),
                                         (0.2, split, "#4C72B0", "切开后", "after")):
        s = S.lpt(graph, four).validate()
        bound = S.lower_bound(graph, four)
        ax.bar(x + shift, s.busy, width=0.4, color=colour, label=P.label(f"{zh}（完成时间 {s.makespan:.2f}）",
                                                                        f"{en} (makespan {s.makespan:.2f})"))
        ax.axhline(bound, color=colour, ls=":", lw=1.2,
                   label=P.label(f"{zh}的下界 {bound:.2f}", f"{en}: bound {bound:.2f}"))
    ax.set_xticks(x, [d.name for d in four])
    ax.set_ylabel(P.label("忙碌时间（时间单位）", "busy time (time units)"))
    ax.set_title(P.label("把最大的任务切成 4 份：各设备忙碌时间", "cutting the largest task into 4"))
    ax.legend(fontsize=8, loc="upper right")
    ax.set_ylim(0, 17)
    return ax


def efficiency_figure(p_values=(0.5, 0.9, 0.99), n_max: int = 4096, ax=None):
    """Amdahl efficiency E = 1/(N(1-p)+p) as continuous curves (N real, 400 points on a log grid) with the
    integer device counts 1, 2, 4, ... marked, E = 0.5 and each half-efficiency point N_1/2 = (2 - p)/(1 - p)."""
    ax = P.new_axes(ax, figsize=(7, 4))
    grid = np.geomspace(1, n_max, 400)
    powers = 2.0 ** np.arange(0, int(np.log2(n_max)) + 1)
    curves = [ax.plot(grid, F.amdahl_efficiency(p, grid), label=f"p = {p:g}")[0] for p in p_values]
    for k, (line, p) in enumerate(zip(curves, p_values)):
        ax.plot(powers, F.amdahl_efficiency(p, powers), ".", color=line.get_color(), ms=5,
                label=P.label(r"$N = 2^k$ 的取值", r"$N = 2^k$") if k == 0 else None)
    ax.set_xscale("log", base=2)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel(P.label("设备数 N（对数轴）", "devices N (log axis)"))
    ax.set_ylabel(P.label("并行效率 E", "efficiency E"))
    ax.set_title(P.label("并行效率随设备数下降（Amdahl 模型）", "Efficiency falls as devices are added"))
    ax.axhline(0.5, color="0.4", ls="--", lw=1)
    for line, p in zip(curves, p_values):
        half = (2 - p) / (1 - p)
        ax.plot([half], [0.5], "o", color=line.get_color(), ms=5)
        ax.annotate(f"N½ = {half:.0f}", (half, 0.5), textcoords="offset points", xytext=(4, 6), fontsize=8,
                    color=line.get_color())
    ax.legend(fontsize=8)
    return ax


def imbalance_explorer() -> Explorer:
    """Per-device busy times B_j of a policy, with B_max, B_avg and the imbalance (chapter 5's notation)."""
    names = [("分块", "block"), ("轮转", "round_robin"), ("最早空闲", "earliest_free"), ("LPT", "lpt")]

    def draw(ax, policy: str, tasks: int, spread: float) -> str:
        graph = skewed_tasks(tasks, spread=spread, seed=3)
        devices = identical(4, speed=10.0)
        s = S.POLICIES[policy](graph, devices).validate()
        zh = dict((v, k) for k, v in names)[policy]
        ax.bar([d.name for d in devices], s.busy, color="#4C72B0")
        ax.axhline(s.busy.mean(), color="black", ls="--", lw=1, label=P.label("平均忙碌时间 B_avg", "B_avg"))
        ax.axhline(s.busy.max(), color="crimson", ls=":", lw=1, label=P.label("最大忙碌时间 B_max", "B_max"))
        ax.set_ylabel(P.label("忙碌时间", "busy time"))
        ax.legend(fontsize=8)
        ax.set_title(P.label(f"{zh}：负载不均衡度 {s.imbalance:.3f}",
                             f"{S.POLICY_LABELS[policy]}: imbalance {s.imbalance:.3f}"))
        big = graph.work.max() / graph.work.sum()
        return (f"B_max = {s.busy.max():.2f}，B_avg = {s.busy.mean():.2f}，不均衡度 = {s.imbalance:.3f}；"
                f"最大的任务占总工作量 {big:.0%}")

    return Explorer(draw, {"policy": dropdown("策略", names, "block"),
                           "tasks": int_slider("任务数", 4, 64, 16),
                           "spread": slider("任务大小差异", 0.0, 1.5, 0.1, 0.8)}, figsize=(6, 3))


def latency_figure(utilisations=(0.3, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9), seeds: int = 20, requests: int = 20_000):
    """Mean and 99th-percentile latency of an M/M/1 server against its utilisation, in units of the mean
    service time: the closed forms 1/(1 - rho) and ln(100)/(1 - rho) as lines, the mean +- standard deviation
    of ``seeds`` seeded runs of ``requests`` requests as points."""
    ax = P.new_axes(None, figsize=(7, 3.6))
    grid = np.linspace(0.05, 0.92, 200)
    ax.plot(grid, [Q.mm1_latency(r, 1.0) for r in grid], color="#4C72B0",
            label=P.label("平均延迟 1/(1−ρ)", "mean 1/(1-rho)"))
    ax.plot(grid, [Q.mm1_latency_quantile(r, 1.0, 0.99) for r in grid], color="#C44E52",
            label=P.label("P99 延迟 ln100/(1−ρ)", "P99 ln100/(1-rho)"))
    runs = [[Q.single_server(r, 1.0, requests=requests, seed=s) for s in range(seeds)] for r in utilisations]
    for stat, colour in ((lambda run: run.mean_latency, "#4C72B0"), (lambda run: run.percentile(99), "#C44E52")):
        values = np.array([[stat(run) for run in row] for row in runs])
        ax.errorbar(utilisations, values.mean(axis=1), yerr=values.std(axis=1, ddof=1), fmt="o", ms=4,
                    capsize=3, color=colour)
    ax.plot([], [], "o", color="0.4", label=P.label(f"模拟：{seeds} 个种子的均值 ± 标准差",
                                                   f"simulated: mean +- sd of {seeds} seeds"))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 60)
    ax.set_xlabel(P.label("利用率 ρ = λ/μ", "utilisation rho = lambda/mu"))
    ax.set_ylabel(P.label("延迟（以平均服务时间为单位）", "latency (mean service times)"))
    ax.set_title(P.label("一台服务器（M/M/1）：利用率越接近 1，延迟和尾延迟越陡", "M/M/1: latency against utilisation"),
                 fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    return ax


def isoefficiency_overhead(n_devices, model: str = "ring", latency: float = ISO["latency"]):
    """Total overhead ``T_o(N) = N T_N - T_1 = (N - 1) t_s + N T_allreduce(N)`` of the data-parallel step
    ``T_N = t_s + (T_1 - t_s) / N + T_allreduce(N)`` with :data:`ISO`'s numbers and ``latency`` seconds per
    all-reduce step (``model="serial"``: no all-reduce)."""
    n = np.asarray(n_devices, dtype=float)
    serial = (n - 1.0) * ISO["t_serial"]
    if model == "serial":
        return serial
    allreduce = C.ALLREDUCE_ALGORITHMS[model](n, ISO["grad_bytes"], ISO["bandwidth"], latency)
    return serial + n * allreduce


def _alpha(latency: float) -> str:
    return f"{latency * 1e6:g} µs" if latency < 1e-3 else f"{latency * 1e3:g} ms"


def _iso_label(model: str, latency: float) -> str:
    zh, en = ISO_MODELS[model]
    if model == "serial":
        return P.label(zh, en)
    loud = latency > 5 * C.NETWORK_STEP_LATENCY
    return P.label(f"{zh}，α = {_alpha(latency)}" + ("（故意放大）" if loud else ""),
                   f"{en}, alpha = {_alpha(latency)}" + (" (exaggerated)" if loud else ""))


def _iso_curves(ax, efficiency: float, curves, n_max: int = 2 ** 16) -> dict:
    """T_1 that holds ``efficiency`` against N for each ``(model, latency)`` of ``curves``, with the reference
    slopes T_1 ~ N (through the first curve's last point) and T_1 ~ N^2 (through the steepest one's)."""
    n = np.unique(np.round(np.geomspace(1, n_max, 160)))
    out = {}
    for model, latency in curves:
        w = F.isoefficiency_work(efficiency, isoefficiency_overhead(n, model, latency))
        loud = model != "serial" and latency > 5 * C.NETWORK_STEP_LATENCY
        ax.plot(n[1:], w[1:], ls="-." if loud else "-", label=_iso_label(model, latency))
        out[(model, latency)] = w
    first, steep = out[next(iter(out))], max(out.values(), key=lambda w: w[-1])
    ax.plot(n[1:], first[-1] * n[1:] / n[-1], color="0.6", ls=":", lw=1,
            label=P.label("参照斜率：$T_1 \\propto N$", "reference: $T_1 \\propto N$"))
    ax.plot(n[1:], steep[-1] * (n[1:] / n[-1]) ** 2, color="0.6", ls="--", lw=1,
            label=P.label("参照斜率：$T_1 \\propto N^2$", "reference: $T_1 \\propto N^2$"))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ticks = [t for t in (2, 16, 64, 256, 1024, 4096, 16384, 65536) if t <= n_max]
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.tick_params(axis="x", labelsize=8)
    ax.set_ylim(1, None)
    ax.set_xlabel(P.label("设备数 N", "devices N"))
    ax.set_ylabel(P.label("保持效率所需的工作量 $T_1$（单卡串行时间，s）", "work $T_1$ needed (one-device time, s)"),
                  fontsize=9)
    ax.legend(fontsize=7.5, loc="upper left")
    return out


#: Figure 7-5's curves: (overhead model, per-step latency in seconds).
ISO_CURVES = (("serial", ISO["latency"]), ("ring", ISO["latency"]), ("halving_doubling", ISO["latency"]),
              ("ring", EXAGGERATED_LATENCY))


def isoefficiency_figure(efficiency: float = 0.8, ax=None):
    """The work ``T_1 = E/(1-E) T_o(N)`` that holds ``efficiency`` for each curve of :data:`ISO_CURVES`
    against N up to 65,536 (log-log), with reference slopes N and N^2."""
    ax = P.new_axes(ax, figsize=(7, 4.6))
    _iso_curves(ax, efficiency, ISO_CURVES)
    ax.set_title(P.label(f"等效率：保持 E = {efficiency:g} 需要多少工作量",
                         f"isoefficiency: work to hold E = {efficiency:g}"), fontsize=10)
    return ax


def isoefficiency_explorer() -> Explorer:
    """Work T_1 needed to hold an efficiency against N, for one overhead model and per-step latency; readout at
    64 and 1024 devices."""
    def draw(ax, efficiency: float, model: str, latency_us: float) -> str:
        latency = latency_us * 1e-6
        _iso_curves(ax, efficiency, [(model, latency)])
        ax.set_title(P.label(f"保持 E = {efficiency:.2f}：{ISO_MODELS[model][0]}",
                             f"hold E = {efficiency:.2f}: {ISO_MODELS[model][1]}"), fontsize=10)
        ax.minorticks_off()     # a log axis's minor ticks were half of each frame's drawing time (issue 18 #10)
        w64, w1024 = F.isoefficiency_work(efficiency, isoefficiency_overhead([64, 1024], model, latency))
        return (f"64 台需要 T₁ = {w64:,.0f} s，1024 台需要 T₁ = {w1024:,.0f} s："
                f"设备数 ×16，工作量 ×{w1024 / w64:.1f}")

    latencies = [("14 µs（跨节点，本书取值）", ISO["latency"] * 1e6), ("1 ms（故意放大）", EXAGGERATED_LATENCY * 1e6)]
    return Explorer(draw, {"efficiency": slider("目标效率 E", 0.5, 0.95, 0.05, 0.8),
                           "model": dropdown("开销模型", [(zh, k) for k, (zh, _) in ISO_MODELS.items()], "ring"),
                           "latency_us": dropdown("每步延迟 α", latencies, ISO["latency"] * 1e6)},
                    figsize=(7, 4.0))


#: (chapter, factory) for each widget of this module.
VIEWS = [(7, efficiency_explorer), (7, metrics_explorer), (7, imbalance_explorer), (7, isoefficiency_explorer)]
