"""Tasks and task graphs: the work to schedule, and the data that flows between tasks.

A :class:`Task` carries an amount of ``work`` (run time is ``work / speed``), or
explicit per-device ``times`` as in the scheduling literature (unrelated devices).
A :class:`TaskGraph` is a DAG of tasks whose edges carry the amount of data the
consumer needs from the producer; a graph with no edges is a bag of independent tasks.

>>> g = TaskGraph([Task("a", 2), Task("b", 3), Task("c", 1)], [("a", "c", 4.0), ("b", "c")])
>>> g.topological_order()
['a', 'b', 'c']
>>> critical_path(g)
(4.0, ['b', 'c'])

Three modules: :mod:`~hetlab.tasks.graph` (the concepts), :mod:`~hetlab.tasks.costs` (run-time and transfer
matrices on a list of devices, the critical path) and :mod:`~hetlab.tasks.builders` (splitting tasks, random
DAGs); everything public is importable from ``hetlab.tasks``.
"""
from __future__ import annotations

from hetlab.tasks.builders import random_dag, split_longest_critical_task, split_task
from hetlab.tasks.costs import as_device_indices as as_device_indices  # for hetlab.schedule
from hetlab.tasks.costs import assigned_costs, comm_matrices, cost_matrix, critical_path
from hetlab.tasks.graph import (
    CycleError,
    Task,
    TaskGraph,
    UnknownTaskError,
    as_graph,
    execution_time,
    independent_tasks,
    total_work,
)
from hetlab.tasks.graph import (
    _as_graph as _as_graph,  # the argument check the schedulers and models share
)

__all__ = ["Task", "TaskGraph", "CycleError", "UnknownTaskError", "as_graph", "execution_time", "cost_matrix",
           "assigned_costs", "comm_matrices", "critical_path", "total_work", "independent_tasks", "random_dag",
           "split_task", "split_longest_critical_task"]
