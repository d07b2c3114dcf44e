"""hetlab: parallel execution and scheduling on heterogeneous devices (CPU / GPU / NPU).

Where things live (concepts first, the textbook last; nothing outside ``book`` imports ``book``):

- ``devices`` Device, Link and presets; ``tasks`` Task, TaskGraph, critical path; ``schedule`` the validated Schedule;
- ``schedulers/`` every policy, called as ``policy(graph, devices, **options) -> Schedule``, and the bounds;
- ``formulas`` the scaling laws (Amdahl, Gustafson, Karp-Flatt, N* = sqrt(W/Os)); ``communication`` the closed
  forms with data movement (ring all-reduce, Amdahl + all-reduce, offload break-even); ``metrics`` speed-up and
  efficiency against a named baseline on mixed devices, device sweeps, batching latency;
- ``models/`` analytic models and simulations, one topic each (granularity, hardware and roofline, dynamics and
  dispatch cost, host overheads, sync, pipelines, training, serving, queueing); ``workloads/`` the book's task
  sets, operator graphs, workflows, request streams, tiled Cholesky; ``real/`` runs and timings on this machine
  (CPU pools, Dask; ``real.hybrid`` runs a Schedule on CPU threads plus a CUDA GPU) and the stored readings of
  other machines;
- ``plotting``, ``widgets`` figures and sliders; ``book/`` chapter views, readings (the sentences a run prints),
  quizzes, progress, the student edition and the command line.

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
    "devices": ["Device", "Link", "transfer_time", "kitchen", "phone_soc", "identical"],
    "tasks": ["Task", "TaskGraph", "CycleError", "critical_path", "total_work", "independent_tasks",
              "random_dag", "execution_time", "cost_matrix"],
    "schedule": ["Schedule", "Placement", "ScheduleError"],
    "schedulers": ["serial", "article_demo", "central_queue", "earliest_free", "round_robin", "block",
                   "by_affinity", "eft", "lpt", "work_stealing", "heft", "upward_rank", "optimal", "execute_plan",
                   "lower_bound", "POLICIES", "POLICY_LABELS"],
    "formulas": ["serial_time", "parallel_time", "total_time", "optimal_tasks", "derive_optimal_tasks", "speedup",
                 "amdahl", "amdahl_limit", "efficiency", "amdahl_efficiency", "gustafson", "karp_flatt",
                 "pipeline_period", "pipeline_throughput", "imbalance"],
    "communication": ["ring_allreduce_time", "matmul_offload_time"],
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
