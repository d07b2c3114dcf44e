"""Sphinx glue for the offline site, loaded by book/_config.yml as a local extension.

- Sphinx 7.4 receives some extensions' inline scripts twice (sphinx-thebe's ``const THEBE_JS_URL`` then throws a
  SyntaxError in the browser): keep each script once.
- Thebe (live kernels in the page) is off, so its loader, which points at another host, is dropped from every page.
- The themes' English (and one Traditional-Chinese) interface strings that have no zh_CN translation are
  replaced in the written pages by Simplified Chinese (:data:`STRINGS`).
"""
from __future__ import annotations

from pathlib import Path

#: Interface strings of sphinx-book-theme 1.3 / pydata-sphinx-theme 0.17 / Sphinx 7.4 left untranslated in zh_CN.
STRINGS = {
    'placeholder="Search this book..."': 'placeholder="搜索本书…"',
    'aria-label="Search this book..."': 'aria-label="搜索本书"',
    'title="Toggle primary sidebar"': 'title="显示或隐藏章节目录"',
    'title="Toggle secondary sidebar"': 'title="显示或隐藏本页目录"',
    'title="Link to this heading"': 'title="链接到这个标题"',
    'title="Link to this image"': 'title="链接到这张图"',
    'title="Link to this table"': 'title="链接到这张表"',
    'title="Link to this code"': 'title="链接到这段代码"',
    'title="Launch on Binder"': 'title="在 Binder 上运行本章"',
    'title="Launch on Colab"': 'title="在 Colab 上运行本章"',
    'title="Color mode"': 'title="颜色模式"',
    'title="System Settings"': 'title="跟随系统"',
    'aria-label="Color mode"': 'aria-label="颜色模式"',
    'aria-label="System Settings"': 'aria-label="跟随系统"',
    'title="列印成 PDF"': 'title="打印本页"',
    '>列印成 PDF<': '>打印本页<',
    'aria-label="Search"': 'aria-label="搜索"',
    '>Contents<': '>目录<',
    'title="Download source file"': 'title="下载源文件"',
    'title="Launch interactive content"': 'title="运行本章"',
    'aria-label="Launch interactive content"': 'aria-label="运行本章"',
    'title="Download this page"': 'title="下载本页"',
    'aria-label="Download this page"': 'aria-label="下载本页"',
}


def _identity(asset) -> tuple:
    attributes = getattr(asset, "attributes", {}) or {}
    return str(getattr(asset, "filename", asset)), tuple(sorted((k, str(v)) for k, v in attributes.items()))


def _is_thebe(asset) -> bool:
    attributes = getattr(asset, "attributes", {}) or {}
    filename = str(getattr(asset, "filename", "") or "")
    return "thebe" in filename.lower() or "THEBE_JS_URL" in str(attributes.get("body", ""))


def tidy_assets(app, pagename, templatename, context, doctree) -> None:
    for key in ("script_files", "css_files"):
        assets = context.get(key)
        if not assets:
            continue
        seen, kept = set(), []
        for asset in assets:
            identity = _identity(asset)
            if identity in seen or _is_thebe(asset):
                continue
            seen.add(identity)
            kept.append(asset)
        assets[:] = kept


def translate_pages(app, exception) -> None:
    """Replace the leftover English interface strings in every written page."""
    if exception is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        if "_static" in page.parts:
            continue
        text = page.read_text(encoding="utf-8")
        new = text
        for english, chinese in STRINGS.items():
            new = new.replace(english, chinese)
        if new != text:
            page.write_text(new, encoding="utf-8")


def setup(app):
    app.connect("html-page-context", tidy_assets, priority=900)
    app.connect("build-finished", translate_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
