"""Appendix A2 (a real CPU + GPU run): the host widget and the appendix's figures.

The model is :mod:`hetlab.models.host`, the readings :mod:`hetlab.real.readings`, the sentences
:mod:`hetlab.book.readings.a2`. Here: :func:`host_costs` (how HEFT's hybrid plan fares as the host's costs
change) with its static figure, the stacked Gantt charts of a plan and its run, the predicted-against-
measured figure of every stored reading, where the hybrid plan's modelled extra time comes from, split by
Shapley values (:func:`gap_figure`), the hold-out figure of the two later batches, and :class:`Deeper`, which
folds a long printed table into a 深入一点 block.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from functools import lru_cache

import numpy as np

from hetlab import plotting as P
from hetlab._validate import check_instance, describe
from hetlab.book.readings.a2 import race_verdict
from hetlab.models.host import TERMS, load_profile, shapley, simulate_host
from hetlab.real.readings import MeasuredRun, case_of, reading
from hetlab.schedule import Schedule

__all__ = ["OP_COLOURS", "host_costs", "host_costs_figure", "plan_and_run", "gap_figure", "predicted_vs_measured",
           "holdout_figure", "Deeper"]


@lru_cache(maxsize=32)
def _plans(workers: int) -> tuple[Schedule, Schedule]:
    """HEFT's plans for the stored 256-tile case: GPU + ``workers`` CPU workers, and the GPU alone."""
    from hetlab.schedulers.heft import heft

    case, _ = case_of(reading("h200_hetero"))
    hybrid = heft(case.graph(case.devices(workers)), case.devices(workers))
    alone = heft(case.graph(case.devices(0)), case.devices(0))
    return hybrid, alone


def _host_draw():
    art: dict = {}
    base = load_profile()

    def draw(ax, workers: int, handoff_us: float, hold_us: float) -> str:
        profile = dataclasses.replace(base, handoff_s=handoff_us * 1e-6, hold_s=hold_us * 1e-6)
        hybrid, alone = _plans(workers)
        values = [hybrid.makespan, simulate_host(hybrid, profile).makespan, simulate_host(alone, profile).makespan]
        values = [v * 1e3 for v in values]
        labels = [P.label(f"HEFT 的模拟：混合（{workers} 个 CPU）", f"HEFT's simulation: hybrid ({workers} CPUs)"),
                  P.label("主机模型：混合", "host model: hybrid"),
                  P.label("主机模型：只用 GPU", "host model: GPU only")]
        if not art:
            art["bars"] = ax.barh([2, 1, 0], values, color=["#8C8C8C", "#C44E52", "#4C72B0"], height=0.6)
            ax.set_yticks([2, 1, 0])
            ax.set_xlabel(P.label("完工时间（毫秒）", "makespan (ms)"))
        # the sliders reach a hybrid of 134 ms (lambda 200 us, h 60 us): the axis follows the longest bar
        ax.set_xlim(0, max(110.0, 1.08 * max(values)))
        for bar, v in zip(art["bars"], values):
            bar.set_width(v)
        ax.set_yticklabels(labels, fontsize=8)
        ax.set_title(P.label(f"唤醒时间 λ = {handoff_us:.0f} µs，每次占用主机 {hold_us:.0f} µs（n = 3072，b = 256）",
                             f"wake-up time {handoff_us:.0f} us, host visit {hold_us:.0f} us (n = 3072, b = 256)"),
                     fontsize=9, loc="left")
        return (f"{workers} 个 CPU 工作线程，唤醒时间 λ = {handoff_us:.0f} µs，每次占用 {hold_us:.0f} µs："
                f"模型预测混合计划 "
                f"{values[1]:.1f} ms、只用 GPU {values[2]:.1f} ms，{race_verdict(values[1], values[2])}"
                f"（HEFT 的模拟是 {values[0]:.1f} ms）")

    return draw


def host_costs():
    """HEFT's hybrid plan for the stored 256-tile Cholesky, and the GPU-only plan, predicted by the host model
    as the hand-off cost, the host time per visit and the number of CPU workers change."""
    from hetlab.widgets import Explorer, int_slider, slider

    base = load_profile()
    return Explorer(_host_draw(), {
        "workers": int_slider("CPU 工作线程数", 1, 15, 8),
        "handoff_us": slider("唤醒时间 λ（µs）", 0.0, 200.0, 10.0, round(base.handoff_s * 1e6), fmt=".0f"),
        "hold_us": slider("每次占用主机（µs）", 0.0, 60.0, 2.0, round(base.hold_s * 1e6), fmt=".0f"),
    }, figsize=(7, 2.6), clear=False)


def host_costs_figure():
    """The widget's default picture (8 CPU workers, the profile's costs), as a static figure."""
    base = load_profile()
    ax = P.new_axes(figsize=(7, 2.6))
    _host_draw()(ax, 8, round(base.handoff_s * 1e6), round(base.hold_s * 1e6))
    return ax.figure


#: (chapter, factory) for each widget of this module (the appendix is chapter 15 in the question bank).
VIEWS = [(15, host_costs)]


#: One colour per tile kernel (GEMM, the most frequent, in blue; SYRK apart from it in green).
OP_COLOURS = {"potrf": "#C44E52", "trsm": "#DD8452", "syrk": "#55A868", "gemm": "#4C72B0"}


def plan_and_run(plan: Schedule, measured: Schedule, predicted: Schedule | None = None):
    """Stacked Gantt charts on one time axis in milliseconds (schedules in seconds): HEFT's plan, the host
    model's prediction (if given) and the measured run; solid bars coloured by tile kernel, no task names."""
    from matplotlib.patches import Patch

    panels = [(plan, P.label("HEFT 的计划（模拟）", "HEFT's plan (simulated)"))]
    if predicted is not None:
        panels.append((predicted, P.label("主机模型的预测", "host model's prediction")))
    panels.append((measured, P.label("实测（H200 + 16 核 CPU，2026-12-04）", "measured (H200 + 16 CPU cores)")))
    scaled = []
    for k, (s, title) in enumerate(panels):
        check_instance(("plan", "predicted" if predicted is not None else "measured", "measured")[k], s, Schedule)
        scaled.append((dataclasses.replace(s, start=s.start * 1e3, end=s.end * 1e3), title))
    colours = [OP_COLOURS.get(t.op, "0.5") for t in plan.graph.tasks]
    axes = P.gantt_panels(scaled, show_names=False, xlabel=P.label("时间（毫秒）", "time (ms)"), colors=colours,
                          legend=False, figsize=(8, 1.2 + 0.3 * sum(len(s.devices) for s, _ in panels)))
    for ax in axes:           # bars of 40 us on an 80 ms axis: white edges would hide them, draw them solid
        for bars in ax.collections:
            bars.set_edgecolor("face")
            bars.set_linewidth(0.3)
    axes[0].legend(handles=[Patch(color=c, label=op.upper()) for op, c in OP_COLOURS.items()], fontsize=8,
                   loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return axes[0].figure


def gap_figure(values: Mapping[frozenset, float], measured_s: float):
    """Where the host model's extra time on a hybrid plan comes from, free of any order of its four terms
    (``values``: :func:`hetlab.models.host.term_makespans`, seconds). Left: one bar stacked from the makespan
    with no term on and each term's Shapley value, beside the measured makespan ``measured_s``. Right: each
    term's Shapley value, with the range of its increment over the 24 orders of adding the terms."""
    from hetlab.book.readings.a2 import GAP_ZH

    if not isinstance(values, Mapping) or set(values) != {frozenset(s) for s in _subsets(TERMS)}:
        raise TypeError(f"values must be the 16 makespans of host.term_makespans, got {describe(values)}")
    if not isinstance(measured_s, (int, float)) or not measured_s > 0:
        raise ValueError(f"measured_s must be a positive makespan in seconds, got {describe(measured_s)}")
    english = {"copies": "copies (GPU thread waits)", "slowdown": "CPU tiles slow down", "hold": "host visits h",
               "handoff": "hand-offs λ"}
    colours = {"copies": "#DD8452", "slowdown": "#55A868", "hold": "#4C72B0", "handoff": "#C44E52"}
    phi, none = shapley(values), values[frozenset()]
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 2.9), layout="constrained",
                                      gridspec_kw={"width_ratios": [1.2, 1]})
    left.barh(1, none * 1e3, color="#8C8C8C", height=0.6)
    left.text(none * 5e2, 1, "HEFT", ha="center", va="center", color="white", fontsize=8)
    before = none
    short = {"copies": ("拷贝", "copies"), "slowdown": ("变慢", "slow"), "hold": ("占用 h", "h"),
             "handoff": ("交接 λ", "λ")}
    for t in TERMS:      # each segment named on the bar itself: the left panel needs no legend
        left.barh(1, phi[t] * 1e3, left=before * 1e3, color=colours[t], height=0.6)
        left.text((before + phi[t] / 2) * 1e3, 1, P.label(*short[t]), ha="center", va="center",
                  color="white", fontsize=7)
        before += phi[t]
    left.barh(0, measured_s * 1e3, color="0.25", height=0.6)
    left.set_yticks([1, 0], [P.label("主机模型", "host model"), P.label("实测", "measured")])
    left.set_xlabel(P.label("完工时间（毫秒）", "makespan (ms)"))
    left.set_title(P.label("按 Shapley 值分开的完工时间", "makespan split by Shapley values"), fontsize=9, loc="left")
    for k, t in enumerate(reversed(TERMS)):
        adds = [values[s | {t}] - values[s] for s in values if t not in s]
        right.plot([min(adds) * 1e3, max(adds) * 1e3], [k, k], color=colours[t], lw=6, alpha=0.35,
                   solid_capstyle="butt")
        right.plot(phi[t] * 1e3, k, "o", color=colours[t], label=P.label(GAP_ZH[t], english[t]))
    right.set_yticks(range(4), [P.label(GAP_ZH[t], english[t]) for t in reversed(TERMS)], fontsize=8)
    right.set_xlabel(P.label("多出的时间（毫秒）", "extra time (ms)"))
    right.set_title(P.label("圆点：Shapley 值；浅条：24 种次序里的范围",
                            "dot: Shapley value; bar: range over 24 orders"), fontsize=9, loc="left")
    right.grid(axis="x", color="0.9")
    return fig


def _subsets(items):
    return [[x for k, x in enumerate(items) if m >> k & 1] for m in range(2 ** len(items))]


def predicted_vs_measured(runs: Sequence[MeasuredRun], predicted: Sequence[float], heft: bool = True):
    """Every stored makespan (x) against the host model's prediction (y, seconds in ``predicted``), and HEFT's
    own simulation (grey) with ``heft``; the diagonal and a band of +-25%."""
    if isinstance(runs, (str, bytes)) or not isinstance(runs, Sequence) or not runs:
        raise TypeError(f"runs must be a non-empty list of MeasuredRun, got {describe(runs)}")
    measured = np.array([check_instance("a run in runs", r, MeasuredRun).measured_s for r in runs]) * 1e3
    if isinstance(predicted, (str, bytes)) or not isinstance(predicted, Sequence) or len(predicted) != len(runs):
        raise ValueError(f"predicted must give one makespan per run ({len(runs)}), got {describe(predicted)}")
    model = np.asarray(predicted, dtype=float) * 1e3
    ax = P.new_axes(figsize=(5.2, 4.4))
    line = np.array([5.0, 200.0])
    ax.plot(line, line, color="0.3", lw=0.8)
    ax.fill_between(line, line * 0.75, line * 1.25, color="0.85", lw=0,
                    label=P.label("±25%", "±25%"))
    if heft:     # CPU-only crosses apart: the text quotes HEFT's miss on them (it ignores s(k))
        cpu = np.array([r.plan == "cpu_only" for r in runs])
        simulated = np.array([r.simulated_s for r in runs]) * 1e3
        ax.scatter(measured[cpu], simulated[cpu], s=22, marker="x", color="#55A868",
                   label=P.label("HEFT 的模拟：只用 CPU", "HEFT's simulation: CPU only"))
        ax.scatter(measured[~cpu], simulated[~cpu], s=18, marker="x", color="0.5",
                   label=P.label("HEFT 的模拟：其余计划", "HEFT's simulation: other plans"))
    hybrid = np.array([r.plan.startswith("hybrid") for r in runs])
    fitted = np.array([r.mode == "sync" for r in runs])
    # the async readings hold only GPU-only and hybrid runs: the async legend names no CPU-only run
    for mask, colour, zh, en, zh_async, en_async in (
            (hybrid, "#C44E52", "混合计划", "hybrid", "混合计划", "hybrid"),
            (~hybrid, "#4C72B0", "只用 GPU 或 CPU", "GPU or CPU only", "只用 GPU", "GPU only")):
        ax.scatter(measured[mask & fitted], model[mask & fitted], s=24, color=colour,
                   label=P.label(f"主机模型·拟合：{zh}", f"host model, fitted: {en}"))
        ax.scatter(measured[mask & ~fitted], model[mask & ~fitted], s=40, marker="^", facecolors="none",
                   edgecolors=colour, linewidths=1.2, label=P.label(f"主机模型·预测（异步）：{zh_async}",
                                                                    f"host model, predicted (async): {en_async}"))
    _measured_against(ax, line, P.label("模型的完工时间（拟合/预测，毫秒）", "model's makespan (fitted/predicted, ms)"))
    ax.set_title(P.label("H200 + 16 核 CPU（2026-12-04）：存储的读数（同步的参加了校准）",
                         "the stored runs (the sync ones were used for calibration)"),
                 fontsize=9, loc="left")
    ax.legend(fontsize=7, loc="upper left")
    return ax.figure


def _measured_against(ax, line, ylabel: str) -> None:
    """Both axes logarithmic over the same span ``line`` (ms), measured makespan across, ``ylabel`` up."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(*line)
    ax.set_ylim(*line)
    ax.set_xlabel(P.label("实测完工时间（毫秒）", "measured makespan (ms)"))
    ax.set_ylabel(ylabel)


#: Colour of each plan in the hold-out figure.
PLAN_COLOURS = {"gpu_only": "#4C72B0", "cpu_only": "#55A868", "hybrid_heft": "#C44E52",
                "hybrid_dispatch_aware": "#8172B2"}


def holdout_figure(first: Sequence[Mapping], second: Sequence[Mapping], band: float = 0.25):
    """Predicted against measured makespans of the two hold-out batches (rows: the dicts of
    :func:`~hetlab.real.readings.compare_readings`), coloured by plan, hollow for the first batch and filled for
    the second, with the diagonal and a band of +-``band``."""
    from hetlab.book.readings.a2 import _PLAN_ZH
    from hetlab.book.readings.a2_holdout import _rows

    first, second = _rows(first, "first"), _rows(second, "second")
    if not isinstance(band, (int, float)) or not 0 < band < 1:
        raise ValueError(f"band must be a fraction between 0 and 1, got {describe(band)}")
    english = {"gpu_only": "GPU only", "cpu_only": "CPU only", "hybrid_heft": "hybrid (HEFT)",
               "hybrid_dispatch_aware": "host-aware plan"}
    ax = P.new_axes(figsize=(6.4, 4.6))
    every = [r[k] * 1e3 for r in first + second for k in ("predicted_s", "measured_s")]
    line = np.array([min(every) / 1.5, max(every) * 1.5])
    ax.plot(line, line, color="0.3", lw=0.8)
    ax.fill_between(line, line * (1 - band), line * (1 + band), color="0.88", lw=0,
                    label=P.label(f"±{band:.0%}", f"±{band:.0%}"))
    for rows, filled, zh, en in ((first, False, "第一批", "batch 1"), (second, True, "第二批", "batch 2")):
        for plan, colour in PLAN_COLOURS.items():
            mine = [r for r in rows if r["plan"] == plan]
            if not mine:
                continue
            x = [r["measured_s"] * 1e3 for r in mine]
            y = [r["predicted_s"] * 1e3 for r in mine]
            ax.scatter(x, y, s=30, marker="o" if filled else "s", linewidths=1.2, edgecolors=colour,
                       facecolors=colour if filled else "none",
                       label=P.label(f"{zh}：{_PLAN_ZH[plan]}", f"{en}: {english[plan]}"))
    _measured_against(ax, line, P.label("运行前的预测（毫秒）", "prediction before the run (ms)"))
    ax.set_title(P.label("留出检验：模型没见过的读数（H200 + 16 核 CPU，2026-12-04）",
                         "hold-out: readings the model never saw"), fontsize=9, loc="left")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return ax.figure


class Deeper:
    """A printed table folded into a 深入一点 block: shown collapsed where HTML is rendered (Jupyter, the
    website), as plain text elsewhere (the terminal, nbval)."""

    def __init__(self, title: str, text: str) -> None:
        if not isinstance(title, str) or not isinstance(text, str) or not text:
            raise TypeError(f"title and text must be strings (text not empty), got {describe(title)}, "
                            f"{describe(text)}")
        self.title, self.text = title, text

    def __repr__(self) -> str:
        return f"深入一点：{self.title}\n{self.text}"

    def _repr_html_(self) -> str:
        import html

        return (f"<details><summary>深入一点：{html.escape(self.title)}</summary>"
                f"<pre>{html.escape(self.text)}</pre></details>")
