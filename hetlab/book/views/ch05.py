"""Chapter 5 (runtime scheduling): a static plan under runtime variance, and the policies on the kitchen."""
from __future__ import annotations

from hetlab import plotting as P
from hetlab import schedulers as S
from hetlab.devices import kitchen
from hetlab.models import dynamics as R
from hetlab.widgets import Explorer, dropdown, int_slider, slider
from hetlab.workloads import skewed_tasks

__all__ = ['policies', 'variance', 'POLICY_NAMES', 'gantt_legend', 'break_even_figure', 'steal_report',
           'kitchen_policy_table', 'steal_vs_eft_figure', 'fork_join_figure', 'variance_figure']

#: Chinese labels of the policies (HEFT, EFT and LPT keep their names).
POLICY_NAMES = {"round_robin": "轮转", "block": "分块", "by_affinity": "按专长", "earliest_free": "最早空闲",
                "eft": "EFT", "lpt": "LPT", "work_stealing": "工作窃取"}


def gantt_legend(ax, *, identical: bool = False):
    """Retitle a Gantt legend: colours mark each task's *preferred* device, not the row it ran on.

    With ``identical=True`` (all devices alike) the colour legend means nothing: only the
    "窃取所得" (stolen) entry is kept, or the legend is removed.
    """
    from matplotlib.patches import Patch
    legend = ax.get_legend()
    if legend is None:
        return ax
    texts = [t.get_text() for t in legend.get_texts()]
    handles = list(legend.legend_handles)
    stolen = P.label("窃取所得", "stolen")
    if identical:
        legend.remove()
        if stolen in texts:
            ax.legend(handles=[Patch(fill=False, hatch="//", label=stolen)], loc="upper left",
                      bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
        return ax
    legend.remove()
    ax.legend(handles=handles, labels=texts, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8,
              frameon=False, title=P.label("任务偏好设备", "preferred device"), title_fontsize=8)
    return ax


def break_even_figure(sweeps: dict, ax=None):
    """``static - dynamic`` mean makespan against the noise σ, one line per dispatch cost O_s.

    ``sweeps`` maps O_s to an :func:`hetlab.models.dispatch.overhead_sweep` result; the interpolated
    break-even σ* (:func:`hetlab.models.dispatch.crossing_noise`) is marked on each line.
    """
    import matplotlib.pyplot as plt

    from hetlab.models import dispatch as DC
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.6), layout="constrained")
    for overhead, points in sweeps.items():
        noise = [q.noise for q in points]
        star = DC.crossing_noise(points)
        # σ* goes into the legend rather than next to the circle, so no label sits on a neighbouring line
        mark = P.label(f"（σ*≈{star:.2f}）", f" (σ* ≈ {star:.2f})") if star is not None else ""
        line, = ax.plot(noise, [q.gap for q in points], marker=".", label=f"$O_s$ = {overhead:g}{mark}")
        if star is not None:
            ax.plot([star], [0.0], marker="o", markersize=8, markerfacecolor="white", color=line.get_color())
    ax.axhline(0.0, color="grey", lw=0.8, ls="--")
    ax.set_xlabel(P.label("耗时波动 σ", "run-time noise σ"))
    ax.set_ylabel(P.label("静态 − 动态 完成时间差（时间单位）", "static − dynamic makespan (time units)"))
    ax.set_title(P.label("正值：动态更快；空心圆为分界点 σ*（插值）", "positive: dynamic faster; circles: σ*"))
    ax.legend(loc="upper left", fontsize=8, frameon=False)
    return ax


def steal_report(ws, graph, devices, *, after: float = 5.2) -> str:
    """Chinese summary of a work-stealing run: per-device counts and busy time, the last task, and
    the steal log after time ``after``."""
    import numpy as np
    lines = []
    for j, d in enumerate(devices):
        mine = ws.device_of == j
        lines.append(f"{d.name}: {mine.sum():>2} 道菜，忙碌 {ws.busy[j]:.2f}，最后一道在 {ws.end[mine].max():.2f} 做完")
    last = int(np.argmax(ws.end))
    task = graph.tasks[last]
    fastest = max(devices, key=lambda d: d.speed)
    lines.append(f"最后完成的是 {task.name}（工作量 {task.work:.2f}），在 {devices[ws.device_of[last]].name} 上从 "
                 f"{ws.start[last]:.2f} 做到 {ws.end[last]:.2f}；"
                 f"若交给 {fastest.name} 只需 {task.work / fastest.speed:.2f}")
    lines.append(f"{after} 之后的偷取记录（时刻 = 偷取结果揭晓的时刻）：")
    lines += [f"  {e.time:.2f}  {e.thief} 偷 {e.victim}：{e.task or '扑空'}" for e in ws.log if e.time > after]
    return "\n".join(lines)


def kitchen_policy_table(graph, devices, *,
                         keys=("round_robin", "block", "by_affinity", "earliest_free", "eft", "lpt"),
                         base: str = "CPU") -> str:
    """One aligned Chinese line per static policy of ``keys``: makespan, speed-up over serial on ``base``,
    load imbalance."""
    from hetlab._validate import check_sequence, check_str
    keys = check_sequence("keys", keys)
    for k in keys:
        if k not in S.POLICIES or k not in POLICY_NAMES:
            raise ValueError(f"keys: unknown policy {k!r}; allowed: {sorted(set(S.POLICIES) & set(POLICY_NAMES))}")
    base = check_str("base", base)
    serial = S.serial(graph, devices, device=base)
    lines = []
    for k in keys:
        s = S.POLICIES[k](graph, devices).validate()
        lines.append(f"{P.pad(POLICY_NAMES[k], 8)} 完成时间 {s.makespan:5.2f}，相对 {base} 串行加速 "
                     f"{s.speedup(serial):4.2f}x，负载不均衡度 {s.imbalance:4.2f}")
    return "\n".join(lines)


def _mark_failed_steals(ax, ws) -> int:
    """Grey crosses on the thief's row where a steal attempt of ``ws`` came back empty; adds a legend
    entry when there is any. Returns how many were drawn."""
    from matplotlib.lines import Line2D

    rows = {d.name: len(ws.devices) - 1 - j for j, d in enumerate(ws.devices)}
    failed = [e for e in getattr(ws, "log", ()) or () if e.task is None and e.thief in rows]
    if not failed:
        return 0
    ax.plot([e.time for e in failed], [rows[e.thief] for e in failed], linestyle="none", marker="x",
            markersize=4, markeredgewidth=0.9, color="0.35", zorder=5)
    legend = ax.get_legend()
    handles = list(legend.legend_handles) if legend is not None else []
    texts = [t.get_text() for t in legend.get_texts()] if legend is not None else []
    title = legend.get_title().get_text() if legend is not None else None
    handles.append(Line2D([], [], linestyle="none", marker="x", markersize=5, color="0.35"))
    texts.append(P.label(f"扑空的偷取（{len(failed)} 次）", f"failed steal ({len(failed)})"))
    ax.legend(handles=handles, labels=texts, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8,
              frameon=False, title=title or None, title_fontsize=8)
    return len(failed)


def steal_vs_eft_figure(eft, ws):
    """Two-row Gantt: the static EFT plan (top) against a work-stealing run (bottom) on the same tasks.

    Stolen tasks are hatched, failed steal attempts are grey crosses on the thief's row at the time the
    attempt came back empty (only when ``ws.log`` records them); the task that finishes last under work
    stealing is annotated with its work, where it ran and what it would have taken on the fastest device.
    Returns the figure.
    """
    import matplotlib.pyplot as plt
    import numpy as np

    from hetlab._validate import check_instance
    from hetlab.schedule import Schedule
    check_instance("eft", eft, Schedule)
    check_instance("ws", ws, Schedule)
    if [t.name for t in eft.graph.tasks] != [t.name for t in ws.graph.tasks]:
        raise ValueError("ws: the two schedules must be of the same tasks")
    fig, axes = plt.subplots(2, 1, figsize=(8.6, 4.6), layout="constrained")
    xmax = 1.3 * max(eft.makespan, ws.makespan)     # room right of the last bar for the note
    P.gantt(eft, axes[0], xmax=xmax, xlabel="",
            title=P.label(f"静态 EFT（开工前排好）：完成时间 {eft.makespan:.2f}", f"static EFT: {eft.makespan:.2f}"))
    P.gantt(ws, axes[1], xmax=xmax,
            title=P.label(f"工作窃取（全压在 CPU 队列、偷取延迟 0.1）：{ws.makespan:.2f}；斜线 = 偷来的菜",
                          f"work stealing: {ws.makespan:.2f}; hatched = stolen"))
    for ax in axes:
        gantt_legend(ax)
    _mark_failed_steals(axes[1], ws)
    last = int(np.argmax(ws.end))
    task, row = ws.graph.tasks[last], len(ws.devices) - 1 - int(ws.device_of[last])
    fastest = max(ws.devices, key=lambda d: d.speed)
    where = ws.devices[ws.device_of[last]].name
    note = P.label(f"{task.name}（工作量 {task.work:.2f}）\n{where} 上 {ws.start[last]:.2f}–{ws.end[last]:.2f}\n"
                   f"{fastest.name} 只需 {task.work / fastest.speed:.2f}\n而 GPU、NPU 已空闲",
                   f"{task.name} (work {task.work:.2f})\non {where} {ws.start[last]:.2f}-{ws.end[last]:.2f}\n"
                   f"{task.work / fastest.speed:.2f} on {fastest.name}")
    axes[1].annotate(note, xy=((ws.start[last] + ws.end[last]) / 2, row - 0.35),
                     xytext=(ws.makespan + 0.02 * xmax, row - 1.2), ha="left", va="center", fontsize=8,
                     arrowprops=dict(arrowstyle="->", lw=0.8, color="black"),
                     bbox=dict(boxstyle="round,pad=0.25", fc="white", ec="0.6", lw=0.5))
    return fig


def fork_join_figure(static, stealing, central):
    """Three-row Gantt of a fork-join tree on identical devices: static plan executed, work stealing,
    central queue (same time axis; colours carry no information, hatched bars are stolen tasks)."""
    import matplotlib.pyplot as plt

    from hetlab._validate import check_instance
    from hetlab.schedule import Schedule
    rows = (("static", static, "静态 EFT 计划的实际执行", "static EFT plan, actual"),
            ("stealing", stealing, "工作窃取", "work stealing"),
            ("central", central, "中央队列（谁空谁取）", "central queue"))
    for name, s, _, _ in rows:
        check_instance(name, s, Schedule)
    fig, axes = plt.subplots(3, 1, figsize=(8, 5.6), layout="constrained")
    xmax = max(s.makespan for _, s, _, _ in rows)
    for ax, (name, s, zh, en) in zip(axes, rows):
        extra = P.label("（斜线为偷来的任务）", "") if name == "stealing" else ""
        P.gantt(s, ax, show_names=False, xmax=xmax, xlabel=None if name == "central" else "",
                title=P.label(f"{zh}：{s.makespan:.2f}{extra}", f"{en}: {s.makespan:.2f}"))
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    return fig


def policies() -> Explorer:
    """The policies on the kitchen: a policy dropdown, a task-count slider and the steal latency."""
    def draw(ax, policy: str, tasks: int, steal_latency: float) -> str:
        graph = skewed_tasks(tasks, spread=0.8, seed=7)
        devices = kitchen()
        options = {"steal_latency": steal_latency, "initial": "first"} if policy == "work_stealing" else {}
        s = S.POLICIES[policy](graph, devices, **options).validate()
        base = S.serial(graph, devices, device="CPU")
        name = POLICY_NAMES[policy]
        P.gantt(s, ax, show_names=tasks <= 16, title=P.label(f"{name}：完成时间 {s.makespan:.2f}",
                                                             f"{S.POLICY_LABELS[policy]}: makespan {s.makespan:.2f}"))
        gantt_legend(ax)
        text = (f"{name}：完成时间 {s.makespan:.2f}，相对 CPU 串行的加速比 {s.speedup(base):.2f}x，"
                f"负载不均衡度 {s.imbalance:.2f}")
        if policy == "work_stealing":
            text += f"，成功偷取 {s.info['steals']} 次（扑空 {s.info['failed_steals']} 次）"
        return text

    options = [(zh, key) for key, zh in POLICY_NAMES.items()]
    return Explorer(draw, {"policy": dropdown("策略", options, "work_stealing"),
                           "tasks": int_slider("菜品数", 3, 60, 24),
                           "steal_latency": slider("偷取延迟", 0.0, 1.0, 0.05, 0.1)}, figsize=(8, 2.8))


def _variance_gantt(axes, run) -> None:
    """Static plan executed (top) and dynamic queue (bottom) of one ``compare_under_variance`` run.

    Bars are one colour (the tasks' preferred-device labels play no part in this comparison); a dashed
    line marks the planned makespan in both rows."""
    xmax = 1.02 * max(run.static.makespan, run.dynamic.makespan, run.planned.makespan)
    P.gantt(run.static, axes[0], show_names=False, xmax=xmax, xlabel="",
            title=P.label(f"静态计划（开工前按估计排好）：实际 {run.static.makespan:.2f}，"
                          f"计划 {run.planned.makespan:.2f}",
                          f"static plan: actual {run.static.makespan:.2f}, planned {run.planned.makespan:.2f}"))
    P.gantt(run.dynamic, axes[1], show_names=False, xmax=xmax,
            title=P.label(f"动态队列（谁空闲谁取下一道）：实际 {run.dynamic.makespan:.2f}",
                          f"dynamic queue: actual {run.dynamic.makespan:.2f}"))
    for ax in axes:
        for coll in ax.collections:
            coll.set_facecolor("#8fa8c8")
        if ax.get_legend() is not None:
            ax.get_legend().remove()
        ax.axvline(run.planned.makespan, color="0.25", linestyle="--", linewidth=0.9)
        ax.text(run.planned.makespan, 1.0, P.label(f" 计划 {run.planned.makespan:.2f}",
                                                   f" planned {run.planned.makespan:.2f}"),
                transform=ax.get_xaxis_transform(), ha="left", va="top", fontsize=8, color="0.25")


def variance_figure(run):
    """Stored two-row Gantt of one :func:`hetlab.models.dynamics.compare_under_variance` result:
    the static plan as executed on the actual durations (top) and the dynamic queue (bottom)."""
    import matplotlib.pyplot as plt

    from hetlab._validate import check_instance
    check_instance("run", run, R.VarianceRun)
    fig, axes = plt.subplots(2, 1, figsize=(8, 4.2), layout="constrained")
    _variance_gantt(axes, run)
    return fig


def variance() -> Explorer:
    """LPT planned on estimates, executed on actual durations, against a dynamic queue on the same ones."""
    graph, devices = skewed_tasks(24, spread=0.8, seed=7), kitchen()

    def draw(axes, noise: float, straggler: str, slowdown: float, seed: int) -> str:
        run = R.compare_under_variance(graph, devices, noise=noise, seed=seed,
                                       straggler=None if straggler == "none" else straggler, slowdown=slowdown)
        _variance_gantt(axes, run)
        winner = "动态" if run.dynamic.makespan < run.static.makespan else "静态"
        return (f"计划预期 {run.planned.makespan:.2f}；静态实际 {run.static.makespan:.2f}，"
                f"动态实际 {run.dynamic.makespan:.2f}，先知 LPT {run.oracle.makespan:.2f}：{winner}更快")

    stragglers = [("无", "none"), ("CPU", "CPU"), ("GPU", "GPU"), ("NPU", "NPU")]
    return Explorer(draw, {"noise": slider("耗时波动 σ", 0.0, 1.0, 0.05, 0.3),
                           "straggler": dropdown("故障灶台", stragglers, "none"),
                           "slowdown": slider("故障减速倍数", 1.0, 8.0, 0.5, 4.0, fmt=".1f"),
                           "seed": int_slider("随机种子", 0, 9, 0)}, figsize=(8, 4.2), subplots=(2, 1))


#: (chapter, factory) for each widget of this module.
VIEWS = [(5, variance), (5, policies)]
