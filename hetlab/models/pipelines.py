"""Frame-level pipelining: a stream of frames through one placement of a model on several devices.

One idea: when one frame's operators form a chain, a single frame cannot keep CPU, GPU and NPU busy at once
(its operators wait on each other), but consecutive frames can: while the NPU runs frame k's later layers,
the GPU can already run frame k+1's early ones. :func:`stream` replays a fixed placement for ``frames``
copies of the graph, each device running its operators in (frame, topological) order, and reports the
steady-state period per frame; its speed-up over one frame at a time is the overlap the placement allows.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from hetlab._validate import check_instance, check_int, check_positive, check_sequence, check_str
from hetlab.devices import Device, transfer_time
from hetlab.schedule import Schedule
from hetlab.tasks import Task, TaskGraph

__all__ = ["stream", "frame_period", "split_placement", "overlap_share", "min_energy_placement", "handoffs",
           "energy_aware_choice"]


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
    from hetlab.schedulers import execute_plan

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
