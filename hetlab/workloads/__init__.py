"""Workloads used across the book: the article's eight dishes, the HEFT paper's example,
a phone segmentation network, random task bags and fork-join trees for experiments.

>>> len(article_tasks()), len(segmentation_model())
(8, 120)
"""
from __future__ import annotations

import random

import numpy as np

from hetlab._validate import check_int, check_nonnegative, check_positive, check_real, check_seed, check_strings
from hetlab.devices import Device, Link
from hetlab.tasks import Task, TaskGraph

__all__ = ["ARTICLE_TASKS", "article_tasks", "HEFT_PAPER_EXAMPLE", "heft_paper_example", "segmentation_model",
           "skewed_tasks", "fork_join"]

#: (work, preferred device) of the article's eight dishes, in its order.
ARTICLE_TASKS = [(10, "CPU"), (20, "GPU"), (15, "NPU"), (8, "CPU"), (12, "GPU"), (25, "NPU"), (18, "CPU"), (6, "GPU")]


def article_tasks() -> TaskGraph:
    """The article's eight independent tasks ``t0 .. t7`` with their work and preferred device."""
    return TaskGraph(Task(f"t{i}", work, kind) for i, (work, kind) in enumerate(ARTICLE_TASKS))


#: Topcuoglu, Hariri & Wu (2002), Fig. 2 and Table 1: run time of tasks n1..n10 on P1..P3,
#: and the communication cost of each edge (paid only when the two tasks are on different processors).
HEFT_PAPER_EXAMPLE = {
    "costs": {1: (14, 16, 9), 2: (13, 19, 18), 3: (11, 13, 19), 4: (13, 8, 17), 5: (12, 13, 10),
              6: (13, 16, 9), 7: (7, 15, 11), 8: (5, 11, 14), 9: (18, 12, 20), 10: (21, 7, 16)},
    "edges": [(1, 2, 18), (1, 3, 12), (1, 4, 9), (1, 5, 11), (1, 6, 14), (2, 8, 19), (2, 9, 16), (3, 7, 23),
              (4, 8, 27), (4, 9, 23), (5, 9, 13), (6, 8, 15), (7, 10, 17), (8, 10, 11), (9, 10, 13)],
}


def heft_paper_example() -> tuple[TaskGraph, list[Device]]:
    """The ten-task, three-processor example of the HEFT paper, as a graph and devices.

    Links have zero latency and unit bandwidth, so an edge's data equals its published cost.
    """
    devices = [Device(f"P{j}", "CPU", link=Link(0.0, 1.0)) for j in (1, 2, 3)]
    tasks = [Task(f"n{i}", times={f"P{j + 1}": c for j, c in enumerate(costs)})
             for i, costs in HEFT_PAPER_EXAMPLE["costs"].items()]
    edges = [(f"n{a}", f"n{b}", c) for a, b, c in HEFT_PAPER_EXAMPLE["edges"]]
    return TaskGraph(tasks, edges), devices


def segmentation_model(seed: int = 0) -> TaskGraph:
    """A 120-operator portrait-segmentation network for :func:`~hetlab.devices.phone_soc`.

    Shape of an encoder-decoder (U-Net-like) model: image pre-processing (``image``),
    18 encoder blocks of three convolutions (``conv``), a shape check (``control``) and a residual add,
    a decoder of upsampling (``image``) and convolutions joined by skip connections, and
    mask post-processing (``control``). Work in GOP, data in MB; sizes are drawn around
    typical MobileNet-class figures (about 12 GOP a frame) with a seeded generator.
    """
    rng = np.random.default_rng(check_seed("seed", seed))
    tasks: list[Task] = []
    edges: list[tuple[str, str, float]] = []

    def add(name, op, work, after=(), data=1.0):
        tasks.append(Task(name, float(work), op=op))
        edges.extend((a, name, float(data)) for a in after)
        return name

    last = add("decode", "control", 0.002)
    last = add("resize", "image", 0.02, [last], 2.0)
    skips = []
    for b in range(18):
        size = 2.0 / (1 + b // 4)
        c1 = add(f"enc{b}.conv1", "conv", rng.uniform(0.12, 0.36), [last], size)
        c2 = add(f"enc{b}.conv2", "conv", rng.uniform(0.12, 0.36), [c1], size)
        c3 = add(f"enc{b}.conv3", "conv", rng.uniform(0.06, 0.18), [c2], size)
        chk = add(f"enc{b}.check", "control", 0.001, [c1], 0.01)
        last = add(f"enc{b}.add", "image", 0.002, [c3, chk], size)
        if b % 3 == 2:
            skips.append(last)
    for b in range(6):
        up = add(f"dec{b}.upsample", "image", 0.008, [last], 1.0)
        skip = skips[-1 - b]
        c1 = add(f"dec{b}.conv", "conv", rng.uniform(0.12, 0.3), [up, skip], 1.0)
        c2 = add(f"dec{b}.refine", "conv", rng.uniform(0.06, 0.18), [c1], 1.0)
        last = add(f"dec{b}.blend", "image", 0.004, [c2], 1.0)
    head = add("head.conv", "conv", 0.12, [last], 1.0)
    sig = add("head.sigmoid", "image", 0.002, [head], 0.5)
    th = add("mask.threshold", "control", 0.002, [sig], 0.5)
    add("mask.compose", "image", 0.01, [th], 2.0)
    n = len(tasks)
    assert n == 120, n  # the article's figure of 120 operators
    return TaskGraph(tasks, edges)


def skewed_tasks(n: int, *, spread: float = 1.0, seed: int = 0, kinds=("CPU", "GPU", "NPU")) -> TaskGraph:
    """``n`` independent tasks whose work is lognormal with shape ``spread`` (0: all equal, median 10),
    each preferring a device kind drawn uniformly from ``kinds``."""
    n = check_int("n", n, low=1, high=1_000_000)
    # Beyond spread 10 a lognormal draw overflows (exp(10 * 38) > 1e308): no meaningful workload is that skewed.
    spread = check_nonnegative("spread", spread, high=10.0)
    kinds = check_strings("kinds", kinds)
    rng = np.random.default_rng(check_seed("seed", seed))
    work = np.round(10 * rng.lognormal(0.0, spread, n), 2) if spread > 0 else np.full(n, 10.0)
    prefs = rng.choice(list(kinds), size=n)
    width = len(str(n - 1))
    return TaskGraph(Task(f"T{i:0{width}d}", float(w), str(k)) for i, (w, k) in enumerate(zip(work, prefs)))


def fork_join(depth: int, *, work: float = 64.0, skew: float = 0.4, seed: int = 0,
              leaf_share: float = 0.9) -> tuple[TaskGraph, TaskGraph]:
    """A recursive divide-and-conquer DAG: ``(estimated, actual)`` with the same tasks and edges.

    Each internal call ``s`` splits its problem (a small ``split`` task), recurses into two halves
    and ends with a ``join`` task; leaves at ``depth`` do the bulk of the work (``leaf_share``).
    The planner assumes every split halves the problem; at run time each split gives its left
    child a share drawn uniformly from ``[0.5 - skew/2, 0.5 + skew/2]`` (seeded), like a quicksort
    pivot. Split and join costs are proportional to the problem size they handle. Chapter 5 uses it
    to show where work stealing and a central queue beat a static plan (Blumofe & Leiserson 1999).

    >>> est, act = fork_join(2, seed=0)
    >>> len(est), est.task("leaf00").work, round(sum(t.work for t in act.tasks), 6)   # 3 splits, 3 joins, 4 leaves
    (10, 14.4, 64.0)
    """
    depth = check_int("depth", depth, low=1, high=10)
    work = check_positive("work", work, high=1e12)
    skew = check_nonnegative("skew", skew, high=0.9)
    leaf_share = check_real("leaf_share", leaf_share)
    if not 0 < leaf_share < 1:
        raise ValueError(f"leaf_share must be in (0, 1), got {leaf_share!r}")
    seed = check_seed("seed", seed)
    rng = random.Random(seed)
    # Split + join at every level share (1 - leaf_share) of the work: per level and per unit of size.
    per_level = (1 - leaf_share) / (2 * depth)
    est_tasks: list[Task] = []
    act_tasks: list[Task] = []
    edges: list[tuple[str, str]] = []

    def build(path: str, est: float, act: float, level: int) -> tuple[str, str]:
        """Add the subtree for a problem of estimated/actual size; return (entry, exit) task names."""
        if level == depth:
            name = f"leaf{path}"
            est_tasks.append(Task(name, work * leaf_share * est))
            act_tasks.append(Task(name, work * leaf_share * act))
            return name, name
        split, join = f"split{path}", f"join{path}"
        for name in (split, join):
            est_tasks.append(Task(name, work * per_level * est))
            act_tasks.append(Task(name, work * per_level * act))
        share = rng.uniform(0.5 - skew / 2, 0.5 + skew / 2)
        for child, e, a in ((path + "0", est / 2, act * share), (path + "1", est / 2, act * (1 - share))):
            entry, exit_ = build(child, e, a, level + 1)
            edges.extend([(split, entry), (exit_, join)])
        return split, join

    build("", 1.0, 1.0, 0)
    return TaskGraph(est_tasks, edges), TaskGraph(act_tasks, edges)
