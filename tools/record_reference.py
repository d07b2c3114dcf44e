"""Record this machine's reference reading for chapters 4 and 12 and appendix A1 (hetlab/book/data/readings/NAME.json).

Usage: ``python tools/record_reference.py NAME WHO WHAT [--out PATH] [--a1-4 [--condition C]]`` on an idle
machine, e.g.
``python tools/record_reference.py build-vm 本书构建机 "2 个 vCPU 的 KVM 虚拟机"``. It runs every measured
experiment of the two chapters with the chapters' own settings (about half a minute) and stores the
numbers with the date and the machine's load per CPU before and after; the label the chapters print is
"WHO（WHAT；date，测时每个 CPU 的负载 x）". ``--out PATH`` writes the file there instead (a trial recording).
Appendix A1 is recorded as it measures: the pipelined O_s on the appendix's pool (the least of three), the
demo plan's runs task by task (figure A1-1), and A1.4 as (calibration, run) pairs (:func:`record_a1_4`).
``--a1-4`` records only A1.4 (its calibrations and runs) into the existing file NAME.json, with a label of its
own, leaving the other fields (and the moment they were recorded at) as they are; ``--condition
idle|busy|one-cpu`` names the condition its pairs stand for (readings.a1.CONDITIONS; default idle). Each pair
also stores the CPUs other programs kept busy over the whole pair (:func:`others_during`); a pair that was not in
the condition named by the reading before it, or left it by that one (readings.a1.stayed), is recorded again (at
most 40 times), and
A1.4's label quotes that range instead of a load average.
"""
from __future__ import annotations

import dataclasses
import datetime
import json
import sys
from pathlib import Path

from hetlab import schedulers as S
from hetlab.book.readings.a1 import CONDITIONS, condition, dispatch_simulation, stayed, typical_costs
from hetlab.book.views import a1
from hetlab.real import experiments as X
from hetlab.real import measure
from hetlab.real.cpu_load import busy_cpus, mark, others_since
from hetlab.real.execute import queued_tasks, run_graph, task_gaps
from hetlab.real.split_timing import blas_spin, nested_pair, split_matmul_timing

OUT = Path(__file__).resolve().parents[1] / "hetlab" / "book" / "data" / "readings"

#: A1.4 is recorded as this many (calibration, run) pairs for the band, each a whole calibration followed at once
#: by one run, as the appendix's A1.4 cell does; their measured / predicted ratios give the interval's factors
#: (readings.a1.error_band), and as many more pairs, recorded after them, check it (``held_out``).
PAIRS = 20


def record_a1_4(kind: str) -> tuple[dict, dict]:
    """A1.4 as the appendix's cell runs it, :data:`PAIRS` x 2 times: the hand-over calibration on A1.4's
    siblings, the prediction from the median calibration graph (readings.a1.typical_costs), then at once the run.
    Returns (calibration fields, ``dag`` fields). The first pair's calibration is stored whole (A1.1's reference
    line) and its run task by task (figure A1-4's reference panel); every pair as (predicted, measured) extra
    seconds over the simulation and the CPUs other programs kept busy just before its calibration (those this
    process may use, then the whole machine's, then over the pair), the first :data:`PAIRS` as ``pairs``, the rest
    as ``held_out``; ``per_graph``: each pair's five calibration graphs' own predictions, in the same order."""
    workers, graph = a1.pool_size(), a1.dag()
    simulated = S.central_queue(graph, a1.dag_workers(workers), ready="fifo")
    pairs, per_graph, first, discarded = [], [], None, 0
    while len(pairs) < 2 * PAIRS and discarded < 2 * PAIRS:
        # the reader's cell reads both too: both sides classed by one function (readings.a1.condition)
        busy = busy_cpus()
        machine = busy_cpus(machine=True) if measure.cpu_count() == 1 else busy   # as A1.4's cell reads it
        (hand, costs, each, predicted, run), during = others_during(lambda: _pair(graph, simulated, workers))
        # a reference stands for its condition only if the whole pair ran in it, not just the 0.2 s read before
        # it: a pair read in another class before it, or put in another class by other programs' CPU use during
        # it, is recorded again
        cpus = measure.cpu_count()
        if condition(cpus, busy, machine) != kind or not stayed(kind, cpus, during):
            discarded += 1
            print(f"pair {len(pairs) + 1}: other programs kept {busy:.2f} CPUs busy before it and {during:.2f} "
                  "during it; recorded again")
            continue
        pairs.append([predicted - simulated.makespan, run.makespan - simulated.makespan, busy, machine, during])
        per_graph.append(list(each))    # the five graphs' own predictions: readings.a1.calibration_disturbed
        first = first or (hand, costs, predicted, run)
    if len(pairs) < 2 * PAIRS:
        raise SystemExit(f"only {len(pairs)} of {2 * PAIRS} pairs ran in one condition ({discarded} disturbed): "
                         "record on a quieter machine")
    hand, costs, predicted, run = first
    calibration = {"handovers": {k: [list(b) for b in v] for k, v in hand.items()},
                   "handovers_graphs": list(a1.CALIBRATION_SEEDS)}
    dag = {"workers": workers, "cpus": measure.cpu_count(), "tasks": len(graph.tasks), "queue_s": simulated.makespan,
           "condition": kind, "discarded": discarded,
           "costs": [costs.released, costs.queued, costs.stretch], "predicted_s": predicted,
           "measured_s": run.makespan, "pairs": pairs[:PAIRS], "held_out": pairs[PAIRS:],
           "per_graph": per_graph,
           "start": run.start.tolist(), "end": run.end.tolist(), "device_of": run.device_of.tolist(),
           "gaps": task_gaps(run).tolist(), "queued": [bool(q) for q in queued_tasks(run)]}
    return calibration, dag


def _pair(graph, simulated, workers):
    """One (calibration, run) pair as A1.4's cell runs it: the calibration, the prediction, then at once the run."""
    hand = measure.handovers(a1.calibration_dags(), workers=workers)
    costs, each = typical_costs(simulated, hand)
    predicted = dispatch_simulation(simulated, costs.released, costs.queued, costs.stretch)[0]
    run = run_graph(graph, a1.sleep_bodies(graph), executor="process", workers=workers).schedule
    return hand, costs, each, predicted, run


def others_during(work):
    """(``work()``, the CPUs other programs kept busy on the whole machine while it ran: cpu_load.others_since;
    the pools of ``work`` are closed, so their workers are reaped, before it returns)."""
    start = mark(machine=True)
    result = work()
    during = others_since(start)
    if during is None:
        raise SystemExit("/proc/stat is unreadable: the reference's condition cannot be checked")
    return result, during


def during_range(dag: dict) -> str:
    """The label's note on a recorded A1.4: the least and the most CPUs other programs kept busy during a pair
    (pairs recorded before :func:`others_during` existed: read just before each pair's calibration)."""
    rows = dag["pairs"] + dag["held_out"]
    when, column = ("运行期间", 4) if all(len(row) > 4 for row in rows) else ("标定前", 2)
    busy = [row[column] for row in rows]
    return f"每对{when}别的程序占用 {min(busy):.2f}–{max(busy):.2f} 个 CPU"


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
    workers = a1.pool_size()
    pipelined = min(measure.dispatch_overhead(200, workers=workers, executor="process") for _ in range(3))
    hand, dag = record_a1_4("idle")
    keep = ("cpus", "blas_threads", "matmul_gflops", "thread_overhead_s", "process_overhead_s")
    return {"cpus": measure.cpu_count(),
            "calibration": {**{k: cal[k] for k in keep}, "round_trip_s": round_trip, "workers": workers,
                            "pipelined_s": pipelined, **hand},
            "gil": dataclasses.asdict(gil), "split": dataclasses.asdict(split),
            "oversubscription": [dataclasses.asdict(t) for t in over], "spin": list(spin),
            "plan": {k: dataclasses.asdict(X.Run.of(s)) for k, s in runs.items()},
            "plan_runs": {k: {"start": s.start.tolist(), "end": s.end.tolist(),
                              "cpu_seconds": [float(c) for c in s.info["cpu_seconds"]]}
                          for k, s in runs.items() if k != "sequential"},
            "sweep": dataclasses.asdict(sweep),
            "u_round_trip_s": u_round_trip, "u_sweep": dataclasses.asdict(u_sweep),
            "dag": dag}


def main(argv: list[str]) -> int:
    out, only_a1_4, kind = None, "--a1-4" in argv, "idle"
    argv = [a for a in argv if a != "--a1-4"]
    if "--condition" in argv:
        k = argv.index("--condition")
        if k + 1 >= len(argv) or argv[k + 1] not in CONDITIONS:
            print(__doc__)
            return 2
        kind, argv = argv[k + 1], argv[:k] + argv[k + 2:]
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
    path = out or OUT / f"{name}.json"
    if only_a1_4 and not (OUT / f"{name}.json").exists():
        print(f"--a1-4 adds to an existing reading; {OUT / f'{name}.json'} does not exist")
        return 2
    before = measure.load_per_cpu()
    recorded = record_a1_4(kind) if only_a1_4 else record()
    after = measure.load_per_cpu()
    loads = [x for x in (before, after) if x is not None]
    now = datetime.datetime.now(datetime.timezone.utc)
    when = now.date().isoformat()
    load = f"，测时每个 CPU 的负载 {min(loads):.2f}–{max(loads):.2f}" if loads else ""
    label = f"{who}（{what}；{when}{load}）"
    if only_a1_4:
        calibration, dag = recorded
        # what the pairs' condition rests on: the other programs' CPU use measured over each pair (a load average
        # is a minute's mean, still falling from whatever ran before)
        label = f"{who}（{what}；{when}，{during_range(dag)}）"
        data = json.loads((OUT / f"{name}.json").read_text(encoding="utf-8"))
        data.setdefault("calibration", {"cpus": data.get("cpus")})
        for key in ("handovers", "handovers_note", "handovers_graphs", "round_trip_median_s", "paused_trip_s",
                    "pause_s"):     # earlier ways of calibrating A1.4, replaced
            data["calibration"].pop(key, None)
        data["calibration"].update(calibration, handovers_note=f"{now:%H:%M} UTC 与 A1.4 一起另测，{during_range(dag)}")
        data["dag"] = {**dag, "label": label, "load_per_cpu": [before, after]}
        data["note"] = (f"A1.4 and its hand-over calibration (calibration.handovers, dag) recorded apart at "
                        f"{now:%Y-%m-%d %H:%M} UTC by tools/record_reference.py --a1-4; everything else as the "
                        "label says.")
    else:
        data = {"label": label, "date": when, "load_per_cpu": [before, after],
                "python": sys.version.split()[0], **recorded}
    return write_reading(path, data, before, after)


def write_reading(path: Path, data: dict, before: float | None, after: float | None) -> int:
    """Write one reading as the package stores them (UTF-8 JSON, indent 1) and say where, with the loads."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{path}: load per CPU {before} -> {after}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
