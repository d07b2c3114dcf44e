"""Chapter 3's views (hetlab.book.views.ch03): the peak table and the static figures."""

from hetlab import plotting
from hetlab.book.views import ch03
from hetlab.models import hardware as H


def test_peak_table_columns_align_in_display_width():
    lines = ch03.peak_table().splitlines()
    widths = {plotting.display_width(line) for line in lines}
    assert len(widths) == 1 and len(lines) == len(H.ENGINES) + 1


def test_static_figures_have_chinese_titles_and_units():
    plotting.setup_notebook()
    ax = ch03.roofline_figure()
    assert "TFLOP/s" in ax.get_ylabel() and ax.get_xscale() == "log"
    assert len(ax.get_legend().get_texts()) == 5
    ax = ch03.peak_bars_figure()
    assert len(ax.patches) == 8 and "TFLOP/s" in ax.get_xlabel()
