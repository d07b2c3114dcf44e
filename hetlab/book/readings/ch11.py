"""Chapter 11's sentences: what each policy of the article's kitchen does, the widget's readout of one run and
the serial-baseline table with Chinese headers."""
from __future__ import annotations

from hetlab import schedulers as S
from hetlab._validate import check_choice, check_instance, check_str
from hetlab.book.readings import ch07
from hetlab.schedule import Schedule

__all__ = ["POLICY_DEFINITIONS", "policy_readout", "baseline_report"]

#: One sentence per policy of the chapter's table (Chinese), keyed by the names of :data:`hetlab.schedulers.POLICIES`.
POLICY_DEFINITIONS = {
    "article_demo": "演示程序的做法：按列表顺序，每道菜交给最早有空的设备（平局按设备名），不看速度。",
    "round_robin": "轮转：第 i 道菜交给第 i mod 3 台设备，开工前就定好，不看大小也不看速度。",
    "by_affinity": "按专长：每道菜交给它偏好的那类设备，同类有几台就轮流，不看那台设备有多忙。",
    "eft": "EFT（Earliest Finish Time）：按列表顺序，每道菜交给能让它最早做完的设备。",
    "lpt": "LPT（Longest Processing Time first）：先按最快耗时从大到小排序，再逐道按 EFT 派。",
    "work_stealing": "工作窃取：先轮流发到各设备的队列，谁闲下来就从别人的队列里随机偷一道（第 5 章）。",
    "heft": "HEFT：按向上秩排序、按最早完成时刻放置并允许插空（第 9 章）；菜互不依赖时向上秩就是平均耗时。",
    "optimal": "最优解：分支定界枚举 3^8 种分法，求出最短的完工时间。",
}


def policy_readout(policy: str, label: str, run: Schedule, best: Schedule) -> str:
    """One line for a run of the kitchen: the GPU's speed, the makespan, the optimum ``best`` on the same
    devices, the gap, the speed-ups over the whole job on the CPU alone (the article's baseline) and on the
    fastest device alone, then the policy's definition.

    >>> from hetlab.devices import kitchen
    >>> from hetlab.workloads import article_tasks
    >>> run = S.article_demo(article_tasks(), kitchen())
    >>> best = S.POLICIES["optimal"](article_tasks(), kitchen())
    >>> policy_readout("article_demo", "演示程序", run, best)[:43]
    '演示程序，GPU 速度 20：完工时间 2.667，最优 2.550，差距 4.6%；'
    """
    policy = check_choice("policy", policy, tuple(POLICY_DEFINITIONS))
    label = check_str("label", label)
    check_instance("run", run, Schedule)
    check_instance("best", best, Schedule)
    if [d.name for d in run.devices] != [d.name for d in best.devices]:
        raise ValueError(f"best must schedule the same devices as run, got {[d.name for d in best.devices]} "
                         f"for {[d.name for d in run.devices]}")
    gpu = next((d.speed for d in run.devices if d.name == "GPU"), None)
    if gpu is None or not any(d.name == "CPU" for d in run.devices):
        raise ValueError(f"run must be on a kitchen with a CPU and a GPU, got {[d.name for d in run.devices]}")
    cpu = S.serial(run.graph, run.devices, device="CPU").makespan
    fastest = max(run.devices, key=lambda d: d.speed).name
    solo = S.serial(run.graph, run.devices, device=fastest).makespan
    return (f"{label}，GPU 速度 {gpu:g}：完工时间 {run.makespan:.3f}，最优 {best.makespan:.3f}，"
            f"差距 {(run.makespan - best.makespan) / best.makespan:.1%}；"
            f"加速比 {cpu / run.makespan:.2f}x（以 CPU 串行为基线）、"
            f"{solo / run.makespan:.2f}x（以最快的 {fastest} 串行为基线）。{POLICY_DEFINITIONS[policy]}")


def baseline_report(schedule: Schedule) -> str:
    """Chapter 7's serial-baseline table (:func:`hetlab.book.readings.ch07.baseline_report`) with every header in
    Chinese: ``T_serial`` is written 串行时间, which has the same display width, so the columns stay aligned.

    >>> from hetlab.devices import kitchen
    >>> from hetlab.workloads import article_tasks
    >>> print(baseline_report(S.article_demo(article_tasks(), kitchen())).splitlines()[0])
    串行基线   串行时间   加速比 S   S/N     容量 C   S/C
    """
    check_instance("schedule", schedule, Schedule)
    return ch07.baseline_report(schedule).replace("T_serial", "串行时间", 1)
