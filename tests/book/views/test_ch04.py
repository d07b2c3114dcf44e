"""hetlab.book.views.ch04: the figures' marks the chapter's prose reads off."""
import pytest

from hetlab import plotting
from hetlab.book.views import ch04


def test_h200_grain_figure_marks_the_measured_slope_beside_two_launches():
    plotting.setup_notebook()
    ax = ch04.h200_grain_figure()
    g = ch04.h200_grain()
    t = dict(zip(g["counts"], g["seconds"]))
    # stored rows: (230.350 - 0.907) ms over 16384 - 64 pieces = 14.06 us; two launches 2 x 7.69 us = 15.4 us
    assert (t[16384] - t[64]) / (16384 - 64) == pytest.approx(14.06e-6, abs=0.01e-6)
    note = [a.get_text() for a in ax.texts if "14.1" in a.get_text()]
    assert len(note) == 1 and "15.4" in note[0]


def test_granularity_figure_writes_o_s_in_mathtext():
    plotting.setup_notebook()
    ax = ch04.granularity_figure(10_000.0, 1.0, 8)
    assert "$O_s$" in ax.get_title() and "P$ = 8" in ax.get_title()
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    assert not any("Os" in label for label in labels) and any("$N O_s$" in label for label in labels)


def test_widget_opens_at_figure_4_1_and_writes_the_root_as_in_the_text():
    explorer = ch04.granularity_explorer()
    assert explorer.controls["P_devices"].value == 8           # figure 4-1 and its text use P = 8
    assert "N* = √(W/Oₛ) = 100.00" in explorer.text            # sqrt(10000 / 1)
