"""The shape of the library (issue 16): the rules that keep ``hetlab`` readable top-down, each checked here.

1. Nothing outside ``hetlab.book`` imports ``hetlab.book``; no module outside ``hetlab.book`` holds a Chinese sentence
   in its code (docstrings and documented label tables excepted).
2. No import cycle between modules, function-level imports included.
3. No module over 500 lines.
4. ``POLICIES`` keys follow one convention, and an unknown key names the valid ones.
5. No widget factory shares a name with a module or a formula.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "hetlab"
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)
CJK = re.compile(r"[\u4e00-\u9fff]")
MAX_LINES = 500


def dotted(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def in_book(module: str) -> bool:
    return module == "hetlab.book" or module.startswith("hetlab.book.")


def imported_modules(path: Path) -> set[str]:
    """Every hetlab module that ``path`` imports, at module level or inside a function."""
    here = dotted(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("hetlab")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if not module.startswith("hetlab"):
                continue
            found.add(module)
            # ``from hetlab.x import y`` may import the submodule hetlab.x.y
            found |= {f"{module}.{a.name}" for a in node.names}
    known = {dotted(p) for p in MODULES}
    return {m for m in found if m in known and m != here}


GRAPH = {dotted(p): imported_modules(p) for p in MODULES}


#: Modules outside hetlab.book that may import it, with the reason.
ENTRY_POINTS = {"hetlab.__main__": "``python -m hetlab`` is the book's command line (grade, edition, quiz, ...)"}


def test_nothing_outside_book_imports_book():
    offenders = {m: sorted(filter(in_book, deps)) for m, deps in GRAPH.items()
                 if not in_book(m) and m not in ENTRY_POINTS}
    assert {m: d for m, d in offenders.items() if d} == {}


def _strings_outside_docstrings(tree: ast.AST) -> list[str]:
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings]


#: Modules outside hetlab.book allowed to hold Chinese labels, with the reason (each says so in its docstring).
LABEL_TABLES = {
    "hetlab.plotting": "figure labels with their English fallback, in one table",
}


@pytest.mark.parametrize("path", [p for p in MODULES if not in_book(dotted(p))], ids=dotted)
def test_no_chinese_sentences_outside_book(path):
    module = dotted(path)
    chinese = [s for s in _strings_outside_docstrings(ast.parse(path.read_text(encoding="utf-8"))) if CJK.search(s)]
    if module in LABEL_TABLES:
        return
    assert chinese == [], f"{module} writes Chinese; sentences belong in hetlab.book.readings"


def test_no_import_cycle():
    index, low, on_stack, stack, cycles = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in GRAPH.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            # a package's __init__ re-exporting its own submodules is not a cycle of ideas
            real = [m for m in component if not any(o.startswith(m + ".") for o in component)]
            if len(real) > 1:
                cycles.append(sorted(component))

    for v in GRAPH:
        if v not in index:
            visit(v)
    assert cycles == []


@pytest.mark.parametrize("path", MODULES, ids=dotted)
def test_no_module_over_500_lines(path):
    assert len(path.read_text(encoding="utf-8").splitlines()) <= MAX_LINES


def test_policy_keys_follow_one_convention_and_unknown_keys_name_the_valid_ones():
    from hetlab.schedulers import POLICIES

    assert all(re.fullmatch(r"[a-z][a-z0-9_]*", key) for key in POLICIES), sorted(POLICIES)
    with pytest.raises(ValueError, match="heft") as err:
        POLICIES["HEFT-but-wrong"]
    assert all(key in str(err.value) for key in POLICIES)


def test_no_widget_factory_shares_a_name_with_a_module_or_formula():
    import hetlab
    from hetlab import formulas
    from hetlab.book import views

    modules = {dotted(p).rpartition(".")[2] for p in MODULES}
    clashes = {name for name in dir(views) if name in modules or name in formulas.__all__ or name in hetlab.__all__}
    assert clashes == set()
