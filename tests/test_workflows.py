"""Workflow shapes from WfCommons recipes (hetlab.workloads.workflows)."""
import json
import math
import random
import sys

import numpy as np
import pytest

from hetlab import schedulers as S
from hetlab.devices import Link, kitchen
from hetlab.workloads import workflows as W


def _preds(graph, name):
    return [src for (src, dst) in graph.edges if dst == name]


def test_montage_has_the_shape_of_a_mosaic():
    # Montage (Berriman et al. 2004): every image is first re-projected (mProject, no inputs from the
    # workflow); each mDiffFit fits the difference of two overlapping re-projected images.
    g = W.workflow("montage", 60, seed=0, by_type=True)
    assert len(g) == 60 - 2                  # WfCommons counts a pseudo source and sink
    names = {t.name: t.op for t in g.tasks}
    for t in g.tasks:
        if t.op == "mProject":
            assert _preds(g, t.name) == []
        if t.op == "mDiffFit":
            assert sorted(names[p] for p in _preds(g, t.name)) == ["mProject", "mProject"]


def test_epigenomics_starts_from_one_split_and_runs_lanes_in_parallel():
    # Epigenomics (USC Epigenome Center pipeline): fastqSplit cuts the input, then each chunk passes
    # filterContams -> sol2sanger -> fast2bfq -> map on its own.
    g = W.workflow("epigenomics", 60, seed=0, by_type=True)
    ops = {t.name: t.op for t in g.tasks}
    entries = [t.op for t in g.tasks if not _preds(g, t.name)]
    assert entries == ["fastqSplit"]
    for t in g.tasks:
        if t.op in ("sol2sanger", "fast2bfq", "map"):
            (p,) = _preds(g, t.name)
            assert ops[p] == {"sol2sanger": "filterContams", "fast2bfq": "sol2sanger", "map": "fast2bfq"}[t.op]


def test_units_work_is_runtime_times_reference_speed_and_data_in_megabytes():
    fast, slow = W.workflow("montage", 60), W.workflow("montage", 60, reference_speed=1.0)
    assert [t.work for t in fast.tasks] == pytest.approx([10 * t.work for t in slow.tasks])
    # On kitchen() the CPU (speed 10) takes the recorded runtime, the GPU (speed 20) half of it.
    devices = kitchen()
    cpu = S.serial(fast, devices, device="CPU").makespan
    assert cpu == pytest.approx(sum(t.work for t in slow.tasks))
    assert S.serial(fast, devices, device="GPU").makespan == pytest.approx(cpu / 2)
    assert all(0 <= mb < 1e4 for mb in fast.edges.values())
    assert all(t.op is None and t.name.startswith("m") for t in fast.tasks)   # types live in the names
    # Plain work / speed, so the area bound total work / total speed applies: 45 = 10 + 20 + 15.
    assert S.lower_bound(fast, devices) >= sum(t.work for t in fast.tasks) / 45 - 1e-9


def test_stored_instances_load_without_wfcommons(monkeypatch):
    monkeypatch.setitem(sys.modules, "wfcommons", None)     # import wfcommons now fails
    for key in W.STORED:
        recipe, n, seed = key.rsplit("-", 2)
        g = W.workflow(recipe, int(n), seed=int(seed))
        assert len(g) > 0 and g.edges
    with pytest.raises(ImportError, match=r"pip install hetlab\[workflows\]"):
        W.workflow("montage", 61, seed=0)


@pytest.fixture(scope="module")
def wfcommons():
    return pytest.importorskip("wfcommons", reason="the optional extra hetlab[workflows] is not installed")


def test_stored_instances_equal_fresh_generation(wfcommons):
    stored = json.loads(W._STORE.read_text(encoding="utf-8"))
    for key, plain in stored.items():
        recipe, n, seed = key.rsplit("-", 2)
        assert W._generate(recipe, int(n), int(seed)) == plain, key


def test_same_seed_same_graph_other_seed_other_runtimes_global_rng_untouched(wfcommons):
    random.seed(123)
    np.random.seed(123)
    expected = (random.random(), np.random.random())
    random.seed(123)
    np.random.seed(123)
    a = W.workflow("montage", 61, seed=5)
    assert (random.random(), np.random.random()) == expected
    b, c = W.workflow("montage", 61, seed=5), W.workflow("montage", 61, seed=6)
    assert [t.work for t in a.tasks] == [t.work for t in b.tasks] and dict(a.edges) == dict(b.edges)
    assert [t.work for t in a.tasks] != [t.work for t in c.tasks]


def test_min_tasks_are_the_recipes_smallest_base_graphs(wfcommons):
    from pathlib import Path

    root = Path(wfcommons.__file__).parent / "wfchef" / "recipes"
    for recipe, low in W.MIN_TASKS.items():
        summary = json.loads((root / recipe / "microstructures" / "summary.json").read_text())
        assert low == min(v["order"] for v in summary["base_graphs"].values()), recipe
    assert set(W.MIN_TASKS) == set(W.RECIPES)


def test_from_wfcommons_converts_a_generated_instance(wfcommons):
    from wfcommons import WorkflowGenerator
    from wfcommons.wfchef.recipes import SeismologyRecipe

    wf = WorkflowGenerator(SeismologyRecipe.from_num_tasks(103)).build_workflow()
    g = W.from_wfcommons(wf)
    assert len(g) == len(wf.nodes) and len(g.edges) == len(wf.edges)
    assert g.tasks[0].work == pytest.approx(10 * wf.tasks[g.tasks[0].name].runtime)
    s = S.heft(g, kitchen(link=Link(0.01, 100.0))).validate()
    assert s.makespan >= S.lower_bound(g, kitchen()) - 1e-9


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(recipe=5), TypeError, "recipe"), (dict(recipe="nope"), ValueError, "recipe"),
    (dict(recipe="montage", num_tasks=10), ValueError, r"num_tasks must be in \[60, 10000\], got 10"),
    (dict(recipe="montage", num_tasks=True), TypeError, "num_tasks"),
    (dict(recipe="montage", num_tasks=60.0), TypeError, "num_tasks"),
    (dict(recipe="montage", num_tasks=10**9), ValueError, "num_tasks"),
    (dict(recipe="montage", seed=-1), ValueError, "seed"),
    (dict(recipe="montage", reference_speed=math.nan), ValueError, "reference_speed"),
    (dict(recipe="montage", reference_speed=0.0), ValueError, "reference_speed"),
    (dict(recipe="montage", by_type=1), TypeError, "by_type"),
])
def test_rejects_bad_arguments_naming_them(kwargs, error, words):
    with pytest.raises(error, match=words):
        W.workflow(**kwargs)


def test_from_wfcommons_rejects_other_objects():
    with pytest.raises(TypeError, match="instance"):
        W.from_wfcommons({"tasks": []})
