"""Chapter 9's views (hetlab.book.views.ch09): the HEFT paper's table and graph, the Gantt figures, the widgets'
readouts and the tables over the 20 stored WfCommons instances."""
import matplotlib
import pytest

from hetlab import schedulers as S
from hetlab.devices import Link, kitchen
from hetlab.workloads.workflows import workflow

matplotlib.use("Agg")

from hetlab.book.views import ch09  # noqa: E402


def test_paper_table_and_dag():
    table = ch09.heft_paper_table()
    assert list(table.index) == [f"n{i}" for i in range(1, 11)]
    assert table.loc["n10", "平均耗时 w̄"] == pytest.approx(14.667, abs=1e-3)     # (21 + 7 + 16) / 3
    assert table.loc["n1", "后继（通信代价 c̄）"].startswith("n2（18）")
    assert len(ch09.heft_paper_dag().axes) == 1
    assert len(ch09.paper_gantts().axes) == 2


def test_workflow_gantts_highlight_and_seed():
    fig = ch09.workflow_gantts("montage", ("eft", "heft"), 100, highlight="mProject_00000041", seed=9)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "mProject_00000041" in labels and any(t.startswith("完工时间") or "makespan" in t for t in labels)
    assert "实例 9" in fig.axes[0].get_title() or "#9" in fig.axes[0].get_title()
    with pytest.raises(ValueError, match="highlight"):
        ch09.workflow_gantts("montage", ("heft",), 100, highlight="nope")
    with pytest.raises(ValueError, match="seed"):
        ch09.workflow_gantts("montage", ("heft",), 100, seed=20)
    assert len(ch09.workflow_gantts().axes) == 2


def test_balance_readout_matches_the_policies():
    # seed 5, spread 1: LPT 0.018 as the chapter prints it; spread 0: every task equal, nothing to balance
    assert "LPT 不均衡度 0.018" in ch09.balance_readout(1.0)
    assert ch09.balance_readout(0.0).count("不均衡度 0.000") == 3
    with pytest.raises(ValueError, match="spread"):
        ch09.balance_readout(5.0)


def test_workflow_readout_is_the_schedule_against_its_bound():
    text = ch09.workflow_readout("epigenomics", "heft", 100, seed=3)
    g, shop = workflow("epigenomics", 60, seed=3), kitchen(link=Link(0.0, 100.0))
    makespan, bound = S.heft(g, shop).makespan, S.lower_bound(g, shop)
    assert f"完工时间 {makespan:.0f} 秒" in text and f"超出下界 {makespan / bound - 1:.1%}" in text
    assert "实例 3" in text
    with pytest.raises(ValueError, match="policy"):
        ch09.workflow_readout("epigenomics", "nope", 100)
    with pytest.raises(ValueError, match="workflow"):
        ch09.workflow_readout("blast", "heft", 100)


def test_gap_table_counts_the_fastest_and_agrees_with_the_schedules():
    table = ch09.workflow_gap_table("montage", ("eft", "heft"), seeds=range(3))
    shop = kitchen(link=Link(0.0, 100.0))
    gaps = [S.eft(g, shop).makespan / S.lower_bound(g, shop) - 1 for g in (workflow("montage", 60, seed=k)
                                                                           for k in range(3))]
    assert table.loc["EFT", "最大"] == f"{100 * max(gaps):.1f}%"
    assert table["最快的实例数"].sum() >= 3                  # each instance has at least one fastest policy
    with pytest.raises(ValueError, match="seeds"):
        ch09.workflow_gap_table("montage", seeds=[0, 0])


def test_ablation_without_both_changes_is_heft():
    # CPOP with HEFT's order and no pinning is HEFT (hetlab.schedulers.cpop's docstring): the last row equals
    # HEFT's row of the gap table.
    ablation = ch09.cpop_ablation_table("montage", seeds=range(4))
    heft = ch09.workflow_gap_table("montage", ("heft",), seeds=range(4))
    assert ablation.loc["两处都换（即 HEFT）", "超出下界：平均"] == heft.loc["HEFT", "超出下界：平均"]


def test_runtime_table_lies_in_the_recorded_ranges():
    table = ch09.workflow_runtime_table("epigenomics")
    assert table.loc["fastqSplit", "每个实例"] == 1 and table.loc["map", "每个实例"] == 13
    for kind, row in table.iterrows():
        low, high = (float(x) for x in row["记录范围"].split("–"))
        assert low - 0.01 <= row["本书最短"] <= row["本书中位数"] <= row["本书最长"] <= high + 0.01, kind
    assert table.loc["fastqSplit", "WfCommons 1.6 中位数"] == pytest.approx(878.47)
    assert len(ch09.workflow_gap_figure(seeds=range(2)).axes) == 2
