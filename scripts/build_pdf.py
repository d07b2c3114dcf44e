"""The whole book as one PDF, offline: ``make pdf`` or ``python scripts/build_pdf.py [--out DIR]``.

Builds the site as a single page (Jupyter Book's singlehtml builder, the same staging as ``make site``), opens it
in headless Chromium from a loopback server with every other host blocked, waits until the widgets that compute
in the page have drawn and MathJax has typeset, and prints it to ``DIR/_build/hetlab-book.pdf`` (A4). Chromium
embeds the fonts it draws with (Noto Sans CJK for the Chinese text), and the print style sheet (hetlab.css)
wraps long code lines instead of clipping them. Prints the page count.
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tools"))
import build_site  # noqa: E402

SETTLE_MS = 600_000


def single_page(out: Path) -> Path:
    """The book as one HTML page (``out/_build/singlehtml/index.html``), paths fixed for the root folder."""
    folder = build_site.build(out, builder="singlehtml")
    page = folder / "index.html"
    text = page.read_text(encoding="utf-8")
    # Widgets written for pages in chapters/ point one folder up; the single page sits at the root.
    page.write_text(text.replace("../_static/frames/", "_static/frames/"), encoding="utf-8")
    return page


def page_count(pdf: bytes) -> int:
    """Pages of a PDF written by Chromium (its page tree root carries the total)."""
    counts = [int(n) for n in re.findall(rb"/Type\s*/Pages\b[^>]*?/Count\s+(\d+)", pdf)]
    counts += [int(n) for n in re.findall(rb"/Count\s+(\d+)[^>]*?/Type\s*/Pages\b", pdf)]
    return max(counts) if counts else 0


#: A4 less the margins below, in CSS pixels: the width the book is laid out at when printed.
PRINT_WIDTH = 690


def print_pdf(page_file: Path, target: Path) -> tuple[int, list[str]]:
    """Print ``page_file`` with headless Chromium into ``target``; return the number of pages and the code or
    output blocks that would be clipped at the printed width (their first characters)."""
    import labdriver

    reason = labdriver.chromium_missing_reason()
    if reason:
        raise SystemExit(f"build_pdf: {reason}")
    blocked = []
    with labdriver.static_server(page_file.parent) as base, labdriver.browser() as browser:
        context = browser.new_context(viewport={"width": PRINT_WIDTH, "height": 1000})
        context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(base)
                      else (blocked.append(route.request.url), route.abort()))
        page = context.new_page()
        page.goto(f"{base}/{page_file.name}", wait_until="load", timeout=SETTLE_MS)
        page.wait_for_function("""() => document.readyState === 'complete'
            && [...document.querySelectorAll('.hetlab-widget[data-mode=live]')].every(w => w.dataset.drawn)
            && (!document.querySelector('.math') || (window.MathJax && MathJax.startup
                && MathJax.startup.document && MathJax.startup.document.processed))""",
                               timeout=SETTLE_MS, polling=500)
        page.evaluate("() => document.fonts.ready.then(() => true)")
        page.evaluate("() => [...document.images].forEach(i => i.loading = 'eager')")
        page.wait_for_function("() => [...document.images].every(i => i.complete)", timeout=SETTLE_MS)
        page.emulate_media(media="print")
        clipped = page.evaluate("""() => [...document.querySelectorAll('div.highlight pre, div.cell_output pre')]
            .filter(b => b.scrollWidth > b.clientWidth + 1).map(b => b.textContent.slice(0, 60))""")
        pdf = page.pdf(path=str(target), format="A4", print_background=True, outline=True, tagged=True,
                       margin={"top": "16mm", "bottom": "16mm", "left": "14mm", "right": "14mm"},
                       display_header_footer=True, header_template="<span></span>",
                       footer_template='<div style="font-size:8px;width:100%;text-align:center">'
                                       '<span class="pageNumber"></span> / <span class="totalPages"></span></div>')
        context.close()
    if blocked:
        raise SystemExit(f"build_pdf: the page asked for other hosts: {blocked[:3]}")
    return page_count(pdf), clipped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT, help="writes OUT/_build/hetlab-book.pdf")
    out = parser.parse_args(argv).out.resolve()
    start = time.perf_counter()
    page = single_page(out)
    target = out / "_build" / "hetlab-book.pdf"
    pages, clipped = print_pdf(page, target)
    print(f"build_pdf: {target} ({pages} pages, {target.stat().st_size / 1e6:.1f} MB, {len(clipped)} clipped code "
          f"blocks) in {time.perf_counter() - start:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
