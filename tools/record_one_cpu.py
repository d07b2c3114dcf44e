"""Record chapter 12's nested-BLAS pair on one CPU of this machine (hetlab/book/data/readings/build-vm-one-cpu.json).

Usage, on a quiet machine (check ``uptime`` first)::

    taskset -c 0 .venv/bin/python tools/record_one_cpu.py [--out PATH]

Pinned to one CPU, :func:`hetlab.real.measure.cpu_count` is 1, so the pool has one thread and BLAS runs with
max(2, 1) = 2 threads: more BLAS threads than cores, chapter 12's plain oversubscription. It runs the pair and the
spin reading exactly as chapter 12's nested cell does (``nested_pair(n=600)``, then ``blas_spin`` with the nested
reading's BLAS threads) and stores them with the date and the machine's load per CPU (the 1-minute load average
over all of the machine's CPUs, not the one this process may use) before and after. The label the chapter prints
is "本书构建机（2 个 vCPU 的 KVM 虚拟机，只用 1 个 CPU（taskset -c 0）；date，测时每个 CPU 的负载 x）".
``--out PATH`` writes the file there instead (a trial recording).
"""
from __future__ import annotations

import dataclasses
import datetime
import os
import sys
from pathlib import Path

from record_reference import write_reading  # tools/ is on sys.path when a tool runs as a script

from hetlab.real.measure import cpu_count
from hetlab.real.split_timing import blas_spin, nested_pair

OUT = Path(__file__).resolve().parents[1] / "hetlab" / "book" / "data" / "readings" / "build-vm-one-cpu.json"


def _load_per_cpu() -> float | None:
    """The 1-minute load average per CPU of the whole machine (the other CPU's load disturbs a pinned run too)."""
    try:
        return os.getloadavg()[0] / (os.cpu_count() or 1)
    except (AttributeError, OSError):
        return None


def main(argv: list[str]) -> int:
    out = OUT
    if argv[:1] == ["--out"] and len(argv) == 2:
        out = Path(argv[1])
    elif argv:
        print(__doc__)
        return 2
    if cpu_count() != 1:
        print(f"run it pinned to one CPU (taskset -c 0 ...): this process may use {cpu_count()} CPUs")
        return 2
    before = _load_per_cpu()
    over = nested_pair(n=600)                       # as chapter 12's cell runs it
    spin = blas_spin(over[1].blas_threads)
    after = _load_per_cpu()
    loads = [x for x in (before, after) if x is not None]
    when = datetime.date.today().isoformat()
    load = f"，测时每个 CPU 的负载 {max(loads):.2f}" if loads else ""
    data = {"label": f"本书构建机（2 个 vCPU 的 KVM 虚拟机，只用 1 个 CPU（taskset -c 0）；{when}{load}）",
            "date": when, "load_per_cpu": [before, after], "python": sys.version.split()[0], "cpus": cpu_count(),
            "oversubscription": [dataclasses.asdict(t) for t in over], "spin": list(spin),
            "note": "Chapter 12's nested-BLAS pair and spin reading, recorded by tools/record_one_cpu.py under "
                    "taskset -c 0 on the 2-vCPU build VM."}
    return write_reading(out, data, before, after)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
