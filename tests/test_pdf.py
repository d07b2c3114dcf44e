"""`make pdf`: the whole book as one PDF, printed offline by headless Chromium from a single-page build.

Built once here (minutes): every chapter is in it, the Chinese text is set in an embedded CJK font (the PDF
carries the font program, so it reads the same on a machine without one), no code or output block is clipped at
the printed width, and no page asked for another host (scripts/build_pdf.py refuses then).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tools"))
import build_pdf  # noqa: E402
import build_site  # noqa: E402
import labdriver  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.browser]


@pytest.fixture(scope="module")
def pdf(tmp_path_factory):
    reason = labdriver.chromium_missing_reason() or build_site.npm_missing_reason()
    if reason:
        pytest.skip(reason)
    out = tmp_path_factory.mktemp("pdf")
    page = build_pdf.single_page(out)
    text = page.read_text(encoding="utf-8")
    target = out / "book.pdf"
    pages, clipped = build_pdf.print_pdf(page, target)
    return target.read_bytes(), pages, clipped, text


def test_every_chapter_is_in_the_single_page(pdf):
    _, _, _, text = pdf
    chapters, appendix = build_site.chapters()
    for path in chapters + appendix:
        title = path.stem.split("-")[0]
        label = f"附录 {title}" if title.startswith("A") else f"第 {int(title)} 章"
        assert label in text, label


def test_pages_fonts_and_no_clipped_code(pdf):
    data, pages, clipped, _ = pdf
    chapters, appendix = build_site.chapters()
    assert pages >= 5 * len(chapters + appendix), pages          # several pages a chapter at least
    assert build_pdf.page_count(data) == pages
    fonts = set(re.findall(rb"/FontName /[A-Z]{6}\+([^\s/]+)", data))
    assert any(b"CJK" in f for f in fonts), fonts                  # the CJK font program is embedded (subset)
    assert re.search(rb"/FontFile[23]?\s", data)
    assert clipped == [], clipped[:5]
