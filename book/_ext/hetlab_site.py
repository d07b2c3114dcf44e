"""Sphinx glue for the offline site, loaded by book/_config.yml as a local extension.

- Sphinx 7.4 receives some extensions' inline scripts twice (sphinx-thebe's ``const THEBE_JS_URL`` then throws a
  SyntaxError in the browser, and MyST-NB's require.js/widget manager load twice): keep each script once.
- Thebe (live kernels in the page) is off, so its loader, which points at another host, is dropped from every page.
"""
from __future__ import annotations


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


def setup(app):
    app.connect("html-page-context", tidy_assets, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
