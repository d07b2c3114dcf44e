"""Appendix A2 (a real CPU + GPU run): the host widget and the appendix's figures.

The model is :mod:`hetlab.models.host`, the readings :mod:`hetlab.real.readings`, the sentences
:mod:`hetlab.book.readings.a2`. Here: :func:`host_costs` (how HEFT's hybrid plan fares as the host's costs
change) with its static figure, the stacked Gantt charts of a plan and its run, and the predicted-against-
measured figure of every stored reading.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from hetlab import plotting as P
from hetlab._validate import check_instance, describe
from hetlab.models.host import load_profile, simulate_host
from hetlab.real.readings import MeasuredRun, case_of, reading
from hetlab.schedule import Schedule

__all__ = ["host_costs", "host_costs_figure", "plan_and_run", "predicted_vs_measured"]


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
            ax.set_xlim(0, 110)
        for bar, v in zip(art["bars"], values):
            bar.set_width(v)
        ax.set_yticklabels(labels, fontsize=8)
        ax.set_title(P.label(f"交接 {handoff_us:.0f} µs，每次占用主机 {hold_us:.0f} µs（n = 3072，b = 256）",
                             f"hand-off {handoff_us:.0f} us, host visit {hold_us:.0f} us (n = 3072, b = 256)"),
                     fontsize=9, loc="left")
        winner = "混合计划" if values[1] < values[2] else "只用 GPU"
        return (f"{workers} 个 CPU 工作线程，交接 {handoff_us:.0f} µs，每次占用 {hold_us:.0f} µs：模型预测混合计划 "
                f"{values[1]:.1f} ms、只用 GPU {values[2]:.1f} ms，{winner}更快（HEFT 的模拟是 {values[0]:.1f} ms）")

    return draw


def host_costs():
    """HEFT's hybrid plan for the stored 256-tile Cholesky, and the GPU-only plan, predicted by the host model
    as the hand-off cost, the host time per visit and the number of CPU workers change."""
    from hetlab.widgets import Explorer, int_slider, slider

    base = load_profile()
    return Explorer(_host_draw(), {
        "workers": int_slider("CPU 工作线程数", 1, 15, 8),
        "handoff_us": slider("交接（唤醒）时间（µs）", 0.0, 200.0, 10.0, round(base.handoff_s * 1e6), fmt=".0f"),
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


def plan_and_run(plan: Schedule, measured: Schedule, predicted: Schedule | None = None):
    """Stacked Gantt charts on one time axis in milliseconds (schedules in seconds): HEFT's plan, the host
    model's prediction (if given) and the measured run; bars coloured by tile kernel, no task names."""
    panels = [(plan, P.label("HEFT 的计划（模拟）", "HEFT's plan (simulated)"))]
    if predicted is not None:
        panels.append((predicted, P.label("主机模型的预测", "host model's prediction")))
    panels.append((measured, P.label("实测（H200 + 16 核 CPU，2026-12-04）", "measured (H200 + 16 CPU cores)")))
    scaled = []
    for k, (s, title) in enumerate(panels):
        check_instance(("plan", "predicted" if predicted is not None else "measured", "measured")[k], s, Schedule)
        scaled.append((dataclasses.replace(s, start=s.start * 1e3, end=s.end * 1e3), title))
    axes = P.gantt_panels(scaled, show_names=False, xlabel=P.label("时间（毫秒）", "time (ms)"),
                          figsize=(8, 1.2 + 0.3 * sum(len(s.devices) for s, _ in panels)))
    return axes[0].figure


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
    if heft:
        ax.scatter(measured, [r.simulated_s * 1e3 for r in runs], s=18, marker="x", color="0.5",
                   label=P.label("HEFT 的模拟", "HEFT's simulation"))
    hybrid = np.array([r.plan.startswith("hybrid") for r in runs])
    ax.scatter(measured[hybrid], model[hybrid], s=22, color="#C44E52", label=P.label("主机模型：混合计划",
                                                                                     "host model: hybrid plans"))
    ax.scatter(measured[~hybrid], model[~hybrid], s=22, color="#4C72B0",
               label=P.label("主机模型：只用 GPU 或只用 CPU", "host model: GPU or CPU only"))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(*line)
    ax.set_ylim(*line)
    ax.set_xlabel(P.label("实测完工时间（毫秒）", "measured makespan (ms)"))
    ax.set_ylabel(P.label("模型的完工时间（拟合/预测，毫秒）", "model's makespan (fitted/predicted, ms)"))
    ax.set_title(P.label("H200 + 16 核 CPU（2026-12-04）：校准文件里的读数",
                         "the runs of the calibration files"),
                 fontsize=9, loc="left")
    ax.legend(fontsize=7, loc="upper left")
    return ax.figure
