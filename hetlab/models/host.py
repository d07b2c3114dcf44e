"""The host as a shared resource: one Python interpreter dispatches the work of every device.

A plan from :func:`~hetlab.schedulers.heft` treats each device as independent. When one Python process
drives a GPU and several CPU worker threads, every task also needs the interpreter (the GIL) to start and
to finish, so the devices queue for one more resource, the host. :func:`simulate_host` runs a plan with that
resource and returns the predicted execution as a :class:`~hetlab.schedule.Schedule`.

Each task, on the thread of its device, does in turn:

1. for each input made on a device of the other kind (CPU <-> accelerator), one host visit, then the copy
   (the transfer time of the plan's devices) without the host; on an accelerator, the same for each input that
   is still in host memory when the task runs (``host_inputs``: e.g. a matrix tile no task has written yet, copied
   by the first accelerator task that reads it), the copy taking the accelerator's link latency;
2. a dispatch visit to the host, holding it for ``hold_s``;
3. its work without the host: a CPU tile computes for its one-thread time times ``slowdown(k)``, where ``k``
   counts the CPU tiles computing at that moment, itself included (shared caches and memory bandwidth); an
   accelerator task waits for the device for its measured time less its two host visits;
4. a completion visit to the host (record the result, wake the consumers), ``hold_s`` again.

Who gets the host next is :func:`next_grant`, CPython's hand-off rule in brief: a thread that finds the host
busy goes to sleep, and waking it takes ``handoff_s``; a thread that is running when the host frees up (it
just came back from a short call) takes it first, so a sleeping thread can be passed over again and again.
The model forces the switch once a thread has waited a whole switch interval (``sys.getswitchinterval()``,
5 ms) since it asked. That is simpler than CPython: ``take_gil`` (Python/ceval_gil.c) restarts its timed wait
at every release of the GIL and asks the holder to drop it only if a whole interval passes with no release,
so a thread passed over at releases that come more often than every 5 ms is never forced through. With an
interval of 1 s (no forced switch at all in these runs) the predictions of the stored readings change by
under 0.5 %, those of the hold-out readings by under 3 %.
The more often CPU tiles start and end, the more often the GPU's thread finds the host taken and sleeps.

The machine constants live in a named :class:`HostProfile`, calibrated once from stored readings
(``hetlab/data/profiles/<name>.json`` records how).

>>> from hetlab.schedulers import heft
>>> from hetlab.workloads.cholesky import cholesky_devices, cholesky_graph, OPS
>>> profile = HostProfile("example", hold_s=1.0, handoff_s=0.0, slowdown_base=1.0, slowdown_log=0.0)
>>> devices = cholesky_devices(0)
>>> graph = cholesky_graph(2, {op: {"GPU": 5.0} for op in OPS}, devices)
>>> plan = heft(graph, devices)
>>> plan.makespan, simulate_host(plan, profile).makespan   # one thread: no waiting, same times
(20.0, 20.0)
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from types import MappingProxyType
from typing import Any

import numpy as np

from hetlab._validate import check_instance, check_nonnegative, check_positive, check_str, check_strings, describe
from hetlab.schedule import Schedule
from hetlab.tasks import assigned_costs, comm_matrices

__all__ = ["HostProfile", "load_profile", "profile_names", "next_grant", "simulate_host", "TERMS", "term_makespans",
           "shapley"]

#: CPython's default switch interval, ``sys.getswitchinterval()``: how long a thread waits for the GIL
#: before it asks the holder to drop it.
SWITCH_INTERVAL_S = 5e-3


@dataclass(frozen=True)
class HostProfile:
    """Machine constants of the host model (seconds), from one calibration on one machine.

    - ``hold_s``: interpreter time of one host visit (each task makes two, plus one per copy);
    - ``handoff_s``: time to wake a sleeping thread when the host passes to it (a GIL hand-off);
    - ``slowdown_base``, ``slowdown_log``: a CPU tile runs ``slowdown_base + slowdown_log * ln k`` times its
      one-thread time when ``k`` tiles compute at once;
    - ``switch_interval_s``: a thread passed over this long forces the hand-off;
    - ``accelerator_kinds``: device kinds driven like the GPU (wait for the device between two visits);
    - ``calibration``: how the constants were obtained (free-form record, shown, never used).
    """

    name: str
    hold_s: float
    handoff_s: float
    slowdown_base: float = 1.0
    slowdown_log: float = 0.0
    switch_interval_s: float = SWITCH_INTERVAL_S
    accelerator_kinds: tuple[str, ...] = ("GPU",)
    calibration: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        check_str("name", self.name)
        object.__setattr__(self, "hold_s", check_nonnegative("hold_s", self.hold_s))
        object.__setattr__(self, "handoff_s", check_nonnegative("handoff_s", self.handoff_s))
        object.__setattr__(self, "slowdown_base", check_positive("slowdown_base", self.slowdown_base, high=100.0))
        object.__setattr__(self, "slowdown_log", check_nonnegative("slowdown_log", self.slowdown_log, high=100.0))
        object.__setattr__(self, "switch_interval_s",
                           check_positive("switch_interval_s", self.switch_interval_s))
        object.__setattr__(self, "accelerator_kinds", check_strings("accelerator_kinds", self.accelerator_kinds))
        if not isinstance(self.calibration, Mapping):
            raise TypeError(f"calibration must be a mapping, got {describe(self.calibration)}")
        object.__setattr__(self, "calibration", MappingProxyType(dict(self.calibration)))

    def slowdown(self, k: int) -> float:
        """How many times its one-thread time a CPU tile takes when ``k`` tiles compute at once.

        >>> HostProfile("p", 0.0, 0.0, slowdown_base=1.5, slowdown_log=0.25).slowdown(1)
        1.5
        """
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"k must be a whole number of tiles >= 1, got {describe(k)}")
        return self.slowdown_base + self.slowdown_log * math.log(k)


def profile_names() -> list[str]:
    """Names of the machine profiles shipped in ``hetlab/data/profiles``.

    >>> "h200-2026-12-04" in profile_names()
    True
    """
    folder = resources.files("hetlab") / "data" / "profiles"
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".json"))


def load_profile(name: str = "h200-2026-12-04") -> HostProfile:
    """The machine profile called ``name`` (see :func:`profile_names`).

    >>> load_profile().switch_interval_s
    0.005
    """
    names = profile_names()
    if not isinstance(name, str) or name not in names:
        raise ValueError(f"name must be one of the shipped profiles {names}, got {describe(name)}")
    data = json.loads((resources.files("hetlab") / "data" / "profiles" / f"{name}.json").read_text("utf-8"))
    constants = data["constants"]
    return HostProfile(name, constants["hold_s"], constants["handoff_s"], constants["slowdown_base"],
                       constants["slowdown_log"], constants["switch_interval_s"],
                       tuple(constants["accelerator_kinds"]), data.get("calibration", {}))


def next_grant(free_at: float, requests: Mapping[Any, float], handoff_s: float,
               switch_interval_s: float = SWITCH_INTERVAL_S) -> tuple[Any, float]:
    """Which waiting thread gets the host next, and when: ``(thread, time)``.

    ``requests`` maps each thread that wants the host to the time it asked; the host is busy until
    ``free_at``. A thread that asked before ``free_at`` sleeps and takes ``handoff_s`` to wake; one that asks
    within ``handoff_s`` after ``free_at`` is running and takes the host at once, ahead of the sleepers,
    unless a sleeper has waited ``switch_interval_s`` (it forces the switch). Ties go to the earlier request,
    then to the smaller thread key.

    >>> next_grant(10.0, {"gpu": 10.5, "cpu": 4.0}, handoff_s=2.0, switch_interval_s=9.0)  # the GPU barges in
    ('gpu', 10.5)
    >>> next_grant(10.0, {"gpu": 13.0, "cpu": 4.0}, handoff_s=2.0, switch_interval_s=9.0)  # too late: CPU wakes
    ('cpu', 12.0)
    >>> next_grant(10.0, {"gpu": 10.5, "cpu": 4.0}, handoff_s=2.0, switch_interval_s=5.0)  # waited 6: forced
    ('cpu', 12.0)
    """
    free_at = check_nonnegative("free_at", free_at)
    handoff_s = check_nonnegative("handoff_s", handoff_s)
    switch_interval_s = check_positive("switch_interval_s", switch_interval_s)
    if not isinstance(requests, Mapping) or not requests:
        raise ValueError(f"requests must map at least one waiting thread to the time it asked, got "
                         f"{describe(requests)}")
    requests = {who: check_nonnegative(f"requests[{who!r}]", t) for who, t in requests.items()}
    return _grant(free_at, requests, handoff_s, switch_interval_s)


def _grant(free_at: float, requests: Mapping[Any, float], handoff_s: float,
           switch_interval_s: float) -> tuple[Any, float]:
    """:func:`next_grant` on arguments already checked (the simulator's inner loop calls it thousands of times)."""
    sleeping = sorted((t, who) for who, t in requests.items() if t < free_at)
    forced = [(t, who) for t, who in sleeping if free_at - t >= switch_interval_s]
    if forced:
        return forced[0][1], free_at + handoff_s
    running = sorted((t, who) for who, t in requests.items() if free_at <= t < free_at + handoff_s)
    if running:
        return running[0][1], running[0][0]
    if sleeping:
        return sleeping[0][1], free_at + handoff_s
    t, who = min((t, who) for who, t in requests.items())
    return who, t


def _queues(plan: Schedule) -> list[list[int]]:
    """Each device's tasks in the plan's order (start time, then graph order)."""
    order = np.lexsort((np.arange(len(plan.start)), plan.start))
    queues: list[list[int]] = [[] for _ in plan.devices]
    for i in order.tolist():
        queues[int(plan.device_of[i])].append(i)
    return queues


def _check_host_inputs(host_inputs, graph) -> list[int]:
    """``host_inputs`` as a count per task index (tasks not named read nothing from host memory)."""
    counts = [0] * len(graph.tasks)
    if host_inputs is None:
        return counts
    if not isinstance(host_inputs, Mapping):
        raise TypeError(f"host_inputs must map task names to how many of their inputs start in host memory, "
                        f"got {describe(host_inputs)}")
    index = {t.name: k for k, t in enumerate(graph.tasks)}
    for name, count in host_inputs.items():
        if name not in index:
            raise ValueError(f"host_inputs must name tasks of the plan's graph, got {describe(name)}")
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
            raise ValueError(f"host_inputs[{name!r}] must be a whole number of inputs >= 0, got {describe(count)}")
        counts[index[name]] = int(count)
    return counts


def simulate_host(plan: Schedule, profile: HostProfile, *, host_inputs: Mapping[str, int] | None = None) -> Schedule:
    """Run ``plan`` (which device runs each task, and in what order) with the host as a shared resource.

    ``host_inputs`` maps a task's name to how many of its inputs are in host memory when it runs (none if not
    named): on an accelerator each is copied first (a host visit, then the accelerator's link latency without the
    host); on a CPU it is already there.

    Returns the predicted execution: a task starts at its dispatch visit and ends after its completion visit.
    ``info`` holds ``plan_makespan``, ``host_visits``, ``handoffs`` (visits that had to wake a sleeping
    thread) and ``host_wait_s`` (time threads spent waiting for the host, summed).

    >>> from hetlab.devices import Device, Link
    >>> from hetlab.tasks import Task, TaskGraph
    >>> gpu = Device("GPU", "GPU", link=Link(latency=3.0))
    >>> graph = TaskGraph([Task("t", times={"GPU": 10.0})], [])
    >>> plan = Schedule(graph, [gpu], [0], [0.0], [10.0])
    >>> simulate_host(plan, HostProfile("p", hold_s=1.0, handoff_s=0.0), host_inputs={"t": 2}).makespan  # 2 x (1 + 3)
    18.0
    """
    check_instance("plan", plan, Schedule)
    check_instance("profile", profile, HostProfile)
    g, devices = plan.graph, plan.devices
    from_host = _check_host_inputs(host_inputs, g)
    n, m = len(g.tasks), len(devices)
    if n == 0:
        return plan
    run = assigned_costs(g, devices, plan.device_of).tolist()
    if not all(math.isfinite(t) for t in run):
        i = next(k for k, t in enumerate(run) if not math.isfinite(t))
        raise ValueError(f"plan puts task {g.tasks[i].name!r} on {devices[plan.device_of[i]].name!r}, "
                         f"which cannot run it")
    accel = [d.kind in profile.accelerator_kinds for d in devices]
    latency, inverse = comm_matrices(devices)
    device_of = plan.device_of.tolist()
    hold, handoff = profile.hold_s, profile.handoff_s
    queues = _queues(plan)
    position = [0] * m
    free = [0.0] * m                  # when each device's thread finished its last task
    start = [math.nan] * n
    end = [math.nan] * n
    steps: dict[int, list] = {}       # device -> [task, remaining phases]
    requests: dict[int, float] = {}   # device -> time its thread asked for the host
    computing: list[float] = []       # end times of the CPU tiles computing
    stats = {"host_visits": 0, "handoffs": 0, "host_wait_s": 0.0}

    def phases(i: int, j: int) -> list[tuple[str, Any]]:
        """(kind, seconds) of the work without the host, ("host", purpose) for each visit."""
        out: list[tuple[str, Any]] = []
        if accel[j]:
            out += [("host", "copy"), ("copy", devices[j].link.latency)] * from_host[i]
        for p, data in zip(g.preds[i], g.pred_data[i]):
            if accel[device_of[p]] != accel[j]:
                out += [("host", "copy"), ("copy", float(latency[device_of[p], j] + data * inverse[device_of[p], j]))]
        wait = ("device", max(run[i] - 2 * hold, 0.0)) if accel[j] else ("compute", run[i])
        return out + [("host", "dispatch"), wait, ("host", "complete")]

    def proceed(j: int, t: float) -> None:
        """Run thread j's phases without the host from time t; stop at its next host visit or its task's end."""
        i, todo = steps[j]
        while todo and todo[0][0] != "host":
            kind, length = todo.pop(0)
            if kind == "compute":
                computing[:] = [e for e in computing if e > t]
                length *= profile.slowdown(len(computing) + 1)
                computing.append(t + length)
            t += length
        if todo:
            requests[j] = t
            return
        end[i], free[j] = t, t
        del steps[j]
        position[j] += 1
        for k in range(m):
            begin(k)

    def begin(j: int) -> None:
        if j in steps or position[j] >= len(queues[j]):
            return
        i = queues[j][position[j]]
        if any(math.isnan(end[p]) for p in g.preds[i]):
            return
        steps[j] = [i, phases(i, j)]
        proceed(j, max([free[j], *(end[p] for p in g.preds[i])]))

    for j in range(m):
        begin(j)
    host_free = 0.0
    while requests:
        j, t = _grant(host_free, requests, handoff, profile.switch_interval_s)
        asked = requests.pop(j)
        stats["host_visits"] += 1
        stats["handoffs"] += t > max(asked, host_free)
        stats["host_wait_s"] += t - asked
        i, todo = steps[j]
        if todo.pop(0)[1] == "dispatch":     # the task starts at its dispatch visit
            start[i] = t
        host_free = t + hold
        proceed(j, host_free)
    if any(math.isnan(e) for e in end):
        stuck = [g.tasks[q[position[j]]].name for j, q in enumerate(queues) if position[j] < len(q)]
        raise ValueError(f"plan deadlocks: each device waits on a task queued behind another (heads: {stuck})")
    info = {"plan_makespan": plan.makespan, **stats}
    return Schedule(g, devices, plan.device_of, start, end, f"{plan.policy or 'plan'} + host", info=info)


#: The four costs the host model adds to a plan, in the order :func:`term_makespans` names them: the copies the
#: accelerator's thread waits for, the CPU tiles' slowdown, the host visits (``hold_s``), the hand-offs.
TERMS = ("copies", "slowdown", "hold", "handoff")


def term_makespans(plan: Schedule, profile: HostProfile) -> dict[frozenset[str], float]:
    """The host model's makespan of ``plan`` with each combination of the four :data:`TERMS` switched on: a dict
    from the set of terms on (16 sets) to seconds. A term off: ``copies`` -- the devices' links take no time
    (the copies' host visits stay); ``slowdown`` -- ``slowdown(k) = 1``; ``hold`` -- ``hold_s = 0``;
    ``handoff`` -- ``handoff_s = 0``. All four on is :func:`simulate_host` with ``profile``.

    >>> from hetlab.devices import Device, Link
    >>> from hetlab.tasks import Task, TaskGraph
    >>> devices = [Device("GPU", "GPU", link=Link(latency=3.0)), Device("CPU", "CPU")]
    >>> graph = TaskGraph([Task("a", times={"CPU": 2.0}), Task("b", times={"GPU": 4.0})], [("a", "b")])
    >>> plan = Schedule(graph, devices, [1, 0], [0.0, 5.0], [2.0, 9.0])
    >>> spans = term_makespans(plan, HostProfile("p", hold_s=0.5, handoff_s=0.0, slowdown_base=2.0))
    >>> spans[frozenset()], spans[frozenset({"copies"})], spans[frozenset(TERMS)]   # 2 + 4; + 3; + 2 + 3 x 0.5
    (6.0, 9.0, 12.5)
    """
    check_instance("plan", plan, Schedule)
    check_instance("profile", profile, HostProfile)
    free_links = [replace(d, link=replace(d.link, latency=0.0, bandwidth=math.inf)) for d in plan.devices]
    no_copies = Schedule(plan.graph, free_links, plan.device_of, plan.start, plan.end, plan.policy)
    out = {}
    for mask in range(16):
        on = frozenset(t for k, t in enumerate(TERMS) if mask >> k & 1)
        p = profile
        if "slowdown" not in on:
            p = replace(p, slowdown_base=1.0, slowdown_log=0.0)
        if "hold" not in on:
            p = replace(p, hold_s=0.0)
        if "handoff" not in on:
            p = replace(p, handoff_s=0.0)
        out[on] = simulate_host(plan if "copies" in on else no_copies, p).makespan
    return out


def shapley(values: Mapping[frozenset, float]) -> dict[Any, float]:
    """Each player's Shapley value of the game ``values`` (a dict from every subset of the players to its value,
    e.g. :func:`term_makespans`): its increment ``v(S + i) - v(S)`` averaged over all orders in which the players
    can be added. The values add up to ``v(all) - v(none)`` and do not depend on any chosen order.

    >>> shapley({frozenset(): 0.0, frozenset("h"): 1.0, frozenset("l"): 0.0, frozenset("hl"): 3.0})
    {'h': 2.0, 'l': 1.0}
    """
    if not isinstance(values, Mapping) or not values or not all(isinstance(s, frozenset) for s in values):
        raise TypeError(f"values must map frozensets of players to numbers, got {describe(values)}")
    players = sorted(set().union(*values), key=str)
    n = len(players)
    if len(values) != 2 ** n:
        raise ValueError(f"values must give all {2 ** n} subsets of the players {players}, got {len(values)}")
    out = {}
    for i in players:
        total = 0.0
        for s, v in values.items():
            if i not in s:
                total += math.factorial(len(s)) * math.factorial(n - len(s) - 1) * (values[s | {i}] - v)
        out[i] = total / math.factorial(n)
    return out
