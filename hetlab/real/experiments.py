"""The timed experiments of chapter 12 and appendix A1, each returning plain numbers.

Each experiment is built so that its lesson does not depend on how busy or how big the machine is:

- :func:`gil_experiment`: equal pure-Python loops run one after another, on a thread pool and on a
  process pool, read in CPU seconds per wall second (:func:`hetlab.real.execute.effective_parallelism`):
  threads under the GIL stay at or below one core whatever the load; processes reach several cores only
  when the machine has them free. The same number of ``time.sleep`` waits, one after another and on the
  thread pool, shows what threads are for: overlapping waits.
- :func:`plan_runs`: a simulated plan of independent tasks executed for real on threads, on processes
  and on one thread in sequence (chapter 11's demo, appendix A1).
- :func:`rounds_sweep`: ``total_seconds`` of waiting split into N equal tasks on a process pool of P
  workers; the waits hold a worker but no core, so the ``ceil(N / P)`` rounds show on any machine.
- :func:`u_curve_sweep`: the same waiting split into N tasks on a thread pool with a thread for every task
  (chapter 4's "at least N devices"): one thread hands the tasks out, so the U-curve ``N Os + W / N`` shows.

Predictions are not made here: they come from calibration (:mod:`hetlab.real.measure`) and the models.
"""
from __future__ import annotations

import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor, wait
from dataclasses import dataclass

import numpy as np

from hetlab import schedulers as S
from hetlab._validate import check_fields, check_instance, check_int, check_positive, check_sequence
from hetlab.devices import Device
from hetlab.real.execute import Sleep, queued_tasks, run_plan
from hetlab.real.measure import cpu_count, loop_rate
from hetlab.schedule import Schedule
from hetlab.tasks import independent_tasks

__all__ = ["Run", "GilReading", "gil_experiment", "plan_runs", "SweepReading", "rounds_sweep", "sweep_counts",
           "U_COUNTS", "u_curve_sweep", "queued_tasks"]

#: Most seconds of loop work (or of waiting) one experiment run may ask for.
MAX_SECONDS = 2.0


@dataclass(frozen=True)
class Run:
    """One measured run of tasks: ``wall`` seconds from the first task's start to the last task's end, and
    ``cpu`` seconds the tasks' threads spent (``time.thread_time``)."""

    wall: float
    cpu: float

    def __post_init__(self) -> None:
        check_fields(self)
        check_positive("wall", self.wall)

    @property
    def parallelism(self) -> float:
        """CPU seconds per wall second: how many cores computed at once, on average."""
        return self.cpu / self.wall

    @classmethod
    def of(cls, schedule: Schedule) -> Run:
        """The run recorded by :func:`hetlab.real.execute.run_plan` (``info["cpu_seconds"]``)."""
        check_instance("schedule", schedule, Schedule)
        if "cpu_seconds" not in schedule.info:
            raise ValueError("schedule must be a run of hetlab.real.execute.run_plan (info['cpu_seconds'])")
        return cls(float(schedule.end.max() - schedule.start.min()), float(np.sum(schedule.info["cpu_seconds"])))


@dataclass(frozen=True)
class GilReading:
    """:func:`gil_experiment`'s numbers: the machine (``cpus`` usable, ``gil`` on), the pools (``threads`` and
    ``processes`` workers; ``threads`` equal tasks in every run), and five runs: the loops one after another
    (``serial``), on the thread pool and on the process pool, and the waits one after another and on the
    thread pool."""

    cpus: int
    threads: int
    processes: int
    gil: bool
    serial: Run
    thread_pool: Run
    process_pool: Run
    wait_serial: Run
    wait_threads: Run

    def __post_init__(self) -> None:
        check_fields(self)
        for name in ("cpus", "threads", "processes"):
            check_int(name, getattr(self, name), low=1)
        for name in ("serial", "thread_pool", "process_pool", "wait_serial", "wait_threads"):
            check_instance(name, getattr(self, name), Run)


def _equal_plan(jobs: int, lanes: int) -> Schedule:
    """``jobs`` tasks of one time unit dealt round-robin to ``lanes`` identical workers."""
    return S.round_robin(independent_tasks([1.0] * jobs), [Device(f"worker{k}", "CPU") for k in range(lanes)])


def gil_experiment(*, threads: int | None = None, processes: int | None = None, work_seconds: float = 0.3,
                   wait_seconds: float = 0.025, steps_per_second: float | None = None) -> GilReading:
    """Run ``threads`` equal pure-Python loops, ``work_seconds`` of loop work in all, three ways: one after
    another on one thread, on a pool of ``threads`` threads, and on a pool of ``processes`` processes; then
    ``threads`` waits of ``wait_seconds`` each, one after another and on the thread pool. ``threads``
    defaults to max(8, usable CPUs), ``processes`` to the usable CPUs; ``steps_per_second`` to
    :func:`hetlab.real.measure.loop_rate`. About 3 x ``work_seconds`` of CPU time in all."""
    cpus = cpu_count()
    threads = max(8, cpus) if threads is None else check_int("threads", threads, low=1, high=64)
    processes = cpus if processes is None else check_int("processes", processes, low=1, high=64)
    work = check_positive("work_seconds", work_seconds, high=MAX_SECONDS)
    pause = check_positive("wait_seconds", wait_seconds, high=MAX_SECONDS / threads)
    rate = loop_rate(0.02) if steps_per_second is None else check_positive("steps_per_second", steps_per_second,
                                                                            high=1e9)
    on_threads, on_processes = _equal_plan(threads, threads), _equal_plan(threads, processes)
    unit = work / threads

    def loops(plan: Schedule, **how) -> Run:
        return Run.of(run_plan(plan, unit, steps_per_second=rate, **how).schedule)

    def waits(**how) -> Run:
        return Run.of(run_plan(on_threads, pause, executor="thread", body="sleep", **how).schedule)

    gil = bool(getattr(sys, "_is_gil_enabled", lambda: True)())
    return GilReading(cpus, threads, processes, gil,
                      serial=loops(on_threads, executor="thread", sequential=True),
                      thread_pool=loops(on_threads, executor="thread"),
                      process_pool=loops(on_processes, executor="process"),
                      wait_serial=waits(sequential=True), wait_threads=waits())


def plan_runs(plan: Schedule, seconds_per_unit: float, *, steps_per_second: float | None = None,
              repeat: int = 3) -> dict[str, Schedule]:
    """Execute ``plan`` (independent tasks) for real as pure-Python loops (:func:`hetlab.real.execute.run_plan`)
    on a thread pool, on a process pool (one worker per device) and on one thread in sequence, ``repeat``
    rounds in turn, so that drift in the machine's speed hits the three alike. Returns ``{"thread pool",
    "process pool", "sequential"}`` -> the run with the median makespan of its rounds. ``steps_per_second``
    defaults to the fastest of seven :func:`hetlab.real.measure.loop_rate` timings (in CPU time)."""
    check_instance("plan", plan, Schedule)
    scale = check_positive("seconds_per_unit", seconds_per_unit)
    repeat = check_int("repeat", repeat, low=1, high=9)
    # the fastest of 7 CPU-time calibrations: a loop sized from it needs at least its planned CPU seconds
    # (a slower core only adds to them), so the planned busy time over the cores is a lower bound on the run
    rate = loop_rate(0.05, repeat=7) if steps_per_second is None else check_positive(
        "steps_per_second", steps_per_second, high=1e9)
    busy = float((plan.end - plan.start).sum()) * scale
    if busy * repeat * 3 > 5 * MAX_SECONDS:
        raise ValueError(f"seconds_per_unit={scale:g} and repeat={repeat} make {busy * repeat * 3:.1f} s of loops; "
                         f"at most {5 * MAX_SECONDS:g} s is allowed")
    ways = {"thread pool": dict(executor="thread"), "process pool": dict(executor="process"),
            "sequential": dict(executor="thread", sequential=True)}
    rounds: dict[str, list[Schedule]] = {kind: [] for kind in ways}
    for _ in range(repeat):
        for kind, how in ways.items():
            rounds[kind].append(run_plan(plan, scale, steps_per_second=rate, **how).schedule)
    return {kind: sorted(v, key=lambda s: s.makespan)[(len(v) - 1) // 2] for kind, v in rounds.items()}


def sweep_counts(workers: int, counts=(1, 2, 3, 4, 8, 16, 64, 256)) -> tuple[int, ...]:
    """The task counts of a sweep on ``workers`` workers: ``counts`` together with P, P + 1 and 2P (where the
    rounds model's sawtooth shows), sorted, each at most 4096."""
    workers = check_int("workers", workers, low=1, high=2048)
    chosen = {check_int("counts", n, low=1, high=4096) for n in check_sequence("counts", counts)}
    return tuple(sorted(chosen | {workers, workers + 1, 2 * workers}))


@dataclass(frozen=True)
class SweepReading:
    """:func:`rounds_sweep`'s numbers: ``workers`` (P), the waiting put in (``total`` seconds), and per task
    count the fastest of its rounds' wall seconds."""

    workers: int
    total: float
    counts: tuple[int, ...]
    seconds: tuple[float, ...]

    def __post_init__(self) -> None:
        check_int("workers", self.workers, low=1)
        check_positive("total", self.total)
        counts = tuple(check_int("counts", n, low=1) for n in check_sequence("counts", self.counts))
        seconds = tuple(check_positive("seconds", t) for t in check_sequence("seconds", self.seconds))
        if len(counts) != len(seconds):
            raise ValueError(f"counts and seconds must have the same length, got {len(counts)} and {len(seconds)}")
        object.__setattr__(self, "counts", counts)
        object.__setattr__(self, "seconds", seconds)

    def at(self, count: int) -> float:
        """Wall seconds measured with ``count`` tasks (the fastest round)."""
        count = check_int("count", count, low=1)
        if count not in self.counts:
            raise ValueError(f"count must be one of the measured counts {self.counts}, got {count!r}")
        return self.seconds[self.counts.index(count)]


def rounds_sweep(total_seconds: float = 0.2, counts=(1, 2, 3, 4, 8, 16, 64, 256), *, workers: int | None = None,
                 repeat: int = 3) -> SweepReading:
    """Split ``total_seconds`` of waiting (:class:`hetlab.real.execute.Sleep`) into N equal tasks on one
    process pool of ``workers`` workers (None: max(2, usable CPUs)), for every N of :func:`sweep_counts`;
    wall seconds from the first submission to the last result, the fastest of ``repeat`` rounds (the counts
    interleaved). A wait holds its worker but no core, so the pool's rounds show even on one busy CPU; what
    the machine's load adds is dispatch time, which only lengthens a round: the fastest round is the one
    the load disturbed least."""
    total = check_positive("total_seconds", total_seconds, high=MAX_SECONDS / 4)
    workers = max(2, cpu_count()) if workers is None else check_int("workers", workers, low=1, high=64)
    repeat = check_int("repeat", repeat, low=1, high=9)
    chosen = sweep_counts(workers, counts)
    if len(chosen) > 32:
        raise ValueError(f"counts must list at most 29 counts (P, P + 1 and 2P are added), got {len(chosen)}")
    runs: dict[int, list[float]] = {n: [] for n in chosen}
    with ProcessPoolExecutor(workers) as pool:
        list(pool.map(time.sleep, [0.05] * workers))     # every worker exists before any clock starts
        for _ in range(repeat):
            for n in chosen:
                body = Sleep(total / n)
                start = time.perf_counter()
                wait([pool.submit(body) for _ in range(n)])
                runs[n].append(time.perf_counter() - start)
    return SweepReading(workers, total, chosen, tuple(min(runs[n]) for n in chosen))


#: The task counts of :func:`u_curve_sweep`: about two per octave from 1 to 512.
U_COUNTS = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512)


def u_curve_sweep(total_seconds: float = 0.05, counts=U_COUNTS, *, repeat: int = 5) -> SweepReading:
    """Split ``total_seconds`` of waiting (``time.sleep``) into N equal tasks, handed out one after another by
    this thread to a thread pool with a thread for every task, for every N of ``counts``; wall seconds from
    the first submission to the last result, the fastest of ``repeat`` rounds (the counts interleaved).

    Every task finds an idle thread, as chapter 4's model has a device for every task, and a wait holds no
    core and no GIL: the time is ``N Os + W / N`` plus a small constant, where ``Os`` is what handing out one
    task costs this thread. Load only lengthens a round (the fastest is the least disturbed), and each round
    starts after a short sleep, on a fresh time slice. About 1 to 3 s with the defaults; the reading's
    ``workers`` is the pool's thread count, ``max(counts)``."""
    total = check_positive("total_seconds", total_seconds, high=MAX_SECONDS / 8)
    repeat = check_int("repeat", repeat, low=1, high=9)
    chosen = tuple(sorted({check_int("counts", n, low=1, high=1024) for n in check_sequence("counts", counts)}))
    if not chosen or len(chosen) > 32:
        raise ValueError(f"counts must list 1 to 32 task counts, got {len(chosen)}")
    threads = max(chosen)
    runs: dict[int, list[float]] = {n: [] for n in chosen}
    with ThreadPoolExecutor(threads) as pool:
        gate = threading.Barrier(threads + 1)       # every thread exists before any clock starts
        started = [pool.submit(gate.wait) for _ in range(threads)]
        gate.wait()
        wait(started)
        for _ in range(repeat):
            for n in chosen:
                piece = total / n
                time.sleep(0.001)
                start = time.perf_counter()
                wait([pool.submit(time.sleep, piece) for _ in range(n)])
                runs[n].append(time.perf_counter() - start)
    return SweepReading(threads, total, chosen, tuple(min(runs[n]) for n in chosen))
