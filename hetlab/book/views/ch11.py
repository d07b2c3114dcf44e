"""Chapter 11 (the Python demo): the article's dishes under each policy."""
from __future__ import annotations

from hetlab import plotting as P
from hetlab import schedulers as S
from hetlab.book.readings import ch11 as readings
from hetlab.book.views._shared import kitchen_with_gpu, preference_legend
from hetlab.widgets import Explorer, dropdown, int_slider

__all__ = ['article_policies', 'policy_readout', 'LABELS', 'policy_table', 'demo_gantts',
           'AFFINITY_POLICIES', 'affinity_table']


def _xlabel() -> str:
    """The Gantt charts' x axis: the kitchen's times are simulated time units (work / speed), not seconds;
    chosen at draw time, when the fonts are known."""
    return P.label("时间（模拟时间单位）", "time (simulated time units)")


#: The policies the chapter compares, in the order the dropdown lists them.
NAMES = ["article_demo", "round_robin", "by_affinity", "eft", "lpt", "work_stealing", "heft", "optimal"]
#: Chinese labels (HEFT, EFT and LPT keep their names; the others as chapter 5 names them).
LABELS = {"article_demo": "演示程序", "round_robin": "轮转", "by_affinity": "按专长", "eft": "EFT", "lpt": "LPT",
          "work_stealing": "工作窃取", "heft": "HEFT", "optimal": "最优解"}


def policy_readout(policy: str, gpu_speed: int) -> str:
    """The widget's readout for one setting: makespan, the optimum, the gap and both serial baselines.

    Both baselines run all 114 work units on one device: the CPU (speed 10, the article's choice)
    and the fastest device (the GPU unless ``gpu_speed`` < 15). The sentence is
    :func:`hetlab.book.readings.ch11.policy_readout`'s."""
    if policy not in NAMES:
        raise ValueError(f"policy must be one of {NAMES}, got {policy!r}")
    run, best = kitchen_with_gpu(policy, gpu_speed), kitchen_with_gpu("optimal", gpu_speed)
    return readings.policy_readout(policy, LABELS[policy], run, best)


def article_policies() -> Explorer:
    """The article's eight dishes under each policy, with the gap to the optimum; a slider
    changes the GPU cook's speed (the article's is 20)."""
    def draw(ax, policy: str, gpu_speed: int) -> str:
        s = kitchen_with_gpu(policy, gpu_speed)
        xmax = max(kitchen_with_gpu(name, gpu_speed).makespan for name in NAMES)   # the slowest policy here
        P.gantt(s, ax, xmax=xmax, xlabel=_xlabel(),
                title=P.label(f"{LABELS[policy]}：完工时间 {s.makespan:.3f}",
                              f"{S.POLICY_LABELS[policy]}: makespan {s.makespan:.3f}"))
        preference_legend(ax)
        return policy_readout(policy, gpu_speed)

    return Explorer(draw, {"policy": dropdown("策略", [(LABELS[n], n) for n in NAMES]),
                           "gpu_speed": int_slider("GPU 速度", 5, 40, 20)},
                    figsize=(8, 2.6))


def policy_table(gpu_speed: float = 20.0) -> str:
    """The chapter's results table as markdown: makespan, speed-up over the CPU and over the GPU run
    alone, and the gap to the optimum, for every policy, with the kitchen's GPU at ``gpu_speed``."""
    from hetlab._validate import check_positive

    gpu_speed = check_positive("gpu_speed", gpu_speed)
    best = kitchen_with_gpu("optimal", gpu_speed)
    cpu = S.serial(best.graph, best.devices, device="CPU").makespan
    gpu = S.serial(best.graph, best.devices, device="GPU").makespan
    rows = ["| 策略 | 完工时间 | 相对 CPU 串行 | 相对 GPU 串行 | 距最优 |", "|---|---:|---:|---:|---:|"]
    for name in NAMES:
        t = kitchen_with_gpu(name, gpu_speed).makespan
        rows.append(f"| {LABELS[name]} | {t:.3f} | {cpu / t:.2f}x | {gpu / t:.2f}x | "
                    f"{(t - best.makespan) / best.makespan:.1%} |")
    rows.append(f"| 下界 | {S.lower_bound(best.graph, best.devices):.3f} | | | |")
    return "\n".join(rows)


def demo_gantts(policies: tuple[str, ...] = ("article_demo", "lpt", "optimal"), gpu_speeds=(20, 40)):
    """A static grid of Gantt charts: one row per policy, one column per GPU speed; bars are coloured
    by the dish's preferred device (the row is the device that made it). Returns the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    for name in policies:
        if name not in NAMES:
            raise ValueError(f"policies must be drawn from {NAMES}, got {name!r}")
    if not policies or not gpu_speeds:
        raise ValueError("policies and gpu_speeds must each name at least one value")
    P.use_cjk_font()
    size = (5.2 * len(gpu_speeds), 0.4 + 1.45 * len(policies))
    fig, axes = plt.subplots(len(policies), len(gpu_speeds), figsize=size, layout="constrained", sharex="col",
                             squeeze=False)
    for c, speed in enumerate(gpu_speeds):
        xmax = max(kitchen_with_gpu(name, float(speed)).makespan for name in policies)
        for r, name in enumerate(policies):
            s, ax = kitchen_with_gpu(name, float(speed)), axes[r, c]
            P.gantt(s, ax, xmax=xmax, xlabel="" if r < len(policies) - 1 else _xlabel(), title=P.label(
                f"{LABELS[name]}，GPU 速度 {speed:g}：完工 {s.makespan:.3f}",
                f"{S.POLICY_LABELS[name]}, GPU speed {speed:g}: makespan {s.makespan:.3f}"))
            if r == 0 and c == len(gpu_speeds) - 1:
                preference_legend(ax)
                legend = ax.get_legend()
                handles = list(legend.legend_handles) + [Line2D([], [], color="black", lw=0.8, ls="--")]
                labels = [t.get_text() for t in legend.get_texts()] + [P.label("完工时间", "makespan")]
            ax.get_legend().remove()
    _drop_clipped_labels(fig)
    # One legend for every panel, outside the grid: the colours and the dashed makespan line.
    fig.legend(handles, labels, loc="outside right upper", fontsize=8, frameon=False)
    return fig


def _drop_clipped_labels(fig) -> None:
    """Remove the task names :func:`plotting.gantt` wrote on bars too narrow to hold them."""
    from matplotlib.collections import PolyCollection

    # Text extents need a renderer but no full draw. The axes are measured before constrained layout
    # shrinks them a little, hence the margin in _drop_on (a label must fill at most 70% of its bar).
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        _drop_on(ax, renderer, PolyCollection)


def _drop_on(ax, renderer, PolyCollection) -> None:
    """On one Gantt axes, remove each task name wider than 70% of the bar it sits on."""
    bars = [p for coll in ax.collections if isinstance(coll, PolyCollection) for p in coll.get_paths()]
    for text in list(ax.texts):
        x, y = text.get_position()
        box = text.get_window_extent(renderer)
        for path in bars:
            xs, ys = path.vertices[:, 0], path.vertices[:, 1]
            if xs.min() <= x <= xs.max() and ys.min() <= y <= ys.max():
                left, right = ax.transData.transform([(xs.min(), y), (xs.max(), y)])[:, 0]
                if box.width > 0.7 * (right - left):
                    text.remove()
                break


#: The policies of :func:`affinity_table`, in column order.
AFFINITY_POLICIES = ["article_demo", "by_affinity", "eft", "lpt", "optimal"]


def affinity_table(factors=(1, 1.5, 2, 3, 4)) -> str:
    """Markdown table: makespans when each dish runs ``factor`` times faster on its preferred cook
    (:func:`hetlab.book.demo.preference_kitchen`), for the demo, by-affinity, EFT, LPT and the optimum,
    with the gaps of the demo and of by-affinity to the optimum and the demo's re-routing count."""
    from hetlab.book.demo import preference_kitchen

    if isinstance(factors, (str, bytes)) or not hasattr(factors, "__iter__"):
        raise TypeError(f"factors must be a sequence of numbers >= 1, got {type(factors).__name__} {factors!r}")
    factors = list(factors)
    if not factors:
        raise ValueError("factors must hold at least one number >= 1, got an empty sequence")
    head = ["偏好设备上快几倍"] + [LABELS[n] for n in AFFINITY_POLICIES] + ["演示程序距最优", "按专长距最优",
                                                                              "演示程序的改派次数"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    for f in factors:
        graph, cooks = preference_kitchen(f)
        runs = {n: S.POLICIES[n](graph, cooks).validate() for n in AFFINITY_POLICIES}
        best = runs["optimal"].makespan
        gap = {n: (runs[n].makespan - best) / best for n in ("article_demo", "by_affinity")}
        rows.append(f"| {f:g}× | " + " | ".join(f"{runs[n].makespan:.3f}" for n in AFFINITY_POLICIES)
                    + f" | {gap['article_demo']:.1%} | {gap['by_affinity']:.1%} | "
                    f"{runs['article_demo'].info['preference_reroutes']} |")
    return "\n".join(rows)


#: (chapter, factory) for each widget of this module.
VIEWS = [(11, article_policies)]
