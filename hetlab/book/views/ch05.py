"""Chapter 5 (runtime scheduling): a static plan under runtime variance, and the policies on the kitchen."""
from __future__ import annotations

from hetlab import plotting as P
from hetlab import schedulers as S
from hetlab.devices import kitchen
from hetlab.models import dynamics as R
from hetlab.widgets import Explorer, dropdown, int_slider, slider
from hetlab.workloads import skewed_tasks

__all__ = ['policies', 'variance', 'POLICY_NAMES', 'break_even_figure', 'steal_report', 'kitchen_policy_table',
           'steal_vs_eft_figure', 'fork_join_figure', 'variance_figure', 'menus_figure', 'deque_figure',
           'slackness_figure', 'TYPICAL_STEAL_SEED']

#: Chinese labels of the policies (HEFT, EFT and LPT keep their names).
POLICY_NAMES = {"round_robin": "轮转", "block": "分块", "by_affinity": "按专长", "earliest_free": "最早空闲",
                "eft": "EFT", "lpt": "LPT", "work_stealing": "工作窃取"}

#: The one bar colour of the chapter's Gantt charts: the tasks' preferred-device labels play no part in
#: chapter 5 (every dish takes work / speed on any cook), so colour carries no information; hatching marks
#: stolen tasks.
BAR = "#8fa8c8"

#: The victim-choice seed the policy widget starts on: on the kitchen menu (all dishes on the CPU's deque, steal
#: latency 0.1) its makespan is the median of seeds 0-19 (seed 0 is the worst of them).
TYPICAL_STEAL_SEED = 5


def _gantt(schedule, ax, **options):
    """A Gantt chart in the chapter's one colour (stolen tasks hatched, legend only for them)."""
    return P.gantt(schedule, ax, colors=[BAR] * len(schedule.graph.tasks), **options)


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
    ax.set_ylabel(P.label("静态 − 中央队列 完工时间差（时间单位）", "static − central queue makespan (time units)"))
    ax.set_title(P.label("正值：中央队列更快；空心圆为分界点 σ*（插值）",
                         "positive: central queue faster; circles: σ*"))
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
        lines.append(f"{P.pad(POLICY_NAMES[k], 8)} 完工时间 {s.makespan:5.2f}，相对 {base} 串行加速 "
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


def steal_vs_eft_figure(eft, ws, makespans=None):
    """Two-row Gantt: the static EFT plan (top) against a work-stealing run (bottom) on the same tasks,
    and, when ``makespans`` (the work-stealing makespans of several victim-choice seeds) is given, a strip
    of them on the right beside EFT's, with the run shown circled.

    Stolen tasks are hatched, failed steal attempts are grey crosses on the thief's row at the time the
    attempt came back empty; the task that finishes last under work stealing is annotated with its work,
    where it ran and what it would have taken on the fastest device. Returns the figure.
    """
    import matplotlib.pyplot as plt
    import numpy as np

    from hetlab._validate import as_float_array, check_instance
    from hetlab.schedule import Schedule
    check_instance("eft", eft, Schedule)
    check_instance("ws", ws, Schedule)
    if [t.name for t in eft.graph.tasks] != [t.name for t in ws.graph.tasks]:
        raise ValueError("ws: the two schedules must be of the same tasks")
    runs = None if makespans is None else as_float_array("makespans", makespans, low=0.0, empty=False)
    fig = plt.figure(figsize=(9.6 if runs is not None else 8.6, 4.6), layout="constrained")
    grid = fig.add_gridspec(2, 2 if runs is not None else 1, width_ratios=[5, 1] if runs is not None else None)
    axes = [fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[1, 0])]
    xmax = 1.3 * max(eft.makespan, ws.makespan)     # room right of the last bar for the note
    _gantt(eft, axes[0], xmax=xmax, xlabel="",
           title=P.label(f"静态 EFT（开工前排好）：完工时间 {eft.makespan:.2f}", f"static EFT: {eft.makespan:.2f}"))
    _gantt(ws, axes[1], xmax=xmax,
           title=P.label(f"工作窃取（全压在 CPU 队列）：{ws.makespan:.2f}；斜线 = 偷来的菜",
                         f"work stealing: {ws.makespan:.2f}; hatched = stolen"))
    _mark_failed_steals(axes[1], ws)
    last = int(np.argmax(ws.end))
    task, row = ws.graph.tasks[last], len(ws.devices) - 1 - int(ws.device_of[last])
    fastest = max(ws.devices, key=lambda d: d.speed)
    where = ws.devices[ws.device_of[last]].name
    note = P.label(f"{task.name}（工作量 {task.work:.2f}）\n{where} 上 {ws.start[last]:.2f}–{ws.end[last]:.2f}\n"
                   f"{fastest.name} 只需 {task.work / fastest.speed:.2f}",
                   f"{task.name} (work {task.work:.2f})\non {where} {ws.start[last]:.2f}-{ws.end[last]:.2f}\n"
                   f"{task.work / fastest.speed:.2f} on {fastest.name}")
    axes[1].annotate(note, xy=((ws.start[last] + ws.end[last]) / 2, row - 0.35),
                     xytext=(ws.makespan + 0.02 * xmax, row - 1.2 if row >= 1 else row + 0.9), ha="left",
                     va="center", fontsize=8, arrowprops=dict(arrowstyle="->", lw=0.8, color="black"),
                     bbox=dict(boxstyle="round,pad=0.25", fc="white", ec="0.6", lw=0.5))
    if runs is not None:
        side = fig.add_subplot(grid[:, 1])
        jitter = np.linspace(-0.15, 0.15, runs.size)
        side.scatter(jitter, runs, s=14, color=BAR, edgecolor="0.3", linewidth=0.5, zorder=3,
                     label=P.label(f"工作窃取（{runs.size} 个种子）", f"work stealing ({runs.size} seeds)"))
        shown = int(np.argmin(np.abs(runs - ws.makespan)))
        side.scatter([jitter[shown]], [runs[shown]], s=90, facecolor="none", edgecolor="black", zorder=4,
                     label=P.label("左图这一次", "the run on the left"))
        side.axhline(eft.makespan, color="0.25", ls="--", lw=0.9, label=P.label("EFT", "EFT"))
        side.set_xlim(-0.5, 0.5)
        side.set_xticks([])
        side.set_ylim(min(eft.makespan, runs.min()) * 0.95, max(eft.makespan, runs.max()) * 1.05)
        side.set_ylabel(P.label("完工时间（时间单位）", "makespan (time units)"))
        side.set_title(P.label("各偷取种子", "steal seeds"), fontsize=9)
        side.legend(loc="upper center", bbox_to_anchor=(0.5, -0.02), fontsize=7, frameon=False)
    return fig


def fork_join_figure(static, stealing, central, makespans=None):
    """Three-row Gantt of a fork-join tree on identical devices: static plan executed, work stealing,
    central queue (same time axis, one bar colour, hatched bars are stolen tasks). ``makespans`` (work
    stealing's makespans over several victim-choice seeds) adds their range and mean to its title."""
    import matplotlib.pyplot as plt
    import numpy as np

    from hetlab._validate import as_float_array, check_instance
    from hetlab.schedule import Schedule
    rows = (("static", static, "静态 EFT 计划的实际执行", "static EFT plan, actual"),
            ("stealing", stealing, "工作窃取", "work stealing"),
            ("central", central, "中央队列（FIFO，谁空谁取）", "central queue (FIFO)"))
    for name, s, _, _ in rows:
        check_instance(name, s, Schedule)
    runs = None if makespans is None else as_float_array("makespans", makespans, low=0.0, empty=False)
    fig, axes = plt.subplots(3, 1, figsize=(8, 5.6), layout="constrained")
    xmax = max(s.makespan for _, s, _, _ in rows)
    for ax, (name, s, zh, en) in zip(axes, rows):
        extra = ""
        if name == "stealing":
            extra = P.label("（斜线为偷来的任务）", "")
            if runs is not None:
                lo, hi, mean = runs.min(), runs.max(), float(np.mean(runs))
                extra = P.label(f"（{runs.size} 个种子 {lo:.2f}–{hi:.2f}，平均 {mean:.2f}；斜线为偷来的任务）",
                                f" ({runs.size} seeds {lo:.2f}-{hi:.2f}, mean {mean:.2f})")
        _gantt(s, ax, show_names=False, xmax=xmax, xlabel=None if name == "central" else "", legend=False,
               title=P.label(f"{zh}：{s.makespan:.2f}{extra}", f"{en}: {s.makespan:.2f}{extra}"))
    return fig


def menus_figure(gains):
    """Box plot of the central queue's gain over the static plan, ``1 - dynamic / static``, one box per menu.

    ``gains`` is a (menus x seeds) array, row k for menu k. Points below the dashed zero line are runs the
    static plan won. Returns the axes."""
    import matplotlib.pyplot as plt

    from hetlab._validate import as_float_array
    data = as_float_array("gains", gains, empty=False)
    if data.ndim != 2:
        raise ValueError(f"gains must be a (menus x seeds) table, got {data.ndim} dimension(s)")
    _, ax = plt.subplots(figsize=(8, 3.4), layout="constrained")
    ax.boxplot(list(100 * data), positions=list(range(len(data))), widths=0.6, whis=(0, 100),
               patch_artist=True, boxprops=dict(facecolor=BAR, edgecolor="0.3"), medianprops=dict(color="black"))
    ax.axhline(0.0, color="0.25", ls="--", lw=0.9)
    lost = int((data <= 0).sum())
    ax.set_xlabel(P.label("菜单（随机种子）", "menu (seed)"))
    ax.set_ylabel(P.label("中央队列比静态计划快（%）", "central queue faster than static (%)"))
    ax.set_title(P.label(f"每个箱子是一份菜单的 {data.shape[1]} 个波动种子（须线到最值）；"
                         f"{data.size} 次里静态赢 {lost} 次",
                         f"each box: {data.shape[1]} noise seeds of one menu; static wins {lost} of {data.size}"),
                 fontsize=10)
    return ax


def deque_figure():
    """The work-stealing deque: the owner pushes and pops at the bottom (newest), a thief takes from the top
    (oldest). A schematic of two devices; returns the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, Rectangle

    fig, ax = plt.subplots(figsize=(7.6, 3.8), layout="constrained")
    sizes = [("大", "big"), ("中", "mid"), ("小", "small"), ("更小", "tiny")]
    for k, (zh, en) in enumerate(sizes):      # T0 at the top (oldest), T3 at the bottom (newest)
        y = 3 - k
        ax.add_patch(Rectangle((0.0, y), 2.0, 0.9, facecolor=BAR, edgecolor="0.3"))
        ax.text(1.0, y + 0.45, P.label(f"T{k}（{zh}）", f"T{k} ({en})"), ha="center", va="center", fontsize=9)
    ax.add_patch(Rectangle((5.0, 1.5), 2.0, 0.9, facecolor="none", edgecolor="0.5", ls="--"))
    ax.text(6.0, 1.95, P.label("空队列", "empty"), ha="center", va="center", fontsize=9, color="0.4")
    ax.text(1.0, 4.35, P.label("设备 A 的双端队列", "device A's deque"), ha="center", fontsize=10)
    ax.text(6.0, 2.85, P.label("设备 B（空闲）", "device B (idle)"), ha="center", fontsize=10)
    ax.text(-0.25, 3.45, P.label("顶部\n最早入队", "top\noldest"), ha="right", va="center", fontsize=8)
    ax.text(-0.25, 0.45, P.label("底部\n最新入队", "bottom\nnewest"), ha="right", va="center", fontsize=8)
    ax.add_patch(FancyArrowPatch((5.0, 2.2), (2.05, 3.45), connectionstyle="arc3,rad=0.25", arrowstyle="<|-",
                                 mutation_scale=14, lw=1.2, color="#c0392b"))
    ax.text(3.6, 3.55, P.label("窃贼 B 从顶部偷走最早的任务：popleft()", "thief B steals the top: popleft()"),
            ha="center", fontsize=9, color="#c0392b")
    ax.add_patch(FancyArrowPatch((1.0, 0.0), (1.0, -0.8), arrowstyle="<|-|>", mutation_scale=14, lw=1.2,
                                 color="0.2"))
    ax.text(1.25, -0.55, P.label("主人 A 在底部放入、取出：append() / pop()", "owner A pushes and pops the bottom"),
            ha="left", va="center", fontsize=9)
    ax.set_xlim(-1.6, 8.0)
    ax.set_ylim(-1.1, 4.7)
    ax.set_axis_off()
    return fig


def slackness_figure(curves):
    """Speed-up against the number of identical devices P for each :func:`hetlab.models.dynamics.slackness_curve`
    in ``curves``: work stealing (filled), the central queue (hollow) and the ceiling min(P, W/D) (dashed)."""
    import matplotlib.pyplot as plt
    import numpy as np

    from hetlab._validate import check_instance, check_sequence
    items = check_sequence("curves", curves)
    if not items:
        raise ValueError("curves must hold at least one SlacknessCurve")
    for c in items:
        check_instance("curves", c, R.SlacknessCurve)
    _, ax = plt.subplots(figsize=(7, 3.8), layout="constrained")
    for c in items:
        counts = np.asarray(c.counts, dtype=float)
        par = f"$W/D$ = {c.parallelism:.1f}"
        line, = ax.plot(counts, c.stealing, marker="o", label=P.label(f"工作窃取，{par}", f"work stealing, {par}"))
        ax.plot(counts, c.central, marker="o", ls=":", markerfacecolor="white", color=line.get_color(),
                label=P.label(f"中央队列，{par}", f"central queue, {par}"))
        ax.plot(counts, np.minimum(counts, c.parallelism), ls="--", lw=0.9, color=line.get_color(), alpha=0.7)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ticks = sorted({int(p) for c in items for p in c.counts})
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.set_yticks(ticks, [str(t) for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel(P.label("设备数 P", "devices P"))
    ax.set_ylabel(P.label("加速比 $W / T_P$", "speed-up $W / T_P$"))
    ax.set_title(P.label("虚线：上限 $\\min(P, W/D)$；平均并行度不比 P 大很多时，加速比远离 P",
                         "dashed: ceiling $\\min(P, W/D)$"), fontsize=10)
    ax.legend(fontsize=8, frameon=False, loc="upper left")
    return ax


def policies() -> Explorer:
    """The policies on the kitchen: a policy dropdown, a task-count slider, the steal latency and seed."""
    def draw(ax, policy: str, tasks: int, steal_latency: float, seed: int) -> str:
        graph = skewed_tasks(tasks, spread=0.8, seed=7)
        devices = kitchen()
        stealing = policy == "work_stealing"
        options = {"steal_latency": steal_latency, "initial": "first", "seed": seed} if stealing else {}
        s = S.POLICIES[policy](graph, devices, **options).validate()
        base = S.serial(graph, devices, device="CPU")
        name = POLICY_NAMES[policy]
        _gantt(s, ax, show_names=tasks <= 16, title=P.label(f"{name}：完工时间 {s.makespan:.2f}",
                                                            f"{S.POLICY_LABELS[policy]}: makespan {s.makespan:.2f}"))
        text = (f"{name}：完工时间 {s.makespan:.2f}，相对 CPU 串行的加速比 {s.speedup(base):.2f}x，"
                f"负载不均衡度 {s.imbalance:.2f}")
        if stealing:
            text += f"，成功偷取 {s.info['steals']} 次（扑空 {s.info['failed_steals']} 次）"
        return text

    options = [(zh, key) for key, zh in POLICY_NAMES.items()]
    return Explorer(draw, {"policy": dropdown("策略", options, "work_stealing"),
                           "tasks": int_slider("菜品数", 3, 60, 24),
                           "steal_latency": slider("偷取延迟", 0.0, 1.0, 0.05, 0.1),
                           "seed": int_slider("偷取随机种子", 0, 19, TYPICAL_STEAL_SEED)}, figsize=(8, 2.8))


def _variance_gantt(axes, run) -> None:
    """Static plan executed (top) and central queue (bottom) of one ``compare_under_variance`` run.

    Bars are one colour (the tasks' preferred-device labels play no part in this comparison); a grey dotted
    line marks the planned makespan in both rows, beside the black dashed line of each row's actual makespan."""
    xmax = 1.02 * max(run.static.makespan, run.dynamic.makespan, run.planned.makespan)
    _gantt(run.static, axes[0], show_names=False, xmax=xmax, xlabel="", legend=False,
           title=P.label(f"静态计划（开工前按估计排好）：实际 {run.static.makespan:.2f}，"
                         f"计划 {run.planned.makespan:.2f}",
                         f"static plan: actual {run.static.makespan:.2f}, planned {run.planned.makespan:.2f}"))
    _gantt(run.dynamic, axes[1], show_names=False, xmax=xmax, legend=False,
           title=P.label(f"中央队列（谁空谁取下一道）：实际 {run.dynamic.makespan:.2f}",
                         f"central queue: actual {run.dynamic.makespan:.2f}"))
    for ax in axes:
        ax.axvline(run.planned.makespan, color="0.25", linestyle=":", linewidth=1.2)
        ax.text(run.planned.makespan, 1.0, P.label(f" 计划 {run.planned.makespan:.2f}",
                                                   f" planned {run.planned.makespan:.2f}"),
                transform=ax.get_xaxis_transform(), ha="left", va="top", fontsize=8, color="0.25")


def variance_figure(run):
    """Stored two-row Gantt of one :func:`hetlab.models.dynamics.compare_under_variance` result:
    the static plan as executed on the actual durations (top) and the central queue (bottom)."""
    import matplotlib.pyplot as plt

    from hetlab._validate import check_instance
    check_instance("run", run, R.VarianceRun)
    fig, axes = plt.subplots(2, 1, figsize=(8, 4.2), layout="constrained")
    _variance_gantt(axes, run)
    return fig


def variance() -> Explorer:
    """LPT planned on estimates, executed on actual durations, against the central queue on the same ones."""
    graph, devices = skewed_tasks(24, spread=0.8, seed=7), kitchen()

    def draw(axes, noise: float, straggler: str, slowdown: float, seed: int) -> str:
        run = R.compare_under_variance(graph, devices, noise=noise, seed=seed,
                                       straggler=None if straggler == "none" else straggler, slowdown=slowdown)
        _variance_gantt(axes, run)
        winner = "中央队列" if run.dynamic.makespan < run.static.makespan else "静态计划"
        return (f"计划预期 {run.planned.makespan:.2f}；静态实际 {run.static.makespan:.2f}，"
                f"中央队列实际 {run.dynamic.makespan:.2f}，先知 LPT {run.oracle.makespan:.2f}：{winner}更快")

    stragglers = [("无", "none"), ("CPU", "CPU"), ("GPU", "GPU"), ("NPU", "NPU")]
    return Explorer(draw, {"noise": slider("耗时波动 σ", 0.0, 1.0, 0.05, 0.3),
                           "straggler": dropdown("故障灶台", stragglers, "none"),
                           "slowdown": slider("故障减速倍数", 1.0, 8.0, 0.5, 4.0, fmt=".1f"),
                           "seed": int_slider("随机种子", 0, 19, 0)}, figsize=(8, 4.2), subplots=(2, 1))


#: (chapter, factory) for each widget of this module.
VIEWS = [(5, variance), (5, policies)]
