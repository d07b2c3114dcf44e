"""Workflow shapes from WfCommons recipes with run times drawn inside the recorded ranges
(hetlab.workloads.workflows)."""
import json
import math
import random
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

from hetlab import schedulers as S
from hetlab.devices import kitchen
from hetlab.workloads import workflows as W

STORED = sorted(W._stored()["instances"])


def _preds(graph, name):
    return [src for (src, dst) in graph.edges if dst == name]


def _kind(name):
    return name.rsplit("_", 1)[0]


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
    assert len(STORED) == 41
    for key in STORED:
        recipe, n, seed = key.rsplit("-", 2)
        g = W.workflow(recipe, int(n), seed=int(seed))
        assert len(g) > 0 and g.edges
    assert set(W.runtime_ranges("epigenomics")) == {"chr21", "fast2bfq", "fastqSplit", "filterContams", "map",
                                                     "mapMerge", "pileup", "sol2sanger"}
    with pytest.raises(ImportError, match=r"pip install hetlab\[workflows\]"):
        W.workflow("montage", 61, seed=0)


# --- the stored instances against the recipes' recorded ranges ------------------------------------------

def _recipe_json(recipe):
    """The recipe's task_type_stats.json, read straight from the installed wfcommons (not through hetlab)."""
    wfcommons = pytest.importorskip("wfcommons", reason="the optional extra hetlab[workflows] is not installed")
    path = Path(wfcommons.__file__).parent / "wfchef" / "recipes" / recipe / "task_type_stats.json"
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("recipe", ["montage", "epigenomics"])
def test_every_stored_run_time_lies_in_its_recorded_range_and_no_type_is_a_constant(recipe):
    # The defect: with WfCommons 1.6 every mProject ran 1263.481 s and every fastqSplit 878.473 s (the
    # recipe's maximum, on every seed) and mConcatFit 638.6 s against a recorded maximum of 12.386 s.
    stats = _recipe_json(recipe)
    runtimes = {}
    for seed in range(20):
        for t in W.workflow(recipe, 60, seed=seed).tasks:
            runtimes.setdefault(_kind(t.name), []).append(t.work / 10)
    for kind, values in runtimes.items():
        low, high = stats[kind]["runtime"]["min"], stats[kind]["runtime"]["max"]
        assert low <= min(values) and max(values) <= high, kind
        # a continuous draw: hardly two tasks alike (mConcatFit's dweibull has a spike: a few repeat to 1 us)
        assert len(set(values)) >= 0.9 * len(values), kind
        assert low < float(np.median(values)) < high, kind
    assert max(runtimes["mProject" if recipe == "montage" else "fastqSplit"]) < \
        {"montage": 1263.481, "epigenomics": 878.473}[recipe]


def test_every_stored_file_size_lies_in_its_recorded_range():
    # An edge carries the files the child reads from the parent: at most the sum of the parent type's
    # recorded output maxima, at least the smallest recorded output minimum when it is not empty.
    for recipe in ("montage", "epigenomics"):
        stats = _recipe_json(recipe)
        for seed in (0, 7, 19):
            g = W.workflow(recipe, 60, seed=seed)
            for (src, _), mb in g.edges.items():
                outputs = stats[_kind(src)]["output"].values()
                assert mb * 1e6 <= sum(f["max"] for f in outputs) + 1, (src, mb)
                assert mb == 0 or mb * 1e6 >= min(f["min"] for f in outputs) - 1, (src, mb)


@pytest.mark.parametrize("recipe", sorted(W._RECIPES))
def test_fresh_instances_of_every_recipe_stay_in_range(recipe):
    stats = _recipe_json(recipe)
    for seed in (0, 1):
        g = W.workflow(recipe, W._MIN_TASKS[recipe] + 1, seed=seed)   # + 1: not stored, generated now
        for t in g.tasks:
            r = stats[_kind(t.name)]["runtime"]
            assert r["min"] <= t.work / 10 <= r["max"], t.name


def test_wfcommons_itself_draws_the_maximum_for_a_point_mass_fit():
    # The upstream behaviour this module corrects: generate_rvs returns max(0.1, X) * max, and mProject's
    # rdist fit (scale 2.4e-16 around 1) makes X = 1, so every draw is the recorded maximum.
    utils = pytest.importorskip("wfcommons.utils", reason="wfcommons (Python >= 3.11) not installed")
    generate_rvs = utils.generate_rvs

    entry = _recipe_json("montage")["mProject"]["runtime"]
    assert entry["distribution"]["name"] == "rdist" and entry["distribution"]["params"][-1] < 1e-15
    np.random.seed(0)
    assert {round(generate_rvs(entry["distribution"], entry["min"], entry["max"]), 3) for _ in range(50)} \
        == {1263.481}


def test_runtime_ranges_flag_the_degenerate_fits():
    r = W.runtime_ranges("montage")
    assert (r["mProject"].rule, r["mProject"].why, r["mDiffFit"].why) == ("log-uniform", "point mass", "point mass")
    assert r["mProject"].wfcommons_median == 1263.481 and r["mDiffFit"].wfcommons_median == 46.525
    assert (r["mConcatFit"].fit, r["mConcatFit"].rule) == ("dweibull", "fit")
    assert r["mImgtbl"].why == "out of range"          # beta: 75 % of its mass below the range
    e = W.runtime_ranges("epigenomics")
    assert (e["fastqSplit"].rule, e["fastqSplit"].low, e["fastqSplit"].high) == ("log-uniform", 1.344, 878.473)
    assert e["map"].rule == "fit"


def test_stored_ranges_and_instances_equal_fresh_ones():
    pytest.importorskip("wfcommons", reason="the optional extra hetlab[workflows] is not installed")
    stored = W._stored()
    for recipe, table in stored["ranges"].items():
        assert W._ranges(recipe) == table, recipe
    for key in ("montage-60-0", "montage-60-13", "epigenomics-60-0", "epigenomics-60-19", "seismology-103-0"):
        recipe, n, seed = key.rsplit("-", 2)
        assert W._generate(recipe, int(n), int(seed)) == stored["instances"][key], key


# --- the sampler, against independent computations ---------------------------------------------------------

def test_log_uniform_draws_have_the_geometric_median_and_equal_decades():
    # Degenerate fit over [0, 1263.481]: log-uniform from 1263.481 / 1000 (three decades) to the maximum,
    # so the median is the geometric mean sqrt(1.263481 * 1263.481) = 39.955 and each decade holds a third.
    s = W._Sampler(0.0, 1263.481, {"name": "rdist", "params": [1.75, 1.0, 2.4e-16]})
    x = s.draw(np.random.default_rng(1), 60_000)
    assert (s.rule, s.why) == ("log-uniform", "point mass")
    assert x.min() >= 1.263481 and x.max() <= 1263.481
    assert np.median(x) == pytest.approx(math.sqrt(1.263481 * 1263.481), rel=0.03)
    decades = np.histogram(np.log10(x / 1.263481), bins=[0, 1, 2, 3])[0] / len(x)
    assert decades == pytest.approx([1 / 3] * 3, abs=0.01)


def test_fit_draws_follow_the_fit_conditioned_on_the_range():
    # mConcatFit's dweibull: conditioned on [0, 1] its CDF is (F(u) - F(0)) / (F(1) - F(0)); a KS test
    # against that CDF, computed here with scipy, and never above the recorded 12.386 s.
    params = [0.20992656025887707, 0.0769230769230769, 0.49663251368568506]
    s = W._Sampler(0.131, 12.386, {"name": "dweibull", "params": params})
    x = s.draw(np.random.default_rng(2), 4000)
    fit = scipy.stats.dweibull(params[0], loc=params[1], scale=params[2])
    f0, f1 = fit.cdf(0), fit.cdf(1)
    u = (x - 0.131) / (12.386 - 0.131)
    assert scipy.stats.kstest(u, lambda v: (fit.cdf(v) - f0) / (f1 - f0)).pvalue > 0.001
    assert x.max() <= 12.386


def test_constant_and_missing_fits():
    assert W._Sampler(4.0, 4.0, None).draw(np.random.default_rng(0), 3).tolist() == [4.0, 4.0, 4.0]
    s = W._Sampler(2.0, 200.0, None)
    assert (s.rule, s.why) == ("log-uniform", "no fit")
    assert 2.0 <= s.draw(np.random.default_rng(0), 100).min()


# --- the real traces -----------------------------------------------------------------------------------------

def test_trace_runtimes_span_exactly_the_epigenomics_recipe():
    # WfCommons built the Epigenomics recipe from these 26 traces: every type's range is the recipe's.
    stats = _recipe_json("epigenomics")
    for kind, t in W.trace_runtimes("epigenomics").items():
        assert (t.low, t.high) == (stats[kind]["runtime"]["min"], stats[kind]["runtime"]["max"]), kind
        assert t.traces == 26
    montage = _recipe_json("montage")
    for kind, t in W.trace_runtimes("montage").items():        # 13 of the 17 traces: inside the recipe's range
        assert montage[kind]["runtime"]["min"] <= t.low <= t.median <= t.high <= montage[kind]["runtime"]["max"]


def test_real_epigenomics_is_dominated_by_its_map_lanes():
    # Juve et al. 2013: in Epigenomics most of the time goes to the map tasks, not to the one split:
    # by count x median, 3742 x 46.3 s against 98 x 26.1 s, about 68 times as much.
    t = W.trace_runtimes("epigenomics")
    assert t["map"].tasks * t["map"].median > 50 * t["fastqSplit"].tasks * t["fastqSplit"].median


# --- determinism and validation -----------------------------------------------------------------------------

def test_same_seed_same_graph_other_seed_other_runtimes_global_rng_untouched():
    pytest.importorskip("wfcommons", reason="the optional extra hetlab[workflows] is not installed")
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


def test_min_tasks_are_the_recipes_smallest_base_graphs():
    wfcommons = pytest.importorskip("wfcommons", reason="the optional extra hetlab[workflows] is not installed")
    root = Path(wfcommons.__file__).parent / "wfchef" / "recipes"
    for recipe, low in W._MIN_TASKS.items():
        summary = json.loads((root / recipe / "microstructures" / "summary.json").read_text())
        assert low == min(v["order"] for v in summary["base_graphs"].values()), recipe
    assert set(W._MIN_TASKS) == set(W._RECIPES)


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


def test_tables_reject_bad_input():
    with pytest.raises(ValueError, match="recipe must be one with stored traces"):
        W.trace_runtimes("blast")
    with pytest.raises(ValueError, match="high must be >= low"):
        W.TypeRange(5.0, 1.0, None, "log-uniform", "no fit", 5.0)
    with pytest.raises(ValueError, match="rule"):
        W.TypeRange(1.0, 5.0, None, "uniform", "no fit", 1.0)
    with pytest.raises(ValueError, match="median must be >= low"):
        W.TraceRuntimes(1, 1, 2.0, 1.0, 3.0)
