"""Chapter 1 (visual demo): orchestration, serial vs parallel, parallelism combinations."""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from .. import plotting as P
from .. import schedulers as S
from ..devices import identical, kitchen
from ..widgets import Explorer, dropdown, int_slider, slider
from ..workloads import article_tasks, skewed_tasks

__all__ = ['orchestration', 'serial_vs_parallel', 'parallelism_combo']


@lru_cache(maxsize=256)
def _kitchen_schedule(policy: str, gpu_speed: float = 20.0):
    from ..devices import Device

    devices = [Device(d.name, d.kind, gpu_speed if d.kind == "GPU" else d.speed) for d in kitchen()]
    return S.POLICIES[policy](article_tasks(), devices).validate()


def orchestration() -> Explorer:
    """Decompose, assign, orchestrate: the demo's dishes appear on the Gantt chart one by one."""
    def draw(ax, step: int, policy: str) -> str:
        s = _kitchen_schedule(policy)
        order = np.argsort(s.start, kind="stable")[:step]
        shown = np.zeros(len(s.graph), dtype=bool)
        shown[order] = True
        partial = _masked(s, shown)
        P.gantt(partial, ax, xmax=s.makespan, title=P.label(
            f"{policy}：已派出 {step}/8 道菜", f"{policy}: {step}/8 dishes dispatched"))
        phase = P.label("分解：8 道菜拆成独立任务", "decompose: 8 independent tasks") if step == 0 else (
            P.label("分配 + 编排：", "assign + orchestrate: ") + ", ".join(
                f"{s.graph.tasks[i].name}->{s.devices[s.device_of[i]].name}@{s.start[i]:.2f}" for i in order[-3:]))
        return phase

    return Explorer(draw, {"step": int_slider("step", 0, 8, 8),
                           "policy": dropdown("policy", ["article demo", "EFT", "LPT", "optimal"])},
                    play="step", figsize=(8, 2.8))


def _masked(s, shown):
    """A copy of schedule ``s`` keeping only the tasks in ``shown`` (for animations)."""
    from ..schedule import Schedule
    from ..tasks import TaskGraph

    keep = np.flatnonzero(shown)
    graph = TaskGraph([s.graph.tasks[i] for i in keep])
    return Schedule(graph, s.devices, s.device_of[keep], s.start[keep], s.end[keep], s.policy, s.log)


def serial_vs_parallel() -> Explorer:
    """Serial sum against parallel max for n equal-sized tasks on n devices (the 4x of chapter 1)."""
    def draw(ax, tasks: int, spread: float) -> str:
        graph = skewed_tasks(tasks, spread=spread, seed=1)
        devices = identical(tasks, speed=10.0)
        serial = S.serial(graph, devices).validate()
        parallel = S.eft(graph, devices).validate()
        times = S.cost_matrix(graph, devices)[:, 0]
        ax.bar(["serial"], [serial.makespan], color="#4C72B0")
        ax.bar([f"T{i}" for i in range(tasks)], times, color="#55A868")
        ax.axhline(parallel.makespan, color="crimson", ls="--", lw=1)
        ax.set_ylabel(P.label("时间", "time"))
        ax.set_title(P.label(f"串行 = 求和 {serial.makespan:.2f}，并行 = 最大值 {parallel.makespan:.2f}",
                             f"serial = sum {serial.makespan:.2f}, parallel = max {parallel.makespan:.2f}"))
        return f"T_serial = {serial.makespan:.2f}, T_parallel = {parallel.makespan:.2f}, " \
               f"speed-up = {parallel.speedup(serial):.2f}x"

    return Explorer(draw, {"tasks": int_slider("tasks", 1, 8, 4), "spread": slider("spread", 0.0, 1.0, 0.1, 0.0)},
                    figsize=(7, 3))


def parallelism_combo() -> Explorer:
    """Data x tensor x pipeline parallelism: how many devices a combination uses."""
    def draw(ax, data: int, tensor: int, pipeline: int) -> str:
        P.parallelism_grid(data, tensor, pipeline, ax)
        return f"devices = {data} x {tensor} x {pipeline} = {data * tensor * pipeline}"

    return Explorer(draw, {"data": int_slider("data", 1, 8, 2), "tensor": int_slider("tensor", 1, 4, 2),
                           "pipeline": int_slider("pipeline", 1, 4, 4)}, figsize=(8, 3.2))


#: (chapter, factory) for each widget of this module.
VIEWS = [(1, orchestration), (1, serial_vs_parallel), (1, parallelism_combo), (2, serial_vs_parallel)]
