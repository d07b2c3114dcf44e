"""Dispatch-aware planning: choose the plan whose execution, with the host as a shared resource, ends first.

HEFT (Topcuoglu, Hariri & Wu 2002) counts only the devices' time. When one interpreter dispatches every
task (:mod:`hetlab.models.host`), each extra CPU worker also adds host visits, GIL hand-offs and slower
tiles, so HEFT's fastest-looking plan can run slowest. :func:`host_aware` keeps HEFT's placement rule but
lets the host model decide how many CPU workers to use, the way StarPU picks a placement from per-machine
performance models (Augonnet, Thibault, Namyst & Wacrenier 2011): it plans with HEFT on the accelerators plus
the first ``u`` CPU workers for ``u`` in 0, 1, 2, 4, 8, ... (all of them last), predicts each plan's
execution with :func:`~hetlab.models.host.simulate_host`, and returns the plan whose prediction ends first
(the prediction itself in ``info["predicted"]``). Using no CPU worker is one of the candidates, so the plan
is never predicted slower than the accelerators alone.

>>> from hetlab.models.host import HostProfile
>>> from hetlab.workloads.cholesky import OPS, cholesky_devices, cholesky_graph
>>> devices = cholesky_devices(4)
>>> graph = cholesky_graph(4, {op: {"CPU": 8.0, "GPU": 1.0} for op in OPS}, devices)
>>> costly = HostProfile("slow host", hold_s=0.5, handoff_s=2.0)
>>> plan = host_aware(graph, devices, profile=costly)
>>> plan.info["cpu_workers"], plan.makespan, plan.info["predicted"].makespan   # all 20 tasks on the GPU
(0, 20.0, 20.0)
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hetlab._validate import describe
from hetlab.devices import Device
from hetlab.schedule import Schedule
from hetlab.schedulers._core import _problem
from hetlab.schedulers.heft import heft
from hetlab.tasks import Task, TaskGraph

__all__ = ["host_aware"]


def _worker_counts(available: int, has_accelerator: bool) -> list[int]:
    """0 (if an accelerator can work alone), 1, 2, 4, ... below ``available``, then ``available``."""
    counts = [0] if has_accelerator else []
    u = 1
    while u < available:
        counts.append(u)
        u *= 2
    return counts + ([available] if available else [])


def host_aware(graph: TaskGraph | Sequence[Task], devices: Sequence[Device], *, profile=None,
               host_inputs=None) -> Schedule:
    """The HEFT plan on the accelerators plus ``u`` CPU workers whose predicted execution ends first.

    ``profile``: a :class:`~hetlab.models.host.HostProfile` or a profile name (default: the H200 machine of
    2026-12-04). Devices whose kind is in ``profile.accelerator_kinds`` are always used; the others are taken
    in the order given. Returns the chosen plan on all of ``devices`` (HEFT's times; the unused CPU workers
    idle); ``info`` holds ``cpu_workers`` (the ``u`` chosen), ``candidates`` (``{u: predicted makespan}``)
    and ``predicted`` (the plan's execution predicted by :func:`~hetlab.models.host.simulate_host`).
    ``host_inputs`` (task name -> inputs in host memory when it runs) is passed on to the simulation.
    """
    from hetlab.models.host import HostProfile, load_profile, simulate_host

    if profile is None:
        profile = load_profile()
    elif isinstance(profile, str):
        try:
            profile = load_profile(profile)
        except ValueError as exc:
            raise ValueError(f"profile: {exc}") from None
    if not isinstance(profile, HostProfile):
        raise TypeError(f"profile must be a HostProfile or a profile name, got {describe(profile)}")
    prob = _problem(graph, devices)
    graph, devices = prob.graph, prob.devices
    accel = [j for j, d in enumerate(devices) if d.kind in profile.accelerator_kinds]
    others = [j for j, d in enumerate(devices) if d.kind not in profile.accelerator_kinds]
    best = None
    candidates: dict[int, float] = {}
    for u in _worker_counts(len(others), bool(accel)):
        chosen = accel + others[:u]
        try:
            sub = heft(graph, [devices[j] for j in chosen])
        except ValueError:        # some task cannot run on these devices alone
            continue
        device_of = np.array(chosen)[sub.device_of]
        plan = Schedule(graph, devices, device_of, sub.start, sub.end, "HEFT")
        run = simulate_host(plan, profile, host_inputs=host_inputs)
        candidates[u] = run.makespan
        if best is None or run.makespan < best[1].makespan:
            best = (u, run, plan)
    if best is None:
        raise ValueError("graph: no subset of devices that host_aware tries can run every task")
    u, run, plan = best
    info = {"cpu_workers": u, "candidates": candidates, "predicted": run}
    return Schedule(graph, devices, plan.device_of, plan.start, plan.end, "host-aware", info=info)
