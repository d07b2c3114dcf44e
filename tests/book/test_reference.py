"""hetlab.book.reference: the stored readings load as the experiments' own types."""
import pytest

from hetlab.book import reference
from hetlab.real.experiments import GilReading, SweepReading
from hetlab.real.split_timing import SplitTiming


def test_the_build_machine_stores_every_experiment():
    r = reference.load("build-vm")
    assert isinstance(r.gil, GilReading) and isinstance(r.split, SplitTiming) and isinstance(r.sweep, SweepReading)
    assert set(r.plan) == {"thread pool", "process pool", "sequential"}
    assert {"workers", "queue_s", "predicted_s", "measured_s"} <= set(r.dag)
    assert r.gil.thread_pool.parallelism <= 1.05 and r.cpus >= 1 and "构建机" in r.label


def test_the_h200_machine_stores_its_gpu_figures():
    h = reference.load("h200")
    assert h.cpus == 16 and h.gil is None and h.calibration["matmul_gflops"] > 300
    rows = {row["N"]: row["seconds"] for row in h.extra["grain"]["rows"]}
    assert rows[65536] > 1000 * rows[1]            # 0.97 s against 0.27 ms (README of the reading)
    assert h.extra["offload_n"] == {"float32": 512, "float64": 512}


def test_unknown_machine():
    with pytest.raises(ValueError, match="name"):
        reference.load("laptop")


def test_the_h200_machine_stores_chapter_4s_u_curve():
    h = reference.load("h200")
    s = h.u_sweep
    assert isinstance(s, SweepReading) and s.workers == max(s.counts) == 512 and s.total == 0.05
    assert 10e-6 < h.u_round_trip < 100e-6
    # a U: one task waits the whole 50 ms, the fastest count is in the middle, 512 tasks pay 512 dispatches
    best = min(s.counts, key=s.at)
    assert s.at(1) >= 0.05 and 1 < best < 512 and s.at(512) > 2 * s.at(best)


def test_the_idle_build_machine_shows_both_parallel_lessons():
    """The reason this reading is stored: on two free cores a process pool computes on ~2 CPUs at once while the
    thread pool stays at <= 1 (the GIL), and the split product gets faster from N = 1 to N = P."""
    r = reference.load("build-vm-idle")
    assert r.cpus == 2 and "空闲" in r.label
    assert r.gil.process_pool.parallelism > 1.8 and r.gil.thread_pool.parallelism <= 1.05
    assert r.split.pool[r.split.pieces.index(r.split.workers)] < 0.8 * r.split.pool[0]
    plan = r.plan
    assert plan["process pool"].wall < 0.6 * plan["sequential"].wall <= plan["thread pool"].wall * 1.05
    # the DAG run lands within 10% of the prediction made from the queue simulation and the round trip
    assert abs(r.dag["measured_s"] / r.dag["predicted_s"] - 1) < 0.10


def test_a_reading_with_the_new_optional_fields_loads(tmp_path, monkeypatch):
    """tools/record_reference.py adds A1's paused trip, gaps and per-task plan runs; older files lack them."""
    import json

    raw = json.loads((reference.DATA / "build-vm-idle.json").read_text(encoding="utf-8"))
    assert reference.load("build-vm-idle").plan_runs is None or "process pool" in raw["plan_runs"]
    raw["plan_runs"] = {"process pool": {"start": [0.0], "end": [1.0], "cpu_seconds": [1.0]}}
    raw["dag"] = {**raw["dag"], "gaps": [1e-4], "queued": [True]}
    (tmp_path / "build-vm-idle.json").write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    monkeypatch.setattr(reference, "DATA", tmp_path)
    r = reference.load("build-vm-idle")
    assert r.plan_runs["process pool"]["end"] == [1.0] and r.dag["queued"] == [True]
