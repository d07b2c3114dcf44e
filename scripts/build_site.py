"""Build the book as a static website (Jupyter Book 1: Sphinx + MyST-NB) from the chapters' stored outputs.

Usage: ``make site`` or ``python scripts/build_site.py [--out DIR]`` (writes ``DIR/_build/html``; DIR defaults to
the repository root). No notebook is executed and nothing is downloaded while building, except the browser assets
listed in book/package.json (MathJax, Font Awesome), which ``npm ci`` fetches once from the npm registry into the
git-ignored cache ``.cache/site-npm`` and which every page then loads from ``_static/vendor/``.

The pages are staged in ``DIR/_build/src`` with their repository paths (``chapters/NN-x.ipynb``), so each page's
Binder and Colab buttons open that notebook; scripts/site_notebooks.py turns each notebook into its page (widgets
that compute in the page or step through frames drawn here by hetlab, quizzes that work in the page, solutions
folded, hidden tests and test markers removed, figures numbered). The glossary (hetlab/book/data/glossary.json)
becomes the page 术语表 and the search's word list. The table of contents lists whichever chapters exist.
The repository URL is read from pyproject.toml ``[project.urls] Repository``, the one place it is set.
``DIR/_build/site-report.json`` counts what the staging did (widgets per kind, quiz cards, folded solutions, ...).
"""
from __future__ import annotations

import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import site_notebooks  # noqa: E402
import site_quiz  # noqa: E402
import site_search  # noqa: E402
import site_widgets  # noqa: E402

BOOK = ROOT / "book"
GLOSSARY = ROOT / "hetlab" / "book" / "data" / "glossary.json"
NPM_CACHE = Path(os.environ.get("HETLAB_SITE_NPM_CACHE", ROOT / ".cache" / "site-npm"))
#: Files copied from the npm cache into the site, as (package path, destination under _static/vendor).
VENDOR = [("mathjax/es5", "mathjax"),
          ("font-awesome/css", "font-awesome/css"),
          ("font-awesome/fonts", "font-awesome/fonts")]
#: Outputs that name another host, and the local copy each page loads instead (pages sit in chapters/).
#: matplotlib's to_jshtml player links Font Awesome 4 from a CDN for its button icons.
OUTPUT_REWRITES = {
    "https://maxcdn.bootstrapcdn.com/font-awesome/4.4.0/css/font-awesome.min.css":
        "../_static/vendor/font-awesome/css/font-awesome.min.css",
}


def repository_url() -> str:
    """The repository's URL from pyproject.toml ([project.urls] Repository)."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]["urls"]["Repository"]


def launch_urls(notebook: str) -> tuple[str, str]:
    """Binder and Colab links that open ``chapters/<notebook>`` of the repository."""
    owner_repo = urlsplit(repository_url()).path.strip("/")
    return (f"https://mybinder.org/v2/gh/{owner_repo}/HEAD?urlpath=lab/tree/chapters/{notebook}",
            f"https://colab.research.google.com/github/{owner_repo}/blob/HEAD/chapters/{notebook}")


def chapters() -> tuple[list[Path], list[Path]]:
    """The chapter notebooks and the appendix notebooks that exist now."""
    folder = ROOT / "chapters"
    return sorted(folder.glob("[0-9][0-9]-*.ipynb")), sorted(folder.glob("A[0-9]*-*.ipynb"))


def _cached() -> bool:
    cached_lock = NPM_CACHE / "installed-package-lock.json"  # written only after npm ci succeeded
    return ((NPM_CACHE / "node_modules").is_dir() and cached_lock.exists()
            and filecmp.cmp(BOOK / "package-lock.json", cached_lock, shallow=False))


def npm_missing_reason() -> str | None:
    """Why the site cannot be built here (no npm and no cached assets), or None."""
    if _cached() or shutil.which("npm"):
        return None
    return (f"npm not found; it is needed once to fetch book/package.json's assets into {NPM_CACHE} "
            "(Debian package npm; `make test` installs it as root)")


def npm_assets() -> Path:
    """node_modules with the pinned browser assets (npm ci into the cache when the lock file changed)."""
    modules = NPM_CACHE / "node_modules"
    if _cached():
        return modules
    if npm_missing_reason():
        raise SystemExit(f"build_site: {npm_missing_reason()}")
    npm = shutil.which("npm")
    lock = BOOK / "package-lock.json"
    NPM_CACHE.mkdir(parents=True, exist_ok=True)
    shutil.copy(BOOK / "package.json", NPM_CACHE / "package.json")
    shutil.copy(lock, NPM_CACHE / "package-lock.json")
    print(f"build_site: npm ci into {NPM_CACHE}", flush=True)
    subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"], cwd=NPM_CACHE,
                   check=True)
    shutil.copy(lock, NPM_CACHE / "installed-package-lock.json")
    return modules


def _copy_tree(src: Path, dst: Path) -> None:
    dst.mkdir(parents=True, exist_ok=True)
    for item in src.iterdir():
        if item.is_dir():
            _copy_tree(item, dst / item.name)
        else:
            shutil.copy2(item, dst / item.name)


def toc(chapter_files: list[Path], appendix_files: list[Path]) -> str:
    """_toc.yml: the index, every chapter, the appendix, the glossary, the instructors' page."""
    def entries(paths):
        return "".join(f"      - file: chapters/{p.stem}\n" for p in paths)

    parts = [("章节", entries(chapter_files))]
    if appendix_files:
        parts.append(("附录", entries(appendix_files)))
    parts.append(("参考", "      - file: glossary\n      - file: instructors\n"))
    body = "".join(f"  - caption: {caption}\n    chapters:\n{items}" for caption, items in parts)
    header = "# Written by scripts/build_site.py from the chapters that exist.\nformat: jb-book\nroot: index\n"
    return f"{header}parts:\n{body}"


def chapter_label(path: Path) -> str:
    """"4" for chapters/04-x.ipynb, "A1" for chapters/A1-x.ipynb (figure numbers: 图 4.2, 图 A1.3)."""
    head = path.stem.split("-")[0]
    return head if head.startswith("A") else str(int(head))


def _phone_css() -> str:
    rules = "".join(f".hetlab-minw-{w}{{min-width:{w}px}}" for w in range(200, 1001, 20))
    head = "/* Written by scripts/build_site.py: minimum figure widths on a phone. */\n"
    return f"{head}@media (max-width: 600px){{{rules}}}\n"


def stage(src: Path, modules: Path) -> dict:
    """Lay out the book's sources in ``src``; return the staging report."""
    import yaml

    if src.exists():
        shutil.rmtree(src)
    (src / "chapters").mkdir(parents=True)
    for name in ("index.md", "instructors.md"):
        shutil.copy2(BOOK / name, src / name)
    for folder in ("_assets", "_ext"):
        _copy_tree(BOOK / folder, src / folder)
    (src / "_assets" / "hetlab-figures.css").write_text(_phone_css(), encoding="utf-8")
    chapter_files, appendix_files = chapters()
    if not chapter_files:
        raise SystemExit("build_site: no chapters/NN-*.ipynb to build")
    notebooks = {p: json.loads(p.read_text(encoding="utf-8")) for p in chapter_files + appendix_files}
    wanted = [m.group(1) for nb in notebooks.values() for cell in nb["cells"] if cell["cell_type"] == "code"
              and any(site_notebooks.WIDGET_VIEW in o.get("data", {}) for o in cell.get("outputs", []))
              for m in site_notebooks.VIEW_CALL.finditer("".join(cell["source"]))
              if site_widgets.mode_of(m.group(1)) == "frames"]
    frames = site_widgets.Frames(src / "_assets")
    frames.prepare(wanted)
    report = {"pages": {}, "frame_failures": frames.failed}
    for path, nb in notebooks.items():
        binder, colab = launch_urls(path.name)
        context = site_notebooks.PageContext(
            stem=path.stem, label=chapter_label(path), binder=binder, colab=colab,
            widget_html=lambda *a, **k: site_widgets.widget_html(frames, *a, **k), quiz_html=site_quiz.quiz_html)
        page = site_notebooks.transform(nb, context)
        text = site_notebooks.dumps(page)
        for remote, local in OUTPUT_REWRITES.items():
            text = text.replace(remote, local)
        # A fresh modification time: the page depends on the staging code and the frames, not only the notebook.
        (src / "chapters" / path.name).write_text(text, encoding="utf-8")
        report["pages"][path.stem] = context.report
    glossary = json.loads(GLOSSARY.read_text(encoding="utf-8"))
    docnames = {p.stem.split("-")[0]: f"chapters/{p.stem}" for p in chapter_files + appendix_files}
    (src / "glossary.md").write_text(site_search.glossary_page(glossary, docnames), encoding="utf-8")
    (src / "_ext" / "jieba-dict.txt").write_text(site_search.jieba_dictionary(glossary), encoding="utf-8")
    texts = {f"chapters/{p.stem}": "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
             for p, nb in notebooks.items()}
    counts = site_search.term_counts(glossary, texts)
    (src / "_ext" / "search-scorer.js").write_text(site_search.scorer(counts), encoding="utf-8")
    (src / "_toc.yml").write_text(toc(chapter_files, appendix_files), encoding="utf-8")

    config = yaml.safe_load((BOOK / "_config.yml").read_text(encoding="utf-8"))
    config["repository"]["url"] = repository_url()
    sphinx = config["sphinx"]["config"]
    sphinx["html_search_options"] = {"dict": str((src / "_ext" / "jieba-dict.txt").resolve())}
    sphinx["html_search_scorer"] = str((src / "_ext" / "search-scorer.js").resolve())
    (src / "_config.yml").write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False), encoding="utf-8")

    # The static folder is _assets, not _static: Jupyter Book would add every .js under _static to every page.
    vendor = src / "_assets" / "vendor"
    for package_path, name in VENDOR:
        _copy_tree(modules / package_path, vendor / name)
    report["page_count"] = len(notebooks) + 3
    return report


def build(out: Path, builder: str = "html") -> Path:
    """Build ``out/_build/<builder>`` (html, or singlehtml for the PDF) and return its path."""
    start = time.perf_counter()
    modules = npm_assets()
    src = out / "_build" / "src"
    report = stage(src, modules)
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    env = dict(os.environ, PYDEVD_DISABLE_FILE_VALIDATION="1")
    subprocess.run([str(jupyter_book), "build", str(src), "--path-output", str(out), "--builder", builder],
                   check=True, env=env)
    html = out / "_build" / ("html" if builder == "html" else builder)
    elapsed = time.perf_counter() - start
    size = sum(p.stat().st_size for p in html.rglob("*") if p.is_file())
    (out / "_build" / "site-report.json").write_text(json.dumps(report, ensure_ascii=False, indent=1),
                                                     encoding="utf-8")
    print(f"build_site: {report['page_count']} pages in {html} ({size / 1e6:.1f} MB) built in {elapsed:.0f} s; "
          f"{summary(report)}", flush=True)
    return html


def summary(report: dict) -> str:
    """One line: widgets per kind, quizzes, folded solutions, dropped hidden tests."""
    modes: dict[str, int] = {}
    totals = {"quizzes": 0, "solutions": 0, "hidden_tests": 0, "figures": 0, "markers": 0}
    for page in report["pages"].values():
        for _, mode in page["widgets"]:
            modes[mode] = modes.get(mode, 0) + 1
        for key in totals:
            totals[key] += page[key]
    kinds = ", ".join(f"{n} {mode}" for mode, n in sorted(modes.items()))
    failed = f"; frames failed: {', '.join(report['frame_failures'])}" if report["frame_failures"] else ""
    return (f"widgets {kinds}; {totals['quizzes']} quizzes; {totals['solutions']} solutions folded; "
            f"{totals['hidden_tests']} hidden-test blocks dropped; {totals['markers']} test markers stripped; "
            f"{totals['figures']} figures captioned{failed}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT, help="writes OUT/_build/html (default: the repository)")
    build(parser.parse_args(argv).out.resolve())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
