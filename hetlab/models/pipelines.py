"""Pipelines: a step of pipeline-parallel training as a timeline, and a stream of frames through one placement.

One idea: work split into stages that run on different devices, kept busy by feeding them a stream of
items (micro-batches, frames); the bubbles at the ends and the slowest stage set the time per item.

- :func:`pipeline_schedule`: one training step with one stage per device, GPipe or 1F1B (Huang et al. 2019;
  Narayanan et al. 2021), as a :class:`~hetlab.schedule.Schedule` with its bubble and peak activations;
- frame-level pipelining: when one frame's operators form a chain, a single frame cannot keep CPU, GPU and
  NPU busy at once (its operators wait on each other), but consecutive frames can: while the NPU runs frame
  k's later layers, the GPU can already run frame k+1's early ones. :func:`stream` replays a fixed placement
  for ``frames`` copies of the graph, each device running its operators in (frame, topological) order, and
  :func:`frame_period` reports the steady-state period per frame; its speed-up over one frame at a time is
  the overlap the placement allows.

>>> s = pipeline_schedule([1, 1, 1, 1], micro_batches=8, method="gpipe")
>>> round(s.info["bubble_fraction"], 4)     # (p - 1) / (m + p - 1) = 3 / 11
0.2727
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from hetlab._validate import (
    as_float_array,
    check_choice,
    check_instance,
    check_int,
    check_nonnegative,
    check_positive,
    check_sequence,
    check_str,
)
from hetlab.devices import Device, Link, transfer_time
from hetlab.schedule import Schedule
from hetlab.schedulers import execute_plan
from hetlab.tasks import Task, TaskGraph

__all__ = ["pipeline_schedule", "stream", "frame_period", "split_placement", "overlap_share", "min_energy_placement",
           "handoffs", "energy_aware_choice"]


#: Size limits: a pipeline timeline of more tasks takes seconds to build.
_MAX_STAGES = 1_000
_MAX_MICRO_BATCHES = 10_000
_MAX_PIPELINE_TASKS = 200_000


def pipeline_schedule(stage_times: Sequence[float], micro_batches: int, *, method: str = "gpipe",
                      backward_ratio: float = 2.0, activation: float = 0.0, link: Link | None = None) -> Schedule:
    """Timeline of one training step of a pipeline with one stage per device.

    Each micro-batch ``k`` runs forward ``F{k}@S{s}`` through stages ``s = 0 .. p-1``, then backward
    ``B{k}@S{s}`` from the last stage back to the first; a backward pass takes ``backward_ratio`` times
    the stage's forward time (``0`` gives a forward-only, inference pipeline). ``activation`` is
    the data each micro-batch sends to the next stage, moved over ``link``.

    ``method``: ``"gpipe"`` (Huang et al. 2019): all forwards, then all backwards;
    ``"1f1b"`` (PipeDream-Flush, Narayanan et al. 2021): after ``p - s - 1`` warm-up forwards each
    stage alternates one forward and one backward, so at most ``p - s`` micro-batches' activations
    are held at once. ``info`` reports ``bubble_fraction`` (idle share of devices x makespan) and
    ``peak_activations`` per stage.
    """
    times = as_float_array("stage_times", stage_times, low=0.0, low_open=True, finite=True)
    if times.ndim != 1 or times.size == 0:
        raise ValueError(f"stage_times must be a non-empty 1-D sequence, got shape {times.shape}")
    if times.size > _MAX_STAGES:
        raise ValueError(f"stage_times must list at most {_MAX_STAGES} stages, got {times.size}")
    m = check_int("micro_batches", micro_batches, low=1, high=_MAX_MICRO_BATCHES)
    ratio = check_nonnegative("backward_ratio", backward_ratio, high=100.0)
    check_choice("method", method, ("gpipe", "1f1b"))
    activation = check_nonnegative("activation", activation)
    if link is not None:
        check_instance("link", link, Link)
    p = times.size
    if p * m > _MAX_PIPELINE_TASKS // 2:
        raise ValueError(f"stage_times x micro_batches must be at most {_MAX_PIPELINE_TASKS // 2:,} forward passes "
                         f"(a timeline of that many tasks takes seconds to build), got {p} x {m} = {p * m:,}")
    if not np.isfinite(times.sum() * (1.0 + ratio) * (m + p)) or times.sum() * (1.0 + ratio) * (m + p) > 1e300:
        raise ValueError(f"stage_times, backward_ratio and micro_batches give a step longer than 1e300 "
                         f"(stage_times sum {times.sum():g}, backward_ratio={ratio:g}, micro_batches={m}): rescale")
    link = link or Link()
    devices = [Device(f"S{s}", "GPU", link=link) for s in range(p)]
    tasks, edges = [], []
    for s in range(p):
        for k in range(m):
            tasks.append(Task(f"F{k}@S{s}", times={f"S{s}": float(times[s])}, op="forward"))
            if s > 0:
                edges.append((f"F{k}@S{s - 1}", f"F{k}@S{s}", activation))
            if ratio > 0:
                tasks.append(Task(f"B{k}@S{s}", times={f"S{s}": float(times[s]) * ratio}, op="backward"))
    if ratio > 0:
        for k in range(m):
            edges.append((f"F{k}@S{p - 1}", f"B{k}@S{p - 1}", 0.0))
            for s in range(p - 1):
                edges.append((f"B{k}@S{s + 1}", f"B{k}@S{s}", activation))
    sequences = {}
    for s in range(p):
        forwards = [f"F{k}@S{s}" for k in range(m)]
        backwards = [f"B{k}@S{s}" for k in range(m)] if ratio > 0 else []
        if method == "gpipe" or ratio == 0:
            sequences[f"S{s}"] = forwards + backwards
        else:
            warm = min(p - s - 1, m)
            seq = forwards[:warm]
            for k in range(m - warm):
                seq += [forwards[warm + k], backwards[k]]
            sequences[f"S{s}"] = seq + backwards[m - warm:]
    graph = TaskGraph(tasks, edges)
    plan = execute_plan(graph, devices, sequences, policy=method)
    bubble = 1.0 - plan.busy.sum() / (p * plan.makespan)
    peaks = [_peak_in_flight(plan, s, m) for s in range(p)] if ratio > 0 else [1] * p
    info = {"bubble_fraction": float(bubble), "peak_activations": peaks, "stages": p, "micro_batches": m}
    return Schedule(graph, plan.devices, plan.device_of, plan.start, plan.end, method, info=info)


def _peak_in_flight(plan: Schedule, s: int, m: int) -> int:
    # A micro-batch's activations live on stage s from its forward's start to its backward's end.
    idx = plan.graph.index
    starts = [plan.start[idx[f"F{k}@S{s}"]] for k in range(m)]
    ends = [plan.end[idx[f"B{k}@S{s}"]] for k in range(m)]
    events = sorted([(t, 1) for t in starts] + [(t, -1) for t in ends], key=lambda e: (e[0], e[1]))
    live = peak = 0
    for _, delta in events:
        live += delta
        peak = max(peak, live)
    return peak


def _devices(devices) -> list[Device]:
    items = check_sequence("devices", devices)
    for d in items:
        check_instance("devices", d, Device, "a list of Device")
    return list(items)


def _placement(graph: TaskGraph, placement) -> dict[str, str]:
    if isinstance(placement, Schedule):
        return {t.name: placement.devices[d].name for t, d in zip(placement.graph.tasks, placement.device_of)}
    if not isinstance(placement, Mapping):
        raise TypeError(f"placement must be a Schedule or a mapping task -> device name, got "
                        f"{type(placement).__name__}")
    missing = [t.name for t in graph.tasks if t.name not in placement]
    if missing:
        raise ValueError(f"placement must name a device for every task, missing {missing[:3]}")
    return dict(placement)


def stream(graph: TaskGraph, devices: Sequence[Device], placement, frames: int) -> Schedule:
    """Run ``frames`` copies of ``graph`` (tasks named ``"k:name"``) with each task on the device that
    ``placement`` (a Schedule, or a mapping task name -> device name) gives it; every device runs its
    tasks in a modulo order (frame k's task at k times the busiest device's work per frame plus its
    start in a lone frame), so a device may work on frame k+1 while frame k is elsewhere. All frames are
    ready at time 0 (a backlog: this measures throughput); :func:`frame_period` gives the time per frame."""
    if not isinstance(graph, TaskGraph):
        raise TypeError(f"graph must be a TaskGraph, got {type(graph).__name__}")
    frames = check_int("frames", frames, low=1, high=10_000)
    devices = _devices(devices)
    where = _placement(graph, placement)
    names = {d.name for d in devices}
    bad = sorted({d for d in where.values() if d not in names})
    if bad:
        raise ValueError(f"placement names unknown devices {bad}")
    order = graph.topological_order()
    rank = {name: i for i, name in enumerate(order)}
    one = execute_plan(graph, devices, {d.name: [n for n in order if where[n] == d.name] for d in devices})
    start = {t.name: float(one.start[i]) for i, t in enumerate(one.graph.tasks)}
    # A modulo schedule: frame k's task is queued at k * P + (its start in a lone frame), P being the
    # busiest device's work per frame (no device can start frames faster). The key respects every
    # dependency within a frame, so the plan cannot deadlock, and it lets a device take frame k+1's early
    # work while frame k is still in later layers elsewhere.
    period = float(one.busy.max())
    tasks = [Task(f"{k}:{t.name}", t.work, kind=t.kind, op=t.op, times=t.times)
             for k in range(frames) for t in graph.tasks]
    edges = [(f"{k}:{a}", f"{k}:{b}", data) for k in range(frames) for (a, b), data in graph.edges.items()]
    keyed = sorted((k * period + start[name], k, rank[name], name) for k in range(frames) for name in order)
    sequences: dict[str, list[str]] = {d.name: [] for d in devices}
    for _, k, _, name in keyed:
        sequences[where[name]].append(f"{k}:{name}")
    s = execute_plan(TaskGraph(tasks, edges), devices, sequences, policy="frame pipeline")
    s.info["frames"] = frames
    return s


def frame_period(graph: TaskGraph, devices: Sequence[Device], placement, frames: int = 20) -> tuple[float, float]:
    """``(latency of one frame alone, steady-state time per frame)`` of a placement, from
    ``(T(frames) - T(1)) / (frames - 1)``."""
    frames = check_int("frames", frames, low=2, high=10_000)
    one = stream(graph, devices, placement, 1).makespan
    many = stream(graph, devices, placement, frames).makespan
    return one, (many - one) / (frames - 1)


def split_placement(graph: TaskGraph, first: Mapping[str, str], rest: Mapping[str, str], cut: int) -> dict[str, str]:
    """Place the first ``cut`` tasks of a topological order by ``first`` (operation kind -> device name)
    and the others by ``rest``: a two-stage split of a chain-like model."""
    check_instance("graph", graph, TaskGraph)
    for label, rule in (("first", first), ("rest", rest)):
        check_instance(label, rule, Mapping, "a mapping operation kind -> device name")
        for device in rule.values():
            check_str(label, device)
    cut = check_int("cut", cut, low=0, high=len(graph))
    order = graph.topological_order()
    by_name = {t.name: t for t in graph.tasks}
    out = {}
    for i, name in enumerate(order):
        label, rule = ("first", first) if i < cut else ("rest", rest)
        op = by_name[name].op
        if op not in rule:
            raise ValueError(f"{label} must name a device for operation {op!r} (task {name!r}), got {dict(rule)!r}")
        out[name] = rule[op]
    return out


def overlap_share(schedule: Schedule) -> float:
    """Share of a schedule's makespan during which at least two devices compute at once."""
    if not isinstance(schedule, Schedule):
        raise TypeError(f"schedule must be a Schedule, got {type(schedule).__name__}")
    if schedule.makespan <= 0:
        return 0.0
    events = sorted([(float(t), 1) for t in schedule.start] + [(float(t), -1) for t in schedule.end])
    both = 0.0
    running, last = 0, 0.0
    for t, delta in events:
        if running >= 2:
            both += t - last
        last = t
        running += delta
    return both / schedule.makespan


def min_energy_placement(graph: TaskGraph, devices: Sequence[Device]) -> dict[str, str]:
    """Each task on the device where *its own* energy, ``work / speed_for(op) * power_watts``, is least
    (ties: the faster device, then the first listed): an energy-only rule, blind to hand-offs and to time.

    >>> from hetlab.devices import phone_soc
    >>> from hetlab.workloads import segmentation_model
    >>> p = min_energy_placement(segmentation_model(), phone_soc())
    >>> sorted(set(p.values()))
    ['CPU', 'GPU', 'NPU']
    """
    check_instance("graph", graph, TaskGraph)
    devs = _devices(devices)
    if not devs:
        raise ValueError("devices must hold at least one Device, got an empty list")
    out = {}
    for t in graph.tasks:
        best = None
        for k, d in enumerate(devs):
            speed = d.speed_for(t.op)
            if speed <= 0:
                continue
            time = t.work / speed
            key = (time * d.power_watts, time, k)
            if best is None or key < best[0]:
                best = (key, d.name)
        if best is None:
            raise ValueError(f"devices must include one that can run task {t.name!r} (op {t.op!r}), got none")
        out[t.name] = best[1]
    return out


def handoffs(schedule: Schedule) -> tuple[int, float]:
    """``(count, total transfer time)`` of the graph edges whose two tasks run on different devices:
    each such edge is a hand-off that pays the link latency plus data over bandwidth."""
    if not isinstance(schedule, Schedule):
        raise TypeError(f"schedule must be a Schedule, got {type(schedule).__name__}")
    index = {t.name: i for i, t in enumerate(schedule.graph.tasks)}
    count, total = 0, 0.0
    for (src, dst), data in schedule.graph.edges.items():
        a = schedule.devices[schedule.device_of[index[src]]]
        b = schedule.devices[schedule.device_of[index[dst]]]
        if a.name != b.name:
            count += 1
            total += transfer_time(a, b, data)
    return count, total


def energy_aware_choice(graph: TaskGraph, devices: Sequence[Device], fps: float,
                        placements: Mapping[str, object] | None = None,
                        frames: int = 20) -> tuple[str, float, float] | None:
    """Energy-aware selection among candidate placements: of those whose pipelined steady-state period
    (:func:`frame_period`, in ms) meets ``fps``, the one with the least energy per frame. Returns
    ``(name, period, energy per frame)`` or ``None`` when no candidate is fast enough.

    ``placements`` maps a name to a placement (a Schedule or task -> device name); by default the candidates
    are the energy-only rule (:func:`min_energy_placement`) and HEFT's time-only placement. Energy per frame
    is the streamed schedule's energy over ``frames`` frames divided by ``frames``; idle and static power are
    not counted (they do not depend on the placement in this model)."""
    check_instance("graph", graph, TaskGraph)
    devs = _devices(devices)
    rate = check_positive("fps", fps)
    if rate > 1e6:
        raise ValueError(f"fps must be in (0, 1e6], got {rate:g}")
    frames = check_int("frames", frames, low=2, high=1000)
    if placements is None:
        from hetlab.schedulers import heft

        placements = {"min energy": min_energy_placement(graph, devs), "HEFT": heft(graph, devs)}
    check_instance("placements", placements, Mapping, "a mapping name -> placement")
    if not placements:
        raise ValueError("placements must hold at least one candidate, got an empty mapping")
    best = None
    for name, placement in placements.items():
        _, period = frame_period(graph, devs, placement, frames=frames)
        if period > 1000.0 / rate + 1e-9:      # times are in ms
            continue
        energy = stream(graph, devs, placement, frames).energy / frames
        if best is None or energy < best[2]:
            best = (str(name), period, energy)
    return best
