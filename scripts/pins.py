"""One source of versions: binder/requirements.txt is generated from constraints.txt.

Binder's environment is hetlab's dependencies plus the "book" extra (JupyterLab, its Chinese language pack, ...).
Every package of that set and of its dependency tree that constraints.txt pins is written with that pin, so
Binder runs the versions `make test` tested. ``python scripts/pins.py --write`` (``make pins``) rewrites the file;
``--check`` exits non-zero when it is out of date (tests/test_binder.py runs the same comparison).
The dependency tree is read from the installed packages' metadata (run it with the project's .venv).
"""
from __future__ import annotations

import argparse
import re
import sys
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "binder" / "requirements.txt"
HEADER = """\
# Generated from constraints.txt by scripts/pins.py (`make pins`); do not edit by hand.
# Binder (repo2docker) installs these with pip, then binder/postBuild installs hetlab itself.
"""


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def constraints() -> dict[str, str]:
    """canonical name -> 'Name==version' for every pin in constraints.txt."""
    pins = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, _ = line.partition("==")
            pins[canonical(name)] = line
    return pins


def roots() -> list[str]:
    """hetlab's own dependencies and its "book" extra, as named in pyproject.toml."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    with open(ROOT / "pyproject.toml", "rb") as f:
        project = tomllib.load(f)["project"]
    return project["dependencies"] + project["optional-dependencies"]["book"]


def _name(requirement: str) -> str:
    return canonical(re.split(r"[\s<>=!~;\[(]", requirement.strip(), maxsplit=1)[0])


def closure(requirements: list[str]) -> set[str]:
    """Canonical names of the requirements and everything they need (installed metadata; markers respected)."""
    from packaging.requirements import Requirement

    seen: set[str] = set()
    todo = list(requirements)
    while todo:
        req = Requirement(todo.pop())
        name = canonical(req.name)
        if name in seen:
            continue
        seen.add(name)
        try:
            dist = metadata.distribution(req.name)
        except metadata.PackageNotFoundError:
            continue
        for child in dist.requires or []:
            child_req = Requirement(child)
            extras = req.extras or {""}
            if child_req.marker is None or any(child_req.marker.evaluate({"extra": e}) for e in extras):
                todo.append(child)
    return seen


def render() -> str:
    pins = constraints()
    wanted = closure(roots())
    missing = sorted(_name(r) for r in roots() if _name(r) not in pins)
    if missing:
        raise SystemExit(f"pins: constraints.txt pins none of {missing}; Binder would get unpinned versions")
    lines = sorted((pins[name] for name in wanted if name in pins), key=str.lower)
    return HEADER + "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", action="store_true", help="rewrite binder/requirements.txt")
    group.add_argument("--check", action="store_true", help="fail if binder/requirements.txt is out of date")
    args = parser.parse_args(argv)
    text = render()
    if args.write:
        TARGET.write_text(text, encoding="utf-8")
        return 0
    if TARGET.read_text(encoding="utf-8") != text:
        print("binder/requirements.txt differs from constraints.txt: run `make pins`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
