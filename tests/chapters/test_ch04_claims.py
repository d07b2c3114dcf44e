"""Chapter 4's claims, checked where they could break: over-decomposition with the chapter's overlapped
dispatcher, the stored H200 reading against the one-GPU in-order model, and the U-curve measured on the
reader's machine keeping its lesson on one busy CPU.

The measured test runs the chapter's own cells (found by their ids: the calibration, the sweep and exercise
4.2's solution) in a fresh interpreter pinned to one CPU next to a competing busy process, and checks what
the prose says: the left arm falls with W / N, the right arm rises with the dispatches, the valley lies at
tens of tasks, and the prediction written before the run (within 4x) and the fit (within 3x) land near the
fastest count.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from hetlab import formulas as F
from hetlab import schedulers as S
from hetlab.book import views
from hetlab.devices import identical
from hetlab.models import granularity as G
from hetlab.tasks import independent_tasks

CHAPTER = Path(__file__).resolve().parents[2] / "chapters" / "04-granularity.ipynb"


def _issued_makespan(sizes, os_=0.1):
    tasks = independent_tasks(sizes)
    release = {t.name: (k + 1) * os_ for k, t in enumerate(tasks.tasks)}
    return S.central_queue(tasks, identical(2), release=release).makespan


def test_over_decomposition_with_the_overlapped_dispatcher():
    # by hand, tickets at 0.1, 0.2, ...: [6, 2] ends at 0.1 + 6; [5, 1, 1, 1]: 5 from 0.1, the ones one after
    # another from 0.2 on the other device (1.2, 2.2, 3.2); [5, 3]: 0.1 + 5
    assert _issued_makespan([6, 2]) == pytest.approx(6.1)
    assert _issued_makespan([5, 1, 1, 1]) == pytest.approx(5.1)
    assert _issued_makespan([5, 3]) == pytest.approx(5.1)


def test_the_h200_reading_follows_the_in_order_model():
    g = views.h200_grain()
    assert g["kernels"] == 2 and g["launch"] == pytest.approx(7.69e-6, rel=1e-3)
    for n, t in zip(g["counts"], g["seconds"]):
        error = G.in_order_time(n, g["W"], g["Os"]) / t - 1
        assert (-0.08 <= error <= 1e-12) if n <= 16 else (0.035 <= error < 0.095), (n, error)
    # the flat part: no split of one GPU beats the unsplit update by more than noise; the U-model says 2x
    assert min(g["seconds"]) == g["seconds"][0]
    assert F.total_time(4, g["W"], g["Os"]) < 0.5 * g["seconds"][1]
    t = dict(zip(g["counts"], g["seconds"]))
    # N = 64 .. 16384, the range the prose means: 14.1 us a piece, 8-9% under two launches (the +8/+9% rows)
    slope = (t[16384] - t[64]) / (16384 - 64)
    assert 0.08 < 1 - slope / g["Os"] < 0.095
    last = (t[65536] - t[16384]) / (65536 - 16384)       # the last segment: 15.0 us, the +4% row
    assert 0.015 < 1 - last / g["Os"] < 0.03


def test_best_count_on_p_devices_is_the_best_integer_not_the_real_root():
    # W/Os = 63.5, P = 8: sqrt = 7.97 < 8, yet T(7) = 7 + 63.5/7 = 16.07 > T(8) = 8 + 63.5/8 = 15.94
    assert F.total_time(7, 63.5, 1.0) > F.total_time(8, 63.5, 1.0)
    for model in ("ideal", "rounds"):
        assert min(range(1, 65), key=lambda n: G.total_time_on(n, 63.5, 1.0, 8, model=model)) == 8
    assert G.optimal_task_count(63.5, 1.0, 8) == 8
    assert G.optimal_task_count(10_000, 1.0, 256) == 100     # best integer 100 < P: not a multiple of P


def test_try_it_w_1000_p_32_is_the_boundary_case():
    # sqrt(1000) = 31.62; T(31) = 31 + 1000/31 = 63.258 > T(32) = 32 + 31.25 = 63.25: the best integer is 32 = P
    assert F.total_time(31, 1000.0, 1.0) == pytest.approx(63.258, abs=1e-3)
    assert F.total_time(32, 1000.0, 1.0) == pytest.approx(63.25)
    assert G.optimal_task_count(1000.0, 1.0, 32) == 32 and G.optimal_task_count(1000.0, 1.0, 31) == 31


def test_quiz_c04_4_explanation_picks_the_smaller_total_time():
    from hetlab.book.bank import questions

    q = next(q for q in questions(4) if q.id == "c04-4")
    answer, explanation = q.key()
    assert "总耗时较小的那个" in explanation and "较小者" not in explanation
    (letter,) = answer                                  # T(26) = 154.92 < T(25) = 155: option "26"
    assert q.options[ord(letter) - ord("A")] == f"{letter}. 26"


def test_grid_halo_numbers_of_the_chapter():
    assert G.halo_ratio(4096, 1024) == pytest.approx(4 * 32 / 4096)          # blocks of 128: 3.1%
    assert G.halo_ratio(4096, 1024, layout="strips") == pytest.approx(0.5)   # strips of 4 rows: 50%


def _cell(cid: str) -> str:
    nb = nbformat.read(CHAPTER, as_version=4)
    return next(c.source for c in nb.cells if c.get("id") == cid)


def _solution() -> str:
    nb = nbformat.read(CHAPTER, as_version=4)
    return next(c.source for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "ex04b-solution")


RUN = """
import json, math
import matplotlib
matplotlib.use("Agg")
import hetlab
from hetlab.book import reference, views
from hetlab.book.readings import ch04 as readings
from hetlab.real import experiments, measure
h200 = reference.load("h200")
{calibrate}
{sweep}
{solution}
print(json.dumps({{"os": Os_mine, "pred": n_pred, "fit": n_fit, "best": n_best, "W": W_sweep,
                  "counts": counts, "seconds": seconds}}))
"""


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("taskset"), reason="needs taskset to pin the run to one CPU")
def test_measured_u_curve_holds_on_one_busy_cpu():
    cpu = sorted(os.sched_getaffinity(0))[0]
    script = RUN.format(calibrate=_cell("c4-calibrate"), sweep=_cell("c4-sweep"), solution=_solution())
    busy = subprocess.Popen(["taskset", "-c", str(cpu), sys.executable, "-c", "while True: pass"])
    try:
        found = []
        for _ in range(2):
            out = subprocess.run(["taskset", "-c", str(cpu), sys.executable, "-c", script],
                                 capture_output=True, text=True, timeout=120, check=True)
            found.append(json.loads(out.stdout.strip().splitlines()[-1]))
    finally:
        busy.kill()
        busy.wait()
    for run in found:
        t = dict(zip(run["counts"], run["seconds"]))
        # the left arm falls with W / N: never below it (the waiting itself), one task within 30% of W, and
        # halving on each doubling give or take the wake-ups a busy CPU delays
        assert all(t[n] >= 0.99 * run["W"] / n for n in (1, 2, 4, 8)) and t[1] <= 1.3 * run["W"], run
        assert t[1] > t[2] > t[4] > t[8] and t[8] < t[1] / 3, run
        assert 10 <= run["best"] <= 200 and t[512] > 2 * t[run["best"]], run     # a valley at tens of tasks
        assert 1 / 4 <= run["pred"] / run["best"] <= 4, run      # the prediction: the valley's magnitude
        assert 1 / 3 <= run["fit"] / run["best"] <= 3, run       # the fit: closer
