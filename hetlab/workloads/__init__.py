"""Workloads used across the book: the article's eight dishes, the HEFT paper's example,
a phone segmentation network, and random task bags for experiments.

>>> len(article_tasks()), len(segmentation_model())
(8, 120)
"""
from __future__ import annotations

import numpy as np

from hetlab._validate import check_int, check_nonnegative, check_seed, check_strings
from hetlab.devices import Device, Link
from hetlab.tasks import Task, TaskGraph

__all__ = ["ARTICLE_TASKS", "article_tasks", "HEFT_PAPER_EXAMPLE", "heft_paper_example", "segmentation_model",
           "skewed_tasks"]

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
