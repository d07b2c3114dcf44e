"""What a task graph costs on a list of devices: run-time and transfer matrices (what the schedulers compute on)
and the critical path.

>>> from hetlab.devices import kitchen
>>> from hetlab.tasks import independent_tasks
>>> cost_matrix(independent_tasks([10.0]), kitchen()).round(2).tolist()
[[1.0, 0.5, 0.67]]
"""
from __future__ import annotations

from collections.abc import Sequence

from hetlab.devices import Device, check_devices
from hetlab.tasks.graph import TaskGraph, _as_graph, execution_time

__all__ = ["cost_matrix", "assigned_costs", "comm_matrices", "critical_path"]


def cost_matrix(graph: TaskGraph, devices: Sequence[Device]):
    """Run time of every task on every device, shape ``(tasks, devices)``; ``inf`` where impossible.

    >>> from hetlab.devices import kitchen
    >>> from hetlab.tasks import independent_tasks
    >>> cost_matrix(independent_tasks([10.0, 30.0]), kitchen()).round(2).tolist()    # CPU 10, GPU 20, NPU 15
    [[1.0, 0.5, 0.67], [3.0, 1.5, 2.0]]

    See also :func:`execution_time`, :func:`assigned_costs`.
    """
    import numpy as np

    graph = _as_graph(graph, "graph")
    devices = check_devices(devices)
    n, m = len(graph.tasks), len(devices)
    if graph.speed_only:
        speeds = np.array([d.speed for d in devices])
        with np.errstate(over="ignore"):  # an overflow gives inf; the schedulers refuse it with a clear message
            return graph.work[:, None] / speeds[None, :]
    costs = np.empty((n, m))
    with np.errstate(over="ignore"):
        for i, task in enumerate(graph.tasks):
            for j, device in enumerate(devices):
                costs[i, j] = execution_time(task, device)
    return costs


def assigned_costs(graph: TaskGraph, devices: Sequence[Device], device_of):
    """Run time of each task on the device it is assigned to (``device_of[i]`` indexes ``devices``),
    without building the full (tasks x devices) matrix when run time is work / speed.

    >>> from hetlab.devices import kitchen
    >>> from hetlab.tasks import independent_tasks
    >>> assigned_costs(independent_tasks([10.0, 30.0]), kitchen(), [1, 2]).tolist()   # on the GPU, the NPU
    [0.5, 2.0]
    """
    import numpy as np

    graph = _as_graph(graph, "graph")
    devices = check_devices(devices)
    device_of = as_device_indices(device_of, len(graph.tasks), len(devices))
    if graph.speed_only:
        return graph.work / np.array([d.speed for d in devices])[device_of]
    return np.array([execution_time(t, devices[j]) for t, j in zip(graph.tasks, device_of)], dtype=float)


def as_device_indices(device_of, n: int, m: int, name: str = "device_of"):
    """``device_of`` as an int array of n entries in [0, m): integral numbers only (0.9 is not device 0)."""
    import numpy as np

    if isinstance(device_of, (str, bytes)) or device_of is None:
        raise TypeError(f"{name} must be a sequence of device indices, got {device_of!r}")
    try:
        raw = np.asarray(device_of)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a sequence of device indices, got {type(device_of).__name__}") from None
    if raw.dtype == bool or raw.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold integers, got dtype {raw.dtype}")
    if raw.shape != (n,):
        raise ValueError(f"{name} must have one entry per task ({n}), got shape {raw.shape}")
    if raw.dtype.kind == "f":
        bad = ~np.isfinite(raw) | (raw != np.round(raw))
        if bad.any():
            raise ValueError(f"{name} must hold whole device indices, got {float(raw[bad][0])!r}")
    out = raw.astype(int)
    bad = (out < 0) | (out >= m)
    if bad.any():
        raise ValueError(f"{name} must hold device indices in [0, {m - 1}], got {int(out[bad][0])}")
    return out


def comm_matrices(devices: Sequence[Device]):
    """``(latency, inverse_bandwidth)`` matrices such that moving ``data`` from device a to b
    costs ``latency[a, b] + data * inverse_bandwidth[a, b]``; both are zero on the diagonal.

    >>> from hetlab.devices import Device, Link
    >>> latency, inverse = comm_matrices([Device("A", link=Link(1.0, 10.0)), Device("B", link=Link(2.0, 5.0))])
    >>> latency.tolist(), inverse.tolist()          # the slower end sets both
    ([[0.0, 2.0], [2.0, 0.0]], [[0.0, 0.2], [0.2, 0.0]])

    See also :func:`hetlab.devices.transfer_time` (the same cost for one pair).
    """
    import numpy as np

    devices = check_devices(devices)
    lat = np.array([d.link.latency for d in devices])
    bw = np.array([d.link.bandwidth for d in devices])
    latency = np.maximum(lat[:, None], lat[None, :])
    inverse = 1.0 / np.minimum(bw[:, None], bw[None, :])
    np.fill_diagonal(latency, 0.0)
    np.fill_diagonal(inverse, 0.0)
    return latency, inverse


def critical_path(graph: TaskGraph, devices: Sequence[Device] | None = None) -> tuple[float, list[str]]:
    """Longest dependency chain: ``(length, task names)``.

    Without devices a task weighs its ``work``; with devices it weighs its fastest run time,
    and edges cost nothing, so the length is a lower bound on any schedule's makespan.

    >>> from hetlab.devices import kitchen
    >>> from hetlab.tasks import Task, TaskGraph
    >>> g = TaskGraph([Task("a", 2), Task("b", 3), Task("c", 1)], [("a", "c"), ("b", "c")])
    >>> critical_path(g), critical_path(g, kitchen())          # on the GPU (speed 20): (3 + 1) / 20
    ((4.0, ['b', 'c']), (0.2, ['b', 'c']))
    """
    graph = _as_graph(graph, "graph")
    weights = graph.work if devices is None else cost_matrix(graph, devices).min(axis=1)
    n = len(graph.tasks)
    if n == 0:
        return 0.0, []
    finish = [0.0] * n
    best_pred = [-1] * n
    for i in graph.order:
        start, best = 0.0, -1
        for p in graph.preds[i]:
            if finish[p] > start:
                start, best = finish[p], p
        finish[i] = start + float(weights[i])
        best_pred[i] = best
    end = max(range(n), key=finish.__getitem__)
    path = []
    node = end
    while node != -1:
        path.append(graph.tasks[node].name)
        node = best_pred[node]
    return finish[end], path[::-1]


#: Most pieces :func:`split_task` cuts one task into (each piece is a Python object with its own edges).
