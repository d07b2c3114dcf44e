"""The bad-input contract, driven over the whole public API and the command line (issue 11).

Contract (RULES.md / STYLE.md): every public function returns a correct value, or raises ValueError/TypeError
whose message names the parameter (and, for a number, its value) -- never NaN/inf/negative nonsense, a silently
accepted bad value, a hang, or another exception type from deep inside the code.

What is driven
    Every callable listed in ``hetlab.__all__`` and in the ``__all__`` of every public ``hetlab.<module>``
    (discovered with pkgutil, so new modules are covered as soon as they list ``__all__``); classes are driven
    through their constructor and, on an instance built from valid arguments, through every public method.
    Exception and warning classes are not driven (they are raised, not called by users).

How
    1. A deterministic sweep: for each parameter, a valid baseline call with that one parameter replaced by each
       of ``BAD`` (NaN, +-inf, negatives, zero, 1e300, 1e-300, 10**12, None, True, text, empty and bad lists,
       ``{}``, ``object()``, a non-integral float).
    2. A property-based pass (hypothesis, derandomized, bounded examples): several parameters at once get random
       floats (NaN/inf/huge/tiny/negative), huge integers, None, booleans, text and lists of floats.
    Every call runs under a 5 s alarm, so a hang is a failure, not a stuck suite.

Fuzz size: ``test_zz_fuzz_size`` prints the number of calls and callables (run with ``-s``) and asserts a floor.
On 2 December 2026: 222 callables, 15,100 calls (13,600 one-parameter sweep calls and 1,500 hypothesis calls) and
132 command lines; about 50 s wall (28 s CPU) on the shared 2-core machine.
"""
from __future__ import annotations

import dataclasses
import importlib
import inspect
import io
import math
import numbers
import os
import pkgutil
import re
import signal
import tempfile
import warnings
from collections import Counter
from collections.abc import Mapping
from contextlib import redirect_stderr, redirect_stdout
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import hetlab

# --- what is driven ----------------------------------------------------------------------------------------------

#: Modules the issue names; discovery must find each with an ``__all__`` (others are picked up automatically).
NAMED_MODULES = {"formulas", "devices", "tasks", "schedule", "schedulers", "models.pipelines", "workloads",
                 "book.quiz", "book.progress", "real.measure", "real.execute", "plotting", "widgets"}

#: Not driven blindly because calling them has side effects; each has hand-written cases (below, or in the file
#: named). Matched by the function's own name, wherever it is defined (a function that moves stays excluded).
def _handovers() -> dict:
    return {"released": ((8e-4,), (6e-4,), (1e-3,)), "queued": ((9e-5,), (8e-5,), (1e-4,)),
            "stretch": ((1e-4,), (8e-5,), (9e-5,))}


def _pool_simulation():
    """A central-queue simulation on identical workers, as A1.4's pool (dispatch_schedule needs identical ones)."""
    from hetlab.devices import identical
    from hetlab.schedulers import central_queue

    return central_queue(_fixtures()["graph"], identical(2), ready="fifo")


def _pairs() -> list:      # 19 pairs: the fewest a 90% band takes (readings.a1_band.enough_pairs)
    return [(1e-3, 1e-3 * (0.8 + 0.025 * k)) for k in range(19)]


def _prediction():
    from hetlab.book.readings.a1 import Prediction

    return Prediction(0.004, 0.002, 0.001, 0.003, 0.9, 3, 0, 40, (0.5, 1.5))


def _costs(released: float):
    from hetlab.book.readings.a1_calibration import Costs

    return Costs(released, released / 10, released / 10)


SIDE_EFFECTS = {
    "main": "book.cli.main parses sys.argv and prints; driven below with argv lists",
    "gil_experiment": "real.experiments.gil_experiment starts pools (about 1 s); tests/lib/real/test_experiments.py",
    "plan_runs": "real.experiments.plan_runs starts pools; tests/lib/real/test_experiments.py drives it",
    "rounds_sweep": "real.experiments.rounds_sweep starts a process pool; tests/lib/real/test_experiments.py drives it",
    "u_curve_sweep": "real.experiments.u_curve_sweep starts a thread pool (1-3 s); tests/lib/real/test_experiments.py",
    "calibrate": "real.measure.calibrate measures the machine for about 2 s and writes a cache file",
    "handovers": "real.measure.handovers starts process pools and runs small graphs (about 1 s); its doctest and "
                 "tests/chapters/test_measured_lessons.py drive it",
    "export_bank": "writes a question-bank file",
    "import_bank": "rewrites the package's question bank",
    "answer_free_bank": "writes a question-bank file",
    "make_student_edition": "writes a folder of notebooks",
    "grade": "book.grading.grade starts Jupyter kernels",
    "workflow": "workloads.workflows.workflow: an unstored instance imports wfcommons (seconds) and reseeds the global "
                "generators; see tests/lib/workloads/test_workflows.py",
    "TorchCUDA": "real.hybrid.TorchCUDA needs torch with a CUDA device; tests/lib/real/test_hybrid.py drives it",
    "TorchCPU": "real.hybrid.TorchCPU needs torch and sets its process-wide thread count; "
                "tests/lib/real/test_hybrid.py drives it with a stand-in torch",
}
#: A public function whose name says it writes, or with one of these parameters, must be listed above (or in
#: WRITERS_DRIVEN, when it only writes where it is told): the sweep refuses to call an unlisted writer.
WRITER_NAMES = re.compile(r"^(export|import|write|save|dump)_|_bank$")
WRITER_PARAMS = {"out", "out_dir"}
WRITERS_DRIVEN = {"book.edition.check_edition_paths"}   # checks the paths, writes nothing

#: Functions whose documented result may be infinite (Amdahl's ceiling 1/(1-p) at p = 1).
INF_OK = {"formulas.amdahl_limit"}
#: Functions whose documented result may be negative (a signed error, a serial fraction below zero when the
#: measured speed-up is superlinear).
SIGNED_OK = {"formulas.karp_flatt", "formulas.overhead_time",
             "real.readings.compare_readings"}   # a prediction's relative error, predicted / measured - 1
#: Parameters where a negative number is meaningful: (callable, parameter).
NEGATIVE_OK = {("widgets.slider", "lo"), ("widgets.slider", "hi"), ("widgets.slider", "value"),
               ("widgets.int_slider", "lo"), ("widgets.int_slider", "hi"), ("widgets.int_slider", "value"),
               # extra time over a simulation: a list schedule with longer tasks may finish earlier (Graham)
               ("book.readings.a1_dag.Prediction", "extra"), ("book.readings.a1_dag.Prediction", "low"),
               ("book.readings.a1_dag.Prediction", "high")}

#: Containers where empty is a valid value: (callable, parameter).
EMPTY_OK = {("tasks.TaskGraph", "tasks"),    # an empty graph: ch01's animation draws one before the first dispatch
            ("schedulers.StagedBound", "head"), ("schedulers.StagedBound", "tail")}   # no serial stage

TIME_LIMIT_S = 5.0
#: Calls allowed longer than TIME_LIMIT_S, with the reason (a documented one-off cost, not a size problem).
SLOW_OK = {"schedulers.earliest_free": (60.0, "compiled=True compiles the numba kernel on first use"),
           "schedulers.central_queue": (60.0, "compiled=True compiles the numba kernel on first use")}


def _label(obj) -> str:
    module = obj.__module__.removeprefix("hetlab.")
    # A package split into submodules re-exports its names: label by the package users import from.
    return f"{module}.{obj.__qualname__}"


def public_modules() -> dict[str, object]:
    found = {}
    for info in pkgutil.walk_packages(hetlab.__path__, prefix="hetlab."):
        name = info.name.removeprefix("hetlab.")
        # The chapter views (book.views.chNN) are driven by tests/test_views.py at every control's values.
        if any(part.startswith("_") for part in name.split(".")) or name.startswith("book.views"):
            continue
        module = importlib.import_module(info.name)
        if hasattr(module, "__all__"):
            found[name] = module
    return found


def _is_exception_type(obj) -> bool:
    return inspect.isclass(obj) and issubclass(obj, BaseException)


@lru_cache(maxsize=1)
def public_callables() -> dict[str, object]:
    """label -> callable, for every public function, class constructor and (bound) public method."""
    objects = [getattr(hetlab, name) for name in hetlab.__all__]
    for module in public_modules().values():
        objects += [getattr(module, n) for n in module.__all__]
    found: dict[str, object] = {}
    for obj in objects:
        if not callable(obj) or _is_exception_type(obj) or isinstance(obj, Mapping):
            continue
        if not getattr(obj, "__module__", "").startswith("hetlab"):
            continue
        found.setdefault(_label(obj), obj)
    return dict(sorted(found.items()))


def _short(label: str) -> str:
    """'schedulers.heft.heft' -> 'schedulers.heft' for the lists above: a package's submodule is dropped."""
    parts = label.split(".")
    if len(parts) >= 3 and parts[0] == "schedulers" and not parts[-2][0].isupper():
        return f"{parts[0]}.{parts[-1]}"
    if len(parts) >= 3 and parts[0] == "tasks" and parts[1] in {"graph", "costs", "builders"}:
        return ".".join([parts[0], *parts[2:]])   # hetlab.tasks re-exports its modules' names
    return label


# --- valid baseline arguments -----------------------------------------------------------------------------------

_TMP = Path(tempfile.mkdtemp(prefix="hetlab-contract-"))
_SCRATCH = _TMP / "cwd"
_SCRATCH.mkdir()
_PACKAGE = Path(hetlab.__file__).parent


def _data_snapshot() -> dict[str, int]:
    """Every package data file (hetlab/data, hetlab/book/data) with its modification time."""
    return {str(p): p.stat().st_mtime_ns for p in sorted(_PACKAGE.rglob("*"))
            if p.is_file() and "data" in p.relative_to(_PACKAGE).parts[:-1]}


_DATA_BEFORE = _data_snapshot()


@lru_cache(maxsize=1)
def _fixtures() -> dict:
    from hetlab import schedulers
    from hetlab.book import quiz
    from hetlab.book.demo import compare_policies
    from hetlab.book.progress import ProgressStore
    from hetlab.devices import kitchen
    from hetlab.formulas import derive_optimal_tasks
    from hetlab.tasks import Task, TaskGraph
    from hetlab.workloads import article_tasks

    graph = article_tasks()
    devices = kitchen()
    schedule = schedulers.heft(graph, devices)
    small = TaskGraph([Task("a"), Task("b"), Task("c")], [("a", "c"), ("b", "c")])
    q = quiz.questions(3)[0]
    report = compare_policies()
    return {"graph": graph, "devices": devices, "schedule": schedule, "small": small, "question": q,
            "result": quiz.check(q.id, "A"), "report": report,
            "derivation": derive_optimal_tasks(), "store": ProgressStore(_TMP / "book.progress.json")}


def _slider():
    from hetlab.widgets import slider

    return slider("x", 0.0, 10.0, 1.0, 5.0)


def _draw(ax, **values):
    return "ok"


def _one(*inputs):
    return 1


#: Valid values by parameter name (a lambda is called to build a fresh value).
BY_NAME = {
    "graph": lambda: _fixtures()["graph"], "devices": lambda: _fixtures()["devices"],
    "schedule": lambda: _fixtures()["schedule"], "simulated": lambda: _fixtures()["schedule"],
    "measured": lambda: _fixtures()["schedule"], "baseline": lambda: _fixtures()["schedule"],
    "src": lambda: _fixtures()["devices"][0], "dst": lambda: _fixtures()["devices"][1],
    "device": lambda: _fixtures()["devices"][0], "data": 5.0,
    "task": lambda: _fixtures()["graph"].tasks[0],
    "times": lambda: [1.0, 2.0, 3.0], "stage_times": lambda: [1.0, 2.0], "loads": lambda: [4.0, 2.0, 2.0, 4.0],
    "cores": 4, "frequency_hz": 1e9, "ipc": 2.0, "N": 4.0, "W": 100.0, "Os": 1.0, "p": 0.9, "S": 3.0,
    "t_serial": 10.0, "t_parallel": 4.0, "stages": 4, "micro_batches": 8, "n_devices": 4, "size": 100.0,
    "bandwidth": 10.0, "latency": 0.1, "nbytes": 100.0, "m": 3, "name": "x", "kind": "CPU", "speed": 2.0,
    "compute_time": 1.0, "grad_size": 1.0, "samples_per_step": 32.0, "data_parallel": 2, "pipeline_stages": 2,
    "rate": 5.0, "duration": 2.0, "arrivals": lambda: [0.0, 0.01, 0.02, 0.5], "q": 50.0,
    "zh": "中文", "en": "English", "p_values": lambda: [0.5, 0.9], "description": "x", "lo": 0.0, "hi": 10.0,
    "step": 1.0, "value": 5.0, "options": lambda: ["a", "b"], "control": lambda: _slider(), "draw": lambda: _draw,
    "controls": lambda: {"x": _slider()}, "question_id": lambda: _fixtures()["question"].id, "answer": "A",
    "chapter": 3, "total": 4, "payload": lambda: {"a": 1}, "token": lambda: _seal({"a": 1}),
    "store": lambda: _fixtures()["store"], "source": "x = 1\n", "submission": "s.ipynb",
    "tasks": lambda: _tasks_list(), "op": "matmul", "fn": lambda: _one, "seconds": 0.001, "work": 2.0,
}


def _tasks_list():
    from hetlab.tasks import Task

    return [Task("a"), Task("b", 2.0)]


def _schedule_fields() -> dict:
    s = _fixtures()["schedule"]
    return {"graph": s.graph, "devices": s.devices, "device_of": s.device_of.copy(), "start": s.start.copy(),
            "end": s.end.copy()}


#: Valid values for one callable, where a name means different things in different places.
OVERRIDES = {
    "real.execute.run_graph": {"graph": lambda: _fixtures()["small"], "functions": lambda: {k: _one for k in "abc"},
                          "executor": "thread", "workers": 2},
    "real.execute.RealRun": {"results": lambda: {}, "wall_time": 1.0},
    "real.execute.busy_loop": {"n": 100},
    "real.execute.effective_parallelism": {"start": lambda: [0.0, 0.0], "end": lambda: [1.0, 1.0],
                                           "cpu": lambda: [0.5, 0.5]},
    "real.measure.dispatch_overhead": {"tasks": 10, "workers": 1},
    "real.measure.thread_scaling": {"counts": (1, 2), "blocks": 2, "size": 8, "repeat": 1},
    "real.measure.ThreadScaling": {"wall": lambda: {1: 2.0, 2: 1.0}, "cpu": lambda: {1: 2.0, 2: 2.0},
                                   "blas_limited": True, "rounds": 5},
    "book.readings.ch07.thread_lab_report": {"run": lambda: _mod("real.measure").ThreadScaling(
        {1: 2.0, 2: 1.0}, {1: 2.0, 2: 2.0}, True, 5), "cpus": 2, "load": 1.5},
    "real.split_timing.split_matmul_timing": {"n": 8, "pieces": (1, 2), "repeat": 1, "workers": 1},
    "real.split_timing.nested_pair": {"n": 8, "pieces": 2, "workers": 1, "repeat": 1, "window": 0.001},
    "real.split_timing.blas_spin": {"threads": 1, "n": 8},
    "book.readings.ch12_nested.spin_line": {"spin": (0.1, 0.09), "threads": 2},
    "communication.matmul_offload_time": {"n": 64.0},
    "formulas.GranularityDerivation": lambda: {f.name: getattr(_fixtures()["derivation"], f.name)
                                               for f in dataclasses.fields(_fixtures()["derivation"])},
    "formulas.GranularityDerivation.at": {"W": 100.0, "Os": 1.0},
    "metrics.capacity": {"baseline": "CPU"},
    "workloads.skewed_tasks": {"n": 5},
    "tasks.random_dag": {"n": 6},
    "tasks.independent_tasks": {"work": lambda: [1.0, 2.0, 3.0]},
    "tasks.Task": {"name": "a"},
    "tasks.TaskGraph.task": {"name": "t0"},
    "tasks.assigned_costs": {"device_of": lambda: [0] * 8},
    "schedule.Schedule": _schedule_fields,
    "schedule.Schedule.placement": {"task": "t0"},
    "schedule.Schedule.tasks_on": {"device": "CPU"},
    "schedule.Placement": {"task": "t0", "device": "CPU", "start": 0.0, "end": 1.0},
    "schedulers.execute_plan": {"sequences": lambda: {"CPU": [f"t{i}" for i in range(8)]}},
    "schedulers.StealEvent": {"time": 0.0, "thief": "CPU", "victim": "GPU", "task": "t0"},
    "book.quiz.Question": lambda: {f.name: getattr(_fixtures()["question"], f.name)
                              for f in dataclasses.fields(_fixtures()["question"])},
    "book.quiz.Result": lambda: {f.name: getattr(_fixtures()["result"], f.name)
                            for f in dataclasses.fields(_fixtures()["result"])},
    "book.demo.DemoReport": lambda: {f.name: getattr(_fixtures()["report"], f.name)
                                for f in dataclasses.fields(_fixtures()["report"])},
    "book.progress.ProgressStore": {"path": lambda: _TMP / "store.json"},
    "widgets.int_slider": {"lo": 0, "hi": 10, "value": 5, "step": 1},
    "devices.Device.speed_for": {"op": "matmul"},
    "book.grading.GradeReport": {"submission": "s.ipynb", "chapter": 4},
    "book.edition.check_markers": {"cell": lambda: {"cell_type": "code", "source": "x = 1", "metadata": {}},
                                   "where": "04-x.ipynb cell 1"},
}


def _fields_of(factory):
    """An override giving every field of a record that ``factory()`` returns (a real, valid instance)."""
    def fields() -> dict:
        record = factory()
        return {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}
    return fields


def _seal(payload):
    return importlib.import_module("hetlab.book.quiz").seal(payload)


def _mod(name: str):
    return importlib.import_module(f"hetlab.{name}")


_SERVING = {"arrivals": lambda: np.array([0.0, 0.1, 0.2]), "prompt": lambda: np.array([10, 20, 30]),
            "output": lambda: np.array([5, 5, 5])}
_TRAINING = {"params": 1e9, "devices": 8, "dp": 2, "tp": 2, "pp": 2, "global_batch": 64, "micro_batches": 4,
             "sequence": 512, "layers": 8, "hidden": 1024, "heads": 16}
OVERRIDES.update({
    "book.bank.Question": OVERRIDES["book.quiz.Question"],
    "metrics.HeteroMetrics": _fields_of(lambda: _mod("metrics").hetero_metrics(_mod("workloads").skewed_tasks(6),
                                                                             _mod("devices").identical(2))),
    "book.grading.GradeItem": {"id": "c03-1", "kind": "question", "score": 1.0, "max_score": 1.0, "status": "correct"},
    "models.pipelines.stream": {"placement": lambda: _fixtures()["schedule"], "frames": 3},
    "models.pipelines.frame_period": {"placement": lambda: _fixtures()["schedule"], "frames": 3},
    "models.pipelines.split_placement": {"graph": lambda: _mod("workloads").segmentation_model(),
                               "first": lambda: {"conv": "NPU", "image": "GPU", "control": "CPU"},
                               "rest": lambda: {"conv": "GPU", "image": "GPU", "control": "CPU"}, "cut": 10},
    "real.split_timing.SplitTiming": _fields_of(lambda: _mod("real.split_timing").split_matmul_timing(
        8, (1, 2), workers=1, repeat=1)),
    "workloads.requests.RequestStream": _SERVING,
    "workloads.workflows.TypeRange": _fields_of(lambda: _mod("workloads.workflows").runtime_ranges()["mProject"]),
    "workloads.workflows.TraceRuntimes": _fields_of(lambda: _mod("workloads.workflows").trace_runtimes()["mProject"]),
    "models.serving.simulate": _SERVING,
    "models.serving.ServingResult": _fields_of(lambda: _mod("models.serving").simulate(
        **{k: v() for k, v in _SERVING.items()})),
    "workloads.requests.skewed_requests": {"n": 8},
    "models.roofline.llm_iteration_costs": {"params": 13e9, "layers": 40, "hidden": 5120},
    "plotting.gantt_panels": {"panels": lambda: [(_fixtures()["schedule"], "plan")]},
    "plotting.display_width": {"text": "工作窃取"},
    "plotting.pad": {"text": "工作窃取", "width": 10},
    "book.readings.ch11.policy_readout": {"policy": "article_demo", "label": "演示程序",
                                          "run": lambda: _mod("schedulers").article_demo(
                                              _mod("workloads").article_tasks(), _mod("devices").kitchen()),
                                          "best": lambda: _mod("schedulers").optimal(
                                              _mod("workloads").article_tasks(), _mod("devices").kitchen())},
    "book.readings.ch08.memory_verdict": {"totals": [115.6e9, 69.7e9, 62.0e9, 54.4e9], "activations": 45.6e9,
                                           "pp": 16},
    "book.readings.ch10.training_summary": {"step": lambda: _mod("models.training").step_time(**_TRAINING)},
    "book.readings.ch10.serving_summary": {"result": lambda: _mod("models.serving").simulate(
        **{k: v() for k, v in _SERVING.items()})},
    "book.readings.ch04.u_sweep_lines": {"sweep": lambda: _sweep_reading(), "round_trip": 3e-5},
    "models.granularity.halo_ratio": {"n": 1024, "pieces": 16},
    "book.readings.ch09.balance_reading": {"tasks": 20, "spread": 1.0,
                                           "rows": lambda: [("分块", 0.431, 9.39), ("LPT", 0.018, 6.68)]},
    "models.training.memory_per_device": {"params": 1e9, "layers": 8, "hidden": 1024, "sequence": 512, "heads": 16},
    "models.training.step_time": _TRAINING,
    "models.training.TrainingStep": _fields_of(lambda: _mod("models.training").step_time(**_TRAINING)),
    "models.hardware.dram_bandwidth": {"transfers_per_s": 6400e6, "bus_bits": 64},
    "models.dispatch.overhead_sweep": {"noises": lambda: [0.0, 0.5], "seeds": 2},
    "models.dynamics.fork_join_wins": {"seeds": lambda: [0, 1], "depth": 3},
    "book.readings.ch05.variance_summary": {"run": lambda: _mod("models.dynamics").compare_under_variance(
        _fixtures()["graph"], _fixtures()["devices"])},
    "book.readings.ch05.late_orders_summary": {"run": lambda: _mod("models.dynamics").late_orders(
        _fixtures()["graph"], _fixtures()["devices"])},
    "models.dispatch.OverheadPoint": {"noise": 0.1, "static": 2.0, "dynamic": 1.5, "dynamic_wins": 3, "seeds": 4},
    "models.dynamics.StealingVsEft": {"menus": lambda: (0, 1), "stealing": lambda: (5.0, 4.0),
                                      "eft": lambda: (4.5, 4.5), "lpt": lambda: (4.0, 4.0), "steal_seeds": 2,
                                      "steal_latency": 0.0},
    "models.dynamics.ForkJoinWins": {"trees": 4, "stealing_beats_static": 3, "central_beats_static": 2,
                                   "stealing_beats_central": 1},
    "models.dynamics.SlacknessCurve": {"work": 8.0, "span": 2.0, "counts": lambda: (1, 2),
                                     "stealing": lambda: (1.0, 1.8), "central": lambda: (1.0, 2.0)},
    "real.experiments.GilReading": _fields_of(lambda: _gil_reading()),
    "real.experiments.SweepReading": {"workers": 2, "total": 0.2, "counts": (1, 2, 3, 4),
                                      "seconds": (0.2, 0.1, 0.13, 0.1)},
    "book.reference.load": {"name": "build-vm"},
    "book.readings.a1_calibration.handover_costs": {"handovers": lambda: _handovers()},
    "book.readings.a1_calibration.Costs": {"released": 1e-3, "queued": 1e-4, "stretch": 1e-4},
    "book.readings.a1_calibration.calibration_lines": {
        "cal": lambda: {"cpus": 2, "matmul_gflops": 80.0, "thread_overhead_s": 4e-5, "process_overhead_s": 2e-4}},
    "book.readings.a1.plan_lines": {"runs": lambda: _plan_runs(), "plan": lambda: _fixtures()["schedule"],
                                    "seconds_per_unit": 0.05, "cpus": 2},
    "book.readings.a1.sweep_prediction": {"sweep": lambda: _sweep_reading(), "os_": 1e-4},
    "book.readings.a1.sweep_lines": {"sweep": lambda: _sweep_reading(), "os_": 1e-4},
    "book.readings.a1_dag.dispatch_schedule": {"simulated": lambda: _pool_simulation(), "released": 1e-4,
                                               "queued": 1e-5},
    "book.readings.a1_dag.dispatch_simulation": {"simulated": lambda: _pool_simulation(), "released": 1e-4,
                                             "queued": 1e-5},
    "book.readings.a1_dag.predict_extra": {"simulated": lambda: _pool_simulation(), "costs": lambda: _costs(1e-3),
                                       "pairs": lambda: _pairs()},
    "book.readings.a1_band.error_band": {"pairs": lambda: _pairs()},
    "book.readings.a1_dag.typical_costs": {"simulated": lambda: _pool_simulation(), "handovers": lambda: _handovers()},
    "book.readings.a1_band.matching_pairs": {"reference": lambda: _mod("book.reference").load("build-vm-idle"),
                                            "cpus": 2, "busy": 0.0, "workers": 2},
    "book.readings.a1_band.condition": {"cpus": 2, "busy": 0.0},
    "book.readings.a1_band.enough_pairs": {"coverage": 0.9},
    "book.readings.a1_band.left_condition": {"cpus": 2, "busy": 0.0, "machine": 0.0, "during": 0.9},
    "book.readings.a1_band.stayed": {"kind": "idle", "cpus": 2, "during": 0.1},
    "book.readings.a1_dag.calibration_disturbed": {"extra": 2e-2, "pairs": lambda: _pairs()},
    "book.readings.a1_band.steady": {"pairs": lambda: _pairs()},
    "real.cpu_load.others_since": {"start": lambda: _mod("real.cpu_load").mark()},
    "real.cpu_load.CpuMark": {"cpus": frozenset({0}), "busy": 10, "total": 20, "own": 0.5},
    "book.readings.a1_dag.interval_name": {"prediction": lambda: _prediction()},
    "book.readings.a1_dag.graph_predictions": {"simulated": lambda: _pool_simulation(),
                                               "handovers": lambda: _handovers()},
    "book.readings.a1_band.reference_pairs": {"reference": lambda: _mod("book.reference").load("build-vm-idle")},
    "book.readings.a1_dag.Prediction": {"simulated": 0.004, "extra": 0.002, "low": 0.001, "high": 0.003,
                                    "coverage": 0.9, "released": 3, "queued": 0, "pairs": 40,
                                    "factors": (0.5, 1.5)},
    "book.readings.a1_dag.split_lines": {"prediction": lambda: _prediction(), "costs": lambda: _costs(1e-3),
                                     "workers": 2},
    "book.readings.a1_dag.dag_lines": {"prediction": lambda: _prediction(), "costs": lambda: _costs(1e-3)},
    "book.readings.a1_dag.dispatch_lines": {"gaps": (1e-4, 2e-4), "queued": (True, False),
                                            "costs": lambda: _costs(1e-4)},
    "book.readings.ch12.gil_lines": {"reading": lambda: _gil_reading()},
    "book.readings.ch12.split_prediction": {"timing": lambda: _split_timing()},
    "book.readings.ch12.split_lines": {"timing": lambda: _split_timing()},
    "book.readings.ch12.split_table": {"timing": lambda: _split_timing()},
    "book.readings.ch12.split_details": {"timing": lambda: _split_timing()},
    "book.readings.ch12_nested.reference_line": {"reference": lambda: _one_cpu_reference()},
    "book.readings.ch12_share.share_prediction": {"processes": 2, "cpus": 2, "busy": 1.0},
    "book.readings.ch12_share.share_verdict": {"processes": 2, "cpus": 2, "busy": 1.0, "parallelism": 1.2,
                                               "serial": 1.0},
    "real.cpu_load.fair_share": {"processes": 2, "cpus": 2, "busy": 1.0},
    "real.cpu_load.share_range": {"processes": 2, "cpus": 2, "busy": 1.0},
    "real.cpu_load.saturated": {"cpus": 2, "busy": 1.0},
    "real.cpu_load.busy_cpus": {"interval": 0.01},
    "book.readings.ch12.gap_split": {"timing": lambda: _split_timing()},
    "book.readings.ch12.gap_verdict": {"timing": lambda: _split_timing()},
    "book.readings.ch12.waiting": {"timing": lambda: _split_timing(), "pieces": 2},
    "book.readings.ch12.descent_line": {"timing": lambda: _split_timing()},
    "book.readings.ch12_nested.oversubscription_lines": {"single": lambda: _split_timing(),
                                                  "nested": lambda: _split_timing(blas_threads=2)},
    "real.execute.run_plan": {"plan": lambda: _fixtures()["schedule"], "seconds_per_unit": 1e-3, "executor": "thread",
                         "steps_per_second": 1e6},
    "schedulers.StagedBound": _fields_of(lambda: _mod("schedulers.bounds").staged_bound(_staged_graph(),
                                                                                   _fixtures()["devices"])),
})


def _gil_reading():
    from hetlab.real.experiments import GilReading, Run

    return GilReading(2, 8, 2, True, Run(1.0, 0.9), Run(1.0, 0.5), Run(1.0, 1.8), Run(0.2, 0.0), Run(0.03, 0.0))


def _sweep_reading():
    from hetlab.real.experiments import SweepReading

    return SweepReading(2, 0.2, (1, 2, 3, 4), (0.2, 0.1, 0.13, 0.1))


def _one_cpu_reference():
    from hetlab.book.reference import load

    return load("build-vm-one-cpu")


def _split_timing(blas_threads=1):
    from hetlab.real.split_timing import SplitTiming

    return SplitTiming(10, 2, blas_threads, (1, 2, 10), (1.0, 0.6, 2.0), (1.0, 1.1, 4.0), (0.01, 0.02, 0.5), w0=1.0,
                       os0=1e-3, pool_cpu=(1.0, 1.2, 4.6))


def _plan_runs():
    """Three runs of the fixture plan as run_plan records them (CPU seconds in ``info``)."""
    s = _fixtures()["schedule"]
    cpu = list((s.end - s.start) * 0.5)
    run = dataclasses.replace(s, info={"cpu_seconds": cpu})
    return {"thread pool": run, "process pool": run, "sequential": run}


def _staged_graph():
    """A graph with a serial head stage and a serial tail stage (s before a and b, t after both)."""
    from hetlab.tasks import Task, TaskGraph

    return TaskGraph([Task(n, 1.0) for n in "sabt"], [("s", "a"), ("s", "b"), ("a", "t"), ("b", "t")])

def _cholesky_plan():
    """A small CPU + GPU tiled-Cholesky plan (hetlab.workloads.cholesky), for the hybrid executor."""
    workloads, schedulers = _mod("workloads.cholesky"), _mod("schedulers")
    devices = workloads.cholesky_devices(1, tile_copy_s=0.5)
    costs = {op: {"CPU": 2.0, "GPU": 1.0} for op in workloads.OPS}
    return schedulers.heft(workloads.cholesky_graph(2, costs, devices), devices)


def _cholesky_backends():
    hybrid = _mod("real.hybrid")
    return {"GPU": hybrid.StandInGPU(launch_s=0.0), "CPU0": hybrid.NumpyCPU()}


_CASE = {"n": 512, "b": 256, "op_costs": lambda: {op: {"CPU": 1e-3, "GPU": 1e-4}
                                                  for op in ("potrf", "trsm", "syrk", "gemm")}, "tile_copy_s": 1e-5}
OVERRIDES.update({
    "workloads.cholesky.CholeskyCase": _CASE,
    "workloads.cholesky.CholeskyCase.graph": {"devices": lambda: _mod("workloads.cholesky").cholesky_devices(1)},
    "workloads.cholesky.predict_makespans": {"case": lambda: _mod("workloads.cholesky").CholeskyCase(
        **{k: _fresh(v) for k, v in _CASE.items()}), "workers": lambda: [1]},
    "models.host.HostProfile": {"name": "p", "hold_s": 1e-5, "handoff_s": 2e-5},
    "models.host.HostProfile.slowdown": {"k": 2},
    "models.host.next_grant": {"free_at": 1.0, "requests": lambda: {"a": 0.5, "b": 1.2}, "handoff_s": 0.5},
    "models.host.term_makespans": {"plan": lambda: _cholesky_plan(),
                                   "profile": lambda: _mod("models.host").HostProfile("p", 0.1, 0.2)},
    "models.host.shapley": {"values": lambda: {frozenset(): 0.0, frozenset("a"): 1.0}},
    "models.host.simulate_host": {"plan": lambda: _cholesky_plan(),
                                  "profile": lambda: _mod("models.host").HostProfile("p", 0.1, 0.2)},
    "real.readings.reading": {"name": "h200"},
    "real.readings.case_of": {"data": lambda: _mod("real.readings").reading("h200_hetero")},
    "real.readings.read_case": {"path": lambda: str(_PACKAGE / "data" / "readings" / "h200-2026-12-04" /
                                                   "h200_hetero.json")},
    "real.readings.MeasuredRun": _fields_of(lambda: _mod("real.readings").measured_runs()[1]),
    "real.readings.predict_run": {"run": lambda: _mod("real.readings").measured_runs()[1]},
    "real.readings.trace_schedule": {"trace": lambda: [[f"t{i}", "CPU", float(i), i + 1.0] for i in range(8)]},
    "real.readings.measured_makespans": {"data": lambda: _mod("real.readings").reading("h200_hetero")},
    "real.readings.compare_readings": {"machine": "h200-2026-12-04"},     # 7 predictions: under a second
    "real.hybrid.HybridRun": {"schedule": lambda: _fixtures()["schedule"], "wall_time": 1.0},
    "real.hybrid.NumpyCPU.put": {"tile": lambda: np.eye(2)},
    "real.hybrid.NumpyCPU.get": {"tile": lambda: np.eye(2)},
    "real.hybrid.NumpyCPU.run": {"op": "potrf", "tiles": lambda: [np.eye(2)]},
    "real.hybrid.StandInGPU.put": {"tile": lambda: np.eye(2)},
    "real.hybrid.StandInGPU.get": {"tile": lambda: np.eye(2)},
    "real.hybrid.StandInGPU.run": {"op": "potrf", "tiles": lambda: [np.eye(2)]},
    "real.hybrid.run_on_devices": {"plan": lambda: _cholesky_plan(), "backends": lambda: _cholesky_backends(),
                                   "bodies": lambda: {t.name: (lambda backend: None)
                                                      for t in _cholesky_plan().graph.tasks}},
    "real.hybrid.factor": {"plan": lambda: _cholesky_plan(), "matrix": lambda: np.eye(4) * 4.0 + 1.0, "b": 2,
                           "backends": lambda: _cholesky_backends()},
    "book.readings.a2.workload_lines": {"case": lambda: _mod("workloads.cholesky").CholeskyCase(
        **{k: _fresh(v) for k, v in _CASE.items()})},
    "book.readings.a2.plan_lines": {"hybrid": lambda: _cholesky_plan(), "gpu_only": lambda: _cholesky_plan()},
    "book.readings.a2.measured_lines": {"gpu_only_s": 0.02, "hybrid_s": 0.05, "hybrid_plan": lambda: _cholesky_plan()},
    "book.readings.a2.trace_lines": {"measured": lambda: _cholesky_plan(), "gpu_alone": lambda: _cholesky_plan()},
    "book.readings.a2.prediction_table": {"runs": lambda: _mod("real.readings").measured_runs()[:2],
                                          "predicted": lambda: [0.05, 0.06]},
    "book.readings.a2.calibration_lines": {"profile": lambda: _mod("models.host").load_profile()},
    "book.readings.a2.host_limit_lines": {
        "case": lambda: _mod("workloads.cholesky").CholeskyCase(**{k: _fresh(v) for k, v in _CASE.items()}),
        "profile": lambda: _mod("models.host").load_profile(), "gpu_only_s": 0.0247},
    "book.readings.a2.planner_lines": {"predictions": lambda: {"gpu_only": 0.03, "cpu4": {
        "cpu_only": 0.1, "hybrid_heft": 0.08, "hybrid_dispatch_aware": 0.03}}, "chosen": lambda: {4: 0}},
    "book.readings.a2.gap_lines": {"hybrid": lambda: _cholesky_plan(), "measured_s": 0.05,
                                   "profile": lambda: _mod("models.host").HostProfile("p", 0.1, 0.2)},
    "book.readings.a2.gpu_only_spread_lines": {"runs": lambda: _mod("real.readings").measured_runs(),
                                               "predicted": lambda: [0.03] * 28},
    "book.readings.a2.heft_gap_lines": {"runs": lambda: _mod("real.readings").measured_runs()[:2]},
    "book.readings.a2.calibration_spread_lines": {"hybrid": lambda: _cholesky_plan(),
                                                  "gpu_only": lambda: _cholesky_plan(),
                                                  "profile": lambda: _mod("models.host").load_profile()},
    "book.readings.a2.race_verdict": {"hybrid_ms": 36.3, "gpu_only_ms": 29.3},
    "book.readings.a2.timeline_lines": {"measured": lambda: _cholesky_plan(), "model": lambda: _cholesky_plan()},
    "book.readings.a2.cuda_graph_lines": {"launch": lambda: _mod("real.readings").reading("h200")["launch"],
                                          "gpu_only_s": 0.0247, "tasks": 364, "library_s": 0.0016,
                                          "device_s": 13e-6},
    "book.readings.a2_holdout.holdout_table": {"rows": lambda: [{
        "source": "x.json", "n": 512, "b": 256, "plan": "gpu_only", "cpu_workers": 0, "predicted_s": 0.01,
        "measured_s": 0.012}]},
    "book.readings.a2_holdout.miss_lines": {"rows": lambda: [{
        "source": "x.json", "n": 512, "b": 256, "plan": "gpu_only", "cpu_workers": 0, "predicted_s": 0.01,
        "measured_s": 0.02}]},
    "book.readings.a2_holdout.batch_lines": {
        "first": lambda: [{"source": "x.json", "n": 512, "b": 256, "plan": "gpu_only", "cpu_workers": 0,
                           "predicted_s": 0.01, "measured_s": 0.012}],
        "second": lambda: [{"source": "y.json", "n": 512, "b": 256, "plan": "gpu_only", "cpu_workers": 0,
                            "predicted_s": 0.01, "measured_s": 0.011}]},
    "book.readings.a2_holdout.repeat_lines": {
        "rows": lambda: [{"source": "x.json", "n": 512, "b": 256, "plan": "gpu_only", "cpu_workers": 0,
                          "predicted_s": 0.01, "measured_s": 0.012}],
        "calibration": lambda: [{"source": "y.json", "n": 512, "b": 256, "plan": "gpu_only", "cpu_workers": 0,
                                 "predicted_s": 0.01, "measured_s": 0.011}]},
    "book.readings.a2_holdout.heft_vs_gpu_lines": {"rows": lambda: [
        {"source": "x.json", "n": 512, "b": 256, "plan": plan, "cpu_workers": w, "predicted_s": 0.01,
         "measured_s": 0.02} for plan, w in (("gpu_only", 0), ("hybrid_heft", 2))]},
    "book.readings.a2_holdout.copy_in_run_lines": {
        "section": lambda: _mod("real.readings").reading("n8192_b512", "h200-2026-12-04c")["hetero"],
        "cpu_workers": 6, "profile": lambda: _mod("models.host").load_profile()},
    "book.readings.a2_holdout.cost_change_lines": {
        "old": lambda: _mod("workloads.cholesky").CholeskyCase(**{k: _fresh(v) for k, v in _CASE.items()}),
        "new": lambda: _mod("workloads.cholesky").CholeskyCase(**{k: _fresh(v) for k, v in _CASE.items()})},
    "book.readings.a2_holdout.same_plan_lines": {"sections": lambda: [
        _mod("real.readings").reading("n3072_b256", "h200-2026-12-04b")["hetero"]]},
    "book.readings.a2_holdout.graph_replay_lines": {
        "graphs": lambda: _mod("real.readings").reading("cuda_graph", "h200-2026-12-04b")["cuda_graph"],
        "executor": lambda: {"n3072_b256": 0.035, "n4096_b256": 0.063, "n8192_b512": 0.12}},
})

#: Chapter 13's back-of-envelope models (MFU, bucketed all-reduce, collectives).
OVERRIDES.update({
    "formulas.mfu": {"tokens_per_s": 1e4, "params": 1e9, "peak_flops": 1e14},
    "communication.exposed_allreduce": {"buckets": 4, "backward_time": 0.3, "grad_bytes": 3e9, "n_devices": 8,
                                        "bandwidth": 50e9},
    "communication.collective_time": {"collective": "all_gather"},
    "communication.bus_bandwidth": {"collective": "all_reduce"},
    "communication.best_bucket_count": {"backward_time": 0.3, "grad_bytes": 3e9, "n_devices": 8,
                                        "bandwidth": 50e9, "max_buckets": 500},
    "models.hardware.GPUDatasheet": _fields_of(lambda: _mod("models.hardware").GPUS["H100 SXM"]),
    "book.readings.ch13.bucket_readout": {"bucket_mb": 25.0, "n_devices": 64},
})

#: Chapter 7's queueing and isoefficiency (a stable queue needs arrival_rate < service_rate).
OVERRIDES.update({
    "formulas.isoefficiency_work": {"efficiency": 0.8, "overhead": 10.0},
    "formulas.overhead_time": {"t_serial": 10.0, "t_parallel": 3.0, "N": 4},
    "models.queueing.mm1_latency": {"arrival_rate": 0.5, "service_rate": 1.0},
    "models.queueing.mm1_latency_quantile": {"arrival_rate": 0.5, "service_rate": 1.0, "q": 0.99},
    "models.queueing.single_server": {"arrival_rate": 0.5, "service_rate": 1.0, "requests": 200},
    "models.queueing.QueueRun": {"arrivals": lambda: [0.0, 1.0], "departures": lambda: [2.0, 3.0],
                                 "services": lambda: [2.0, 1.0]},
    "models.queueing.QueueRun.percentile": {"q": 99.0},
})


_MISSING = object()


def _overrides(label: str) -> dict:
    found = OVERRIDES.get(label) or OVERRIDES.get(_short(label)) or {}
    return found() if callable(found) else dict(found)


def _fresh(value):
    """Registry values written as lambdas are factories (a fresh list or object per call)."""
    return value() if getattr(value, "__name__", "") == "<lambda>" else value


def _params(fn) -> list[inspect.Parameter]:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    return [p for p in sig.parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _guess(p: inspect.Parameter):
    """A valid value from the annotation alone, for parameters no table lists."""
    ann = _annotation(p)
    for pattern, value in ((r"TaskGraph", lambda: _fixtures()["graph"]), (r"Sequence\[Device\]|list\[Device\]",
                            lambda: _fixtures()["devices"]), (r"\bSchedule\b", lambda: _fixtures()["schedule"]),
                           (r"\bDevice\b", lambda: _fixtures()["devices"][0]), (r"^bool", lambda: False),
                           (r"^int\b", lambda: 2), (r"^float\b", lambda: 1.0), (r"^str\b", lambda: "x")):
        if re.search(pattern, ann):
            return value()
    return _MISSING


def baseline(label: str, fn) -> dict[str, object]:
    """Valid keyword arguments for ``fn``: overrides, then names, then defaults. Raises LookupError when a
    required parameter has no known valid value (add it to BY_NAME or OVERRIDES)."""
    over = _overrides(label)
    kwargs = {}
    for p in _params(fn):
        if p.name in over:
            kwargs[p.name] = _fresh(over[p.name])
        elif p.default is not p.empty:
            kwargs[p.name] = p.default
        elif p.name in BY_NAME:
            kwargs[p.name] = _fresh(BY_NAME[p.name])
        elif _guess(p) is not _MISSING:
            kwargs[p.name] = _guess(p)
        else:
            raise LookupError(f"{label}: no valid value known for parameter {p.name!r}; add one to "
                              "BY_NAME or OVERRIDES in tests/test_contract.py")
    return kwargs


def _sample(label: str, cls):
    """An instance of a public class, for driving its methods."""
    fixtures = {"schedule.Schedule": "schedule", "tasks.TaskGraph": "graph",
                "book.quiz.Question": "question", "book.quiz.Result": "result", "book.demo.DemoReport": "report",
                "formulas.GranularityDerivation": "derivation", "book.progress.ProgressStore": "store"}
    if label in fixtures:
        return _fixtures()[fixtures[label]]
    if label == "devices.Device":
        return _fixtures()["devices"][1]
    if label == "widgets.Explorer":
        from hetlab.widgets import Explorer

        return Explorer(_draw, {"x": _slider()})
    return cls(**baseline(label, cls))


@lru_cache(maxsize=1)
def targets() -> dict[str, tuple[object, object]]:
    """label -> (callable, owner) for every driven callable; methods are bound to a sample instance."""
    out = {}
    for label, obj in public_callables().items():
        short = _short(label)
        if label.rsplit(".", 1)[-1] in SIDE_EFFECTS:
            continue
        out[short] = (obj, None)
        if inspect.isclass(obj):
            methods = [name for name, member in vars(obj).items()
                       if not name.startswith("_") and inspect.isfunction(member)]
            if not methods:
                continue
            try:
                instance = _sample(short, obj)
            except Exception as exc:  # reported by the sweep as a missing baseline, not a collection error
                out[f"{short}.<methods>"] = (None, exc)
                continue
            for name in methods:
                out[f"{short}.{name}"] = (getattr(instance, name), instance)
    return dict(sorted(out.items()))


# --- bad values and the rules that judge a call ------------------------------------------------------------------

BAD = [
    ("nan", math.nan), ("inf", math.inf), ("-inf", -math.inf), ("-1", -1), ("-0.5", -0.5), ("0", 0),
    ("2.5", 2.5), ("1e300", 1e300), ("1e-300", 1e-300), ("10**12", 10**12), ("None", None), ("True", True),
    ("'text'", "text"), ("''", ""), ("[]", []), ("[nan]", [math.nan]), ("[-1.0]", [-1.0]), ("[inf]", [math.inf]),
    ("[0.5]", [0.5]), ("['a']", ["a"]), ("{}", {}), ("object()", object()),
]


#: For a parameter that takes no number (a graph, a device list, a callable, text), one number of each sort is
#: enough to show a wrong type is refused; the range probes (inf, -0.5, 2.5, 1e-300, 10**12) add nothing there.
_NUMERIC_ONLY = {"inf", "-inf", "-0.5", "2.5", "1e-300", "10**12"}


def bad_values(valid, p: inspect.Parameter) -> list:
    numeric = _kind(valid) in ("int", "float", "ints", "floats") or re.search(
        r"\b(int|float|Any)\b", _annotation(p)) is not None or p.annotation is p.empty and valid is None
    return [bad for label, bad in BAD if numeric or label not in _NUMERIC_ONLY]


class Hang(BaseException):
    """Raised by the alarm: a BaseException so that an ``except Exception`` in the library cannot hide it."""


def _on_alarm(signum, frame):
    raise Hang()


def _is_real(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, (bool, np.bool_))


def _kind(valid) -> str:
    if isinstance(valid, (bool, np.bool_)):
        return "bool"
    if isinstance(valid, numbers.Integral):
        return "int"
    if _is_real(valid):
        return "float"
    if isinstance(valid, (str, Path)):
        return "str"
    if valid is None:
        return "none"
    if isinstance(valid, (list, tuple, np.ndarray)) and len(valid):
        items = list(valid)
        if all(isinstance(x, numbers.Integral) and not isinstance(x, (bool, np.bool_)) for x in items):
            return "ints"
        if all(_is_real(x) for x in items):
            return "floats"
        if all(isinstance(x, str) for x in items):
            return "strs"
        return "seq"
    if isinstance(valid, (list, tuple, np.ndarray)):
        return "empty"
    if isinstance(valid, Mapping):
        return "mapping"
    if callable(valid):
        return "callable"
    return "object"


def _annotation(p: inspect.Parameter) -> str:
    return "" if p.annotation is p.empty else str(p.annotation)


def must_reject(label: str, p: inspect.Parameter, valid, bad) -> str | None:
    """Why ``bad`` may not be accepted for parameter ``p`` (whose valid value is ``valid``), or None."""
    kind = _kind(valid)
    ann = _annotation(p)
    optional = p.default is None or "None" in ann or "Optional" in ann
    takes_str = re.search(r"\bstr\b|Path", ann) is not None
    numeric = kind in ("int", "float")
    if bad is None:
        return None if optional else "None is not a valid value"
    if isinstance(bad, float) and math.isnan(bad):
        return "NaN is never a valid value"
    if isinstance(bad, (bool, np.bool_)):
        return None if kind == "bool" or "bool" in ann else "a bool is not a number, text or object here"
    if kind == "bool":
        return "only True or False is a valid value"
    if isinstance(bad, str):
        if kind == "str" or (takes_str and not numeric and kind not in ("ints", "floats")):
            return None
        return "text is not a valid value here"
    if _is_real(bad):
        if kind in ("str", "strs", "seq", "ints", "floats", "mapping", "callable", "object"):
            return None if "float" in ann or "int" in ann or "Any" in ann else "a number is the wrong type here"
        if bad < 0 and numeric and (_short(label), p.name) not in NEGATIVE_OK:
            return "a negative number is not a valid value here"
        if kind == "int" and isinstance(bad, float) and not bad.is_integer() and "float" not in ann:
            return "a non-integral float for an integer parameter would be truncated or misused"
        return None
    if isinstance(bad, Mapping):
        return "a dict is the wrong type here" if numeric or kind in ("str", "callable", "bool") else None
    if isinstance(bad, list):
        takes_iterable = re.search(r"Iterable|Sequence|list|tuple", ann) is not None
        if numeric and "Any" not in ann or kind == "callable" or kind == "str" and not takes_iterable:
            return "a list is the wrong type here"
        if not bad and (_short(label), p.name) in EMPTY_OK:
            return None
        if not bad:
            return "an empty sequence is not a valid value" if kind in ("ints", "floats", "strs", "seq") else None
        item = bad[0]
        if kind in ("ints", "floats") or (numeric and "Any" in ann):
            if isinstance(item, str):
                return "text in a sequence of numbers"
            if math.isnan(item):
                return "NaN in a sequence of numbers"
            if item < 0 and (_short(label), p.name) not in NEGATIVE_OK:
                return "a negative number in a sequence of non-negative numbers"
            if kind == "ints" and not float(item).is_integer() and "float" not in ann:
                return "a non-integral float in a sequence of integers"
        if kind == "seq" and isinstance(item, (str, float)):
            return "the sequence holds the wrong type"
        return None
    return "an arbitrary object is the wrong type here"


def _numbers(value, depth: int = 0):
    """The numbers inside a result: floats, ints, numeric arrays, containers, and timelines."""
    if depth > 4:
        return
    if isinstance(value, (bool, np.bool_, str, bytes)) or value is None:
        return
    if isinstance(value, numbers.Real):
        yield value
    elif isinstance(value, np.ndarray):
        if value.dtype.kind in "fiu":
            yield value
    elif isinstance(value, (list, tuple)):
        for item in value[:2000]:
            yield from _numbers(item, depth + 1)
    elif isinstance(value, Mapping):
        for item in list(value.values())[:2000]:
            yield from _numbers(item, depth + 1)
    elif hasattr(value, "makespan") and hasattr(value, "start"):      # a Schedule
        yield from _numbers([value.start, value.end, value.makespan], depth + 1)
    elif hasattr(value, "finish") and hasattr(value, "latency"):      # a ServingResult
        yield from _numbers([value.finish, value.latency, value.busy], depth + 1)


def judge_result(label: str, result) -> tuple[str, str] | None:
    for x in _numbers(result):
        arr = np.asarray(x, dtype=float) if not isinstance(x, int) else None
        if arr is None:
            if x < 0 and label not in SIGNED_OK:
                return "wrong number", f"returned a negative number {x}"
            continue
        if np.isnan(arr).any():
            return "wrong number", "returned NaN"
        if np.isinf(arr).any() and label not in INF_OK:
            return "wrong number", "returned inf"
        if (arr < 0).any() and label not in SIGNED_OK:
            return "wrong number", f"returned a negative number {arr[arr < 0].flat[0]:g}"
    return None


def _value_texts(bad) -> list[str]:
    if isinstance(bad, bool) or bad is None:
        return [repr(bad)]
    if isinstance(bad, float):
        return [repr(bad), str(bad), f"{bad:g}", f"{bad:.6g}"]
    if isinstance(bad, int):
        return [repr(bad), f"{bad:g}", f"{float(bad)!r}", f"{bad:_}", f"{bad:,}"]
    if isinstance(bad, str):
        return [repr(bad), "str"]
    return []


def _names(message: str, name: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", message) is not None


def judge_error(exc: BaseException, names: dict[str, object], valid: dict | None = None) -> tuple[str, str] | None:
    """``names``: the perturbed parameters and their bad values; the message must name one of them, and a
    ValueError about a number given for a scalar parameter must quote that number."""
    if isinstance(exc, Hang):
        return "hang", f"ran past {TIME_LIMIT_S:g} s"
    if isinstance(exc, MemoryError):
        return "huge input", "MemoryError: no size check"
    if not isinstance(exc, (ValueError, TypeError)) or type(exc).__module__.startswith(("numpy", "json", "zlib")) \
            or isinstance(exc, (UnicodeError,)):
        return "wrong exception type", f"{type(exc).__module__}.{type(exc).__name__}: {exc}"
    message = str(exc)
    named = [n for n in names if _names(message, n)]
    if not named:
        return "vague message", f"{type(exc).__name__} does not name {' or '.join(names)}: {message!r}"
    # A number must be quoted back, so the learner sees what was wrong.
    for n in named:
        bad = names[n]
        texts = _value_texts(bad)
        scalar = valid is not None and _kind(valid.get(n)) in ("int", "float")
        if isinstance(exc, ValueError) and scalar and _is_real(bad) and texts and not any(t in message for t in texts):
            return "vague message", f"{type(exc).__name__} names {n} but not its value {bad!r}: {message!r}"
    return None


def call(fn, kwargs: dict, limit: float = TIME_LIMIT_S):
    """Run ``fn(**kwargs)`` under the alarm; return (result, exception)."""
    import matplotlib.pyplot as plt

    # A relative path given as a bad value ('text', '') lands in a scratch folder, never in the repository.
    cwd = os.getcwd()
    os.chdir(_SCRATCH)
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        with warnings.catch_warnings(), redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            return fn(**kwargs), None
    except BaseException as exc:  # noqa: BLE001 - every outcome is judged below
        if isinstance(exc, KeyboardInterrupt):
            raise
        return None, exc
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        os.chdir(cwd)
        if plt.get_fignums():
            plt.close("all")


COUNTS: Counter = Counter()


def drive(label: str, fn, perturbed: dict[str, object], params: dict[str, inspect.Parameter]):
    """Call ``fn`` with a valid baseline whose ``perturbed`` parameters are replaced; return a failure
    ``(category, text)`` or None."""
    kwargs = baseline(label, fn)
    valid = dict(kwargs)
    kwargs.update(perturbed)
    result, exc = call(fn, kwargs, SLOW_OK.get(label, (TIME_LIMIT_S,))[0])
    COUNTS["calls"] += 1
    shown = ", ".join(f"{k}={v!r}" for k, v in perturbed.items())
    if exc is not None:
        problem = judge_error(exc, perturbed, valid)
    else:
        reasons = [r for k, v in perturbed.items() if (r := must_reject(label, params[k], valid[k], v))]
        try:
            problem = ("silently accepted", reasons[0]) if reasons else judge_result(label, result)
        except Exception as exc:  # the call "succeeded" but built an object that breaks when read
            problem = ("silently accepted", f"returned a broken object ({type(exc).__name__}: {exc})")
    if problem:
        return problem[0], f"{label}({shown}): {problem[1]}"
    return None


def sweep(label: str) -> list[tuple[str, str]]:
    fn, owner = targets()[label]
    if fn is None:
        return [("baseline", f"{label}: cannot build an instance to drive its methods: {owner!r}")]
    params = {p.name: p for p in _params(fn)}
    failures = []
    if not params:
        result, exc = call(fn, {})
        COUNTS["calls"] += 1
        problem = judge_error(exc, {}) if exc else judge_result(label, result)
        return [(problem[0], f"{label}(): {problem[1]}")] if problem else []
    try:
        kwargs = baseline(label, fn)
    except LookupError as exc:
        return [("baseline", str(exc))]
    result, exc = call(fn, kwargs)
    if exc is not None:
        return [("baseline", f"{label}: the valid baseline call raised {type(exc).__name__}: {exc}")]
    for name in params:
        for bad in bad_values(kwargs[name], params[name]):
            problem = drive(label, fn, {name: bad}, params)
            if problem:
                failures.append(problem)
    return failures


def _ids() -> list[str]:
    return list(targets())


def _report(failures: list[tuple[str, str]]) -> str:
    counts = Counter(c for c, _ in failures)
    lines = [f"{len(failures)} contract failures ({dict(counts)}):"] + [f"  [{c}] {t}" for c, t in failures[:60]]
    return "\n".join(lines)


# --- the tests -----------------------------------------------------------------------------------------------------

def test_discovery_covers_the_named_modules_and_the_lazy_exports():
    modules = public_modules()
    assert NAMED_MODULES <= set(modules), NAMED_MODULES - set(modules)
    labels = {_short(label) for label in public_callables()}
    for name in hetlab.__all__:
        obj = getattr(hetlab, name)
        if callable(obj) and not _is_exception_type(obj) and not isinstance(obj, Mapping):
            assert _short(_label(obj)) in labels, name
    # The side-effect list names real functions, so it cannot silently exclude something that no longer exists.
    names = {label.rsplit(".", 1)[-1] for label in labels}
    assert set(SIDE_EFFECTS) <= names, set(SIDE_EFFECTS) - names


def test_no_unlisted_writer_is_driven_blindly():
    """A function that writes files (by its name or an output parameter) is either listed in SIDE_EFFECTS with
    hand-written cases, or in WRITERS_DRIVEN; the sweep must never rewrite the package's own data."""
    unlisted = []
    for label, (fn, _) in targets().items():
        if fn is None or label in WRITERS_DRIVEN:
            continue
        name = label.rsplit(".", 1)[-1]
        if WRITER_NAMES.search(name) or WRITER_PARAMS & {p.name for p in _params(fn)}:
            unlisted.append(label)
    assert not unlisted, unlisted


@pytest.mark.parametrize("label", _ids())
def test_sweep(label):
    """One parameter at a time gets each value of BAD; the rest of the call is valid."""
    failures = sweep(label)
    assert not failures, _report(failures)


FUZZ_VALUES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-10**13, max_value=10**13),
    st.sampled_from([None, True, False, "", "text", [], {}]),
    st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=3),
)


@pytest.mark.parametrize("label", [label for label in _ids() if targets()[label][0] and _params(targets()[label][0])])
@settings(max_examples=8, derandomize=True, database=None, deadline=None, phases=[Phase.generate],
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_random_inputs(label, data):
    """Several parameters at once get random floats, huge integers, None, booleans, text or float lists."""
    fn, _ = targets()[label]
    params = {p.name: p for p in _params(fn)}
    names = data.draw(st.lists(st.sampled_from(sorted(params)), min_size=1, max_size=3, unique=True))
    perturbed = {name: data.draw(FUZZ_VALUES, label=name) for name in names}
    COUNTS["hypothesis"] += 1
    problem = drive(label, fn, perturbed, params)
    assert problem is None, f"[{problem[0]}] {problem[1]}"


# --- hand-written cases for the side-effect functions ------------------------------------------------------------

def _expect_named(exc_info, name):
    assert _names(str(exc_info.value), name), str(exc_info.value)


@pytest.mark.parametrize("kwargs, name", [({"cache": "yes"}, "cache"), ({"refresh": None}, "refresh"),
                                          ({"cache": 1}, "cache")])
def test_calibrate_checks_its_flags(kwargs, name):
    from hetlab.real.measure import calibrate

    with pytest.raises(TypeError) as info:
        calibrate(**kwargs)
    _expect_named(info, name)


@pytest.mark.parametrize("args, name", [((math.nan,), "path"), ((None,), "path"), ((3,), "path")])
def test_bank_files_reject_bad_paths(args, name):
    from hetlab.book.quiz import export_bank, import_bank

    for fn in (export_bank, import_bank):
        with pytest.raises((ValueError, TypeError)) as info:
            fn(*args)
        _expect_named(info, name)


def test_export_bank_checks_chapter_before_writing(tmp_path):
    from hetlab.book.quiz import export_bank

    for chapter in (0, 99, "3", 2.5, True):
        with pytest.raises((ValueError, TypeError)) as info:
            export_bank(tmp_path / "x.json", chapter=chapter)
        _expect_named(info, "chapter")
    assert not (tmp_path / "x.json").exists()


def test_student_edition_and_grade_refuse_bad_arguments(tmp_path):
    from hetlab.book.edition import make_student_edition
    from hetlab.book.grading import grade

    for chapters in ([0], [99], ["3"], "3", [2.5]):
        with pytest.raises((ValueError, TypeError)) as info:
            make_student_edition(tmp_path / "out", chapters)
        _expect_named(info, "chapters")
    with pytest.raises((ValueError, TypeError)) as info:
        grade(tmp_path / "missing.ipynb", {})
    assert "submission" in str(info.value) or "key" in str(info.value)
    with pytest.raises((ValueError, TypeError)) as info:
        grade(tmp_path / "missing.ipynb", {}, timeout=-1)


# --- the command line ----------------------------------------------------------------------------------------------

def _subcommands():
    from hetlab.book.cli import _parser

    parser = _parser()
    for action in parser._actions:
        if getattr(action, "choices", None) and isinstance(action.choices, dict):
            return action.choices
    return {}


#: Valid positional arguments per subcommand, for building bad variants one argument at a time.
CLI_VALID = {"amdahl": ["0.9", "4"], "granularity": ["100", "1"], "student-edition": ["out"],
             "grade": ["submission.ipynb", "--key", "key.json"],
             "predict-cholesky": [str(_PACKAGE / "data" / "readings" / "h200-2026-12-04" / "h200_hetero.json")]}
CLI_BAD = ["nan", "inf", "-inf", "-1", "1e300", "1e-300", "text", "", "0", "10**12"]


def run_cli(argv, monkeypatch, tmp_path):
    from hetlab.book.cli import main

    monkeypatch.chdir(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, 30.0)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = main(list(argv))
            except SystemExit as exc:           # main must return, but a stray exit is judged too
                code = exc.code
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    COUNTS["cli"] += 1
    return code, out.getvalue(), err.getvalue()


def _cli_cases():
    cases = []
    for command, parser in _subcommands().items():
        valid = CLI_VALID.get(command, [])
        positionals = [a for a in parser._actions if not a.option_strings and a.dest != "help"]
        options = [a for a in parser._actions if a.option_strings and a.nargs != 0 and a.dest != "help"]
        numeric = command in ("amdahl", "granularity")     # numbers checked by argparse and the formulas: exit 2
        for k in range(len(positionals)):
            for bad in CLI_BAD:
                argv = list(valid)
                argv[k] = bad
                cases.append((command, argv, 2 if numeric else None))
            cases.append((command, valid[:k], 2))                     # a missing argument
        for option in options:
            typed = option.type in (int, float)
            for bad in ["nan", "-1", "1e300", "text", "0", ""]:
                expect = 2 if typed and bad in ("text", "") else None
                cases.append((command, valid + [option.option_strings[-1], bad], expect))
        cases.append((command, valid + ["--no-such-option"], 2))
        cases.append((command, valid + ["extra", "arguments"], 2))
    return cases


def test_cli_discovers_the_subcommands():
    assert {"demo", "amdahl", "granularity", "heft", "student-edition", "grade", "progress"} <= set(_subcommands())


@pytest.mark.parametrize("command, argv, expect", _cli_cases())
def test_cli_bad_arguments_give_one_line_and_no_traceback(command, argv, expect, monkeypatch, tmp_path):
    """A bad argument: a non-zero exit (2 for arguments the parser or the library rejects: missing, unknown,
    not a number, out of range), one line on stderr that starts with 'hetlab: error:', never a traceback."""
    code, out, err = run_cli([command, *argv], monkeypatch, tmp_path)
    assert "Traceback" not in out + err
    if code == 0:
        # Some "bad" looking values are valid (amdahl 0.9 1e300 is Amdahl's ceiling): then the output is numbers.
        assert not re.search(r"[=:]\s+-?(nan|inf)\b", out), out
        return
    assert isinstance(code, int) and code != 0
    assert expect is None or code == expect, (code, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hetlab: error: "), err


@pytest.mark.parametrize("argv", [["granularity", "1e300", "1e-10"], ["amdahl", "0", "inf"], ["amdahl", "0.5", "1e300"],
                                  ["granularity", "0", "1"], ["granularity", "1e-300", "1"]])
def test_cli_extreme_but_valid_numbers_print_finite_results(argv, monkeypatch, tmp_path):
    code, out, err = run_cli(argv, monkeypatch, tmp_path)
    assert code == 0, err
    assert not re.search(r"[=:]\s+-?(nan|inf)\b", out), out


def test_cli_granularity_of_huge_work_is_sqrt_w_over_sqrt_os(monkeypatch, tmp_path):
    code, out, err = run_cli(["granularity", "1e300", "1e-10"], monkeypatch, tmp_path)
    # sqrt(1e300) / sqrt(1e-10) = 1e150 / 1e-5 = 1e155
    assert code == 0 and "N* = sqrt(W/Os) = 1e+155" in out.replace("1.0000e+155", "1e+155"), out


def test_cli_unexpected_errors_become_one_line(monkeypatch, tmp_path):
    """A missing file is not an argument the parser can check: still one line and a non-zero exit."""
    code, out, err = run_cli(["grade", "missing.ipynb", "--key", "missing.json"], monkeypatch, tmp_path)
    assert code != 0 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith("hetlab: error: ")


def test_cli_no_command_is_a_one_line_error(monkeypatch, tmp_path):
    code, out, err = run_cli([], monkeypatch, tmp_path)
    assert code == 2 and len(err.strip().splitlines()) == 1 and err.startswith("hetlab: error: ")


def test_zz_package_data_untouched():
    """No fuzzed call rewrote the package's data (the question bank): every file keeps its modification time."""
    assert _data_snapshot() == _DATA_BEFORE


def test_zz_fuzz_size(capsys):
    """The fuzz size: planned sweep calls (one per parameter and bad value) and callables, printed and kept
    above a floor so that coverage cannot shrink unnoticed."""
    labels = list(targets())
    planned = sum(max(1, len(_params(targets()[label][0])) * len(BAD)) for label in labels if targets()[label][0])
    with capsys.disabled():
        print(f"\ncontract fuzz: {len(labels)} callables, {planned} planned sweep calls, calls made this run: "
              f"{COUNTS['calls']} (of which hypothesis {COUNTS['hypothesis']}), CLI runs {COUNTS['cli']}; "
              f"excluded for side effects: {sorted(SIDE_EFFECTS)}")
    assert len(labels) >= 150 and planned >= 4000
    assert os.environ.get("HETLAB_PROGRESS")   # conftest keeps the learner's real progress file out of this
