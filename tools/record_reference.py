"""Record this machine's reference reading for chapters 4 and 12 and appendix A1 (hetlab/book/data/readings/NAME.json).

Usage: ``python tools/record_reference.py NAME WHO WHAT [--out PATH]`` on an idle machine, e.g.
``python tools/record_reference.py build-vm 本书构建机 "2 个 vCPU 的 KVM 虚拟机"``. It runs every measured
experiment of the two chapters with the chapters' own settings (about half a minute) and stores the
numbers with the date and the machine's load per CPU before and after; the label the chapters print is
"WHO（WHAT；date，测时每个 CPU 的负载 x）". ``--out PATH`` writes the file there instead (a trial recording).
Appendix A1 is recorded as it measures: the pipelined O_s on the appendix's pool (the least of three), the
median single round trip back to back and after an idle pause of A1.4's median task, the hand-overs of A1.4's
executor (``measure.handovers``), the demo plan's runs task by task (figure A1-1), and A1.4's run with its
per-task gaps, queued split, prediction from the hand-overs and the allowed range stated before the run.
"""
from __future__ import annotations

import dataclasses
import datetime
import json
import sys
from pathlib import Path

from hetlab import schedulers as S
from hetlab.book.readings.a1 import dag_prediction, extra_band, handover_costs, trip_band
from hetlab.book.views import a1
from hetlab.real import experiments as X
from hetlab.real import measure
from hetlab.real.execute import run_graph, task_gaps
from hetlab.real.split_timing import blas_spin, nested_pair, split_matmul_timing

OUT = Path(__file__).resolve().parents[1] / "hetlab" / "book" / "data" / "readings"


def record() -> dict:
    """Every experiment's numbers, in the format :func:`hetlab.book.reference.load` reads."""
    cal = measure.calibrate(cache=False)
    round_trip = measure.dispatch_overhead(200, executor="process", pipelined=False)
    gil = X.gil_experiment()
    split = split_matmul_timing()
    # chapter 12's oversubscription pair, as its cell runs it: N = P x ceil(16 / P) (16 on 2 CPUs), BLAS pinned to 1
    # and to max(2, P) threads, each pool reading timed over one long clock window
    over = nested_pair(n=600)
    spin = blas_spin(over[1].blas_threads)  # what one multi-threaded product leaves burning, as the cell reads it
    plan, _ = a1.demo_plan()
    runs = X.plan_runs(plan, a1.SCALE)
    sweep = X.rounds_sweep()
    u_round_trip = min(measure.dispatch_overhead(300, workers=1, pipelined=False) for _ in range(3))
    u_sweep = X.u_curve_sweep()             # chapter 4: the round trip first, as the chapter predicts from it
    # appendix A1.1 as the appendix measures it, on A1.4's pool
    workers, graph, pause = a1.pool_size(), a1.dag(), a1.task_pause()
    pipelined = min(measure.dispatch_overhead(200, workers=workers, executor="process") for _ in range(3))
    trip = trip_band(measure.round_trips(workers=workers))[0]
    paused = trip_band(measure.round_trips(workers=workers, pause=pause))[0]
    hand = measure.handovers(workers=workers, pause=pause)      # A1.4's costs and allowed range, as A1.1 takes them
    costs, low, high = handover_costs(hand)
    simulated = S.central_queue(graph, a1.dag_workers(workers), ready="fifo")
    real = run_graph(graph, a1.sleep_bodies(graph), executor="process", workers=workers).schedule
    keep = ("cpus", "blas_threads", "matmul_gflops", "thread_overhead_s", "process_overhead_s")
    return {"cpus": measure.cpu_count(),
            "calibration": {**{k: cal[k] for k in keep}, "round_trip_s": round_trip, "workers": workers,
                            "pipelined_s": pipelined, "round_trip_median_s": trip, "pause_s": pause,
                            "paused_trip_s": paused, "handovers": {k: [list(b) for b in v] for k, v in hand.items()}},
            "gil": dataclasses.asdict(gil), "split": dataclasses.asdict(split),
            "oversubscription": [dataclasses.asdict(t) for t in over], "spin": list(spin),
            "plan": {k: dataclasses.asdict(X.Run.of(s)) for k, s in runs.items()},
            "plan_runs": {k: {"start": s.start.tolist(), "end": s.end.tolist(),
                              "cpu_seconds": [float(c) for c in s.info["cpu_seconds"]]}
                          for k, s in runs.items() if k != "sequential"},
            "sweep": dataclasses.asdict(sweep),
            "u_round_trip_s": u_round_trip, "u_sweep": dataclasses.asdict(u_sweep),
            "dag": {"workers": workers, "tasks": len(graph.tasks), "queue_s": simulated.makespan,
                    "predicted_s": dag_prediction(simulated, costs.released, costs.queued, costs.stretch),
                    "costs": [costs.released, costs.queued, costs.stretch],
                    "band_s": list(extra_band(simulated, low, high)), "measured_s": real.makespan,
                    "paused_trip_s": paused, "pipelined_s": pipelined,
                    "gaps": task_gaps(real).tolist(), "queued": [bool(q) for q in X.queued_tasks(real)]}}


def main(argv: list[str]) -> int:
    out = None
    if "--out" in argv:
        k = argv.index("--out")
        if k + 1 >= len(argv):
            print(__doc__)
            return 2
        out, argv = Path(argv[k + 1]), argv[:k] + argv[k + 2:]
    if len(argv) != 3:
        print(__doc__)
        return 2
    name, who, what = argv
    before = measure.load_per_cpu()
    data = record()
    after = measure.load_per_cpu()
    loads = [x for x in (before, after) if x is not None]
    when = datetime.date.today().isoformat()
    load = f"，测时每个 CPU 的负载 {max(loads):.2f}" if loads else ""
    data = {"label": f"{who}（{what}；{when}{load}）", "date": when, "load_per_cpu": [before, after],
            "python": sys.version.split()[0], **data}
    path = out or OUT / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{path}: load per CPU {before} -> {after}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
