"""Stored reference readings: chapter 12's and appendix A1's experiments measured once on named machines.

A measured cell shows the reader's own reading next to a stored one, so that the lesson is visible even when
the reader's machine is too small or too busy to show it. The readings live in ``hetlab/book/data/readings``
as JSON, one file per machine, written by ``tools/record_reference.py`` (the book's build machine) or copied
from a named reading (the H200 machine of ``../shared/data/h200-2026-12-04``). The ``label`` of each file is
the Chinese name the chapters print (a data table of labels).

>>> load("build-vm").gil.threads >= 8
True
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hetlab._validate import check_choice, check_instance, check_int, check_positive, check_str
from hetlab.real.experiments import GilReading, Run, SweepReading
from hetlab.real.split_timing import SplitTiming

__all__ = ["Reference", "load", "NAMES"]

DATA = Path(__file__).parent / "data" / "readings"
#: The stored machines, by file name. "build-vm" was taken at a load of 3 per CPU (the busy case the chapters
#: warn about); "build-vm-idle" on the same 2-vCPU machine at a load of 0.3, where both cores were free;
#: "build-vm-one-cpu" holds only chapter 12's nested-BLAS pair and spin reading on the same machine pinned to one
#: CPU (``taskset -c 0 .venv/bin/python tools/record_one_cpu.py``).
NAMES = ("build-vm", "build-vm-idle", "build-vm-one-cpu", "h200")


@dataclass(frozen=True)
class Reference:
    """One machine's stored reading. ``label``: the Chinese name to print (machine, date, load); ``cpus``:
    usable CPUs; each experiment's numbers where the machine ran it, else None (``u_sweep``: chapter 4's
    :func:`~hetlab.real.experiments.u_curve_sweep`, with ``u_round_trip``, the seconds of one thread-pool round
    trip measured just before it; ``oversubscription``: chapter 12's same split with BLAS pinned to one thread and
    to several, two :class:`~hetlab.real.split_timing.SplitTiming`; ``plan_runs``: appendix A1's process-pool and
    thread-pool runs task by task, kind -> ``start``, ``end``, ``cpu_seconds`` lists; ``spin``: chapter 12's
    (wall, CPU) seconds the process kept burning after one multi-threaded product,
    :func:`~hetlab.real.split_timing.blas_spin`); ``extra``: the raw figures
    of readings that are not this package's
    experiments (the H200 machine's GPU timings)."""

    label: str
    cpus: int
    calibration: dict | None = None
    gil: GilReading | None = None
    split: SplitTiming | None = None
    plan: dict | None = None
    sweep: SweepReading | None = None
    dag: dict | None = None
    u_sweep: SweepReading | None = None
    u_round_trip: float | None = None
    extra: dict | None = None
    oversubscription: tuple[SplitTiming, SplitTiming] | None = None
    plan_runs: dict | None = None
    spin: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        check_str("label", self.label)
        check_int("cpus", self.cpus, low=1)
        for name, kind in (("calibration", dict), ("gil", GilReading), ("split", SplitTiming), ("plan", dict),
                           ("sweep", SweepReading), ("dag", dict), ("u_sweep", SweepReading), ("extra", dict),
                           ("plan_runs", dict)):
            if getattr(self, name) is not None:
                check_instance(name, getattr(self, name), kind, f"a {kind.__name__} or None")
        if self.oversubscription is not None:
            pair = check_instance("oversubscription", self.oversubscription, tuple, "a pair of SplitTiming or None")
            if len(pair) != 2 or not all(isinstance(t, SplitTiming) for t in pair):
                raise ValueError(f"oversubscription must be a pair of SplitTiming, got {pair!r}")
        if self.spin is not None:
            pair = check_instance("spin", self.spin, tuple, "a (wall, CPU) pair of seconds or None")
            if len(pair) != 2 or not all(isinstance(x, float) and x >= 0 for x in pair):
                raise ValueError(f"spin must be a (wall, CPU) pair of non-negative seconds, got {pair!r}")
        if self.u_round_trip is not None:
            check_positive("u_round_trip", self.u_round_trip, high=1.0)


def _gil(data: dict) -> GilReading:
    runs = {k: Run(**v) for k, v in data.items() if isinstance(v, dict)}
    rest = {k: v for k, v in data.items() if not isinstance(v, dict)}
    return GilReading(**rest, **runs)


def _split(data: dict) -> SplitTiming:
    return SplitTiming(**{k: tuple(v) if isinstance(v, list) else v for k, v in data.items()})


def _sweep(data: dict) -> SweepReading:
    return SweepReading(data["workers"], data["total"], tuple(data["counts"]), tuple(data["seconds"]))


def load(name: str) -> Reference:
    """The stored reading of machine ``name`` (one of :data:`NAMES`)."""
    check_choice("name", name, NAMES)
    raw: dict[str, Any] = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    return Reference(
        label=raw["label"], cpus=raw["cpus"], calibration=raw.get("calibration"),
        gil=_gil(raw["gil"]) if "gil" in raw else None, split=_split(raw["split"]) if "split" in raw else None,
        plan={k: Run(**v) for k, v in raw["plan"].items()} if "plan" in raw else None,
        sweep=_sweep(raw["sweep"]) if "sweep" in raw else None, dag=raw.get("dag"),
        u_sweep=_sweep(raw["u_sweep"]) if "u_sweep" in raw else None, u_round_trip=raw.get("u_round_trip_s"),
        extra=raw.get("extra"), plan_runs=raw.get("plan_runs"),
        oversubscription=tuple(_split(t) for t in raw["oversubscription"]) if "oversubscription" in raw else None,
        spin=tuple(float(x) for x in raw["spin"]) if "spin" in raw else None)
