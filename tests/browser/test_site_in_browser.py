"""The static website as a reader's browser sees it: every page from a loopback HTTP server in headless Chromium,
with every request to another host blocked (and counted as a failure).

Per page: no failed request, no console error or uncaught exception, every <img> decoded, every site widget
mounted (the live ones drawn), MathJax typeset without errors, and every Chinese character drawn with a real glyph
(no tofu). Chapter 1's animation plays; the search box finds 调度; the dark-mode switch works. What a learner does
with the widgets, quizzes, phone navigation and search is in test_site_widgets.py and test_site_learner.py.
Screenshots of failing pages go to test-artifacts/site/; HETLAB_SCREENSHOTS=1 keeps one of every page.
Page weights (bytes a first visit downloads) are written to test-artifacts/site/page-weights.txt.
"""
from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote, urlsplit

import labdriver  # on sys.path via conftest.py, which also skips these tests where Chromium is absent
import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "site"
LOOPBACK = {"127.0.0.1", "localhost"}
#: Generous: on a busy two-core machine the 3.6 MB widget manager and MathJax take seconds to start.
SETTLE_MS = 120_000

#: CJK ideographs, CJK punctuation (not the ideographic space) and full-width forms.
CJK = r"[\u3001-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff01-\uff5e]"

#: Every CJK character of the visible text, drawn on a canvas in the font its element is rendered with, compared
#: with the drawing of a code point no font has (U+10FFFD): an identical bitmap is a missing glyph (tofu).
TOFU = """(cjk) => {
    const re = new RegExp(cjk, 'gu');
    const groups = new Map();
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
        const el = walker.currentNode.parentElement;
        const chars = walker.currentNode.textContent.match(re);
        if (!chars || !el || el.getClientRects().length === 0) continue;
        const cs = getComputedStyle(el);
        const font = `${cs.fontStyle} ${cs.fontWeight} 32px ${cs.fontFamily}`;
        if (!groups.has(font)) groups.set(font, new Set());
        chars.forEach(c => groups.get(font).add(c));
    }
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = 48;
    const ctx = canvas.getContext('2d', {willReadFrequently: true});
    const draw = (font, c) => {
        ctx.clearRect(0, 0, 48, 48); ctx.font = font; ctx.textBaseline = 'top'; ctx.fillStyle = '#000';
        ctx.fillText(c, 4, 4);
        const d = ctx.getImageData(0, 0, 48, 48).data; let s = '';
        for (let i = 3; i < d.length; i += 4) s += String.fromCharCode(d[i]);
        return s;
    };
    const missing = []; let checked = 0;
    for (const [font, chars] of groups) {
        const tofu = draw(font, '\\u{10FFFD}');
        for (const c of chars) { checked++; if (draw(font, c) === tofu) missing.push(c + ' in ' + font); }
    }
    return {checked, missing, fonts: [...groups.keys()]};
}"""


def _page_names(html: Path) -> list[str]:
    pages = sorted(p.relative_to(html).as_posix() for p in html.rglob("*.html")
                   if not {"_static", "_sources"} & set(p.relative_to(html).parts))
    return [p for p in pages if p != "genindex.html"] + ["genindex.html"]


@pytest.fixture(scope="module")
def site(built_site):
    with labdriver.static_server(built_site) as base, labdriver.browser() as browser:
        yield base, browser, built_site


class Visit:
    """A fresh browser context (empty cache) that blocks other hosts and records what went wrong."""

    def __init__(self, browser, base: str):
        self.problems: list[str] = []
        self.context = browser.new_context(viewport={"width": 1300, "height": 900})
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("console", lambda m: m.type == "error" and self.problems.append(f"console error: {m.text}"))
        self.page.on("pageerror", lambda e: self.problems.append(f"uncaught: {e}"))
        self.page.on("requestfailed", lambda r: self.problems.append(f"failed: {r.url} ({r.failure})"))
        self.page.on("response", lambda r: r.status >= 400 and self.problems.append(f"HTTP {r.status}: {r.url}"))
        self.base = base

    def _route(self, route):
        host = urlsplit(route.request.url).hostname
        if host in LOOPBACK:
            route.continue_()
        else:
            self.problems.append(f"blocked request to another host: {route.request.url}")
            route.abort()

    def open(self, name: str) -> None:
        self.page.goto(f"{self.base}/{name}", wait_until="load", timeout=SETTLE_MS)
        settle(self.page)

    def close(self, name: str, failed: bool) -> None:
        if failed or os.environ.get("HETLAB_SCREENSHOTS"):
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            self.page.screenshot(path=str(ARTIFACTS / (name.replace("/", "_") + ".png")), full_page=True)
        self.context.close()


def settle(page) -> None:
    """Wait (on conditions, never a fixed sleep) until fonts, images, widgets and MathJax are done."""
    page.wait_for_function("""() => {
        const views = document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]').length;
        const rendered = document.querySelectorAll('.widget-subarea, .jupyter-widgets-view').length;
        const site = [...document.querySelectorAll('.hetlab-widget')].every(w => w.dataset.mounted
            && (w.dataset.mode !== 'live' || w.dataset.drawn));
        const imgs = [...document.images].every(i => i.complete);
        const mathPending = document.querySelector('.math') && !(window.MathJax && MathJax.startup
            && MathJax.startup.document && MathJax.startup.document.processed
            && document.querySelector('mjx-container'));
        return document.readyState === 'complete' && rendered >= views && site && imgs && !mathPending;
    }""", timeout=SETTLE_MS, polling=200)
    page.evaluate("() => document.fonts.ready.then(() => true)")
    if page.evaluate("() => !!document.querySelector('.math')"):
        page.evaluate("() => MathJax.startup.promise.then(() => true)")


def _weight(page) -> int:
    """Bytes of the page and everything it loaded (decoded sizes, fresh context so nothing came from cache)."""
    return page.evaluate("""() => performance.getEntriesByType('navigation').concat(
        performance.getEntriesByType('resource')).reduce((n, e) => n + (e.decodedBodySize || 0), 0)""")


def test_every_page_loads_cleanly_offline_with_every_glyph(site, request):
    base, browser, html = site
    names = _page_names(html)
    assert len(names) >= 16 - 1
    report, weights, failures = [], [], {}
    for name in names:
        visit = Visit(browser, base)
        failed = True
        try:
            visit.open(name)
            page = visit.page
            problems = list(visit.problems)
            images = page.evaluate("() => [...document.images].map(i => [i.currentSrc.slice(0, 80), i.naturalWidth])")
            problems += [f"image not decoded: {src}" for src, width in images if width == 0]
            views = page.evaluate("""() => document.querySelectorAll(
                'script[type="application/vnd.jupyter.widget-view+json"]').length""")
            widget_errors = page.evaluate("""() => [...document.querySelectorAll('.jupyter-widgets')]
                .map(e => e.innerText).filter(t => /Error displaying widget|Model not found|Loading widget/.test(t))""")
            problems += [f"widget: {t[:80]}" for t in widget_errors]
            problems += [f"site widget not mounted: {w}" for w in page.evaluate(
                "() => [...document.querySelectorAll('.hetlab-widget[data-mounted=failed]')]"
                ".map(w => w.dataset.widget)")]
            problems += [f"MathJax error: {t}" for t in page.evaluate(
                "() => [...document.querySelectorAll('mjx-merror')].map(e => e.textContent)")]
            tofu = page.evaluate(TOFU, CJK)
            problems += [f"no glyph: {m}" for m in tofu["missing"][:20]]
            if name.startswith("chapters/") or name == "index.html":
                assert tofu["checked"] > 20, f"{name}: only {tofu['checked']} CJK characters checked"
            weights.append((name, _weight(page)))
            report.append(f"{name}: {len(images)} images, {views} widgets, {tofu['checked']} CJK glyphs checked")
            failed = bool(problems)
            if problems:
                failures[name] = problems
        finally:
            visit.close(name, failed)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    lines = [f"{w / 1e6:7.2f} MB  {n}" for n, w in weights]
    (ARTIFACTS / "page-weights.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(report + lines))
    assert failures == {}


def test_chapter_one_animation_plays(site):
    base, browser, _ = site
    visit = Visit(browser, base)
    failed = True
    try:
        visit.open("chapters/01-visual-demo.html")
        page = visit.page
        if page.locator(".animation").count():
            # matplotlib's to_jshtml player: Play must move the slider and swap the frame, without a kernel.
            frame = page.locator(".animation img").first
            slider = page.locator(".animation input[type=range]").first
            frame.scroll_into_view_if_needed()
            before = (frame.get_attribute("src"), slider.input_value())
            # The book relabels matplotlib's player in Chinese (hetlab.book.views.ch01): Play is titled 播放.
            page.locator(".animation button[title='播放']").first.click()
            page.wait_for_function("""([img, range, b]) => img.src !== b[0] && range.value !== b[1]""",
                                   arg=[frame.element_handle(), slider.element_handle(), list(before)],
                                   timeout=SETTLE_MS)
            assert frame.evaluate("img => img.naturalWidth") > 0
        else:
            # No player stored yet: the chapter's embedded widgets must show, their images decoded.
            widgets = page.locator(".widget-subarea .widget-image")
            assert widgets.count() > 0, "chapter 1 stores neither an animation nor a widget image (make chapters)"
            assert all(w > 0 for w in widgets.evaluate_all("els => els.map(e => e.naturalWidth)"))
        assert visit.problems == []
        failed = False
    finally:
        visit.close("animation", failed)


def test_search_box_finds_scheduling(site):
    base, browser, _ = site
    visit = Visit(browser, base)
    failed = True
    try:
        visit.open("index.html")
        page = visit.page
        page.locator("button.search-button-field, .search-button__button").first.click()
        box = page.locator("input[name='q']:visible").first
        box.fill("调度")
        box.press("Enter")
        page.wait_for_url(f"**/search.html?q={quote('调度')}*", timeout=SETTLE_MS)
        hits = page.locator("#search-results ul.search li")
        hits.first.wait_for(timeout=SETTLE_MS)
        titles = hits.locator("a").all_inner_texts()
        assert any("章" in t for t in titles), titles
        assert visit.problems == []
        failed = False
    finally:
        visit.close("search", failed)


def test_dark_mode_switch(site):
    base, browser, _ = site
    visit = Visit(browser, base)
    failed = True
    try:
        visit.open("chapters/04-granularity.html")
        page = visit.page
        start = page.evaluate("() => document.documentElement.dataset.theme")
        for _ in range(3):  # the switch cycles light -> dark -> auto
            page.locator(".theme-switch-button").first.click()
            if page.evaluate("() => document.documentElement.dataset.theme") == "dark":
                break
        assert page.evaluate("() => document.documentElement.dataset.theme") == "dark", start
        background = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
        assert background not in ("rgb(255, 255, 255)", "rgba(0, 0, 0, 0)"), background
        failed = visit.problems != []
        if os.environ.get("HETLAB_SCREENSHOTS"):
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "dark-mode.png"))
        assert visit.problems == []
    finally:
        visit.close("dark-mode", failed)
