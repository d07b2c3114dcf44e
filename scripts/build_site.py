"""Build the book as a static website (Jupyter Book 1: Sphinx + MyST-NB) from the chapters' stored outputs.

Usage: ``make site`` or ``python scripts/build_site.py [--out DIR]`` (writes ``DIR/_build/html``; DIR defaults to
the repository root). Nothing is executed and nothing is downloaded while building, except the browser assets
listed in book/package.json (the widget manager, require.js, MathJax), which ``npm ci`` fetches once from the npm
registry into the git-ignored cache ``.cache/site-npm`` and which every page then loads from ``_static/vendor/``.

The pages are staged in ``DIR/_build/src`` with their repository paths (``chapters/NN-x.ipynb``), so each page's
Binder button opens that notebook. The table of contents lists whichever chapters exist at build time.
The repository URL is read from pyproject.toml ``[project.urls] Repository``, the one place it is set.
"""
from __future__ import annotations

import argparse
import filecmp
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
NPM_CACHE = Path(os.environ.get("HETLAB_SITE_NPM_CACHE", ROOT / ".cache" / "site-npm"))
#: Files copied from the npm cache into the site, as (package path, destination under _static/vendor).
#: The widget manager's fonts go both next to its bundle and one level up, the two module URLs it loads them from.
VENDOR = [("requirejs/require.js", "require.js"),
          ("@jupyter-widgets/html-manager/dist", "npm/@jupyter-widgets/html-manager/dist"),
          ("@jupyter-widgets/html-manager/dist", "npm/@jupyter-widgets"),
          ("mathjax/es5", "mathjax"),
          ("font-awesome/css", "font-awesome/css"),
          ("font-awesome/fonts", "font-awesome/fonts")]
#: Outputs that name another host, and the local copy each page loads instead (pages sit in chapters/).
#: matplotlib's to_jshtml player links Font Awesome 4 from a CDN for its button icons.
OUTPUT_REWRITES = {
    "https://maxcdn.bootstrapcdn.com/font-awesome/4.4.0/css/font-awesome.min.css":
        "../_static/vendor/font-awesome/css/font-awesome.min.css",
}
#: What the widget manager's dist needs at run time: the AMD bundle and the icon fonts it loads next to itself.
HTML_MANAGER_FILES = re.compile(r"^(embed-amd\.js|[0-9a-f]{20}\.(woff2?|ttf|eot|svg))$")
FONT_FILES = re.compile(r"^[0-9a-f]{20}\.(woff2?|ttf|eot|svg)$")


def repository_url() -> str:
    """The repository's URL from pyproject.toml ([project.urls] Repository)."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]["urls"]["Repository"]


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


def _copy_tree(src: Path, dst: Path, keep=None) -> None:
    dst.mkdir(parents=True, exist_ok=True)
    for item in src.iterdir():
        if item.is_dir():
            if keep is None:
                _copy_tree(item, dst / item.name)
        elif keep is None or keep.match(item.name):
            shutil.copy2(item, dst / item.name)


def toc(chapter_files: list[Path], appendix_files: list[Path]) -> str:
    """_toc.yml: the index, every chapter, the appendix, the instructors' page."""
    def entries(paths):
        return "".join(f"      - file: chapters/{p.stem}\n" for p in paths)

    parts = [("章节", entries(chapter_files))]
    if appendix_files:
        parts.append(("附录", entries(appendix_files)))
    parts.append(("给教师", "      - file: instructors\n"))
    body = "".join(f"  - caption: {caption}\n    chapters:\n{items}" for caption, items in parts)
    header = "# Written by scripts/build_site.py from the chapters that exist.\nformat: jb-book\nroot: index\n"
    return f"{header}parts:\n{body}"


def stage(src: Path, modules: Path) -> int:
    """Lay out the book's sources in ``src``; return the number of pages."""
    import yaml

    if src.exists():
        shutil.rmtree(src)
    (src / "chapters").mkdir(parents=True)
    for name in ("index.md", "instructors.md"):
        shutil.copy2(BOOK / name, src / name)
    for folder in ("_assets", "_ext"):
        _copy_tree(BOOK / folder, src / folder)
    chapter_files, appendix_files = chapters()
    if not chapter_files:
        raise SystemExit("build_site: no chapters/NN-*.ipynb to build")
    for path in chapter_files + appendix_files:
        text = path.read_text(encoding="utf-8")
        for remote, local in OUTPUT_REWRITES.items():
            text = text.replace(remote, local)
        (src / "chapters" / path.name).write_text(text, encoding="utf-8")
        shutil.copystat(path, src / "chapters" / path.name)
    (src / "_toc.yml").write_text(toc(chapter_files, appendix_files), encoding="utf-8")

    config = yaml.safe_load((BOOK / "_config.yml").read_text(encoding="utf-8"))
    config["repository"]["url"] = repository_url()
    (src / "_config.yml").write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False), encoding="utf-8")

    # The static folder is _assets, not _static: Jupyter Book would add every .js under _static to every page.
    vendor = src / "_assets" / "vendor"
    for package_path, name in VENDOR:
        origin = modules / package_path
        if origin.is_dir():
            keep = None
            if "html-manager" in package_path:
                keep = HTML_MANAGER_FILES if name.endswith("dist") else FONT_FILES
            _copy_tree(origin, vendor / name, keep=keep)
        else:
            vendor.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origin, vendor / name)
    return len(chapter_files) + len(appendix_files) + 2


def build(out: Path) -> Path:
    """Build ``out/_build/html`` and return its path."""
    start = time.perf_counter()
    modules = npm_assets()
    src = out / "_build" / "src"
    pages = stage(src, modules)
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    env = dict(os.environ, PYDEVD_DISABLE_FILE_VALIDATION="1")
    subprocess.run([str(jupyter_book), "build", str(src), "--path-output", str(out), "--builder", "html"],
                   check=True, env=env)
    html = out / "_build" / "html"
    elapsed = time.perf_counter() - start
    size = sum(p.stat().st_size for p in html.rglob("*") if p.is_file())
    print(f"build_site: {pages} pages in {html} ({size / 1e6:.1f} MB) built in {elapsed:.0f} s", flush=True)
    return html


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT, help="writes OUT/_build/html (default: the repository)")
    build(parser.parse_args(argv).out.resolve())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
