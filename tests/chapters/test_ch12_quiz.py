"""Chapter 12 quiz: the numeric options are the values hetlab computes, and the computation decides the answer."""
import json
import re
from pathlib import Path

import pytest

import hetlab.book
from hetlab.book import quiz
from hetlab.communication import row_block_intensity
from hetlab.models import granularity as G

_C12 = Path(hetlab.book.__file__).parent / "data/questions/c12.json"
BANK = {q["id"]: q for q in json.loads(_C12.read_text("utf-8"))}


def _numbers(qid):
    return [float(re.search(r"(\d+(?:\.\d+)?)", o.split(".", 1)[1]).group(1)) for o in BANK[qid]["options"]]


def test_c12_5_options_are_the_intensity_and_its_three_slips():
    right = row_block_intensity(8, 1024, 4)
    slips = [row_block_intensity(8, 1024, 8),                          # FP64 bytes for an FP32 matrix
             row_block_intensity(8, 1024, 1),                          # element count taken as bytes
             row_block_intensity(8, 1024, 4, reads_all_of_b=False)]    # forgot that each block re-reads B
    shown = _numbers("c12-5")
    for value in [right, *slips]:
        assert min(abs(value - s) / value for s in shown) < 0.05, (value, shown)
    assert quiz.check("c12-5", "B").correct and abs(shown[1] - right) / right < 0.05


def test_c12_3_answer_is_the_fastest_option():
    counts = [int(x) for x in _numbers("c12-3")]
    best = min(counts, key=lambda n: G.total_time_on(n, 0.040, 1e-3, 4, model="rounds"))
    assert best == G.optimal_task_count(0.040, 1e-3, 4)
    assert quiz.check("c12-3", "ABCD"[counts.index(best)]).correct


def test_c12_4_answer_is_the_amdahl_efficiency():
    import hetlab
    shown = _numbers("c12-4")
    e = hetlab.amdahl_efficiency(0.9, 8) * 100
    i = min(range(4), key=lambda k: abs(shown[k] - e))
    assert abs(shown[i] - e) < 1 and quiz.check("c12-4", "ABCD"[i]).correct


@pytest.mark.parametrize("qid", ["c12-1", "c12-2", "c12-3", "c12-4", "c12-5"])
def test_c12_options_do_not_single_out_the_answer(qid):
    """Either every option gives a reason or none does."""
    with_reason = ["：" in o or "因为" in o for o in BANK[qid]["options"]]
    assert all(with_reason) or not any(with_reason)
