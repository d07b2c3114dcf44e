"""Real scientific workflow shapes as task graphs, from the WfCommons recipes (Coleman et al. 2022).

WfCommons (https://wfcommons.org) ships *recipes* distilled from execution traces of real workflows
(Montage astronomy mosaics, Epigenomics sequencing pipelines, Seismology cross-correlation and
others) and generates synthetic instances of a requested size offline: the graph's shape comes
from the recorded base graphs, each task's runtime and file sizes from distributions fitted to
the traces. :func:`workflow` turns such an instance into a :class:`~hetlab.tasks.TaskGraph`.

What the numbers mean on heterogeneous devices (the assumptions, stated once):

- A task's ``work`` is its WfCommons runtime (seconds on the machine the traces come from) times
  ``reference_speed``. A device of speed ``s`` runs it in ``runtime * reference_speed / s`` seconds,
  so with the default ``reference_speed = 10`` the CPU of :func:`~hetlab.devices.kitchen` (speed 10)
  reproduces the recorded runtime and its GPU (speed 20) halves every task. Real accelerators speed
  task types up by very different factors (or not at all); with ``by_type=True`` each task's ``op``
  is its type (``"mProject"``, ...), so a :class:`~hetlab.devices.Device` with ``affinity`` can
  model that. Task names start with the type either way (``mProject_00000001``).
- An edge carries the megabytes of the files the child reads that the parent writes (WfCommons
  file sizes); with a :class:`~hetlab.devices.Link` in MB/s the transfer time is in seconds.
  Files read from outside the workflow (its inputs) cost nothing here.
- Instances are deterministic: ``seed`` seeds the generator (Python's ``random`` and NumPy's global
  generator, restored afterwards). WfCommons counts two pseudo-tasks (source and sink) in
  ``num_tasks``, so the graph has a few tasks fewer than asked for; each recipe has a smallest size
  (:data:`MIN_TASKS`), its smallest recorded base graph.

Generating needs the optional ``wfcommons`` package (``pip install hetlab[workflows]``), whose
import takes several seconds. A few instances are stored with hetlab (``data/workflows.json``) and
load without it: :data:`STORED` lists them.

>>> g = workflow("montage", 60, seed=0)
>>> len(g), len(g.edges)
(58, 114)
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from hetlab._validate import check_int, check_positive
from hetlab.tasks import Task, TaskGraph

__all__ = ["RECIPES", "MIN_TASKS", "STORED", "workflow", "from_wfcommons"]

#: Recipe name -> the WfCommons recipe class name.
RECIPES = {"montage": "MontageRecipe", "epigenomics": "EpigenomicsRecipe", "seismology": "SeismologyRecipe",
           "blast": "BlastRecipe", "bwa": "BwaRecipe", "cycles": "CyclesRecipe", "genome": "GenomeRecipe",
           "soykb": "SoykbRecipe", "srasearch": "SrasearchRecipe", "rnaseq": "RnaseqRecipe"}

#: The smallest ``num_tasks`` each recipe accepts (its smallest base graph, WfCommons 1.6).
MIN_TASKS = {"montage": 60, "epigenomics": 43, "seismology": 103, "blast": 45, "bwa": 106, "cycles": 69,
             "genome": 54, "soykb": 98, "srasearch": 24, "rnaseq": 65}

MAX_TASKS = 10_000
_STORE = Path(__file__).parents[1] / "data" / "workflows.json"
_EXTRA = "pip install hetlab[workflows]"


@lru_cache(maxsize=1)
def _stored() -> dict[str, Any]:
    return json.loads(_STORE.read_text(encoding="utf-8")) if _STORE.exists() else {}


def _key(recipe: str, num_tasks: int, seed: int) -> str:
    return f"{recipe}-{num_tasks}-{seed}"


#: The ``recipe-num_tasks-seed`` instances stored with hetlab (they load without wfcommons).
STORED = tuple(sorted(_stored()))


def _check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")
    return value


def _wfcommons():
    try:
        import wfcommons  # noqa: F401
        from wfcommons import WorkflowGenerator
        from wfcommons.wfchef import recipes
    except ImportError as exc:
        raise ImportError(f"generating WfCommons workflows needs the optional package wfcommons: {_EXTRA}") from exc
    return WorkflowGenerator, recipes


def _generate(recipe: str, num_tasks: int, seed: int) -> dict[str, Any]:
    """A WfCommons instance as plain data: tasks ``[id, type, runtime s]`` and edges ``[src, dst, MB]``."""
    import random

    import numpy as np

    generator, recipes = _wfcommons()
    cls = getattr(recipes, RECIPES[recipe])
    py_state, np_state = random.getstate(), np.random.get_state()
    try:
        random.seed(seed)
        np.random.seed(seed)
        wf = generator(cls.from_num_tasks(num_tasks)).build_workflow()
    finally:
        random.setstate(py_state)
        np.random.set_state(np_state)
    return _plain(wf)


def _plain(wf) -> dict[str, Any]:
    tasks = [wf.tasks[name] for name in wf.nodes]
    outputs = {t.task_id: {f.file_id: f.size for f in t.output_files} for t in tasks}
    edges = []
    for src, dst in wf.edges:
        child_reads = {f.file_id for f in wf.tasks[dst].input_files}
        size = sum(b for file_id, b in outputs[src].items() if file_id in child_reads)
        edges.append([src, dst, round(size / 1e6, 6)])
    return {"tasks": [[t.task_id, t.name, float(t.runtime)] for t in tasks], "edges": edges}


def _graph(plain: dict[str, Any], reference_speed: float, by_type: bool) -> TaskGraph:
    tasks = [Task(tid, runtime * reference_speed, op=kind if by_type else None)
             for tid, kind, runtime in plain["tasks"]]
    return TaskGraph(tasks, [(a, b, mb) for a, b, mb in plain["edges"]])


def from_wfcommons(instance, *, reference_speed: float = 10.0, by_type: bool = False) -> TaskGraph:
    """Convert a WfCommons ``Workflow`` (e.g. from ``WorkflowGenerator(...).build_workflow()``) to a
    TaskGraph, with the units and assumptions of this module's docstring."""
    reference_speed = check_positive("reference_speed", reference_speed)
    if not all(hasattr(instance, a) for a in ("tasks", "nodes", "edges")):
        raise TypeError(f"instance must be a wfcommons Workflow, got {type(instance).__name__}")
    return _graph(_plain(instance), reference_speed, _check_bool("by_type", by_type))


def workflow(recipe: str = "montage", num_tasks: int | None = None, *, seed: int = 0,
             reference_speed: float = 10.0, by_type: bool = False) -> TaskGraph:
    """A synthetic instance of a real workflow (WfCommons recipe ``recipe``) as a TaskGraph.

    Parameters
    ----------
    recipe: one of :data:`RECIPES` (``"montage"``, the default, ``"epigenomics"``, ``"seismology"``, ...).
    num_tasks: requested size in [``MIN_TASKS[recipe]``, 10000] (default: the smallest); the graph
        has two tasks fewer (WfCommons counts a pseudo source and sink).
    seed: seeds the generator; the same arguments always give the same graph.
    reference_speed: work per second of recorded runtime (see the module docstring).
    by_type: set each task's ``op`` to its WfCommons type (for devices with ``affinity``); by default
        ``op`` is unset, so run time is plain work / speed.
    """
    if not isinstance(recipe, str):
        raise TypeError(f"recipe must be a string, one of {sorted(RECIPES)}, got {type(recipe).__name__} {recipe!r}")
    if recipe not in RECIPES:
        raise ValueError(f"recipe must be one of {sorted(RECIPES)}, got {recipe!r}")
    low = MIN_TASKS[recipe]
    num_tasks = low if num_tasks is None else check_int("num_tasks", num_tasks, low=low, high=MAX_TASKS)
    seed = check_int("seed", seed, low=0, high=2**32 - 1)
    reference_speed = check_positive("reference_speed", reference_speed)
    by_type = _check_bool("by_type", by_type)
    plain = _stored().get(_key(recipe, num_tasks, seed))
    if plain is None:
        plain = _generate(recipe, num_tasks, seed)
    return _graph(plain, reference_speed, by_type)


def _store(instances: list[tuple[str, int, int]]) -> None:
    """Regenerate ``data/workflows.json`` with the given ``(recipe, num_tasks, seed)`` instances
    (maintainers only; needs wfcommons)."""
    data = {_key(*k): _generate(*k) for k in instances}
    _STORE.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    _stored.cache_clear()
