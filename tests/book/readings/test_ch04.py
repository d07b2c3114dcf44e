"""hetlab.book.readings.ch04: the load sentence printed next to a timing."""
import pytest

from hetlab.book.readings.ch04 import load_note


def test_load_note_says_busy_only_above_the_threshold():
    assert "基本空闲" in load_note(0.1) and "在忙别的事" in load_note(0.8) and "不报告负载" in load_note(None)
    with pytest.raises(ValueError, match="load"):
        load_note(-1.0)
