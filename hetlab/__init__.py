"""hetlab: parallel execution and scheduling on heterogeneous devices (CPU / GPU / NPU).

The library behind the hetlab textbook. A handful of plain concepts:

- :class:`~hetlab.devices.Device` (and :class:`~hetlab.devices.Link`): what a processor can do;
- :class:`~hetlab.tasks.Task` and :class:`~hetlab.tasks.TaskGraph`: the work and its dependencies;
- a scheduler is ``policy(graph, devices, **options) -> Schedule`` (:mod:`hetlab.schedulers`);
- :class:`~hetlab.schedule.Schedule`: where and when each task runs, validated;
- :mod:`hetlab.formulas`: the book's formulas (Amdahl, N* = sqrt(W/Os), ...);
- :mod:`hetlab.models.simulators`, :mod:`hetlab.models.training`, :mod:`hetlab.models.serving`: pipelines, memory and step time of
  DP x TP x PP training, LLM serving with continuous batching;
- :mod:`hetlab.plotting`, :mod:`hetlab.widgets`, :mod:`hetlab.book.quiz`: figures, sliders and quizzes.

Submodules load on first use, so ``import hetlab`` stays fast.

>>> import hetlab
>>> round(hetlab.amdahl(0.95, 1024), 2)
19.64
"""
from __future__ import annotations

import importlib
import pkgutil

__version__ = "0.1.0"

_EXPORTS = {
    "devices": ["Device", "Link", "transfer_time", "kitchen", "phone_soc", "gpu_server", "identical"],
    "tasks": ["Task", "TaskGraph", "CycleError", "critical_path", "total_work", "independent_tasks",
              "random_dag", "execution_time", "cost_matrix"],
    "schedule": ["Schedule", "Placement", "ScheduleError"],
    "schedulers": ["serial", "article_demo", "earliest_free", "round_robin", "block", "by_affinity", "eft",
                   "lpt", "work_stealing", "heft", "upward_rank", "optimal", "execute_plan", "lower_bound",
                   "POLICIES"],
    "formulas": ["serial_time", "parallel_time", "peak_compute", "total_time", "optimal_tasks",
                 "derive_optimal_tasks", "speedup", "amdahl", "amdahl_limit", "efficiency",
                 "amdahl_efficiency", "gustafson", "karp_flatt", "pipeline_period", "pipeline_throughput",
                 "gpipe_bubble_fraction", "ring_allreduce_time", "matmul_offload_ms", "imbalance"],
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}
#: Every public submodule (found on disk, so a new module cannot be forgotten here).
_SUBMODULES = frozenset(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name in _WHERE:
        value = getattr(importlib.import_module(f"hetlab.{_WHERE[name]}"), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"hetlab.{name}")
    raise AttributeError(f"module 'hetlab' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE) | _SUBMODULES)
