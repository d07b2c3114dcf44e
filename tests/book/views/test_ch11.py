"""hetlab.book.views.ch11: the policy table, the readout, the static Gantt grid and the affinity table."""
import matplotlib
import matplotlib.pyplot as plt
import pytest

from hetlab.book.views import ch11

matplotlib.use("Agg")


def test_policy_table_and_definitions():
    # LPT on the article's dishes: by hand 2.6 (CPU t6 + t3 = 26 units at 10).
    assert "| LPT | 2.600 |" in ch11.policy_table()
    from hetlab.book.readings.ch11 import POLICY_DEFINITIONS

    assert set(POLICY_DEFINITIONS) == set(ch11.NAMES)


def test_policy_readout_at_gpu_40():
    # By hand: t5 (25) ties to the CPU at 1.0 and ends at 3.5; GPU alone 114/40 = 2.85 -> 0.81x.
    text = ch11.policy_readout("article_demo", 40)
    assert "完工时间 3.500" in text and "0.81x" in text
    with pytest.raises(ValueError, match="policy"):
        ch11.policy_readout("nope", 20)


def test_demo_gantts_grid_and_validation():
    fig = ch11.demo_gantts()
    assert len(fig.axes) == 6
    plt.close(fig)
    with pytest.raises(ValueError, match="policies"):
        ch11.demo_gantts(("nope",))


def test_demo_gantts_has_one_legend_with_the_makespan_line_and_a_unit_axis():
    fig = ch11.demo_gantts()
    assert all(ax.get_legend() is None for ax in fig.axes)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any("完工时间" in x or "makespan" in x for x in labels)
    assert len(labels) == 4
    bottom = [ax.get_xlabel() for ax in fig.axes[-2:]]
    assert all("模拟时间单位" in x or "simulated time units" in x for x in bottom)
    plt.close(fig)


def test_demo_gantts_drops_names_that_do_not_fit():
    # A narrow figure: the short bars (t3, t7 on the fast GPU) cannot hold their names.
    wide = ch11.demo_gantts(("lpt",), (40,))
    narrow_before = sum(len(ax.texts) for ax in wide.axes)
    wide.set_size_inches(2.0, 1.5)
    ch11._drop_clipped_labels(wide)
    assert sum(len(ax.texts) for ax in wide.axes) < narrow_before
    plt.close(wide)


def test_affinity_table_rows_and_validation():
    table = ch11.affinity_table((1, 4))
    lines = table.splitlines()
    assert len(lines) == 4
    assert lines[2].startswith("| 1× | 2.667 | 3.600 |")
    assert "| 0.900 | 0.900 |" in lines[3]      # by hand at f = 4: by affinity and EFT, see tests/book/test_demo.py
    with pytest.raises(ValueError, match="factors"):
        ch11.affinity_table(())
    with pytest.raises(TypeError, match="factors"):
        ch11.affinity_table(2)
    with pytest.raises(ValueError, match="factor"):
        ch11.affinity_table((0.5,))
