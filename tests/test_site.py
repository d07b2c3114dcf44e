"""The static website (`make site`): built once per session from the chapters' stored outputs, offline.

What a reader's browser does with it is in tests/browser/test_site_in_browser.py; here, what the files say:
a page per chapter, nothing loaded from another host, widget state embedded, Binder and download buttons
pointing at the repository set in pyproject.toml, a Chinese search index.
"""
from __future__ import annotations

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


def test_widget_state_is_embedded_and_the_widget_manager_is_local(built_site):
    for path in CHAPTERS + APPENDIX:
        nb = json.loads(path.read_text(encoding="utf-8"))
        views = sum("application/vnd.jupyter.widget-view+json" in o.get("data", {})
                    for c in nb["cells"] for o in c.get("outputs", []))
        stored = nb["metadata"].get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
        page = built_site / "chapters" / f"{path.stem}.html"
        text = page.read_text(encoding="utf-8")
        if views and stored.get("state"):
            assert 'type="application/vnd.jupyter.widget-state+json"' in text, page.name
            assert text.count('type="application/vnd.jupyter.widget-view+json"') == views, page.name
            scripts = _parse(page).scripts
            assert any("_static/vendor/require.js" in s for s in scripts), scripts
            assert any("_static/vendor/npm/@jupyter-widgets/html-manager/dist/embed-amd.js" in s for s in scripts)
            for script in scripts:  # every script the page names exists in the site
                target = (page.parent / urlsplit(script).path).resolve()
                assert target.is_file(), script
    assert (built_site / "_static" / "vendor" / "mathjax" / "tex-mml-chtml.js").is_file()


def test_binder_and_download_buttons_on_every_chapter_use_the_one_repository_url(built_site):
    url = build_site.repository_url()
    owner_repo = urlsplit(url).path.strip("/")
    for path in CHAPTERS + APPENDIX:
        page = built_site / "chapters" / f"{path.stem}.html"
        links = _parse(page).links
        binder = f"https://mybinder.org/v2/gh/{owner_repo}/HEAD?urlpath=lab/tree/chapters/{path.name}"
        assert binder in links, (page.name, [u for u in links if "binder" in u])
        assert url in links
        download = [u for u in links if u.endswith(f"_sources/chapters/{path.name}")]
        assert download, page.name
        assert json.loads((page.parent / download[0]).read_text(encoding="utf-8"))["cells"]


def test_readme_binder_links_point_at_the_same_repository():
    owner_repo = urlsplit(build_site.repository_url()).path.strip("/")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = set(re.findall(r"mybinder\.org/v2/gh/([^/]+/[^/]+)/", readme))
    assert found == {owner_repo}


def test_chinese_search_index_knows_scheduling(built_site):
    text = (built_site / "searchindex.js").read_text(encoding="utf-8")
    index = json.loads(text[text.index("(") + 1:text.rindex(")")])
    assert "调度" in index["terms"], "jieba did not split 调度 out as a word"
    assert re.search(r'"zh"|zh', (built_site / "_static" / "documentation_options.js").read_text(encoding="utf-8"))


def test_dark_mode_switch_on_every_page(built_site):
    for page in _pages(built_site):
        text = page.read_text(encoding="utf-8")
        if page.name in ("genindex.html",):
            continue
        assert "theme-switch-button" in text, page
