"""Chapter 9's claims, checked beyond the one case the chapter prints: 20 task sets, 20 random DAGs, 50 random
DAGs for the chapter's own HEFT, and the 20 stored instances of each WfCommons workflow."""
from functools import cache, lru_cache
from pathlib import Path

import nbformat
import numpy as np
import pytest
from scipy.stats import spearmanr

from hetlab import schedulers as S
from hetlab.devices import Link, identical, kitchen
from hetlab.schedulers.bounds import staged_bound
from hetlab.tasks import Task, TaskGraph, cost_matrix, random_dag, split_longest_critical_task, total_work
from hetlab.workloads import skewed_tasks
from hetlab.workloads.workflows import workflow

SEEDS = range(20)
SHOP = kitchen(link=Link(0.0, 100.0))
STOVES = kitchen(link=Link(0.0, 10.0))


# --- 9.1 -------------------------------------------------------------------------------------------------------------

def test_lpt_is_within_half_a_percent_of_the_two_bounds_on_every_task_set():
    # 9.1: at spread 2 the largest task outlasts the mean busy time on most sets ("大多数"), and LPT ends within
    # 0.5 % of max(largest task, mean busy time) on all 20; at spread 1 and 2 LPT has the lowest imbalance.
    four = identical(4, speed=10.0)
    longer = 0
    for seed in SEEDS:
        for spread in (1.0, 2.0):
            jobs = skewed_tasks(20, spread=spread, seed=seed)
            runs = {k: S.POLICIES[k](jobs, four) for k in ("block", "round_robin", "lpt")}
            assert runs["lpt"].imbalance <= min(runs["block"].imbalance, runs["round_robin"].imbalance)
        longest, mean = max(t.work for t in jobs.tasks) / 10, total_work(jobs) / 40
        longer += longest > mean
        assert runs["lpt"].makespan <= 1.005 * max(longest, mean)
        # Graham (1966): any list schedule is within 2 - 1/m of the optimum, and max(largest, mean) <= optimum
        assert S.earliest_free(jobs, four).makespan <= (2 - 1 / 4) * max(longest, mean)
    assert longer >= 15


# --- 9.2 -------------------------------------------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _dag_ratios():
    names = ["round_robin", "earliest_free", "eft", "heft", "cpop", "work_stealing"]
    dags = [random_dag(40, mean_degree=1.5, data=(0.0, 4.0), seed=k) for k in SEEDS]
    return np.array([[S.POLICIES[n](g, STOVES).makespan / S.lower_bound(g, STOVES) for n in names] for g in dags])


def test_random_dags_heft_fastest_earliest_free_mostly_beats_eft_round_robin_about_twice():
    r = _dag_ratios()
    assert (r[:, 3] <= r.min(axis=1)).all()                 # HEFT fastest on 20 of 20
    assert r[:, 3].mean() < 1.05                             # "about 3 % above the bound"
    assert (r[:, 1] < r[:, 2]).sum() >= 15                   # earliest free beats EFT "most of the time"
    assert 1.5 < r[:, 0].min() and r[:, 0].max() < 2.5       # round robin "around twice"


# --- 9.3: the chapter's HEFT over plain dicts ----------------------------------------------------------------------

def upward_ranks(cost, succ):
    rank = {}

    def rank_u(t):
        if t not in rank:
            rank[t] = sum(cost[t]) / len(cost[t]) + max((c + rank_u(s) for s, c in succ[t]), default=0)
        return rank[t]
    return {t: rank_u(t) for t in cost}


def earliest_start(busy, ready, run):
    t = ready
    for start, end in sorted(busy):
        if t + run <= start:
            return t
        t = max(t, end)
    return t


def my_heft(cost, succ, pred):
    rank, m = upward_ranks(cost, succ), len(next(iter(cost.values())))
    busy, where, finish = [[] for _ in range(m)], {}, {}
    for t in sorted(cost, key=rank.get, reverse=True):
        options = []
        for p in range(m):
            ready = max((finish[a] + (c if where[a] != p else 0) for a, c in pred[t]), default=0)
            start = earliest_start(busy[p], ready, cost[t][p])
            options.append((start + cost[t][p], p, start))
        finish[t], where[t], start = min(options)
        busy[where[t]].append((start, finish[t]))
    return max(finish.values()), where


@pytest.mark.parametrize("seed", range(50))
def test_the_chapters_heft_gives_hetlabs_makespan(seed):
    # A link of latency 0 and bandwidth 1: a transfer costs the edge's data, as in the chapter's dicts.
    g, devices = random_dag(15, mean_degree=1.5, seed=seed), kitchen(link=Link(0.0, 1.0))
    costs = cost_matrix(g, devices)
    cost = {t.name: list(costs[i]) for i, t in enumerate(g.tasks)}
    succ = {t: [(b, c) for (a, b), c in g.edges.items() if a == t] for t in cost}
    pred = {t: [(a, c) for (a, b), c in g.edges.items() if b == t] for t in cost}
    makespan, where = my_heft(cost, succ, pred)
    assert makespan == pytest.approx(S.heft(g, devices).makespan, rel=1e-12)


# --- 9.5-9.7: the 20 stored instances ---------------------------------------------------------------------------

@cache
def _gap(recipe, policy, seed, **options):
    g = workflow(recipe, 60, seed=seed)
    run = S.cpop(g, SHOP, **dict(options)) if options else S.POLICIES[policy](g, SHOP)
    return run.validate().makespan / S.lower_bound(g, SHOP) - 1


def _gaps(recipe, policy, **options):
    return np.array([_gap(recipe, policy, s, **options) for s in SEEDS])


def test_montage_heft_fastest_everywhere_eft_far_behind():
    gaps = {p: _gaps("montage", p) for p in ("eft", "heft", "cpop", "work_stealing")}
    assert (gaps["heft"] <= np.minimum.reduce(list(gaps.values())) + 1e-12).all()
    assert gaps["heft"].mean() < 0.01 and gaps["eft"].mean() > 0.4        # "不到 1%" and "六成"


@pytest.mark.parametrize(("recipe", "seed"), [("montage", 9), ("epigenomics", 0)])
def test_the_shown_instances_rank_central_for_eft_heft_cpop(recipe, seed):
    # 9.5: "EFT、HEFT、CPOP 的名次都居中" -- rank (1 = smallest gap) of the shown instance among the 20 lies in the
    # middle half, 6..15; work stealing is not claimed (on Montage 9 it ranks 17th).
    for policy in ("eft", "heft", "cpop"):
        gaps = _gaps(recipe, policy)
        rank = 1 + int((gaps < gaps[seed]).sum())
        assert 6 <= rank <= 15, (policy, rank)


def test_seed_0_earliest_free_vs_heft_decomposes_into_imbalance_and_mean_busy_time():
    # 9.2: neither waits (makespan = mean busy x (1 + imbalance) within 1%); earliest-free's longer makespan is
    # both a larger imbalance and a larger mean busy time (more work on the slow CPU); over 20 DAGs x 4 list
    # policies imbalance and makespan / bound correlate positively (the text says 0.64).
    dag = random_dag(40, mean_degree=1.5, data=(0.0, 4.0), seed=0)
    ef, hf = S.POLICIES["earliest_free"](dag, STOVES), S.heft(dag, STOVES)
    for s in (ef, hf):
        assert s.makespan == pytest.approx(s.busy.mean() * (1 + s.imbalance), rel=0.01)
    assert ef.imbalance > hf.imbalance and ef.busy.mean() > hf.busy.mean() and ef.busy[0] > hf.busy[0]
    pairs = np.array([[s.imbalance, s.makespan / S.lower_bound(g, STOVES)]
                      for g in (random_dag(40, mean_degree=1.5, data=(0.0, 4.0), seed=k) for k in SEEDS)
                      for s in (S.POLICIES[n](g, STOVES) for n in ("earliest_free", "eft", "heft", "cpop"))])
    assert 0.5 < np.corrcoef(pairs.T)[0, 1] < 0.8


def test_montage_cpop_loses_mostly_by_its_order():
    # 9.6: CPOP ends later than HEFT on average; taking tasks by rank_u (still pinning) removes most of the
    # difference, dropping the pin alone much less.
    heft, cpop = _gaps("montage", "heft"), _gaps("montage", "cpop")
    ranku, unpinned = _gaps("montage", "cpop", order="rank_u"), _gaps("montage", "cpop", pin=False)
    assert (cpop - heft).mean() > 0.02
    assert (ranku - heft).mean() < 0.5 * (cpop - heft).mean() < (unpinned - heft).mean()


def test_montage_eft_starts_a_long_late_listed_mproject_late():
    # 9.6 on instance 9: the mProject EFT delays most starts hundreds of seconds after HEFT starts it.
    flow = workflow("montage", 60, seed=9)
    eft, heft = S.eft(flow, SHOP), S.heft(flow, SHOP)
    late = eft.placement("mProject_00000041").start - heft.placement("mProject_00000041").start
    assert late > 300 and flow.index["mProject_00000041"] == 40


@pytest.mark.parametrize("seed", SEEDS)
def test_epigenomics_staged_bound_explains_heft(seed):
    # 9.7: one split at the head, four serial stages at the tail (two merges, chr21, pileup); HEFT ends
    # within 3 % of head + middle + tail on every instance, while the plain bound misses the serial stages.
    epi = workflow("epigenomics", 60, seed=seed)
    b = staged_bound(epi, SHOP)
    assert len(b.head) == 1 and b.head[0][0].startswith("fastqSplit") and len(b.tail) == 4
    heft = S.heft(epi, SHOP).makespan
    assert b.total - 1e-9 <= heft < 1.03 * b.total
    assert b.total >= S.lower_bound(epi, SHOP) - 1e-9
    # work stealing deals the only entry task to the first device, the CPU, every time
    assert S.work_stealing(epi, SHOP).placement(b.head[0][0]).device == "CPU"


def test_epigenomics_heft_gap_grows_with_the_split_task():
    # 9.7's answer: where fastqSplit is long, HEFT is further above max(CP, area); HEFT's gap is 10-50 %.
    heft = _gaps("epigenomics", "heft")
    split = [next(t.work for t in workflow("epigenomics", 60, seed=s).tasks if t.name.startswith("fastqSplit"))
             for s in SEEDS]
    assert spearmanr(split, heft).statistic > 0.5
    assert 0.10 < heft.min() and heft.max() < 0.50


def test_most_stored_fastqsplit_draws_are_long():
    # 9.5's 深入一点: "大多抽得偏长：20 个里有 14 个超过 34 秒" -- the log-uniform median is the geometric mean of the
    # range's ends (lower end: max(min, max / 1000)); the strict reviewer counted 6 of 20 at or below it, min 1.5 s
    from hetlab.workloads.workflows import runtime_ranges
    r = runtime_ranges("epigenomics")["fastqSplit"]
    median = np.sqrt(max(r.low, r.high / 1000) * r.high)
    draws = [next(t.work / 10 for t in workflow("epigenomics", 60, seed=s).tasks if t.name.startswith("fastqSplit"))
             for s in SEEDS]
    assert round(median) == 34 and sum(d > median for d in draws) == 14 and 1 < min(draws) < 2


@pytest.mark.parametrize("seed", SEEDS)
def test_splitting_the_longest_critical_task_never_beats_the_staged_bound(seed):
    epi = workflow("epigenomics", 60, seed=seed)
    for k in (2, 3, 4, 8):
        g, name = split_longest_critical_task(epi, SHOP, k)
        bk = staged_bound(g, SHOP)
        assert S.heft(g, SHOP).makespan >= bk.total - 1e-9
        if name.startswith("fastqSplit"):
            assert len(bk.head) == 1 and len(bk.head[0]) == k


def test_montage_has_many_sub_second_tasks():
    # 9.8: "每个实例都有十几到二十几个任务运行不到 1 秒"
    counts = [sum(t.work / 10 < 1 for t in workflow("montage", 60, seed=s).tasks) for s in SEEDS]
    assert min(counts) >= 10


def test_work_stealing_on_epigenomics_does_not_lose_by_transfers():
    # quiz c09-9: with free transfers (infinite bandwidth) work stealing ends less than a second earlier on all 20
    free = kitchen(link=Link(0.0, float("inf")))
    for seed in SEEDS:
        g = workflow("epigenomics", 60, seed=seed)
        assert 0 <= S.work_stealing(g, SHOP).makespan - S.work_stealing(g, free).makespan < 1.0


# --- 9.8: horizontal clustering of Montage's mDiffFit under a per-task dispatch cost ----------------------------

def _cluster(graph, kind, k):
    # the chapter's cluster(): k tasks of ``kind`` with the same successors merged into one, work and data summed
    succ = {}
    for a, b in graph.edges:
        succ.setdefault(a, set()).add(b)
    groups = {}
    for t in graph.tasks:
        if t.name.startswith(kind):
            groups.setdefault(frozenset(succ.get(t.name, ())), []).append(t.name)
    into = {m: f"{ms[i]}+{k}" for ms in groups.values() for i in range(0, len(ms), k) for m in ms[i:i + k]}
    work, edges = {}, {}
    for t in graph.tasks:
        work[into.get(t.name, t.name)] = work.get(into.get(t.name, t.name), 0.0) + t.work
    for (a, b), mb in graph.edges.items():
        key = (into.get(a, a), into.get(b, b))
        edges[key] = edges.get(key, 0.0) + mb
    return TaskGraph([Task(n, w) for n, w in work.items()], edges)


def _se(d):
    return d.std(ddof=1) / np.sqrt(len(d))


@pytest.mark.parametrize("first", [0, 20, 40])
def test_montage_clustering_only_the_robust_claims_hold_on_three_sets_of_20_instances(first):
    # 9.8: each Montage instance has 3 levels of 6 mDiffFit with one common successor, so k = 6 leaves 58 - 15
    # tasks and the same work. The simulation has no single dispatcher: each of the 3 devices pays O_s before
    # each task it takes, so the overhead adds about N O_s / 3 to the makespan (58 x 30 / 3 = 580 s by hand),
    # and 15 fewer dispatches save about 15 x 30 / 3 = 150 s at O_s = 30. Review ch09-4 defect 1: 20-instance
    # means carry a standard error of 12-52 s and their signs flip between instance sets, so only the claims the
    # chapter keeps are asserted, on the book's instances (seeds 0-19) and on seeds 20-39 and 40-59.
    if first:   # seeds past the 20 stored instances are generated by wfcommons (Python >= 3.11)
        pytest.importorskip("wfcommons", reason="instances past the stored 20 need hetlab[workflows]")
    flows = [workflow("montage", 60, seed=s) for s in range(first, first + 20)]
    assert all(len(g) == 58 and len(_cluster(g, "mDiffFit", 6)) == 58 - 15 for g in flows)
    assert all(total_work(_cluster(g, "mDiffFit", 6)) == pytest.approx(total_work(g)) for g in flows)

    def spans(k, o):
        return np.array([S.central_queue(_cluster(g, "mDiffFit", k), SHOP, overhead=o).makespan for g in flows])

    rise = spans(1, 30.0).mean() - spans(1, 0.0).mean()
    assert 0.8 * 580 < rise < 1.2 * 580                          # "与按 N O_s / 3 的预测对得上"
    d = {o: spans(6, o) - spans(1, o) for o in (0.0, 1.0, 5.0, 30.0)}
    assert (d[0.0] > 0).sum() > 10                               # "O_s = 0 ... 多数实例变慢"
    gain = -d[30.0]
    assert (gain > 0).sum() >= 15                                # "O_s = 30 秒时 ... 只有 4 个变慢"
    assert gain.mean() > 1.5 * _se(gain)                         # "省时明显"
    assert abs(gain.mean() - 150) < 2 * _se(gain)                # "与 ... 150 秒相差不到两个标准误"
    for o in (1.0, 5.0):                                         # "O_s 只有几秒时 ... 在标准误之内"
        assert abs(d[o].mean()) < 2 * _se(d[o])
    # single instances: at O_s = 0 there is nothing to save, yet the earliest-free queue's makespan moves by
    # far more than under HEFT, where merging a level changes little (a level is a small share of the work)
    heft = np.array([S.heft(_cluster(g, "mDiffFit", 6), SHOP).makespan - S.heft(g, SHOP).makespan for g in flows])
    assert np.abs(heft).max() < 25 and np.abs(d[0.0]).max() > 3 * np.abs(heft).max()
    assert d[0.0].min() < 0 < d[0.0].max()                       # faster and slower, "从 −53 到 +208 秒"


# --- structure: the sections the text refers to exist, in order ----------------------------------------------------

def test_sections_in_order_and_the_experiments_before_the_summary():
    # review ch09-2 defects 1 and 2: 9.3 (with the rank_u formula) was deleted, the clustering experiment sat under
    # the quiz heading. Cell 18's "上面的公式" and exercise 9.1's "9.3 节" need 9.3 before the paper's table.
    nb = nbformat.read(Path(__file__).parents[2] / "chapters" / "09-optimisation.ipynb", 4)
    heads = [line for c in nb.cells if c.cell_type == "markdown" for line in c.source.splitlines()
             if line.startswith("## ")]
    sections = [h for h in heads if h.startswith("## 9.")]
    assert [h.split()[1] for h in sections] == [f"9.{k}" for k in range(1, 9)]
    assert heads[-4:] == ["## 本章小结", "## 小测验", "## 练习", "## 参考文献"]
    table = next(i for i, c in enumerate(nb.cells) if c.source.strip() == "views.heft_paper_table()")
    before = "\n".join(c.source for c in nb.cells[:table])
    assert "## 9.3" in before and "\\text{rank}_u(n_i) =" in before
    summary = next(i for i, c in enumerate(nb.cells) if "## 本章小结" in c.source)
    assert not any("cluster(" in c.source for c in nb.cells[summary:])
