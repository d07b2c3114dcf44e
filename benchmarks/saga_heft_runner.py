"""Run anrg-saga's HEFT on an instance exported by bench_heft.py (executed by the saga venv's Python).

Reads a JSON instance from argv[1], prints one JSON line: seconds, makespan, placements.
Not imported by hetlab; the saga venv is separate because saga needs Python >= 3.12.
"""
import json
import sys
import time

from saga import Network, TaskGraph
from saga.schedulers.heft import HeftScheduler


def main(path: str) -> None:
    inst = json.load(open(path))
    names = inst["devices"]
    network = Network.create(
        nodes=list(zip(names, inst["speeds"])),
        edges=[(a, b, min(inst["bandwidths"][i], inst["bandwidths"][j]))
               for i, a in enumerate(names) for j, b in enumerate(names) if i < j],
    )
    graph = TaskGraph.create(tasks=list(zip(inst["tasks"], inst["work"])),
                             dependencies=[tuple(e) for e in inst["edges"]])
    start = time.perf_counter()
    schedule = HeftScheduler().schedule(network, graph)
    seconds = time.perf_counter() - start
    placements = {t.name: [t.node, t.start, t.end] for tasks in schedule.mapping.values() for t in tasks}
    print(json.dumps({"seconds": seconds, "makespan": schedule.makespan, "placements": placements}))


if __name__ == "__main__":
    main(sys.argv[1])
