"""The website as a learner uses it, in headless Chromium on the built site (desktop 1300x900 and phone 390x844):
quizzes answer in the page and remember, each quiz is shown once, solutions are folded and hidden tests absent,
the phone's ☰ and TOC open their drawers, figures stay legible on a phone, the home page says where to start,
search finds every glossary term (a page with the term in a heading ranks above the others), no block runs
off the right edge, and the interface is in Chinese. Every request to another host is blocked and fails the test.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlsplit

import labdriver  # on sys.path via conftest.py
import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "site"
SETTLE_MS = 120_000
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1300, "height": 900}
GLOSSARY = json.loads((ROOT / "hetlab" / "book" / "data" / "glossary.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def site(built_site):
    with labdriver.static_server(built_site) as base, labdriver.browser() as browser:
        yield base, browser, built_site


class Visit:
    """A fresh context (empty storage unless ``storage`` is given) that blocks and records other hosts."""

    def __init__(self, site, viewport=DESKTOP, storage=None):
        base, browser, self.html = site
        self.base, self.problems = base, []
        self.context = browser.new_context(viewport=viewport, storage_state=storage,
                                           is_mobile=viewport is PHONE, has_touch=viewport is PHONE)
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("pageerror", lambda e: self.problems.append(f"uncaught: {e}"))
        self.page.on("console", lambda m: m.type == "error" and self.problems.append(f"console: {m.text}"))

    def _route(self, route):
        if urlsplit(route.request.url).hostname in ("127.0.0.1", "localhost"):
            route.continue_()
        else:
            self.problems.append(f"blocked request to another host: {route.request.url}")
            route.abort()

    def open(self, name: str):
        self.page.goto(f"{self.base}/{name}", wait_until="load", timeout=SETTLE_MS)
        self.page.wait_for_function("() => document.readyState === 'complete'", timeout=SETTLE_MS)
        return self.page

    def shot(self, name: str):
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(ARTIFACTS / f"{name}.png"))

    def __enter__(self):
        return self

    def __exit__(self, kind, *rest):
        if kind is not None:
            self.shot("failure-" + re.sub(r"\W", "_", self.page.url.rsplit("/", 1)[-1])[:60])
        self.context.close()


def _chapter_pages(html: Path) -> list[str]:
    return sorted(p.name for p in (html / "chapters").glob("*.html"))


def test_quiz_cards_answer_in_the_page_and_remember(site):
    from hetlab.book import quiz

    question = quiz.questions(4)[0]
    right = "".join(sorted(question.key()[0]))
    wrong = next(letter for letter in question.letters if letter not in right)
    with Visit(site) as visit:
        page = visit.open("chapters/04-granularity.html")
        card = page.locator(f'form.hetlab-question[data-id="{question.id}"]')
        card.scroll_into_view_if_needed()
        card.locator(".hetlab-q-submit").click()
        assert "请先选择" in card.locator(".hetlab-q-feedback").inner_text()
        card.locator(f'input[value="{wrong}"]').check()
        card.locator(".hetlab-q-submit").click()
        feedback = card.locator(".hetlab-q-feedback").inner_text()
        assert f"错误 ✗（正确答案：{right}）" in feedback and "解析：" in feedback
        card.locator(f'input[value="{right}"]').check()
        card.locator(".hetlab-q-submit").click()
        assert "正确 ✓" in card.locator(".hetlab-q-feedback").inner_text()
        total = len(quiz.questions(4))
        assert page.locator(".hetlab-quiz-score").inner_text() == f"第 4 章：已答 1/{total} 题，答对 1 题"
        storage = visit.context.storage_state()
        assert visit.problems == []
    with Visit(site, storage=storage) as visit:      # the next visit: answer, feedback and score are back
        page = visit.open("chapters/04-granularity.html")
        card = page.locator(f'form.hetlab-question[data-id="{question.id}"]')
        assert card.locator(f'input[value="{right}"]').is_checked()
        assert "正确 ✓" in card.locator(".hetlab-q-feedback").inner_text()
        assert "已答 1/" in page.locator(".hetlab-quiz-score").inner_text()


def test_every_quiz_card_of_the_bank_is_on_the_site_once_and_works(site):
    from hetlab.book import quiz

    base, browser, html = site
    expected = {q.id for q in quiz.questions()}
    seen, working = [], 0
    for name in _chapter_pages(html):
        text = (html / "chapters" / name).read_text(encoding="utf-8")
        seen += re.findall(r'class="hetlab-question" data-id="([^"]+)"', text)
        assert not re.search(r"\[c\d\d-\d+\]（(单选|多选)", text), f"{name}: the quiz's text dump is still there"
    assert sorted(seen) == sorted(expected), "each question of the bank exactly once"
    with Visit(site) as visit:                       # every card gives feedback (one answer each, any letter)
        for name in _chapter_pages(html):
            page = visit.open(f"chapters/{name}")
            working += page.evaluate("""() => {
                let ok = 0;
                for (const form of document.querySelectorAll('form.hetlab-question')) {
                    form.querySelector('input').checked = true;
                    form.querySelector('.hetlab-q-submit').click();
                    if (/你的答案：.*—— (正确|错误)/.test(form.querySelector('.hetlab-q-feedback').textContent)) ok++;
                }
                return ok;
            }""")
        assert visit.problems == []
    assert working == len(expected)
    print(f"quiz cards that work: {working} of {len(expected)}")


def test_solutions_folded_hidden_tests_and_markers_absent(site):
    base, browser, html = site
    for name in _chapter_pages(html):
        text = (html / "chapters" / name).read_text(encoding="utf-8")
        for marker in ("NBVAL_", "BEGIN SOLUTION", "END SOLUTION", "HIDDEN TESTS"):
            assert marker not in text, f"{name}: {marker}"
    with Visit(site) as visit:
        page = visit.open("chapters/04-granularity.html")
        folded = page.locator("details.hetlab-solution")
        assert folded.count() >= 1
        for k in range(folded.count()):
            block = folded.nth(k)
            assert not block.evaluate("d => d.open")
            assert "先自己" in block.locator("summary").inner_text()
            assert not block.locator("pre").first.is_visible()
        folded.first.locator("summary").click()
        assert folded.first.locator("pre").first.is_visible()


@pytest.mark.parametrize("kind,selector", [("primary", "#pst-primary-sidebar-modal"),
                                           ("secondary", "#pst-secondary-sidebar-modal")])
def test_phone_menu_and_toc_buttons_open_their_drawers(site, kind, selector):
    with Visit(site, viewport=PHONE) as visit:
        page = visit.open("chapters/08-typical-patterns.html")
        buttons = page.locator(f".{kind}-toggle:visible")
        assert buttons.count() >= 1
        buttons.first.click()
        page.wait_for_function(f"() => document.querySelector('{selector}').open", timeout=SETTLE_MS)
        links = page.locator(f"{selector} a:visible")
        assert links.count() >= (10 if kind == "primary" else 3)
        if kind == "primary":
            links.filter(has_text="第 4 章").first.click()
            page.wait_for_url("**/04-granularity.html*", timeout=SETTLE_MS)
        visit.shot(f"phone-{kind}-drawer")
        assert visit.problems == []


def test_desktop_menu_button_hides_and_shows_the_chapter_list(site):
    with Visit(site) as visit:
        page = visit.open("chapters/04-granularity.html")
        sidebar = page.locator(".bd-sidebar-primary")
        assert sidebar.is_visible()
        page.locator(".primary-toggle:visible").first.click()
        assert not sidebar.is_visible()
        page.locator(".primary-toggle:visible").first.click()
        assert sidebar.is_visible()


def test_phone_pages_do_not_scroll_sideways_and_figures_stay_legible(site):
    base, browser, html = site
    report = []
    with Visit(site, viewport=PHONE) as visit:
        for name in ["index.html"] + [f"chapters/{n}" for n in _chapter_pages(html)]:
            page = visit.open(name)
            width = page.evaluate("() => document.documentElement.scrollWidth")
            assert width <= PHONE["width"] + 1, f"{name}: the page is {width} px wide"
            # A figure image's 10 pt text must be drawn at >= 10 CSS px: shown at >= 72 px per inch of figure.
            small = page.evaluate("""() => [...document.querySelectorAll('img.hetlab-figure-img')].filter(i =>
                i.naturalWidth && i.getBoundingClientRect().width + 1 < Number((i.className.match(/hetlab-minw-(\\d+)/)
                || [0, 0])[1])).map(i => i.src.slice(-40))""")
            assert small == [], f"{name}: figures shrunk below their legible width: {small}"
            fonts = page.evaluate("""() => [...document.querySelectorAll('svg.hetlab-chart text')]
                .map(t => parseFloat(getComputedStyle(t).fontSize))""")
            assert all(size >= 11 for size in fonts), f"{name}: chart text under 11 px"
            report.append(f"{name}: {len(fonts)} chart labels")
        assert visit.problems == []


def test_home_page_lists_chapters_with_time_and_prerequisites_and_starts_at_chapter_1(site):
    base, browser, html = site
    with Visit(site, viewport=PHONE) as visit:
        page = visit.open("index.html")
        text = page.locator("article").inner_text()
        assert "需要先会什么" in text and "建议先读" in text and "用时" in text
        rows = page.locator("article table tbody tr")
        assert rows.count() == len(_chapter_pages(html))
        for k in range(rows.count()):
            cells = rows.nth(k).locator("td")
            assert cells.nth(0).locator("a").count() == 1 and re.search(r"约 [\d.]+ 小时", cells.nth(3).inner_text())
        links = {a.split("#")[0] for a in page.locator("article table a").evaluate_all("as => as.map(a => a.href)")}
        assert {f"{base}/chapters/{n}" for n in _chapter_pages(html)} == links
        page.get_by_text("从第 1 章开始").click()
        page.wait_for_url("**/chapters/01-visual-demo.html", timeout=SETTLE_MS)


def _search(page, query: str) -> list[list]:
    return page.evaluate("""(q) => {
        Search._hetlabQuery = q;
        const [query, terms, excluded, highlight, objects] = Search._parseQuery(q);
        return Search._performSearch(query, terms, excluded, highlight, objects)
            .map(r => [r[0], r[2], r[4]]).reverse();
    }""", query)


def test_search_finds_every_glossary_term_and_ranks_headings_first(site):
    base, browser, html = site
    raw = (html / "searchindex.js").read_text(encoding="utf-8")
    index = json.loads(raw[raw.index("(") + 1:raw.rindex(")")])
    missing, misranked = [], []
    with Visit(site) as visit:
        page = visit.open("search.html")
        page.wait_for_function("() => typeof Search !== 'undefined' && Search._index", timeout=SETTLE_MS)
        for item in GLOSSARY:
            term = item["term"]
            results = _search(page, term)
            pages = [doc for doc, anchor, _ in results if not anchor]
            if not results:
                missing.append(term)
                continue
            titled = {index["docnames"][k] for k in _as_list(index["titleterms"].get(term))}
            ranks = [doc in titled for doc in pages]
            if ranks != sorted(ranks, reverse=True):   # every page with the term in a heading before the others
                misranked.append((term, pages))
        bubble = [doc for doc, anchor, _ in _search(page, "气泡") if not anchor]
        assert bubble.index("chapters/08-typical-patterns") < bubble.index("chapters/01-visual-demo"), bubble
        assert visit.problems == []
    assert missing == [], f"search finds nothing for {missing}"
    assert misranked == []
    print(f"glossary terms found by search: {len(GLOSSARY) - len(missing)} of {len(GLOSSARY)}")


def _as_list(value):
    return [] if value is None else value if isinstance(value, list) else [value]


def test_search_box_finds_a_compound_term(site):
    with Visit(site) as visit:
        page = visit.open("index.html")
        page.locator("button.search-button-field, .search-button__button").first.click()
        box = page.locator("input[name='q']:visible").first
        assert box.get_attribute("placeholder") == "搜索本书…"
        box.fill("关键路径")
        box.press("Enter")
        page.wait_for_url("**/search.html?q=*", timeout=SETTLE_MS)
        hits = page.locator("#search-results ul.search li")
        hits.first.wait_for(timeout=SETTLE_MS)
        assert any("第 2 章" in t or "第 9 章" in t for t in hits.locator("a").all_inner_texts())


def test_no_code_or_output_block_runs_off_the_right_edge(site):
    base, browser, html = site
    counts = {}
    for viewport, label in [(DESKTOP, "desktop"), (PHONE, "phone")]:
        with Visit(site, viewport=viewport) as visit:
            total = over = 0
            offenders = []
            for name in [f"chapters/{n}" for n in _chapter_pages(html)]:
                page = visit.open(name)
                found = page.evaluate("""() => {
                    const blocks = [...document.querySelectorAll('div.highlight pre, div.cell_output pre')];
                    const wide = blocks.filter(b => b.scrollWidth > b.clientWidth + 1);
                    return [blocks.length, wide.map(b => b.textContent.slice(0, 60))];
                }""")
                total += found[0]
                over += len(found[1])
                offenders += [f"{name}: {t}" for t in found[1][:3]]
            counts[label] = (over, total)
            assert over == 0, f"{label}: {over} of {total} blocks overflow: {offenders[:5]}"
    print(f"overflowing code/output blocks: {counts}")


def test_interface_strings_are_chinese(site):
    base, browser, html = site
    english = ["Search this book", "Toggle primary sidebar", "Toggle secondary sidebar", "Launch on Binder",
               "Color mode", "System Settings", "Link to this heading", "列印"]
    for page in ["index.html"] + [f"chapters/{n}" for n in _chapter_pages(html)]:
        text = (html / page).read_text(encoding="utf-8")
        assert [s for s in english if s in text] == [], page
        assert "colab.research.google.com/github/" in text or page == "index.html", f"{page}: no Colab button"
