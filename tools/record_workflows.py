"""Regenerate hetlab/data/workflows.json: the stored WfCommons instances, their recipes' recorded ranges and
the run times of the real traces (hetlab.workloads.workflows).

Usage: ``python tools/record_workflows.py [WFINSTANCES_CHECKOUT]``. Needs wfcommons (``pip install
hetlab[workflows]``). With a checkout of https://github.com/wfcommons/WfInstances the trace statistics are
recomputed from its ``pegasus/montage`` and ``pegasus/epigenomics`` traces (files that do not parse, e.g.
Git LFS pointers, are skipped and not counted); without one they are kept as stored.
"""
from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from hetlab.workloads import workflows as W

INSTANCES = [(recipe, 60, seed) for recipe in ("montage", "epigenomics") for seed in range(20)] + \
            [("seismology", 103, 0)]


def _runtimes(path: Path) -> list[tuple[str, float]] | None:
    """(task type, run time s) of every task of one WfInstances trace (schema 1.4-1.6), or None."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    wf = doc["workflow"]
    if "execution" in wf:                      # schema 1.5+: specification + execution
        return [(t["id"].split("_")[0], float(t["runtimeInSeconds"])) for t in wf["execution"]["tasks"]]
    return [((t.get("category") or t["name"]).split("_")[0], float(t["runtime"])) for t in wf["tasks"]]


def trace_stats(checkout: Path) -> dict[str, dict[str, dict[str, float]]]:
    out = {}
    for recipe in ("montage", "epigenomics"):
        values: dict[str, list[float]] = defaultdict(list)
        traces: dict[str, int] = defaultdict(int)
        for path in sorted((checkout / "pegasus" / recipe).glob("*.json")):
            rows = _runtimes(path)
            if rows is None:
                continue
            for kind in {k for k, _ in rows}:
                traces[kind] += 1
            for kind, runtime in rows:
                values[kind].append(runtime)
        out[recipe] = {kind: {"traces": traces[kind], "tasks": len(v), "low": min(v),
                              "median": round(statistics.median(v), 6), "high": max(v)}
                       for kind, v in sorted(values.items())}
    return out


if __name__ == "__main__":
    W._store(INSTANCES, trace_stats(Path(sys.argv[1])) if len(sys.argv) > 1 else None)
    print(f"stored {len(INSTANCES)} instances in {W._STORE}")
