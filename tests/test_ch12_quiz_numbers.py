"""Chapter 12 quiz: the numeric options are the values hetlab computes, and the computation decides the answer."""
import json
import re
from pathlib import Path

import pytest

from hetlab.book import misconceptions as M
from hetlab.book import quiz
from hetlab.models import granularity as G

BANK = {q["id"]: q for q in json.loads((Path(M.__file__).parent / "data/questions/c12.json").read_text("utf-8"))}


def _numbers(qid):
    return [float(re.search(r"(\d+(?:\.\d+)?)", o.split(".", 1)[1]).group(1)) for o in BANK[qid]["options"]]


def test_c12_5_options_are_the_intensity_and_its_three_slips():
    right = M.row_block_intensity(8, 1024, 4)
    slips = [M.row_block_intensity(8, 1024, 8),                          # FP64 bytes for an FP32 matrix
             M.row_block_intensity(8, 1024, 1),                          # element count taken as bytes
             M.row_block_intensity(8, 1024, 4, reads_all_of_b=False)]    # forgot that each block re-reads B
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


def test_row_block_intensity_checks_input():
    with pytest.raises(ValueError, match="rows"):
        M.row_block_intensity(0, 10)
    with pytest.raises(ValueError, match="rows"):
        M.row_block_intensity(11, 10)
    with pytest.raises(TypeError, match="reads_all_of_b"):
        M.row_block_intensity(1, 10, 8, "yes")
    assert M.row_block_intensity(10, 10, 4) == pytest.approx(2 * 10 / 12)


def test_split_verdict_counts_the_cores_used_and_hedges_a_slowdown():
    out = M.split_verdict((1, 2, 4), (12.0, 13.1, 15.1), (14.3, 15.7, 18.3), (0.04, 0.1, 0.3), 2, 0.37, " ms")
    assert "同时用上 1.20 个核" in out and "争抢内存带宽" in out and "没有真正空出来" in out


def test_split_verdict_slow_n1_reading_alone_makes_no_bathtub():
    # archived busy-machine run: pool(1) is 28 % above kernel + dispatch, just under the outlier bar
    out = M.split_verdict((1, 2, 4, 16, 600), (43.12, 35.53, 35.38, 49.96, 249.69), (33.38, 35.45, 49.47, 53.40, 267.0),
                          (0.185, 0.171, 0.225, 0.466, 28.8), 2, 1.69, " ms")
    assert "浴缸形" not in out and "不是浴缸" in out
