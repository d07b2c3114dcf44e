"""The book in a real browser: JupyterLab + headless Chromium, every chapter run from the Run menu.

Skips (saying why) only where Debian's chromium or playwright is missing; `make test` installs
chromium when run as root, so CI never skips these.
"""
from __future__ import annotations

from pathlib import Path

import labdriver  # on sys.path via conftest.py, which also skips these tests where Chromium is absent
import pytest

ROOT = Path(__file__).resolve().parents[2]

CHAPTERS = sorted((ROOT / "chapters").glob("[0-9][0-9]-*.ipynb"))
ARTIFACTS = ROOT / "test-artifacts"


@pytest.fixture(scope="module")
def lab():
    with labdriver.jupyterlab() as (base, token, workdir), labdriver.browser() as browser:
        yield base, token, browser


@pytest.fixture
def page(lab, request):
    base, token, browser = lab
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    page = context.new_page()
    yield page
    if getattr(request.node, "failed", False):
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), full_page=True)
    context.close()
    labdriver.shutdown_kernels(base, token)


def _widget_cells(path: Path) -> int:
    """Cells tagged widget whose stored output is a Jupyter widget (not, e.g., chapter 1's to_jshtml player)."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    return sum(1 for c in nb.cells if "widget" in c.get("metadata", {}).get("tags", [])
               and any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in c.get("outputs", [])))


SLIDER_CHANGE = """(handle) => {
    const box = handle.closest('.widget-vbox');
    const img = box.querySelector('.widget-image');
    const html = box.querySelector('.widget-html');
    return (img ? img.src : '') + '|' + (html ? html.innerText : '');
}"""


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_runs_in_jupyterlab_and_its_slider_redraws(lab, page, path):
    base, token, _ = lab
    labdriver.open_notebook(page, base, token, path.name)
    labdriver.run_all(page)
    expected = _widget_cells(path)
    assert expected > 0
    page.wait_for_function("""(n) => document.querySelectorAll(
        '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output > .jupyter-widgets').length >= n""",
                           arg=expected, timeout=120_000)
    assert labdriver.error_outputs(page) == []
    handle = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .widget-slider .noUi-handle").first
    handle.scroll_into_view_if_needed()
    before = handle.evaluate(SLIDER_CHANGE)
    handle.focus()
    at_max = handle.get_attribute("aria-valuenow") == handle.get_attribute("aria-valuemax")
    page.keyboard.press("ArrowLeft" if at_max else "ArrowRight")
    # The kernel redraws; on a busy machine that takes seconds, so the limit is generous (the wait ends on the change).
    page.wait_for_function(f"([h, b]) => ({SLIDER_CHANGE})(h) !== b", arg=[handle.element_handle(), before],
                           timeout=120_000)
    assert labdriver.error_outputs(page) == []


def _glyphs_missing(figure) -> list[str]:
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    missing = []
    for text in figure.findobj(lambda a: hasattr(a, "get_text") and hasattr(a, "get_fontproperties")):
        content = text.get_text()
        if not content:
            continue
        font = FT2Font(font_manager.findfont(text.get_fontproperties()))
        missing += [c for c in content if not c.isspace() and font.get_char_index(ord(c)) == 0]
    return missing


def test_chinese_in_the_browsers_figure_has_every_glyph(lab, page):
    """The figure the browser shows is byte-for-byte the library's rendering, and every character
    of that figure's text exists in the font it was drawn with (so no tofu boxes)."""
    from hetlab import plotting
    from hetlab.book import views

    if plotting.use_cjk_font() is None:
        pytest.fail("no CJK font installed: install Debian's fonts-noto-cjk (make test does this as root)")
    base, token, _ = lab
    labdriver.open_notebook(page, base, token, "04-granularity.ipynb")
    labdriver.run_all(page)
    shown = labdriver.image_bytes(page, ".jp-NotebookPanel:not(.lm-mod-hidden) .widget-image")
    explorer = views.granularity_explorer()
    assert any("\u4e00" <= c <= "\u9fff" for t in explorer.figure.findobj(lambda a: hasattr(a, "get_text"))
               for c in t.get_text())
    assert _glyphs_missing(explorer.figure) == []
    assert shown == explorer.png()


def test_interview_quiz_marks_a_right_and_a_wrong_answer(lab, page):
    from hetlab.book import quiz

    base, token, _ = lab
    labdriver.open_notebook(page, base, token, "13-interview.ipynb")
    labdriver.run_all(page)
    boxes = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .widget-radio-box")
    for k, (qid, want_right) in enumerate([("q01", True), ("q02", False)]):
        q = quiz.question(qid)
        right = sorted(q.key()[0])[0]
        letter = right if want_right else next(x for x in q.letters if x != right)
        option = q.options[q.letters.index(letter)]
        boxes.nth(k).locator("label", has_text=option).click()
        card = boxes.nth(k).locator("xpath=ancestor::div[contains(@class,'widget-vbox')][1]")
        card.locator("button", has_text="提交").click()
        feedback = card.locator(".widget-html").last
        expected = "正确 ✓" if want_right else "错误 ✗"
        feedback.locator(f"text={expected}").wait_for(timeout=60_000)
        assert "解析" in feedback.inner_text()



def test_jupyterlab_speaks_chinese_by_default(lab):
    """The environment's default interface language is zh_CN (binder/overrides.json, installed by `make venv`
    and by binder/postBuild) and the language pack is there: the menu bar says 文件, not File."""
    browser = lab[2]  # one playwright per process: reuse the module's browser with a second, untranslated server
    with labdriver.jupyterlab([], locale=None) as (base, token, _):
        page = browser.new_page()
        try:
            page.goto(f"{base}/lab?reset&token={token}", wait_until="domcontentloaded", timeout=300_000)
            page.wait_for_selector(".lm-MenuBar-itemLabel", timeout=300_000)
            labels = page.locator(".lm-MenuBar-itemLabel").all_inner_texts()
            assert "文件" in labels and "File" not in labels, labels
        except Exception:
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "jupyterlab-in-chinese.png"))
            raise
