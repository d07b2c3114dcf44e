"""Stored readings of real runs, shipped as data: a tiled Cholesky on an H200 + 16 CPU cores (2026-12-04).

``hetlab/data/readings/<machine>/`` holds the JSON files as measured (README there). This module reads
them: :func:`reading` returns a file's JSON, :func:`case_of` the inputs a prediction may use (``n``, ``b``,
``op_costs``, ``tile_copy_s`` and the CPU worker counts, nothing measured on the run), :func:`measured_runs`
every stored makespan with the plan that produced it, and :func:`trace_schedule` a stored trace as a
:class:`~hetlab.schedule.Schedule` (for a Gantt chart beside the simulated plan).

``hetlab/data/readings/h200-2026-12-04b/`` (:data:`HOLDOUT`) holds readings the machine profile never saw: new
tile sizes and worker counts, measured by ``tools/measure_cholesky_gpu.py`` with hetlab's own executor (numpy CPU
tiles); ``h200-2026-12-04c/`` (:data:`TORCH_HOLDOUT`) the same configurations with torch CPU tiles, like the
calibration readings, each plan's median of interleaved runs.
:func:`measured_makespans` gives a reading's measured makespans in the shape of the predictions, and
:func:`compare_readings` puts every prediction beside its measurement.

>>> case, workers = case_of(reading("h200_hetero"))
>>> case.n, case.b, workers
(3072, 256, [4, 8, 15])
>>> len(measured_runs())
28
"""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from hetlab._validate import check_bool, check_choice, check_int, check_nonnegative, check_positive, check_str, describe
from hetlab.devices import Device
from hetlab.schedule import Placement, Schedule, from_placements
from hetlab.tasks import TaskGraph
from hetlab.workloads.cholesky import CholeskyCase

__all__ = ["MACHINE", "HOLDOUT", "TORCH_HOLDOUT", "reading_names", "reading", "case_of", "read_case", "MeasuredRun",
           "measured_runs", "predict_run", "measured_makespans", "compare_readings", "trace_schedule"]

#: The machine whose readings ship with hetlab: one NVIDIA H200 + 16 CPU cores, measured on 2026-12-04.
MACHINE = "h200-2026-12-04"
#: Hold-out readings of the same kind of machine (2026-12-04, a later lease): configurations the profile never saw.
HOLDOUT = "h200-2026-12-04b"
#: The same configurations again (a third lease), CPU tiles in torch with one thread as in the calibration readings.
TORCH_HOLDOUT = "h200-2026-12-04c"
#: The plans a reading in the format of h200_hetero.json may measure per worker count, as predictions name them.
_PLANS = ("cpu_only", "hybrid_heft", "hybrid_dispatch_aware")
#: The readings' names for the per-op costs of each device kind.
_COST_KEYS = {"CPU": "cpu1_s", "GPU": "gpu_s"}


def _folder(machine: str):
    root = resources.files("hetlab") / "data" / "readings"
    names = sorted(p.name for p in root.iterdir() if p.is_dir())
    if not isinstance(machine, str) or machine not in names:
        raise ValueError(f"machine must be one of the stored machines {names}, got {describe(machine)}")
    return root / machine


def reading_names(machine: str = MACHINE) -> list[str]:
    """The stored reading files of ``machine`` (without ``.json``).

    >>> reading_names(HOLDOUT)
    ['cuda_graph', 'n3072_b256', 'n4096_b256', 'n8192_b512']
    """
    return sorted(p.name[:-5] for p in _folder(machine).iterdir() if p.name.endswith(".json"))


def reading(name: str, machine: str = MACHINE) -> dict:
    """The JSON of stored reading ``name`` (see :func:`reading_names`)."""
    names = reading_names(machine)
    if not isinstance(name, str) or name not in names:
        raise ValueError(f"name must be one of {names}, got {describe(name)}")
    return json.loads((_folder(machine) / f"{name}.json").read_text(encoding="utf-8"))


def _case(section: Mapping, where: str) -> CholeskyCase:
    for key in ("n", "b", "op_costs", "tile_copy_s"):
        if key not in section:
            raise ValueError(f"{where} must give {key!r} (a reading in the format of h200_hetero.json)")
    costs = section["op_costs"]
    if not isinstance(costs, Mapping):
        raise ValueError(f"{where}: op_costs must map each tile kernel to its costs, got {describe(costs)}")
    table = {}
    for op, row in costs.items():
        if not isinstance(row, Mapping) or not all(k in row for k in _COST_KEYS.values()):
            raise ValueError(f"{where}: op_costs[{op!r}] must give 'cpu1_s' and 'gpu_s', got {describe(row)}")
        table[op] = {kind: row[key] for kind, key in _COST_KEYS.items()}
    try:
        return CholeskyCase(section["n"], section["b"], table, section["tile_copy_s"],
                            inputs_on_host=section.get("inputs_on_host", False))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: {exc}") from None


def case_of(data: Mapping) -> tuple[CholeskyCase, list[int]]:
    """The prediction inputs of a reading in the format of ``h200_hetero.json``: the :class:`CholeskyCase`
    (``n``, ``b``, ``op_costs``, ``tile_copy_s``, and ``inputs_on_host`` if the reading says the matrix started in
    host memory; absent: on the GPU) and the CPU worker counts W of its ``cpuW`` sections, in
    increasing order. No measured makespan or trace is read. The object may be the file's top level (one
    section holding ``n``) or that section itself."""
    if not isinstance(data, Mapping):
        raise ValueError(f"data (the reading) must be a JSON object, got {describe(data)}")
    if "n" not in data:
        inner = [v for v in data.values() if isinstance(v, Mapping) and "n" in v]
        if len(inner) != 1:
            raise ValueError("data (the reading) must hold one section with 'n', 'b', 'op_costs' and "
                             f"'tile_copy_s' (the format of h200_hetero.json), got keys {sorted(map(str, data))[:8]}")
        data = inner[0]
    case = _case(data, "data (the reading)")
    workers = sorted(int(k[3:]) for k in data if isinstance(k, str) and k.startswith("cpu") and k[3:].isdigit()
                     and 1 <= int(k[3:]) <= 1000)
    if not workers:
        raise ValueError("data (the reading) must have at least one section 'cpuW' (W CPU workers), e.g. 'cpu8'")
    return case, workers


def read_case(path: str | Path) -> tuple[CholeskyCase, list[int]]:
    """:func:`case_of` the JSON file at ``path`` (ValueError, saying why, if it cannot be read or is not a reading)."""
    if not isinstance(path, (str, Path)) or not str(path):
        raise TypeError(f"path must be a file path, got {describe(path)}")
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"path {path} is not a text file") from None
    except OSError as exc:
        raise ValueError(f"path {path} cannot be read: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"path {path} is not JSON: {exc.msg} at line {exc.lineno}") from None
    try:
        return case_of(data)
    except ValueError as exc:
        raise ValueError(f"path {path}: {exc}") from None


@dataclass(frozen=True)
class MeasuredRun:
    """One stored makespan: ``plan`` is ``"gpu_only"``, ``"cpu_only"``, ``"hybrid_heft"`` or
    ``"hybrid_heft_overhead_aware"`` (HEFT on CPU times times ``cpu_scale`` and GPU times plus
    ``gpu_extra_s``); ``mode`` says whether the GPU thread synchronised after every task (``"sync"``) or
    not (``"async"``); ``simulated_s`` is HEFT's own prediction, as stored."""

    source: str
    case: CholeskyCase
    plan: str
    cpu_workers: int
    mode: str
    measured_s: float
    simulated_s: float
    cpu_scale: float = 1.0
    gpu_extra_s: float = 0.0

    def __post_init__(self) -> None:
        check_str("source", self.source)
        if not isinstance(self.case, CholeskyCase):
            raise TypeError(f"case must be a CholeskyCase, got {describe(self.case)}")
        check_choice("plan", self.plan, ("gpu_only", "cpu_only", "hybrid_heft", "hybrid_heft_overhead_aware"))
        check_choice("mode", self.mode, ("sync", "async"))
        low = 1 if self.plan != "gpu_only" else 0
        object.__setattr__(self, "cpu_workers", check_int("cpu_workers", self.cpu_workers, low=low, high=1000))
        for name in ("measured_s", "simulated_s", "cpu_scale"):
            object.__setattr__(self, name, check_positive(name, getattr(self, name)))
        object.__setattr__(self, "gpu_extra_s", check_nonnegative("gpu_extra_s", self.gpu_extra_s))

    def devices(self) -> list[Device]:
        """The devices of the run: the GPU unless CPU-only, and the CPU workers."""
        return self.case.devices(self.cpu_workers, gpu=self.plan != "cpu_only")

    def plan_schedule(self) -> Schedule:
        """The HEFT plan the run executed (the order each device ran its tasks in), on the true run times."""
        from hetlab.schedulers.heft import heft

        devices = self.devices()
        believed = heft(self.case.graph(devices, cpu_scale=self.cpu_scale, gpu_extra_s=self.gpu_extra_s), devices)
        return Schedule(self.case.graph(devices), devices, believed.device_of, believed.start, believed.end, "HEFT")


def measured_runs(machine: str = MACHINE) -> list[MeasuredRun]:
    """Every stored Cholesky makespan of ``machine``, file by file (h200, h200_hetero, async_b256, async_b512)."""
    runs: list[MeasuredRun] = []
    for key, sec in reading("h200", machine)["cholesky"].items():
        n, b = (int(part[1:]) for part in key.split("_"))       # sections are named "n4096_b512"
        case = _case({**sec, "n": n, "b": b}, f"h200.json cholesky.{key}")
        for plan, r in sec["runs"].items():
            workers = 0 if plan == "gpu_only" else sec["cpu_workers"]
            runs.append(MeasuredRun(f"h200.json {key}", case, plan, workers, "sync", r["measured_s"],
                                    r["simulated_s"]))
    het = reading("h200_hetero", machine)["hetero"]
    case, workers = case_of(het)
    runs.append(MeasuredRun("h200_hetero.json", case, "gpu_only", 0, "sync", het["gpu_only"]["measured_s"],
                            het["gpu_only"]["simulated_s"]))
    for w in workers:
        sec = het[f"cpu{w}"]
        for plan in ("cpu_only", "hybrid_heft", "hybrid_heft_overhead_aware"):
            refit = plan == "hybrid_heft_overhead_aware"
            runs.append(MeasuredRun("h200_hetero.json", case, plan, w, "sync", sec[plan]["measured_s"],
                                    sec[plan]["simulated_s"], sec["cpu_slowdown_median"] if refit else 1.0,
                                    het["gpu_fit"]["mean_gap_between_tasks_s"] if refit else 0.0))
    for name in ("async_b256", "async_b512"):
        sec = reading(name, machine)["async"]
        case = _case(sec, f"{name}.json")
        for mode in ("sync", "async"):
            r = sec[mode]
            runs.append(MeasuredRun(f"{name}.json", case, "gpu_only", 0, mode, r["gpu_only"], r["gpu_only_sim"]))
            for w in sorted(int(k[len("hybrid_cpu"):]) for k in r if k.startswith("hybrid_cpu") and k[-1].isdigit()):
                runs.append(MeasuredRun(f"{name}.json", case, "hybrid_heft", w, mode, r[f"hybrid_cpu{w}"],
                                        r[f"hybrid_cpu{w}_sim"]))
    return runs


def predict_run(run: MeasuredRun, profile=None) -> float:
    """The host model's makespan (seconds) for the plan ``run`` executed, from its case and the machine profile
    (default: :func:`~hetlab.models.host.load_profile`) alone. The model has one executor, the synchronising
    one; an ``"async"`` run is predicted as if it synchronised."""
    from hetlab.models.host import load_profile, simulate_host

    if not isinstance(run, MeasuredRun):
        raise TypeError(f"run must be a MeasuredRun (see measured_runs()), got {describe(run)}")
    return simulate_host(run.plan_schedule(), load_profile() if profile is None else profile).makespan


def measured_makespans(data: Mapping) -> dict:
    """The measured makespans (seconds) of a reading in the format of ``h200_hetero.json`` (the file's top level
    or its section), keyed as :func:`~hetlab.workloads.cholesky.predict_makespans` keys its predictions:
    ``{"gpu_only": s, "cpu<W>": {plan: s, ...}, ...}``, for the plans ``"cpu_only"``, ``"hybrid_heft"`` and
    ``"hybrid_dispatch_aware"`` that the reading measured (others, and plans without ``measured_s``, are left out).

    >>> round(measured_makespans(reading("h200_hetero"))["cpu8"]["hybrid_heft"], 4)
    0.082
    """
    if not isinstance(data, Mapping):
        raise ValueError(f"data (the reading) must be a JSON object, got {describe(data)}")
    _, workers = case_of(data)                       # checks the format, finds the section and the cpuW keys
    section = data if "n" in data else next(v for v in data.values() if isinstance(v, Mapping) and "n" in v)

    def seconds(entry, where: str):
        if isinstance(entry, Mapping) and "measured_s" in entry:
            return check_positive(f"{where}['measured_s']", entry["measured_s"])
        return None

    out: dict = {}
    gpu = seconds(section.get("gpu_only"), "gpu_only")
    if gpu is not None:
        out["gpu_only"] = gpu
    for w in workers:
        part = section[f"cpu{w}"]
        row = {plan: s for plan in _PLANS
               if isinstance(part, Mapping) and (s := seconds(part.get(plan), f"cpu{w}.{plan}")) is not None}
        if row:
            out[f"cpu{w}"] = row
    return out


def compare_readings(machine: str = HOLDOUT, profile=None, *, first_copy: bool = True) -> list[dict]:
    """Every measured makespan of ``machine``'s readings in the format of ``h200_hetero.json`` beside the host
    model's prediction, one dict per plan: ``source`` (file), ``n``, ``b``, ``plan``, ``cpu_workers`` (0 for
    GPU-only), ``predicted_s``, ``measured_s`` and ``error`` (predicted / measured - 1); a dispatch-aware row also
    has ``cpu_workers_used``, the CPU workers its plan actually gave tasks to (0: it ran the GPU-only plan).

    The predictions are :func:`~hetlab.workloads.cholesky.predict_makespans` of the reading's inputs alone
    (:func:`case_of`) with ``profile`` (default: :func:`~hetlab.models.host.load_profile`); a measured makespan
    never enters a prediction. A measured dispatch-aware plan is predicted as the plan that ran: HEFT on the GPU and
    the ``cpu_workers_used`` it chose on the device (the planner here may choose otherwise). Plans a prediction does
    not cover (a refitted HEFT) and plans not run again because they equal another (``same_plan_as``) are left out.
    ``first_copy=False`` leaves out the first copy of each tile to the GPU even where a reading says its matrix
    started in host memory: the model as it was before it had that term (:data:`HOLDOUT` was predicted with it).

    >>> rows = compare_readings()
    >>> len(rows), sorted({(r["n"], r["b"]) for r in rows})
    (45, [(3072, 256), (4096, 256), (8192, 512)])
    >>> len(compare_readings(TORCH_HOLDOUT))      # the dispatch-aware plan ran as the GPU-only one: 3 + 2 x 14
    31
    """
    from hetlab.models.host import HostProfile, load_profile
    from hetlab.workloads.cholesky import predict_makespans

    profile = load_profile() if profile is None else profile
    if not isinstance(profile, HostProfile):
        raise TypeError(f"profile must be a HostProfile (see hetlab.models.host.load_profile), got {describe(profile)}")
    first_copy = check_bool("first_copy", first_copy)
    rows = []
    for name in reading_names(machine):
        data = reading(name, machine)
        try:
            case, workers = case_of(data)
        except ValueError:                           # another kind of file (a calibration, CUDA graphs)
            continue
        if not first_copy:
            case = dataclasses.replace(case, inputs_on_host=False)
        predicted = predict_makespans(case, workers, profile)
        measured = measured_makespans(data)
        section = data if "n" in data else next(v for v in data.values() if isinstance(v, Mapping) and "n" in v)
        for w in workers:
            ran = (section.get(f"cpu{w}") or {}).get("hybrid_dispatch_aware") or {}
            if "measured_s" in ran and "cpu_workers_used" in ran:
                predicted[f"cpu{w}"]["hybrid_dispatch_aware"] = _predict_heft(case, ran["cpu_workers_used"], profile)
        cells = [("gpu_only", 0, measured.get("gpu_only"), predicted["gpu_only"])]
        cells += [(plan, w, measured.get(f"cpu{w}", {}).get(plan), predicted[f"cpu{w}"][plan])
                  for w in workers for plan in _PLANS]
        for plan, w, m, guess in cells:
            if m is None:
                continue
            rows.append({"source": f"{name}.json", "n": case.n, "b": case.b, "plan": plan, "cpu_workers": w,
                         "predicted_s": guess, "measured_s": m, "error": guess / m - 1})
            used = (section.get(f"cpu{w}") or {}).get(plan, {}) if plan == "hybrid_dispatch_aware" else {}
            if "cpu_workers_used" in used:
                rows[-1]["cpu_workers_used"] = used["cpu_workers_used"]
    return rows


def _predict_heft(case: CholeskyCase, cpu_workers: int, profile) -> float:
    """The host model's makespan of HEFT's plan on the GPU and ``cpu_workers`` CPU workers."""
    from hetlab.models.host import simulate_host
    from hetlab.schedulers.heft import heft

    devices = case.devices(check_int("cpu_workers_used", cpu_workers, low=0, high=1000))
    return simulate_host(heft(case.graph(devices), devices), profile, host_inputs=case.host_inputs()).makespan


def trace_schedule(graph: TaskGraph, devices: Sequence[Device], trace: Sequence, policy: str = "measured") -> Schedule:
    """A stored trace, rows ``[task, device, start, end]`` (seconds), as a Schedule on ``devices``.

    >>> from hetlab.workloads.cholesky import cholesky_devices, cholesky_graph
    >>> s = trace_schedule(cholesky_graph(1), cholesky_devices(0), [["POTRF_0", "GPU", 0.1, 0.3]])
    >>> round(s.makespan, 3), s.policy
    (0.3, 'measured')
    """
    if isinstance(trace, (str, bytes)) or not isinstance(trace, Sequence):
        raise TypeError(f"trace must be a list of [task, device, start, end] rows, got {describe(trace)}")
    check_str("policy", policy)
    rows = []
    for k, row in enumerate(trace):
        if not (isinstance(row, Sequence) and not isinstance(row, str) and len(row) == 4):
            raise ValueError(f"trace[{k}] must be [task, device, start, end], got {describe(row)}")
        try:
            rows.append(Placement(*row))
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"trace[{k}]: {exc}") from None
    try:
        return from_placements(graph, devices, rows, policy)
    except ValueError as exc:      # a trace of another graph: unknown or missing tasks
        raise ValueError(f"trace: {exc}") from None
