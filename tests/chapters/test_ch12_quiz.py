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


def test_c12_7_the_one_block_run_waited_so_the_ratio_is_not_read():
    # the prompt's numbers: N = 1 took 35 ms of wall for 9.7 ms of CPU, N = 2 23.5 ms; 35 / 23.5 = 1.49
    from hetlab.book.readings import ch12 as R
    from hetlab.real.split_timing import SplitTiming

    prompt = BANK["c12-7"]["prompt"]
    assert all(x in prompt for x in ("35 毫秒", "9.7 毫秒", "23.5 毫秒", "1.49 倍")) and round(35 / 23.5, 2) == 1.49
    t = SplitTiming(600, 2, 1, (1, 2), (35e-3, 23.5e-3), (9.7e-3, 10.9e-3), (0.1e-3, 0.1e-3), w0=9.7e-3, os0=5e-6,
                    pool_cpu=(9.7e-3, 11.0e-3))
    assert R.waiting(t, 1) * 1e3 == pytest.approx(25.3) and "约 25 毫秒在等核" in BANK["c12-7"]["options"][1]
    assert "本身就等了 25.3 毫秒的核" in R.descent_line(t) and "快 1.49" not in R.descent_line(t)
    assert quiz.check("c12-7", "B").correct and not quiz.check("c12-7", "A").correct
