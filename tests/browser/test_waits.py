"""The lab driver waits on progress, not on a fixed total (issue 11, item 14).

A chapter once ran out of a fixed 120 s wait on a busy machine while its cells were still finishing one by one
(chapter 12's split-matmul measurement and chapter 1's animation render are the slow cells: 9-20 s each under
load, against 0.6-9 s idle). Here, time is scaled down: a notebook whose cells each take 2 s runs far longer in
total than the stall limit, and must pass; a cell that makes no progress for longer than the limit must fail.
"""
from __future__ import annotations

import labdriver  # on sys.path via conftest.py, which also skips these tests where Chromium is absent
import nbformat
import pytest


def _notebook(path, seconds: list[float]) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"import time\ntime.sleep({s})\nprint({i})") for i, s in enumerate(seconds)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


def test_run_all_waits_as_long_as_cells_keep_finishing_and_fails_on_a_stall(tmp_path):
    slow, stuck = tmp_path / "slow.ipynb", tmp_path / "stuck.ipynb"
    _notebook(slow, [2, 2, 2, 2, 2, 2])  # 12 s in all, a cell finishing every 2 s
    _notebook(stuck, [0, 30])  # the second cell makes no progress for 30 s
    with labdriver.jupyterlab([slow, stuck]) as (base, token, _), labdriver.browser() as browser:
        page = browser.new_page()
        labdriver.open_notebook(page, base, token, "slow.ipynb")
        labdriver.run_all(page, stall_timeout=8_000, limit=300_000)
        outputs = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output").all_inner_texts()
        assert [o.strip() for o in outputs] == [str(i) for i in range(6)]
        labdriver.shutdown_kernels(base, token)

        page = browser.new_page()
        labdriver.open_notebook(page, base, token, "stuck.ipynb")
        with pytest.raises(Exception, match="Timeout"):
            labdriver.run_all(page, stall_timeout=8_000, limit=300_000)
        labdriver.shutdown_kernels(base, token)


#: Swallow the next ``n`` releases of the mouse on a menu, as a busy machine sometimes does with a click.
LOSE_MENU_CLICKS = """(n) => {
    window.lostClicks = n;
    for (const type of ['pointerup', 'mouseup', 'click']) {
        window.addEventListener(type, e => {
            if (window.lostClicks > 0 && e.target.closest && e.target.closest('.lm-Menu')) {
                if (type === 'pointerup') window.lostClicks--;
                e.stopImmediatePropagation();
                e.preventDefault();
            }
        }, true);
    }
}"""


def test_run_all_repeats_a_menu_choice_whose_click_was_lost(tmp_path):
    # CI once waited 300 s for Clear Outputs that never happened: the menu click was lost.
    quick = tmp_path / "quick.ipynb"
    _notebook(quick, [0, 0, 0])
    with labdriver.jupyterlab([quick]) as (base, token, _), labdriver.browser() as browser:
        page = browser.new_page()
        labdriver.open_notebook(page, base, token, "quick.ipynb")
        page.evaluate(LOSE_MENU_CLICKS, 2)  # the first Clear Outputs and the first Run All both lost
        labdriver.run_all(page, stall_timeout=120_000, limit=300_000, menu_timeout=3_000)
        assert page.evaluate("window.lostClicks") == 0  # both clicks really were lost, and retried
        outputs = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output").all_inner_texts()
        assert [o.strip() for o in outputs] == ["0", "1", "2"]
        labdriver.shutdown_kernels(base, token)
