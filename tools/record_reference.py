"""Record this machine's reference reading for chapters 4 and 12 and appendix A1 (hetlab/book/data/readings/NAME.json).

Usage: ``python tools/record_reference.py NAME WHO WHAT`` on an idle machine, e.g.
``python tools/record_reference.py build-vm 本书构建机 "2 个 vCPU 的 KVM 虚拟机"``. It runs every measured
experiment of the two chapters with the chapters' own settings (about a quarter of a minute) and stores the
numbers with the date and the machine's load per CPU before and after; the label the chapters print is
"WHO（WHAT；date，测时每个 CPU 的负载 x）".
"""
from __future__ import annotations

import dataclasses
import datetime
import json
import sys
from pathlib import Path

from hetlab import schedulers as S
from hetlab.book.readings.a1 import dag_prediction
from hetlab.book.views import a1
from hetlab.real import experiments as X
from hetlab.real import measure
from hetlab.real.execute import run_graph
from hetlab.real.split_timing import split_matmul_timing

OUT = Path(__file__).resolve().parents[1] / "hetlab" / "book" / "data" / "readings"


def record() -> dict:
    """Every experiment's numbers, in the format :func:`hetlab.book.reference.load` reads."""
    cal = measure.calibrate(cache=False)
    round_trip = measure.dispatch_overhead(200, executor="process", pipelined=False)
    gil = X.gil_experiment()
    split = split_matmul_timing()
    plan, _ = a1.demo_plan()
    runs = X.plan_runs(plan, a1.SCALE)
    sweep = X.rounds_sweep()
    u_round_trip = min(measure.dispatch_overhead(300, workers=1, pipelined=False) for _ in range(3))
    u_sweep = X.u_curve_sweep()             # chapter 4: the round trip first, as the chapter predicts from it
    workers, graph = a1.pool_size(), a1.dag()
    simulated = S.central_queue(graph, a1.dag_workers(workers), ready="fifo")
    real = run_graph(graph, a1.sleep_bodies(graph), executor="process", workers=workers)
    keep = ("cpus", "blas_threads", "matmul_gflops", "thread_overhead_s", "process_overhead_s")
    return {"cpus": measure.cpu_count(),
            "calibration": {**{k: cal[k] for k in keep}, "round_trip_s": round_trip},
            "gil": dataclasses.asdict(gil), "split": dataclasses.asdict(split),
            "plan": {k: dataclasses.asdict(X.Run.of(s)) for k, s in runs.items()},
            "sweep": dataclasses.asdict(sweep),
            "u_round_trip_s": u_round_trip, "u_sweep": dataclasses.asdict(u_sweep),
            "dag": {"workers": workers, "tasks": len(graph.tasks), "queue_s": simulated.makespan,
                    "predicted_s": dag_prediction(simulated, round_trip), "measured_s": real.schedule.makespan}}


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__)
        return 2
    name, who, what = argv
    before = measure.load_per_cpu()
    data = record()
    after = measure.load_per_cpu()
    loads = [x for x in (before, after) if x is not None]
    when = datetime.date.today().isoformat()
    load = f"，测时每个 CPU 的负载 {max(loads):.1f}" if loads else ""
    data = {"label": f"{who}（{what}；{when}{load}）", "date": when, "load_per_cpu": [before, after],
            "python": sys.version.split()[0], **data}
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{name}.json").write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{OUT / (name + '.json')}: load per CPU {before} -> {after}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
