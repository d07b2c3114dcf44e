"""The student edition of chosen chapters, and a grading key, without nbgrader.

``make_student_edition`` copies chapters with every ``### BEGIN SOLUTION`` ... ``### END SOLUTION``
region replaced by a stub, hidden tests removed, outputs and saved widget state cleared, and quiz
answers taken out: the quiz widgets read a ``questions.json`` beside the notebooks that has no answers,
and an answer-sheet cell collects the learner's letters. Everything needed to grade (answers, hidden
tests, points) goes into a key that the instructor keeps; :func:`hetlab.book.grading.grade` scores a
submission with it.

The markers are checked first, as nbgrader does (:func:`check_markers`): a marker with a typo, a
region without its end, a solution region outside a solution cell, hidden tests outside a test cell,
or a solution in a markdown cell refuses the whole edition, naming the notebook and the cell, so a
typo can never leave a solution in the learners' files.

The key (version 2) holds, per question, its type, letters and answer; per exercise, the whole test
cell, the instructor's import statements before it (``imports``), the names the solution cells bind
(``asks``: the only names taken from the student) and the instructor's statements that define any
other name the tests use (``given``).
"""
from __future__ import annotations

import ast
import builtins
import json
import os
import re
import stat
import tempfile
import warnings
from collections.abc import Mapping
from pathlib import Path

from hetlab._validate import check_bool, check_int, check_sequence, check_str, describe

__all__ = ["make_student_edition", "check_edition_paths", "check_markers", "strip_solutions", "split_hidden_tests"]

STUB = "# 在这里写你的代码\nraise NotImplementedError()"
SOLUTION = re.compile(r"^([ \t]*)### BEGIN SOLUTION[ \t]*\r?\n.*?^[ \t]*### END SOLUTION[ \t]*\r?(\n|$)", re.S | re.M)
HIDDEN = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS[ \t]*\r?\n(.*?)^[ \t]*### END HIDDEN TESTS[ \t]*\r?(\n|$)",
                    re.S | re.M)
#: Anything that looks like a marker; each must be one of the four exact markers below.
LOOSE_MARKER = re.compile(r"#+\s*(begin|end)\s*(solution|hidden\s*tests?)\b", re.I)
EXACT_MARKER = re.compile(r"[ \t]*### (BEGIN|END) (SOLUTION|HIDDEN TESTS)[ \t]*\r?")
QUIZ_CALL = re.compile(r"quiz\.(quiz|render_text|ask)\(([^()]*)\)")
BANK_NAME = "questions.json"
MAX_NOTEBOOK_BYTES = 32 * 2**20
MAX_SOURCE_CHARS = 4 * 2**20
MAX_KEY_BYTES = 32 * 2**20


def strip_solutions(source: str) -> str:
    """Replace each solution region by a stub at the region's indentation."""
    check_str("source", source, empty=True)

    def stub(match: re.Match) -> str:
        indent = match.group(1)
        return "".join(f"{indent}{line}\n" for line in STUB.splitlines())

    return SOLUTION.sub(stub, source).rstrip("\n")


def split_hidden_tests(source: str) -> tuple[str, str]:
    """(the visible tests, the hidden tests) of a test cell."""
    check_str("source", source, empty=True)
    hidden = "\n".join(m.group(1).rstrip("\n") for m in HIDDEN.finditer(source))
    return HIDDEN.sub("", source).rstrip("\n"), hidden


def _nbgrader(cell) -> dict:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}


def check_markers(cell, where: str) -> None:
    """ValueError naming ``where`` unless the cell's solution and hidden-test markers are exact, paired, and
    in the right kind of cell (a solution region in a code cell marked ``solution``, hidden tests in one
    marked ``grade``). Mirrors nbgrader, which also refuses unmatched markers and stray regions."""
    if not isinstance(cell, Mapping) or not isinstance(cell.get("source", ""), str):
        raise TypeError(f"cell must be a notebook cell (a dict with a source), got {describe(cell)}")
    check_str("where", where)
    meta = _nbgrader(cell)
    source = str(cell.get("source", ""))
    if cell.get("cell_type") != "code":
        if meta.get("solution") or LOOSE_MARKER.search(source):
            raise ValueError(f"{where}: a solution or hidden tests in a {cell.get('cell_type')} cell; the student "
                             "edition hides only code cells (put them in a code cell, or use nbgrader)")
        return
    opened = None
    for number, line in enumerate(source.split("\n"), 1):
        if not LOOSE_MARKER.search(line):
            continue
        exact = EXACT_MARKER.fullmatch(line)
        if not exact:
            raise ValueError(f"{where}, line {number}: marker typo {line.strip()[:60]!r}; write exactly "
                             "### BEGIN SOLUTION, ### END SOLUTION, ### BEGIN HIDDEN TESTS or ### END HIDDEN TESTS")
        edge, region = exact.groups()
        if edge == "BEGIN":
            if opened:
                raise ValueError(f"{where}, line {number}: ### BEGIN {region} inside an open {opened} region")
            if region == "SOLUTION" and not meta.get("solution"):
                raise ValueError(f"{where}: a solution region in a cell that is not a solution cell "
                                 "(nbgrader metadata solution: true)")
            if region == "HIDDEN TESTS" and not meta.get("grade"):
                raise ValueError(f"{where}: hidden tests in a cell that is not a test cell "
                                 "(nbgrader metadata grade: true)")
            opened = region
        elif opened != region:
            raise ValueError(f"{where}, line {number}: ### END {region} without ### BEGIN {region}")
        else:
            opened = None
    if opened:
        raise ValueError(f"{where}: ### BEGIN {opened} without ### END {opened}")


# --- reading files without trusting them -----------------------------------------------------------

def read_regular(path: str | os.PathLike, limit: int, what: str, error: type[ValueError] = ValueError) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes; ``error`` naming ``what``
    otherwise. A FIFO or a device is refused without being read (opened non-blocking, checked by fstat)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise error(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file (a FIFO, device or socket)"
            raise error(f"{what} must be a regular file, got {path}, which is {kind}")
        if info.st_size > limit:
            raise error(f"{what} must be at most {limit // 2**20} MiB, got {path} of {info.st_size / 2**20:.0f} MiB")
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(limit + 1)
        if len(data) > limit:
            raise error(f"{what} must be at most {limit // 2**20} MiB, got {path}, which grew while being read")
        return data
    except OSError as exc:
        raise error(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def read_notebook(path: str | os.PathLike, what: str, error: type[ValueError] = ValueError):
    """A notebook (nbformat 3 or 4, as version 4) from a bounded regular file, without its outputs;
    ``error`` with one line that never quotes the file's content."""
    import nbformat

    data = read_regular(path, MAX_NOTEBOOK_BYTES, what, error)
    try:
        nb = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise error(f"{what} {path} is not a notebook (not UTF-8 text)") from None
    except json.JSONDecodeError as exc:
        raise error(f"{what} {path} is not a notebook (not JSON: line {exc.lineno}, column {exc.colno})") from None
    except (ValueError, RecursionError):
        raise error(f"{what} {path} is not a notebook (JSON nested too deeply)") from None
    version = nb.get("nbformat") if isinstance(nb, dict) else None
    if type(version) is not int or version not in (3, 4):
        raise error(f"{what} {path} is not a notebook of nbformat 3 or 4 (nbformat: {str(version)[:20]})")
    cells = nb.get("cells") if version == 4 else [c for w in nb.get("worksheets") or [] if isinstance(w, dict)
                                                     for c in w.get("cells") or []]
    if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
        raise error(f"{what} {path} is not a notebook (its cells are not a list of cells)")
    size = 0
    for cell in cells:
        cell.pop("outputs", None)          # never needed, and the largest part of a saved notebook
        cell.pop("attachments", None)
        source = cell.get("source" if version == 4 else "input", "")
        pieces = source if isinstance(source, list) else [source]
        size += sum(len(p) if isinstance(p, str) else MAX_SOURCE_CHARS for p in pieces) + len(pieces)
        if size > MAX_SOURCE_CHARS:
            raise error(f"{what} {path} holds more than {MAX_SOURCE_CHARS // 2**20} MiB of cell source")
        if version == 4 and cell.get("cell_type") == "code":
            cell["outputs"] = []
    from traitlets.log import get_logger

    log = get_logger()
    disabled, log.disabled = getattr(log, "disabled", False), True    # its messages quote the content
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")                               # e.g. cells without ids (nbformat 4.5)
            return nbformat.reads(json.dumps(nb), as_version=4, capture_validation_error={})
    except Exception as exc:   # nbformat raises several kinds
        raise error(f"{what} {path} is not a valid notebook ({type(exc).__name__})") from None
    finally:
        log.disabled = disabled


def chapter_of(name: str) -> int | None:
    """The chapter a notebook's file name gives (``04-granularity.ipynb`` -> 4), None without one."""
    match = re.match(r"([0-9]+)-", name)
    return int(match.group(1)) if match else None


# --- what an exercise needs: names read from the instructor's cells ---------------------------------

def free_names(source: str) -> list[str]:
    """Names ``source`` reads but never binds (nor are builtins): what a test needs from outside."""
    tree = ast.parse(source)
    bound, loaded = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (bound.add(node.id) if isinstance(node.ctx, (ast.Store, ast.Del)) else loaded.append(node.id))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return sorted({n for n in loaded if n not in bound and not hasattr(builtins, n)})


def top_level_names(source: str) -> tuple[list[str], list[str]]:
    """(names bound by top-level statements other than imports, the import statements as source)."""
    tree = ast.parse(source)
    names, imports = [], []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.append(ast.unparse(node))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        else:
            names += [n.id for t in getattr(node, "targets", [getattr(node, "target", None)]) if t is not None
                      for n in ast.walk(t) if isinstance(n, ast.Name)]
    return names, imports


def statements(source: str) -> list[tuple[list[str], str]]:
    """(names bound, source) of each top-level statement of ``source`` that binds names, imports aside
    ([] for a source that does not parse)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    out = []
    for node in tree.body:
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            names, _ = top_level_names(ast.unparse(node))
            if names:
                out.append((names, ast.unparse(node)))
    return out


def imported(imports: str) -> set[str]:
    """The names a block of import statements binds."""
    try:
        tree = ast.parse(imports)
    except SyntaxError:
        return set()
    return {(a.asname or a.name).split(".")[0] for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))
            for a in n.names}


def python_source(source: str) -> str:
    """A cell's source with IPython magics turned into Python, for reading its definitions."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        return TransformerManager().transform_cell(source)
    except ImportError:
        return source


def _bindings(source: str) -> tuple[list[str], list[str]]:
    """(top-level names a cell binds other than by import, its import statements); IPython magics allowed."""
    try:
        return top_level_names(python_source(source))
    except SyntaxError:
        return [], []


def _given(tests: str, definitions: dict, asks: list[str], imports: list[str]) -> str:
    """The instructor's statements (in notebook order) that define what ``tests`` needs besides the
    student's names and the imports, with what those statements need in turn."""
    names_imported = imported("\n".join(imports))

    def wanted(source: str) -> list[str]:
        try:
            return [n for n in free_names(source) if n not in asks and n not in names_imported and n in definitions]
        except SyntaxError:
            return []

    chosen, stack = {}, wanted(tests)
    while stack:
        name = stack.pop()
        order, statement = definitions[name]
        if order not in chosen:
            chosen[order] = statement
            stack += wanted(statement)
    return "\n".join(statement for _, statement in sorted(chosen.items()))


# --- writing the edition -----------------------------------------------------------------------------

def _answer_sheet(chapter: int, ids: list[str]):
    from nbformat.v4 import new_code_cell

    lines = ["# 答题卡：在引号中填入所选选项的字母（多选题填多个，如 \"AC\"），保存后提交。", "answers = {"]
    lines += [f'    "{qid}": "",' for qid in ids]
    lines.append("}")
    return new_code_cell("\n".join(lines), metadata={"tags": ["answer-sheet"], "hetlab": {"chapter": chapter}})


def student_bank(chapters: list[int]) -> list[dict]:
    """The answer-free question items of ``chapters`` (the edition's ``questions.json``)."""
    from hetlab.book.bank import answer_free_items

    return answer_free_items(chapters)


def _atomic_write(path: Path, text: str, what: str) -> None:
    """Write ``text`` to ``path`` so that a reader sees the old file or the whole new one, never a part;
    ValueError naming ``what`` when the place cannot be written (full disk, /proc, no permission)."""
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        if tmp and os.path.exists(tmp):
            os.unlink(tmp)
        raise ValueError(f"{what} must be a writable place, got {path} ({exc.strerror or exc})") from None


def _is_key_file(path: Path) -> bool:
    try:
        data = json.loads(read_regular(path, MAX_KEY_BYTES, "key").decode("utf-8"))
    except (ValueError, RecursionError):
        return False
    return isinstance(data, dict) and data.get("version") in (1, 2) and "exercises" in data


def check_edition_paths(out_dir: str | Path, source: str | Path, key: str | Path | None = None, *,
                        force: bool = False) -> None:
    """Refuse an output folder that would damage the instructor's files (ValueError naming the parameter).

    ``out_dir`` may never be ``source`` or a folder that contains it (the book would be overwritten by
    stubs); it may be inside ``source`` or a non-empty folder only with ``force``. ``key`` may not lie
    in ``out_dir`` (learners would receive the answers) nor in ``source`` (which is shared or published
    with the book), its folder must exist, and it may overwrite only an old grading key unless ``force``.
    """
    for name, value in (("out_dir", out_dir), ("source", source), ("key", key)):
        if not (isinstance(value, (str, os.PathLike)) and str(value)) and not (name == "key" and value is None):
            raise TypeError(f"{name} must be a folder or file path, got {describe(value)}")
    check_bool("force", force)
    out, src = Path(out_dir).resolve(), Path(source).resolve()
    if out == src:
        raise ValueError(f"out_dir must not be the source folder (the solutions would be overwritten), got {out_dir}")
    if out in src.parents:
        raise ValueError(f"out_dir must not contain the source folder {source}, got {out_dir}")
    if out.exists() and not out.is_dir():
        raise ValueError(f"out_dir must be a folder, got the file {out_dir}")
    if not force:
        if src in out.parents:
            raise ValueError(f"out_dir must be outside the source folder {source} (or pass --force), got {out_dir}")
        if out.is_dir() and any(out.iterdir()):
            raise ValueError(f"out_dir must be a new or empty folder (or pass --force), got {out_dir}, which has files")
    if key is not None:
        key_path = Path(key).resolve()
        if out == key_path or out in key_path.parents:
            raise ValueError(f"key must be outside out_dir, or learners receive the answers, got {key}")
        if src == key_path or src in key_path.parents:
            raise ValueError(f"key must be outside the source folder {source}, which is shared with the book, "
                             f"got {key}")
        if key_path.exists() and not key_path.is_file():     # a folder, /dev/full, a FIFO: never replaced
            raise ValueError(f"key must be a regular file path, got {key}, which is a folder or a special file")
        if not key_path.parent.is_dir():
            raise ValueError(f"key must be in an existing folder, got {key} ({key_path.parent} does not exist)")
        if key_path.exists() and not force and not _is_key_file(key_path):
            raise ValueError(f"key must be a new file or an old grading key (or pass --force), got {key}")


def _chapter_files(source: Path, chapters: list[int] | None) -> dict[int, Path]:
    paths = sorted(source.glob("[0-9][0-9]-*.ipynb"))
    if not paths:
        raise ValueError(f"source must hold the chapter notebooks, found none in {source}")
    available: dict[int, Path] = {}
    for path in paths:
        number = chapter_of(path.name)
        if number in available:
            raise ValueError(f"source must hold one notebook per chapter, got {available[number].name} and "
                             f"{path.name} for chapter {number}")
        available[number] = path
    chosen = sorted(available) if chapters is None else sorted(set(chapters))
    unknown = [c for c in chosen if c not in available]
    if unknown:
        raise ValueError(f"chapters must be among {sorted(available)}, got {unknown}")
    return {c: available[c] for c in chosen}


def _edition_of(chapter: int, path: Path, answer_key: dict) -> str:
    """The student notebook of one chapter, as text; its questions and exercises go into ``answer_key``."""
    import nbformat

    from hetlab.book.quiz import questions

    nb = read_notebook(path, "source notebook")
    for index, cell in enumerate(nb.cells, 1):
        gid = _nbgrader(cell).get("grade_id")
        check_markers(cell, f"{path.name} cell {index}" + (f" ({gid})" if gid else ""))
    ids = [q.id for q in questions(chapter)]
    for q in questions(chapter):
        answer_key["questions"][q.id] = {"chapter": chapter, "type": q.type, "letters": "".join(q.letters),
                                         "answer": "".join(sorted(q.key()[0]))}
    cells, imports, asks, definitions, sequence = [], [], [], {}, 0
    for cell in nb.cells:
        meta = _nbgrader(cell)
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            names, cell_imports = _bindings(cell.source)
            imports += [i for i in cell_imports if i not in imports]
            if meta.get("solution"):
                asks += [n for n in names if n not in asks]
                for name in names:          # from here on the student's value counts, not the book's
                    definitions.pop(name, None)
                # A solution cell without markers is all solution (as in nbgrader): the whole cell is the stub.
                cell.source = strip_solutions(cell.source) if SOLUTION.search(cell.source) else STUB
            if meta.get("grade"):
                visible, _ = split_hidden_tests(cell.source)   # the key keeps the whole cell
                # Grading runs the tests on the names the solution cells bind (the student's), with
                # every library name taken from the instructor's own imports and every helper or given
                # value from the instructor's own cells (see grading.grade): the student cannot redefine them.
                answer_key["exercises"][meta["grade_id"]] = {
                    "chapter": chapter, "points": meta.get("points", 0), "tests": cell.source,
                    "imports": "\n".join(imports), "asks": asks,
                    "given": _given(cell.source, definitions, asks, imports)}
                asks = []
                cell.source = visible
            if not meta.get("solution"):
                for bound, statement in statements(python_source(cell.source)):
                    sequence += 1
                    definitions.update({name: (sequence, statement) for name in bound})
            cell.source = QUIZ_CALL.sub(lambda m: f'quiz.{m.group(1)}({m.group(2)}, bank="{BANK_NAME}")',
                                        cell.source)
        cells.append(cell)
        if cell.cell_type == "code" and f"quiz.quiz({chapter}" in cell.source:
            cells.append(_answer_sheet(chapter, ids))
    nb.cells = cells
    # Saved widget state would carry computed answers (chapter 3's holds quiz c03-1's); with the outputs
    # cleared no view refers to it any more, so none of it is kept.
    nb.metadata.pop("widgets", None)
    nb.metadata["hetlab"] = {"chapter": chapter, "edition": "student"}
    return nbformat.writes(nb)


def make_student_edition(out_dir: str | Path, chapters: list[int] | None = None, *,
                         source: str | Path = "chapters", key: str | Path | None = None,
                         force: bool = False) -> dict:
    """Write the student edition of ``chapters`` (default all) from ``source`` into ``out_dir``;
    return the grading key (answers, hidden tests, points), which is *not* written there.

    With ``key`` (a file path) the key is written first, atomically, so that no edition exists
    without its key. The paths are checked first (:func:`check_edition_paths`): the command never
    overwrites the book, and writes into a non-empty folder only with ``force``. Every chosen
    notebook is read and checked (:func:`check_markers`) before anything is written.
    """
    if chapters is not None:
        chapters = [check_int("chapters", c, low=1, high=99) for c in check_sequence("chapters", chapters)]
    check_edition_paths(out_dir, source, key, force=force)
    source, out_dir = Path(source), Path(out_dir)
    files = _chapter_files(source, chapters)
    answer_key: dict = {"version": 2, "chapters": sorted(files), "questions": {}, "exercises": {}}
    notebooks = {path.name: _edition_of(chapter, path, answer_key) for chapter, path in files.items()}
    bank = json.dumps(student_bank(sorted(files)), ensure_ascii=False, indent=1) + "\n"
    if key is not None:   # nothing has been written to out_dir yet
        _atomic_write(Path(key), json.dumps(answer_key, ensure_ascii=False, indent=1) + "\n", "key")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"out_dir must be a folder that can be created, got {out_dir} "
                         f"({exc.strerror or exc})") from None
    for name, text in notebooks.items():
        _atomic_write(out_dir / name, text, "out_dir")
    _atomic_write(out_dir / BANK_NAME, bank, "out_dir")
    return answer_key
