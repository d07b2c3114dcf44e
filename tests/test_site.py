"""The static website (`make site`): built once per session from the chapters' stored outputs, offline.

What a reader's browser does with it is in tests/browser/test_site_in_browser.py; here, what the files say:
a page per chapter, nothing loaded from another host, every widget replaced by one that computes in the page,
steps through frames or says it is static, Binder, Colab and download buttons pointing at the repository set in
pyproject.toml, a Chinese search index that knows the glossary, solutions folded and hidden tests absent.
"""
from __future__ import annotations

import html
import json
import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import build_site  # noqa: E402

pytestmark = pytest.mark.slow
CHAPTERS, APPENDIX = build_site.chapters()


class _Assets(HTMLParser):
    """Every URL a page makes the browser fetch by itself (not links the reader may follow)."""

    def __init__(self):
        super().__init__()
        self.fetched: list[str] = []
        self.links: list[str] = []
        self.scripts: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("script", "img", "iframe", "source", "audio", "video", "embed") and a.get("src"):
            self.fetched.append(a["src"])
        if tag == "link" and a.get("href") and a.get("rel") not in ("next", "prev", "index", "search", "canonical"):
            self.fetched.append(a["href"])
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])
        if tag == "script" and a.get("src"):
            self.scripts.append(a["src"])


def _parse(path: Path) -> _Assets:
    parser = _Assets()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def _pages(html: Path) -> list[Path]:
    return sorted(p for p in html.rglob("*.html") if "_static" not in p.parts and "_sources" not in p.parts)


def test_a_page_for_the_index_every_chapter_the_appendix_and_instructors(built_site):
    assert CHAPTERS, "no chapters/NN-*.ipynb"
    for path in CHAPTERS + APPENDIX:
        page = built_site / "chapters" / f"{path.stem}.html"
        assert page.exists(), page
        title = re.search(r"<title>(.*?)</title>", page.read_text(encoding="utf-8"), re.S).group(1)
        assert re.search(r"[\u4e00-\u9fff]", title), f"{page.name}: title without Chinese: {title!r}"
    assert (built_site / "index.html").exists() and (built_site / "instructors.html").exists()
    index = (built_site / "index.html").read_text(encoding="utf-8")
    for path in CHAPTERS + APPENDIX:  # the navigation lists every chapter
        assert f"chapters/{path.stem}.html" in index, path.stem


def test_no_page_fetches_anything_from_another_host(built_site):
    offenders = {}
    for page in _pages(built_site):
        remote = [u for u in _parse(page).fetched if urlsplit(u).scheme in ("http", "https") or u.startswith("//")]
        if remote:
            offenders[str(page.relative_to(built_site))] = remote
        text = page.read_text(encoding="utf-8")
        assert "unpkg.com" not in text and "cdn.jsdelivr" not in text and "cdnjs" not in text, page
    assert offenders == {}
    for css in (built_site / "_static").rglob("*.css"):  # no stylesheet imports a web font or a remote style
        body = re.sub(r"/\*.*?\*/", "", css.read_text(encoding="utf-8", errors="replace"), flags=re.S)
        assert not re.search(r"(url\(|@import)\s*['\"]?(https?:)?//", body), css


def test_every_widget_is_live_frames_or_static_and_no_widget_manager_is_loaded(built_site):
    report = json.loads((built_site.parent / "site-report.json").read_text(encoding="utf-8"))
    for path in CHAPTERS + APPENDIX:
        nb = json.loads(path.read_text(encoding="utf-8"))
        views = sum("application/vnd.jupyter.widget-view+json" in o.get("data", {})
                    for c in nb["cells"] for o in c.get("outputs", []))
        page = built_site / "chapters" / f"{path.stem}.html"
        text = page.read_text(encoding="utf-8")
        assert "application/vnd.jupyter.widget-view+json" not in text and "widget-state+json" not in text, page.name
        assert "require.js" not in text and "embed-amd" not in text, page.name
        blocks = re.findall(r'class="hetlab-widget" data-mode="(live|frames|static)"', text)
        quizzes = len(re.findall(r'class="hetlab-quiz"', text))
        assert len(blocks) + quizzes == views, (page.name, blocks, quizzes, views)
        assert [m for _, m in report["pages"][path.stem]["widgets"]] == blocks, page.name
        for manifest in re.findall(r'<script type="application/json" class="hetlab-frames">(.*?)</script>', text):
            data = json.loads(manifest.replace("<\\/", "</"))
            for file, _ in data["frames"].values():
                assert (page.parent / data["base"] / file).is_file(), (page.name, file)
        for script in _parse(page).scripts:  # every script the page names exists in the site
            target = (page.parent / urlsplit(script).path).resolve()
            assert target.is_file(), script
    assert (built_site / "_static" / "vendor" / "mathjax" / "tex-mml-chtml.js").is_file()


def test_every_notebook_widget_has_a_site_treatment():
    """A new or renamed factory gets automatic frames; listing it in site_widgets keeps its positions chosen."""
    import site_widgets

    from hetlab.book import views

    unknown = [f.__name__ for _, f in views.ALL
               if site_widgets.canonical(f.__name__) not in site_widgets.LIVE | set(site_widgets.FRAMES)
               | site_widgets.STATIC]
    assert unknown == [], f"not in scripts/site_widgets.py (LIVE, FRAMES or STATIC): {unknown}"


def test_binder_colab_and_download_buttons_on_every_chapter_use_the_one_repository_url(built_site):
    url = build_site.repository_url()
    owner_repo = urlsplit(url).path.strip("/")
    for path in CHAPTERS + APPENDIX:
        page = built_site / "chapters" / f"{path.stem}.html"
        links = _parse(page).links
        binder = f"https://mybinder.org/v2/gh/{owner_repo}/HEAD?urlpath=lab/tree/chapters/{path.name}"
        assert binder in links, (page.name, [u for u in links if "binder" in u])
        colab = f"https://colab.research.google.com/github/{owner_repo}/blob/HEAD/chapters/{path.name}"
        assert colab in links, (page.name, [u for u in links if "colab" in u])
        assert url in links
        download = [u for u in links if u.endswith(f"_sources/chapters/{path.name}")]
        assert download, page.name
        assert json.loads((page.parent / download[0]).read_text(encoding="utf-8"))["cells"]


def test_readme_binder_links_point_at_the_same_repository():
    owner_repo = urlsplit(build_site.repository_url()).path.strip("/")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = set(re.findall(r"mybinder\.org/v2/gh/([^/]+/[^/]+)/", readme))
    assert found == {owner_repo}


def test_chinese_search_index_knows_every_glossary_term(built_site):
    text = (built_site / "searchindex.js").read_text(encoding="utf-8")
    index = json.loads(text[text.index("(") + 1:text.rindex(")")])
    glossary = json.loads((ROOT / "hetlab" / "book" / "data" / "glossary.json").read_text(encoding="utf-8"))
    missing = [t["term"] for t in glossary if t["term"] not in index["terms"] and t["term"] not in index["titleterms"]]
    assert missing == [], f"jieba split these terms: {missing}"
    assert "glossary" in index["docnames"]
    assert re.search(r'"zh"|zh', (built_site / "_static" / "documentation_options.js").read_text(encoding="utf-8"))


def test_solutions_are_folded_and_hidden_tests_are_not_published(built_site):
    report = json.loads((built_site.parent / "site-report.json").read_text(encoding="utf-8"))
    for path in CHAPTERS + APPENDIX:
        nb = json.loads(path.read_text(encoding="utf-8"))
        solutions = sum(bool(c.get("metadata", {}).get("nbgrader", {}).get("solution"))
                        and "### BEGIN SOLUTION" in "".join(c["source"]) for c in nb["cells"])
        hidden = ["".join(c["source"]).split("### BEGIN HIDDEN TESTS")[1].split("### END HIDDEN TESTS")[0]
                  for c in nb["cells"] if "### BEGIN HIDDEN TESTS" in "".join(c["source"])]
        text = (built_site / "chapters" / f"{path.stem}.html").read_text(encoding="utf-8")
        assert text.count('<details class="hetlab-solution">') == solutions == report["pages"][path.stem]["solutions"]
        for block in hidden:        # no line of a hidden test reaches the page (nor its .ipynb download)
            for line in block.strip().splitlines():
                line = line.strip()
                if len(line) > 25 and not line.startswith("#"):
                    assert html.escape(line) not in text, (path.name, line)
        source = (built_site / "_sources" / "chapters" / path.name).read_text(encoding="utf-8")
        assert "HIDDEN TESTS" not in source and "NBVAL_" not in source, path.name


def test_downloaded_notebooks_install_hetlab_when_it_is_missing():
    """Each chapter's first code cell installs hetlab from the repository when run outside a clone (Colab,
    a downloaded .ipynb), from the one address in pyproject.toml."""
    url = build_site.repository_url()
    for path in CHAPTERS + APPENDIX:
        nb = json.loads(path.read_text(encoding="utf-8"))
        first = "".join(next(c for c in nb["cells"] if c["cell_type"] == "code")["source"])
        assert "except ImportError" in first and f"git+{url}" in first, path.name


def test_figures_are_numbered_with_captions_and_alt_text(built_site):
    for path in CHAPTERS + APPENDIX:
        text = (built_site / "chapters" / f"{path.stem}.html").read_text(encoding="utf-8")
        label = path.stem.split("-")[0]
        label = label if label.startswith("A") else str(int(label))
        captions = " ".join(re.findall(r"<figcaption>.*?</figcaption>", text, re.S))
        numbers = re.findall(rf"图 {re.escape(label)}\.(\d+)", captions)
        assert numbers == [str(k) for k in range(1, len(numbers) + 1)], (path.name, numbers)
        for alt in re.findall(r'<img[^>]*class="[^"]*hetlab-figure-img[^"]*"[^>]*>', text):
            found = re.search(r'alt="([^"]*)"', alt)
            assert found and found.group(1).startswith("图 ") and not found.group(1).endswith(".png"), alt[:120]


def test_dark_mode_switch_on_every_page(built_site):
    for page in _pages(built_site):
        text = page.read_text(encoding="utf-8")
        if page.name in ("genindex.html",):
            continue
        assert "theme-switch-button" in text, page
