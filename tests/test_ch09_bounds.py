"""Chapter 9 views: the HEFT paper table and DAG, padding, the workflow Gantt charts."""
import pytest


def test_paper_table_dag_and_padding():
    import matplotlib

    matplotlib.use("Agg")
    from hetlab.book.views import ch09

    table = ch09.heft_paper_table()
    assert list(table.index) == [f"n{i}" for i in range(1, 11)]
    assert table.loc["n10", "平均耗时 w̄"] == pytest.approx(14.667, abs=1e-3)
    assert table.loc["n1", "后继（通信代价 c̄）"].startswith("n2（18）")
    assert len(ch09.heft_paper_dag().axes) == 1


def test_workflow_gantts_highlight():
    import matplotlib

    matplotlib.use("Agg")
    from hetlab.book.views import ch09

    fig = ch09.workflow_gantts("montage", ("heft",), 100, highlight="mProject_00000001")
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "mProject_00000001" in labels and any(t.startswith("完成时间") or "makespan" in t for t in labels)
    with pytest.raises(ValueError, match="highlight"):
        ch09.workflow_gantts("montage", ("heft",), 100, highlight="nope")
