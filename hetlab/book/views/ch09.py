"""Chapter 9 (optimisation): load balance, HEFT and CPOP on the paper's example, policies on WfCommons
workflows (the 20 stored instances of Montage and Epigenomics, :mod:`hetlab.workloads.workflows`)."""
from __future__ import annotations

from functools import lru_cache

from hetlab import plotting as P
from hetlab import schedulers as S
from hetlab.book.readings.ch09 import balance_reading, workflow_reading
from hetlab.devices import Link, kitchen
from hetlab.widgets import Explorer, dropdown, int_slider, slider

__all__ = ['workflow_explorer', 'workflow_readout', 'paper_gantts', 'workflow_gantts', 'balance_explorer',
           'balance_readout', 'heft_paper_table', 'heft_paper_dag', 'workflow_runtime_table', 'workflow_gap_table',
           'cpop_ablation_table', 'workflow_gap_figure']

#: (label shown to the learner, key of hetlab.schedulers.POLICIES)
POLICY_CHOICES = [("HEFT", "heft"), ("CPOP", "cpop"), ("EFT", "eft"), ("工作窃取", "work_stealing"),
                  ("最早空闲", "earliest_free"), ("轮转", "round_robin")]
WORKFLOWS = [("Montage（天文拼图）", "montage"), ("Epigenomics（基因组）", "epigenomics")]
_LABEL = {key: label for label, key in POLICY_CHOICES}
_TITLE = {"montage": "Montage", "epigenomics": "Epigenomics"}
#: The stored instances: 60 tasks requested, seeds 0 .. SEEDS - 1.
SEEDS = 20


def _makespan_handle(makespan: float, unit: str = ""):
    """Legend entry for the black dashed makespan line that :func:`hetlab.plotting.gantt` draws."""
    from matplotlib.lines import Line2D

    zh, en = (f"完工时间 {makespan:.0f} 秒", f"makespan {makespan:.0f} s") if unit else \
        (f"完工时间 {makespan:g}", f"makespan {makespan:g}")
    return Line2D([], [], color="black", lw=0.8, ls="--", label=P.label(zh, en))


def heft_paper_table():
    """The HEFT paper's example as one table (Topcuoglu, Hariri & Wu 2002, Table 1 and Fig. 2): each
    task's run time on P1-P3, its mean, and its successors with the edge's communication cost.
    Returns a pandas DataFrame indexed by task (pandas comes with the ``book`` extra)."""
    try:
        import pandas as pd
    except ImportError as exc:  # the core library does not depend on pandas
        raise ImportError("heft_paper_table needs pandas: pip install 'hetlab[book]'") from exc

    from hetlab.workloads import HEFT_PAPER_EXAMPLE as EX

    succ = {i: [] for i in EX["costs"]}
    for a, b, c in EX["edges"]:
        succ[a].append(f"n{b}（{c}）")
    rows = {f"n{i}": {"P1": c[0], "P2": c[1], "P3": c[2], "平均耗时 w̄": round(sum(c) / 3, 3),
                      "后继（通信代价 c̄）": "、".join(succ[i]) or "—（出口）"} for i, c in EX["costs"].items()}
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "任务"
    return table


#: Drawing positions of the paper's ten tasks (level by level, as in its Fig. 2).
_PAPER_XY = {1: (3, 3), 2: (1, 2), 3: (2, 2), 4: (3, 2), 5: (4, 2), 6: (5, 2), 7: (1.5, 1), 8: (3, 1),
             9: (4.5, 1), 10: (3, 0)}


#: Where along an edge its cost label sits (0 = source, 1 = target), chosen so crossing edges' labels stay apart.
_PAPER_LABEL_AT = {(2, 8): 0.25, (2, 9): 0.45, (4, 9): 0.3, (6, 8): 0.25, (5, 9): 0.7}


def heft_paper_dag():
    """The HEFT paper's task graph: ten tasks, each edge labelled with its communication cost
    (paid only between different processors). Returns the figure."""
    import matplotlib.pyplot as plt

    from hetlab.workloads import HEFT_PAPER_EXAMPLE as EX

    P.use_cjk_font()
    fig, ax = plt.subplots(figsize=(6.4, 3.6), layout="constrained")
    for a, b, c in EX["edges"]:
        (x0, y0), (x1, y1) = _PAPER_XY[a], _PAPER_XY[b]
        ax.annotate("", xy=(x1, y1 + 0.17), xytext=(x0, y0 - 0.17),
                    arrowprops=dict(arrowstyle="-|>", lw=0.8, color="0.35", shrinkA=0, shrinkB=0))
        t = _PAPER_LABEL_AT.get((a, b), 0.4 if a == 1 else 0.5)
        ax.text(x0 + t * (x1 - x0), y0 - 0.17 + t * (y1 - y0 + 0.34), str(c), fontsize=8, ha="center",
                va="center", color="crimson", bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none"))
    for i, (x, y) in _PAPER_XY.items():
        ax.add_patch(plt.Circle((x, y), 0.17, fc="#4c72b0", ec="white"))
        ax.text(x, y, f"n{i}", ha="center", va="center", color="white", fontsize=9)
    ax.set_xlim(0.5, 5.5)
    ax.set_ylim(-0.35, 3.35)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(P.label("论文例子的任务图（边上红字：跨处理器时的通信代价）",
                         "the paper's task graph (red: communication cost between processors)"), fontsize=10)
    return fig


@lru_cache(maxsize=64)
def _workflow(name: str, seed: int = 0):
    from hetlab.workloads.workflows import workflow

    return workflow(name, 60, seed=seed)


def _check(workflow: str, policy: str | None = None, seed: int = 0) -> None:
    from hetlab._validate import check_int

    if workflow not in _TITLE:
        raise ValueError(f"workflow must be one of {list(_TITLE)}, got {workflow!r}")
    if policy is not None and policy not in _LABEL:
        raise ValueError(f"policy must be one of {list(_LABEL)}, got {policy!r}")
    check_int("seed", seed, low=0, high=SEEDS - 1)


@lru_cache(maxsize=1024)
def _run(name: str, policy: str, bandwidth: int, seed: int = 0):
    from hetlab.tasks import critical_path, total_work

    graph, devices = _workflow(name, seed), kitchen(link=Link(0.0, float(bandwidth)))
    s = S.POLICIES[policy](graph, devices).validate()
    area = total_work(graph) / sum(d.speed for d in devices)
    return s, critical_path(graph, devices)[0], area, S.lower_bound(graph, devices)


def workflow_readout(workflow: str, policy: str, bandwidth: int, seed: int = 0) -> str:
    """The widget's readout: makespan, the lower bound and both of its terms, the gap and the imbalance."""
    _check(workflow, policy, seed)
    s, cp, area, bound = _run(workflow, policy, bandwidth, seed)
    return workflow_reading(_LABEL[policy], _TITLE[workflow], bandwidth, seed, makespan=s.makespan, bound=bound,
                            critical_path=cp, area=area, imbalance=s.imbalance)


def workflow_explorer() -> Explorer:
    """A stored WfCommons instance (60 tasks requested, seed 0-19) on the kitchen's CPU/GPU/NPU under each
    policy; the dotted lines mark the critical path and the lower bound."""
    def draw(ax, workflow: str, policy: str, bandwidth: int, seed: int) -> str:
        s, cp, area, bound = _run(workflow, policy, bandwidth, seed)
        title = P.label(f"{_TITLE[workflow]} 实例 {seed}，{_LABEL[policy]}：完工时间 {s.makespan:.0f} 秒",
                        f"{_TITLE[workflow]} #{seed}, {S.POLICY_LABELS[policy]}: makespan {s.makespan:.0f} s")
        xmax = max(_run(workflow, key, 10, seed)[0].makespan for _, key in POLICY_CHOICES)   # one axis per instance
        P.gantt(s, ax, show_names=False, xmax=xmax, title=title)
        ax.axvline(cp, color="crimson", ls=":", lw=1,
                   label=P.label(f"关键路径 {cp:.0f} 秒", f"critical path {cp:.0f} s"))
        ax.axvline(bound, color="0.3", ls="-.", lw=1,
                   label=P.label(f"下界 {bound:.0f} 秒", f"lower bound {bound:.0f} s"))
        ax.set_xlabel(P.label("时间（秒）", "time (s)"))
        handles, _ = ax.get_legend_handles_labels()
        ax.legend(handles=handles + [_makespan_handle(s.makespan, "s")], loc="upper left",
                  bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
        return workflow_readout(workflow, policy, bandwidth, seed)

    return Explorer(draw, {"workflow": dropdown("工作流", WORKFLOWS), "policy": dropdown("策略", POLICY_CHOICES),
                           "bandwidth": int_slider("带宽 MB/s", 10, 200, 100, step=10),
                           "seed": int_slider("实例（种子）", 0, SEEDS - 1, 0)},
                    figsize=(8, 2.8))


#: The static assignments of section 9.1: (label, key of hetlab.schedulers.POLICIES).
BALANCE_POLICIES = [("分块", "block"), ("轮转", "round_robin"), ("LPT", "lpt")]


@lru_cache(maxsize=256)
def _balance(spread: float, tasks: int):
    from hetlab.devices import identical
    from hetlab.workloads import skewed_tasks

    jobs, four = skewed_tasks(tasks, spread=spread, seed=5), identical(4, speed=10.0)
    return {key: S.POLICIES[key](jobs, four).validate() for _, key in BALANCE_POLICIES}


def balance_readout(spread: float, tasks: int = 20) -> str:
    """Imbalance and makespan of block, round-robin and LPT for ``tasks`` lognormal tasks (sigma =
    ``spread``, seed 5) on four identical devices of speed 10."""
    from hetlab._validate import check_int, check_nonnegative

    spread, tasks = check_nonnegative("spread", spread, high=3.0), check_int("tasks", tasks, low=4, high=200)
    runs = _balance(round(spread, 6), tasks)
    return balance_reading(tasks, spread, [(label, runs[key].imbalance, runs[key].makespan)
                                           for label, key in BALANCE_POLICIES])


def balance_explorer() -> Explorer:
    """Section 9.1's experiment: lognormal task sizes (a spread slider) dealt to four identical devices
    by block, round-robin and LPT; grouped bars show each device's busy time, dashed lines the mean."""
    import numpy as np

    def draw(ax, spread: float, tasks: int) -> str:
        runs = _balance(round(spread, 6), tasks)
        width = 0.26
        for k, (label, key) in enumerate(BALANCE_POLICIES):
            s = runs[key]
            ax.bar(np.arange(4) + (k - 1) * width, s.busy, width,
                   label=P.label(f"{label}（不均衡度 {s.imbalance:.2f}）", f"{key} (imbalance {s.imbalance:.2f})"))
        ax.axhline(runs["lpt"].busy.mean(), color="0.3", ls="--", lw=1, label=P.label("平均忙碌时间", "mean busy time"))
        ax.set_xticks(range(4), [P.label(f"设备 {j + 1}", f"device {j + 1}") for j in range(4)])
        ax.set_ylabel(P.label("忙碌时间（时间单位）", "busy time (time units)"))
        ax.set_xlabel(P.label("设备", "device"))
        ax.set_title(P.label(f"{tasks} 个任务，大小悬殊程度 σ = {spread:.2f}",
                             f"{tasks} tasks, spread σ = {spread:.2f}"))
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
        return balance_readout(spread, tasks)

    return Explorer(draw, {"spread": slider("大小悬殊程度 σ", 0.0, 2.0, 0.25, 1.0),
                           "tasks": int_slider("任务数", 8, 80, 20, step=4)}, figsize=(8, 2.8))


def paper_gantts():
    """HEFT and CPOP on the ten-task example of Topcuoglu, Hariri & Wu (2002), one panel each;
    CPOP's critical-path tasks are hatched. Returns the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.collections import PolyCollection
    from matplotlib.patches import Patch

    from hetlab.workloads import heft_paper_example

    P.use_cjk_font()
    graph, procs = heft_paper_example()
    fig, axes = plt.subplots(2, 1, figsize=(8, 4.2), layout="constrained", sharex=True)
    for ax, policy in zip(axes, (S.heft, S.cpop)):
        s = policy(graph, procs).validate()
        paper = 80 if s.policy == "HEFT" else 86      # Topcuoglu et al. 2002, Fig. 4(a) and 4(b)
        P.gantt(s, ax, xmax=86, title=P.label(f"{s.policy}：完工时间 {s.makespan:g}（论文：{paper}）",
                                              f"{s.policy}: makespan {s.makespan:g} (paper: {paper})"))
        ax.get_legend().remove()        # every processor is of one kind: a one-entry legend of kinds says nothing
        ax.set_xlabel("")
        handles = [_makespan_handle(s.makespan)]
        if s.policy == "CPOP":
            idx = [graph.index[name] for name in s.info["critical_path"]]
            y = len(procs) - 1 - s.device_of[idx]
            ax.add_collection(PolyCollection(P._bar_vertices(s.start[idx], s.end[idx], y), facecolors="none",
                                             edgecolors="black", linewidths=0.8, hatch="//"))
            handles.append(Patch(fill=False, hatch="//", label=P.label("关键路径任务", "critical-path task")))
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    axes[-1].set_xlabel(P.label("时间（论文的时间单位）", "time (the paper's time units)"))
    return fig


def workflow_gantts(workflow: str = "montage", policies: tuple[str, ...] = ("heft", "cpop"), bandwidth: int = 100,
                    highlight: str | None = None, seed: int = 0):
    """One Gantt panel per policy for a stored WfCommons instance on the kitchen, with the critical
    path (dotted), the lower bound (dash-dot) and the makespan (dashed) marked with their values;
    the task named ``highlight`` (if any) is outlined in red in every panel. Returns the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.collections import PolyCollection
    from matplotlib.patches import Patch, Rectangle

    for policy in policies:
        _check(workflow, policy, seed)
    if highlight is not None and highlight not in _workflow(workflow, seed).index:
        raise ValueError(f"highlight must name a task of the {workflow} workflow or be None, got {highlight!r:.80}")
    P.use_cjk_font()
    fig, axes = plt.subplots(len(policies), 1, figsize=(8, 1.2 + 1.5 * len(policies)), layout="constrained",
                             sharex=True, squeeze=False)
    xmax = max(_run(workflow, p, bandwidth, seed)[0].makespan for p in policies)
    for ax, policy in zip(axes[:, 0], policies):
        s, cp, _, bound = _run(workflow, policy, bandwidth, seed)
        P.gantt(s, ax, show_names=False, xmax=xmax, title=P.label(
            f"{_TITLE[workflow]} 实例 {seed}，{_LABEL[policy]}：完工时间 {s.makespan:.0f} 秒",
            f"{_TITLE[workflow]} #{seed}, {S.POLICY_LABELS[policy]}: makespan {s.makespan:.0f} s"))
        ax.axvline(cp, color="crimson", ls=":", lw=1,
                   label=P.label(f"关键路径 {cp:.0f} 秒", f"critical path {cp:.0f} s"))
        ax.axvline(bound, color="tab:blue", ls="-.", lw=1.2,
                   label=P.label(f"下界 {bound:.0f} 秒", f"lower bound {bound:.0f} s"))
        handles, _ = ax.get_legend_handles_labels()
        handles.append(_makespan_handle(s.makespan, "s"))
        if highlight is not None:
            p = s.placement(highlight)
            row = len(s.devices) - 1 - s.device_of[s.graph.index[highlight]]
            ax.add_patch(Rectangle((p.start, row - 0.35), p.end - p.start, 0.7, fill=False, ec="red", lw=2, zorder=5))
            ax.annotate(P.label(f"{p.start:.0f} 秒开工", f"starts at {p.start:.0f} s"), (p.start, row + 0.35),
                        xytext=(0, 2), textcoords="offset points", fontsize=7, color="red", ha="center", va="bottom")
            handles.append(Patch(fill=False, ec="red", lw=2, label=highlight))
        if s.policy == "CPOP" and s.info.get("critical_path"):
            idx = [s.graph.index[name] for name in s.info["critical_path"]]
            y = len(s.devices) - 1 - s.device_of[idx]
            ax.add_collection(PolyCollection(P._bar_vertices(s.start[idx], s.end[idx], y), facecolors="none",
                                             edgecolors="black", linewidths=0.8, hatch="////"))
            handles.append(Patch(fill=False, hatch="////", label=P.label("关键路径任务", "critical-path task")))
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
        ax.set_xlabel("")
    axes[-1, 0].set_xlabel(P.label("时间（秒）", "time (s)"))
    return fig


# --- the 20 stored instances -----------------------------------------------------------------------------------------

def _seeds(seeds) -> tuple[int, ...]:
    from hetlab._validate import check_int, check_sequence

    seeds = tuple(check_int("seeds", k, low=0, high=SEEDS - 1) for k in check_sequence("seeds", seeds))
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must not repeat, got {seeds}")
    return seeds


@lru_cache(maxsize=64)
def _staged(name: str, seed: int) -> float:
    from hetlab.schedulers.bounds import staged_bound

    return staged_bound(_workflow(name, seed), kitchen(link=Link(0.0, 100.0))).total


def workflow_runtime_table(recipe: str = "epigenomics"):
    """Per task type of ``recipe``: how many per instance, the recorded range, what WfCommons 1.6 draws (its
    median), the rule hetlab samples by, the shortest / median / longest run time over the 20 stored instances,
    and the median and number of tasks over the real traces. Returns a pandas DataFrame (seconds)."""
    import numpy as np
    import pandas as pd

    from hetlab.workloads.workflows import runtime_ranges, trace_runtimes

    _check(recipe)
    ranges, traces = runtime_ranges(recipe), trace_runtimes(recipe)
    runtimes: dict[str, list[float]] = {}
    for seed in range(SEEDS):
        for t in _workflow(recipe, seed).tasks:
            runtimes.setdefault(t.name.rsplit("_", 1)[0], []).append(t.work / 10)
    rule = {"fit": "拟合（截在范围内）", "log-uniform": "对数均匀", "constant": "常数"}
    why = {"": "", "no fit": "（没有拟合）", "point mass": "（拟合退化成一个点）",
           "out of range": "（拟合大半落在范围外）"}
    rows = {}
    for kind, values in sorted(runtimes.items(), key=lambda kv: -float(np.median(kv[1])) * len(kv[1])):
        r = ranges[kind]
        rows[kind] = {"每个实例": len(values) // SEEDS, "记录范围": f"{r.low:g}–{r.high:g}",
                      "WfCommons 1.6 中位数": r.wfcommons_median, "本书取样": rule[r.rule] + why[r.why],
                      "本书最短": min(values), "本书中位数": float(np.median(values)), "本书最长": max(values),
                      "真实记录中位数": traces[kind].median, "真实记录任务数": traces[kind].tasks}
    table = pd.DataFrame.from_dict(rows, orient="index").round(2)
    table.index.name = "任务类型"
    return table


def _gaps(recipe: str, policy: str, seed: int, options: tuple = ()) -> tuple[float, float, float]:
    """(makespan, gap over the plain bound, gap over the staged bound) of one run at 100 MB/s."""
    if options:
        graph = _workflow(recipe, seed)
        makespan = S.cpop(graph, kitchen(link=Link(0.0, 100.0)), **dict(options)).validate().makespan
    else:
        makespan = _run(recipe, policy, 100, seed)[0].makespan
    bound = _run(recipe, "heft", 100, seed)[3]
    return makespan, makespan / bound - 1, makespan / _staged(recipe, seed) - 1


def _summary(values) -> dict[str, str]:
    import numpy as np

    v = 100 * np.asarray(values)
    return {"平均": f"{v.mean():.1f}%", "最小": f"{v.min():.1f}%", "最大": f"{v.max():.1f}%"}


def workflow_gap_table(recipe: str = "montage", policies: tuple[str, ...] = ("eft", "heft", "cpop", "work_stealing"),
                       seeds=range(SEEDS)):
    """How far each policy ends above the lower bound max(critical path, area) on each instance, and above the
    staged bound (:func:`~hetlab.schedulers.bounds.staged_bound`), at 100 MB/s: mean, smallest and largest over
    ``seeds``, the mean and largest gap over the staged bound, and on how many instances the policy is (one of)
    the fastest listed. Returns a DataFrame."""
    import pandas as pd

    for policy in policies:
        _check(recipe, policy)
    seeds = _seeds(seeds)
    runs = {p: [_gaps(recipe, p, k) for k in seeds] for p in policies}
    best = [min(runs[p][i][0] for p in policies) for i in range(len(seeds))]
    rows = {}
    for p in policies:
        plain = _summary([r[1] for r in runs[p]])
        staged = _summary([r[2] for r in runs[p]])
        rows[_LABEL[p]] = {"超出下界：平均": plain["平均"], "最小": plain["最小"], "最大": plain["最大"],
                           "超出分段下界：平均": staged["平均"], "超出分段下界：最大": staged["最大"],
                           "最快的实例数": sum(r[0] <= b * (1 + 1e-9) for r, b in zip(runs[p], best))}
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = f"{_TITLE[recipe]}（{len(seeds)} 个实例）"
    return table


#: The CPOP variants of the ablation: (label, keyword options of :func:`hetlab.schedulers.cpop`).
ABLATION = [("CPOP 原版", ()), ("只取消钉住", (("pin", False),)), ("只把顺序换成向上秩", (("order", "rank_u"),)),
            ("两处都换（即 HEFT）", (("order", "rank_u"), ("pin", False)))]


def cpop_ablation_table(recipe: str = "montage", seeds=range(SEEDS)):
    """CPOP taken apart (:data:`ABLATION`): each variant's gap over the lower bound, mean / smallest / largest
    over ``seeds`` at 100 MB/s. Returns a DataFrame."""
    import pandas as pd

    _check(recipe)
    seeds = _seeds(seeds)
    rows = {label: _summary([_gaps(recipe, "cpop", k, options or (("pin", True),))[1] for k in seeds])
            for label, options in ABLATION}
    table = pd.DataFrame.from_dict(rows, orient="index").rename(columns=lambda c: f"超出下界：{c}")
    table.index.name = f"{_TITLE[recipe]}（{len(seeds)} 个实例）"
    return table


def workflow_gap_figure(policies: tuple[str, ...] = ("eft", "heft", "cpop", "work_stealing"), seeds=range(SEEDS)):
    """Two panels (Montage, Epigenomics): each policy's gap on every instance (dots) and its mean (bar), over the
    lower bound max(critical path, area) (filled) and over the staged bound (hollow), at 100 MB/s."""
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.patches import Patch

    for policy in policies:
        _check("montage", policy)
    seeds = _seeds(seeds)
    P.use_cjk_font()
    fig, axes = plt.subplots(1, 2, figsize=(8.6, 3.2), layout="constrained", sharey=True)
    jitter = np.linspace(-0.1, 0.1, len(seeds))
    for ax, recipe in zip(axes, ("montage", "epigenomics")):
        for x, p in enumerate(policies):
            runs = np.array([_gaps(recipe, p, k) for k in seeds])
            for dx, col, filled in ((-0.19, 1, True), (0.19, 2, False)):
                gaps = 100 * runs[:, col]
                ax.bar(x + dx, gaps.mean(), width=0.34, color="0.85" if filled else "white", edgecolor="0.5",
                       hatch=None if filled else "///")
                ax.plot(x + dx + jitter, gaps, "o", ms=3, color="tab:blue", alpha=0.8,
                        mfc="tab:blue" if filled else "none")
        ax.set_xticks(range(len(policies)), [_LABEL[p] for p in policies])
        ax.set_title(P.label(f"{_TITLE[recipe]}（{len(seeds)} 个实例）", f"{_TITLE[recipe]} ({len(seeds)} instances)"))
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel(P.label("完工时间超出下界（%）", "makespan above the bound (%)"))
    axes[1].legend(handles=[Patch(fc="0.85", ec="0.5", label=P.label("相对 max(关键路径, 面积)", "vs max(CP, area)")),
                            Patch(fc="white", ec="0.5", hatch="///", label=P.label("相对分段下界", "vs staged bound"))],
                   loc="upper left", fontsize=8, frameon=False)
    return fig


#: (chapter, factory) for each widget of this module.
VIEWS = [(9, balance_explorer), (9, workflow_explorer)]
