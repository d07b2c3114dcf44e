"""Real scientific workflow shapes as task graphs, from the WfCommons recipes (Coleman et al. 2022).

WfCommons (https://wfcommons.org) ships *recipes* distilled from execution traces of real workflows
(Montage astronomy mosaics, Epigenomics sequencing pipelines, Seismology cross-correlation and
others) and generates synthetic instances of a requested size offline. :func:`workflow` takes the
*shape* of such an instance from WfCommons (which task types, how many, who feeds whom) and draws
every run time and file size itself, inside the range the recipe recorded for that task type.

Why hetlab draws the numbers itself (WfCommons 1.6). A recipe stores, per task type, the smallest and
largest run time seen in the traces and a fitted distribution; ``wfcommons.utils.generate_rvs`` returns
``max(0.1, sample) * max`` with no upper clip. Many fits are unusable that way: ``rdist`` fits with
scale 1e-16 or less are point masses at 1, so every mProject runs the recipe's maximum 1263.481 s and
every fastqSplit 878.473 s on every seed; heavy-tailed ``dweibull`` fits (mConcatFit, mBgModel) give
samples up to thousands of times the recorded maximum (mConcatFit 638.6 s against 12.386 s); ``beta``
fits with most of their mass below 0 return ``0.1 * max`` almost always. (``wfcommons.utils.
best_fit_distribution`` fits each distribution to the bar heights of the normalised histogram, not to the
run times, so even a usable fit gives only a plausible shape.) The rule here, per task type with recorded
range ``[low, high]`` (:func:`runtime_ranges` says which rule each type gets):

- ``"fit"``: the fit is read on the normalised scale ``(x - low) / (high - low)`` (the scale WfCommons'
  fitting uses) and *conditioned on* [0, 1]: ``u`` is drawn uniformly in ``[F(0), F(1)]`` and mapped by
  the fit's inverse CDF, so the shape inside the range is the fit's and nothing falls outside.
- ``"log-uniform"`` when the fit is degenerate: no fit, a point mass (its central 90 %, or that of the
  conditioned fit, spans less than 1 % of the range) or out of range (less than half its probability
  inside [0, 1]).
  Knowing only the range, the logarithm of the run time is drawn uniformly between
  ``log(max(low, high / 1000))`` and ``log(high)``: every decade of the range is as likely as any other,
  which suits run times spanning orders of magnitude (the recorded minimum is often 0, a rounding to the
  millisecond, hence the cut three decades below the maximum).
- ``"constant"`` when ``low == high``.

File sizes (bytes of each output file, per type and extension) follow the same rule. Every sample lies
in its recorded range by construction; the tests check this on every recipe.

What the numbers mean on heterogeneous devices (the assumptions, stated once):

- A task's ``work`` is its run time (seconds on the machine the traces come from) times
  ``reference_speed``. A device of speed ``s`` runs it in ``runtime * reference_speed / s`` seconds,
  so with the default ``reference_speed = 10`` the CPU of :func:`~hetlab.devices.kitchen` (speed 10)
  reproduces the run time and its GPU (speed 20) halves every task. Real accelerators speed
  task types up by very different factors (or not at all); with ``by_type=True`` each task's ``op``
  is its type (``"mProject"``, ...), so a :class:`~hetlab.devices.Device` with ``affinity`` can
  model that. Task names start with the type either way (``mProject_00000001``).
- An edge carries the megabytes of the files the child reads that the parent writes; with a
  :class:`~hetlab.devices.Link` in MB/s the transfer time is in seconds. Files read from outside the
  workflow (its inputs) cost nothing here.
- Instances are deterministic: ``seed`` seeds WfCommons' generator (Python's ``random`` and NumPy's
  global generator, restored afterwards) and hetlab's own draws (a separate NumPy generator).
  WfCommons counts two pseudo-tasks (source and sink) in ``num_tasks``, so the graph has a few tasks
  fewer than asked for; each recipe has a smallest size, its smallest recorded base graph.

Generating needs the optional ``wfcommons`` package (``pip install hetlab[workflows]``), whose import
takes several seconds. Montage and Epigenomics at 60 tasks (seeds 0-19) and Seismology at 103 (seed 0)
are stored with hetlab (``data/workflows.json``) and load without it, as do the recorded ranges of
those recipes and the run times of the real traces (:func:`trace_runtimes`).

>>> g = workflow("montage", 60, seed=0)
>>> len(g), len(g.edges)
(58, 114)
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from hetlab._validate import check_bool, check_choice, check_fields, check_int, check_positive
from hetlab.tasks import Task, TaskGraph

__all__ = ["TypeRange", "TraceRuntimes", "workflow", "runtime_ranges", "trace_runtimes"]

#: Recipe name -> the WfCommons recipe class name.
_RECIPES = {"montage": "MontageRecipe", "epigenomics": "EpigenomicsRecipe", "seismology": "SeismologyRecipe",
            "blast": "BlastRecipe", "bwa": "BwaRecipe", "cycles": "CyclesRecipe", "genome": "GenomeRecipe",
            "soykb": "SoykbRecipe", "srasearch": "SrasearchRecipe", "rnaseq": "RnaseqRecipe"}

#: The smallest ``num_tasks`` each recipe accepts (its smallest base graph, WfCommons 1.6).
_MIN_TASKS = {"montage": 60, "epigenomics": 43, "seismology": 103, "blast": 45, "bwa": 106, "cycles": 69,
              "genome": 54, "soykb": 98, "srasearch": 24, "rnaseq": 65}

_MAX_TASKS = 10_000
#: A conditioned fit whose central 90 % spans less than this share of the range is a point mass.
_POINT_MASS = 0.01
#: A fit with less than this probability inside the recorded range is out of range.
_IN_RANGE = 0.5
#: The log-uniform draw starts at most this many decades below the recorded maximum.
_DECADES = 3
_STORE = Path(__file__).parents[1] / "data" / "workflows.json"
_EXTRA = "pip install hetlab[workflows]"


_RULES = ("fit", "log-uniform", "constant")
_WHY = ("", "no fit", "point mass", "out of range")


def _check_order(record: Any, *names: str) -> None:
    """Each named field at least the one before it (``low <= median <= high``)."""
    for before, name in zip(names, names[1:]):
        if getattr(record, name) < getattr(record, before):
            raise ValueError(f"{name} must be >= {before}={getattr(record, before):g}, got {getattr(record, name):g}")


@dataclass(frozen=True)
class TypeRange:
    """A task type's recorded run-time range in seconds and how :func:`workflow` samples inside it.

    ``fit`` is the name of WfCommons' fitted distribution (``None`` if it has none); ``rule`` is
    ``"fit"`` (the fit conditioned on the range), ``"log-uniform"`` (the fit is degenerate: ``why``
    says ``"no fit"``, ``"point mass"`` or ``"out of range"``) or ``"constant"``; ``wfcommons_median``
    is the median WfCommons 1.6 itself would draw, ``median(max(0.1, X)) * high``.
    """

    low: float
    high: float
    fit: str | None
    rule: str
    why: str
    wfcommons_median: float

    def __post_init__(self) -> None:
        check_fields(self)
        check_choice("rule", self.rule, _RULES)
        check_choice("why", self.why, _WHY)
        _check_order(self, "low", "high")


@dataclass(frozen=True)
class TraceRuntimes:
    """Run times in seconds of one task type over the real traces of a workflow (WfInstances)."""

    traces: int
    tasks: int
    low: float
    median: float
    high: float

    def __post_init__(self) -> None:
        check_fields(self)
        _check_order(self, "low", "median", "high")


@lru_cache(maxsize=1)
def _stored() -> dict[str, Any]:
    if not _STORE.exists():
        return {"instances": {}, "ranges": {}, "traces": {}}
    return json.loads(_STORE.read_text(encoding="utf-8"))


def _key(recipe: str, num_tasks: int, seed: int) -> str:
    return f"{recipe}-{num_tasks}-{seed}"


def _wfcommons():
    try:
        import wfcommons  # noqa: F401
        from wfcommons import WorkflowGenerator
        from wfcommons.wfchef import recipes
    except ImportError as exc:
        raise ImportError(f"generating WfCommons workflows needs the optional package wfcommons: {_EXTRA}") from exc
    return WorkflowGenerator, recipes


def _recipe_stats(recipe: str) -> dict[str, Any]:
    """The recipe's ``task_type_stats.json`` (needs wfcommons)."""
    _, recipes = _wfcommons()
    path = Path(recipes.__file__).parent / recipe / "task_type_stats.json"
    return json.loads(path.read_text(encoding="utf-8"))


class _Sampler:
    """Draws inside one recorded range ``[low, high]`` by the module's rule (see its docstring)."""

    def __init__(self, low: float, high: float, distribution: Any):
        import numpy as np
        import scipy.stats

        self.low, self.high = float(low), float(high)
        self.distribution = distribution if isinstance(distribution, dict) else None
        self.fit = self.distribution["name"] if self.distribution else None
        self.rule, self.why, self.frozen = "log-uniform", "no fit", None
        if self.low == self.high:
            self.rule, self.why = "constant", ""
            return
        if self.fit is not None:
            params = distribution["params"]
            frozen = getattr(scipy.stats, self.fit)(*params[:-2], loc=params[-2], scale=params[-1])
            with np.errstate(all="ignore"):
                f0, f1 = float(frozen.cdf(0.0)), float(frozen.cdf(1.0))
                spread = np.diff(frozen.ppf([0.05, 0.95]))[0]
                inside = np.diff(frozen.ppf([f0 + 0.05 * (f1 - f0), f0 + 0.95 * (f1 - f0)]))[0]
            if not spread >= _POINT_MASS:           # NaN (a failed ppf) counts as degenerate too
                self.why = "point mass"
            elif not f1 - f0 >= _IN_RANGE:
                self.why = "out of range"
            elif not inside >= _POINT_MASS:
                self.why = "point mass"
            else:
                self.rule, self.why, self.frozen, self.cdf_range = "fit", "", frozen, (f0, f1)
        self.log_low = math.log(max(self.low, self.high * 10.0 ** -_DECADES))

    def draw(self, rng, size: int):
        """``size`` samples in ``[low, high]``."""
        import numpy as np

        if self.rule == "constant":
            return np.full(size, self.low)
        if self.rule == "fit":
            f0, f1 = self.cdf_range
            u = np.clip(self.frozen.ppf(rng.uniform(f0, f1, size)), 0.0, 1.0)
            x = self.low + u * (self.high - self.low)
        else:
            x = np.exp(rng.uniform(self.log_low, math.log(self.high), size))
        return np.clip(x, self.low, self.high)

    def wfcommons_median(self, seed: int = 0) -> float:
        """The median of what WfCommons 1.6 draws: ``max(0.1, X) * high`` (20,000 draws)."""
        import numpy as np
        import scipy.stats

        if self.fit is None:
            return self.low                 # generate_rvs returns the minimum when there is no fit
        params = self.distribution["params"]
        with np.errstate(all="ignore"):
            x = getattr(scipy.stats, self.fit).rvs(*params[:-2], loc=params[-2], scale=params[-1], size=20_000,
                                                   random_state=np.random.default_rng(seed))
        return float(np.median(np.maximum(0.1, x) * self.high))


def _sampler(entry: dict[str, Any]) -> _Sampler:
    return _Sampler(entry["min"], entry["max"], entry.get("distribution"))


def _generate(recipe: str, num_tasks: int, seed: int) -> dict[str, Any]:
    """An instance as plain data: tasks ``[id, type, runtime s]`` and edges ``[src, dst, MB]``; the shape
    from WfCommons, the run times and file sizes from :class:`_Sampler`."""
    import random

    import numpy as np

    generator, recipes = _wfcommons()
    cls = getattr(recipes, _RECIPES[recipe])
    py_state, np_state = random.getstate(), np.random.get_state()
    try:
        random.seed(seed)
        np.random.seed(seed)
        wf = generator(cls.from_num_tasks(num_tasks)).build_workflow()
    finally:
        random.setstate(py_state)
        np.random.set_state(np_state)
    return _plain(wf, _recipe_stats(recipe), np.random.default_rng(seed))


def _file_kind(file_id: str, recipe: dict[str, Any]) -> str:
    """The recipe key a generated file was drawn from: WfCommons names it ``uuid + key`` (``.fits``,
    ``None``, ...), so the longest key the name ends with."""
    return max((k for k in recipe if file_id.endswith(k)), key=len)


def _plain(wf, stats: dict[str, Any], rng) -> dict[str, Any]:
    tasks = [wf.tasks[name] for name in wf.nodes]
    runtimes: dict[str, float] = {}
    for kind in sorted({t.name for t in tasks}):      # one draw per type, in a fixed order
        ids = [t.task_id for t in tasks if t.name == kind]
        runtimes.update(zip(ids, _sampler(stats[kind]["runtime"]).draw(rng, len(ids)).tolist()))
    outputs: dict[str, dict[str, float]] = {}
    for t in tasks:
        recipe = stats[t.name]["output"]
        outputs[t.task_id] = {f.file_id: float(_sampler(recipe[_file_kind(f.file_id, recipe)]).draw(rng, 1)[0])
                              for f in t.output_files}
    edges = []
    for src, dst in wf.edges:
        child_reads = {f.file_id for f in wf.tasks[dst].input_files}
        size = sum(b for file_id, b in outputs[src].items() if file_id in child_reads)
        edges.append([src, dst, round(size / 1e6, 6)])
    return {"tasks": [[t.task_id, t.name, round(runtimes[t.task_id], 6)] for t in tasks], "edges": edges}


def _graph(plain: dict[str, Any], reference_speed: float, by_type: bool) -> TaskGraph:
    tasks = [Task(tid, runtime * reference_speed, op=kind if by_type else None)
             for tid, kind, runtime in plain["tasks"]]
    return TaskGraph(tasks, [(a, b, mb) for a, b, mb in plain["edges"]])


def _check_recipe(recipe: Any) -> str:
    if not isinstance(recipe, str):
        raise TypeError(f"recipe must be a string, one of {sorted(_RECIPES)}, got {type(recipe).__name__} {recipe!r}")
    if recipe not in _RECIPES:
        raise ValueError(f"recipe must be one of {sorted(_RECIPES)}, got {recipe!r}")
    return recipe


def workflow(recipe: str = "montage", num_tasks: int | None = None, *, seed: int = 0,
             reference_speed: float = 10.0, by_type: bool = False) -> TaskGraph:
    """A synthetic instance of a real workflow (WfCommons recipe ``recipe``) as a TaskGraph, with run
    times and file sizes drawn inside each task type's recorded range (see the module docstring).

    Parameters
    ----------
    recipe: ``"montage"`` (the default), ``"epigenomics"``, ``"seismology"``, ``"blast"``, ``"bwa"``,
        ``"cycles"``, ``"genome"``, ``"soykb"``, ``"srasearch"`` or ``"rnaseq"``.
    num_tasks: requested size, from the recipe's smallest base graph (60 for Montage, 43 for Epigenomics)
        to 10000 (default: the smallest); the graph has two tasks fewer (WfCommons counts a pseudo
        source and sink).
    seed: seeds the generator; the same arguments always give the same graph.
    reference_speed: work per second of run time (see the module docstring).
    by_type: set each task's ``op`` to its WfCommons type (for devices with ``affinity``); by default
        ``op`` is unset, so run time is plain work / speed.

    >>> g = workflow("epigenomics", 60, seed=3, by_type=True)
    >>> sorted({t.op for t in g.tasks})[:3], len(g)
    (['chr21', 'fast2bfq', 'fastqSplit'], 57)
    """
    recipe = _check_recipe(recipe)
    low = _MIN_TASKS[recipe]
    num_tasks = low if num_tasks is None else check_int("num_tasks", num_tasks, low=low, high=_MAX_TASKS)
    seed = check_int("seed", seed, low=0, high=2**32 - 1)
    reference_speed = check_positive("reference_speed", reference_speed)
    by_type = check_bool("by_type", by_type)
    plain = _stored()["instances"].get(_key(recipe, num_tasks, seed))
    if plain is None:
        plain = _generate(recipe, num_tasks, seed)
    return _graph(plain, reference_speed, by_type)


def _ranges(recipe: str) -> dict[str, dict[str, Any]]:
    out = {}
    for kind, entry in sorted(_recipe_stats(recipe).items()):
        s = _sampler(entry["runtime"])
        out[kind] = {"low": s.low, "high": s.high, "fit": s.fit, "rule": s.rule, "why": s.why,
                     "wfcommons_median": round(s.wfcommons_median(), 6)}
    return out


def runtime_ranges(recipe: str = "montage") -> dict[str, TypeRange]:
    """Task type -> its recorded run-time range (seconds), WfCommons' fit and the rule :func:`workflow`
    samples it by. Stored for Montage, Epigenomics and Seismology; the others need wfcommons.

    mProject's fit is a point mass at the recipe's maximum, so WfCommons 1.6 draws 1263.481 s every time;
    hetlab draws it log-uniformly in [1.263, 1263.481] s:

    >>> r = runtime_ranges("montage")["mProject"]
    >>> r.high, r.fit, r.rule, r.why, r.wfcommons_median
    (1263.481, 'rdist', 'log-uniform', 'point mass', 1263.481)
    """
    recipe = _check_recipe(recipe)
    table = _stored()["ranges"].get(recipe) or _ranges(recipe)
    return {kind: TypeRange(**row) for kind, row in table.items()}


def trace_runtimes(recipe: str = "montage") -> dict[str, TraceRuntimes]:
    """Task type -> its run times over the real traces of the recipe's workflow: the WfInstances
    repository (https://github.com/wfcommons/WfInstances, ``pegasus/``, commit f085867f2f9d), from whose
    traces WfCommons built its recipes. Epigenomics: all 26 traces; Montage: 13 of 17 (Chameleon, 2MASS
    and DSS surveys; the four largest were not in the snapshot read, so Montage's ranges are narrower
    than its recipe's).

    >>> t = trace_runtimes("epigenomics")["fastqSplit"]
    >>> t.traces, t.tasks, t.low, t.high
    (26, 98, 1.344, 878.473)
    """
    recipe = _check_recipe(recipe)
    table = _stored()["traces"].get(recipe)
    if table is None:
        raise ValueError(f"recipe must be one with stored traces, {sorted(_stored()['traces'])}, got {recipe!r}")
    return {kind: TraceRuntimes(**row) for kind, row in table.items()}


def _store(instances: list[tuple[str, int, int]], traces: dict[str, Any] | None = None) -> None:
    """Regenerate ``data/workflows.json`` with the given ``(recipe, num_tasks, seed)`` instances, the
    ranges of their recipes and (if given, else kept) the trace statistics (maintainers only; needs
    wfcommons; see tools/record_workflows.py)."""
    old = _stored()
    data = {"instances": {_key(*k): _generate(*k) for k in instances},
            "ranges": {r: _ranges(r) for r in sorted({k[0] for k in instances})},
            "traces": old.get("traces", {}) if traces is None else traces}
    _STORE.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    _stored.cache_clear()
