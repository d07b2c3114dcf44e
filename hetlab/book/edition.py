"""Instructor tools without nbgrader: a student edition of chosen chapters, and grading.

``make_student_edition`` copies chapters with every ``### BEGIN SOLUTION`` ... ``### END SOLUTION``
region replaced by a stub, hidden tests removed, outputs cleared, and quiz answers taken out:
the quiz widgets read a ``questions.json`` beside the notebooks that has no answers, and an
answer-sheet cell collects the learner's letters. Everything needed to grade (answers, hidden
tests, points) goes into a key that the instructor keeps; ``grade`` scores a submission with it.

The key (version 2) holds, per question, its type, letters and answer; per exercise, the whole test
cell, the instructor's import statements before it (``imports``), the names the solution cells bind
(``asks``: the only names taken from the student) and the instructor's statements that define any
other name the tests use (``given``). ``grade`` runs the tests outside the student's kernel
(:mod:`hetlab.book._sandbox`), so the student's code can neither silence nor fake them.
"""
from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from hetlab._validate import check_bool, check_choice, check_int, check_nonnegative, check_sequence, check_str, describe

__all__ = ["make_student_edition", "check_edition_paths", "grade", "GradeReport", "GradeItem", "GradingError",
           "strip_solutions", "split_hidden_tests"]

STUB = "# 在这里写你的代码\nraise NotImplementedError()"
SOLUTION = re.compile(r"^([ \t]*)### BEGIN SOLUTION[^\n]*\n.*?^[ \t]*### END SOLUTION[^\n]*(\n|$)", re.S | re.M)
HIDDEN = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS[^\n]*\n(.*?)^[ \t]*### END HIDDEN TESTS[^\n]*(\n|$)", re.S | re.M)
QUIZ_CALL = re.compile(r"quiz\.(quiz|render_text|ask)\(([^()]*)\)")
BANK_NAME = "questions.json"


class GradingError(ValueError):
    """The submission or the key is malformed."""


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
    return cell.get("metadata", {}).get("nbgrader", {})


def _chapter_of(path: Path) -> int:
    match = re.match(r"(\d+)-", path.name)
    if not match:
        raise GradingError(f"cannot tell the chapter of {path.name}: expected a name like 04-granularity.ipynb")
    return int(match.group(1))


def _answer_sheet(chapter: int, ids: list[str]):
    from nbformat.v4 import new_code_cell

    lines = ["# 答题卡：在引号中填入所选选项的字母（多选题填多个，如 \"AC\"），保存后提交。", "answers = {"]
    lines += [f'    "{qid}": "",' for qid in ids]
    lines.append("}")
    return new_code_cell("\n".join(lines), metadata={"tags": ["answer-sheet"], "hetlab": {"chapter": chapter}})


def _bindings(source: str) -> tuple[list[str], list[str]]:
    """(top-level names a cell binds other than by import, its import statements); IPython magics allowed."""
    from hetlab.book._sandbox import top_level_names

    try:
        from IPython.core.inputtransformer2 import TransformerManager

        source = TransformerManager().transform_cell(source)
    except ImportError:
        pass
    try:
        return top_level_names(source)
    except SyntaxError:
        return [], []


def _python_source(cell) -> str:
    """A given or test cell's source, magics turned into Python, for reading its definitions."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        return TransformerManager().transform_cell(cell.source)
    except ImportError:
        return cell.source


def _statements(source: str) -> list[tuple[list[str], str]]:
    from hetlab.book._sandbox import top_level_statements

    try:
        return top_level_statements(source)
    except SyntaxError:
        return []


def _given(tests: str, definitions: dict, asks: list[str], imports: list[str]) -> str:
    """The instructor's statements (in notebook order) that define what ``tests`` needs besides the
    student's names and the imports, with what those statements need in turn."""
    from hetlab.book._sandbox import free_names

    imported = _imported("\n".join(imports))

    def wanted(source: str) -> list[str]:
        try:
            return [n for n in free_names(source) if n not in asks and n not in imported and n in definitions]
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


def _student_bank(chapters: list[int]) -> list[dict]:
    from hetlab.book.bank import answer_free_items

    return answer_free_items(chapters)


def _atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a reader sees the old file or the whole new one, never a part."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _is_key_file(path: Path) -> bool:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(data, dict) and data.get("version") in (1, 2) and "exercises" in data


def check_edition_paths(out_dir: str | Path, source: str | Path, key: str | Path | None = None, *,
                        force: bool = False) -> None:
    """Refuse an output folder that would damage the instructor's files (ValueError naming the parameter).

    ``out_dir`` may never be ``source`` or a folder that contains it (the book would be overwritten by
    stubs); it may be inside ``source`` or a non-empty folder only with ``force``. ``key`` may not lie
    in ``out_dir`` (learners would receive the answers), nor overwrite a file that is not a grading key
    unless ``force``.
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
        if key_path.is_dir():
            raise ValueError(f"key must be a file path, got the folder {key}")
        if src in key_path.parents and key_path.suffix == ".ipynb":
            raise ValueError(f"key must not be a notebook of the source folder, got {key}")
        if key_path.exists() and not force and not _is_key_file(key_path):
            raise ValueError(f"key must be a new file or an old grading key (or pass --force), got {key}")


def make_student_edition(out_dir: str | Path, chapters: list[int] | None = None, *,
                         source: str | Path = "chapters", key: str | Path | None = None,
                         force: bool = False) -> dict:
    """Write the student edition of ``chapters`` (default all) from ``source`` into ``out_dir``;
    return the grading key (answers, hidden tests, points), which is *not* written there.

    With ``key`` (a file path) the key is written first, atomically, so that no edition exists
    without its key. The paths are checked first (:func:`check_edition_paths`): the command never
    overwrites the book, and writes into a non-empty folder only with ``force``.
    """
    import nbformat

    from hetlab.book.quiz import questions

    if chapters is not None:
        chapters = [check_int("chapters", c, low=1, high=99) for c in check_sequence("chapters", chapters)]
    check_edition_paths(out_dir, source, key, force=force)
    source, out_dir = Path(source), Path(out_dir)
    paths = sorted(source.glob("[0-9][0-9]-*.ipynb"))
    if not paths:
        raise ValueError(f"source must hold the chapter notebooks, found none in {source}")
    available = {_chapter_of(p): p for p in paths}
    chosen = sorted(available) if chapters is None else sorted(set(chapters))
    unknown = [c for c in chosen if c not in available]
    if unknown:
        raise ValueError(f"chapters must be among {sorted(available)}, got {unknown}")
    answer_key: dict = {"version": 2, "chapters": chosen, "questions": {}, "exercises": {}}
    notebooks = {}
    for chapter in chosen:   # everything is built in memory first: a failure here writes nothing
        nb = nbformat.read(available[chapter], as_version=4)
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
                    cell.source = strip_solutions(cell.source)
                if meta.get("grade"):
                    visible, _ = split_hidden_tests(cell.source)   # the key keeps the whole cell
                    # Grading runs the tests on the names the solution cells bind (the student's), with
                    # every library name taken from the instructor's own imports and every helper or given
                    # value from the instructor's own cells (see grade()): the student cannot redefine them.
                    answer_key["exercises"][meta["grade_id"]] = {
                        "chapter": chapter, "points": meta.get("points", 0), "tests": cell.source,
                        "imports": "\n".join(imports), "asks": asks,
                        "given": _given(cell.source, definitions, asks, imports)}
                    asks = []
                    cell.source = visible
                if not meta.get("solution"):
                    for bound, statement in _statements(_python_source(cell)):
                        sequence += 1
                        definitions.update({name: (sequence, statement) for name in bound})
                cell.source = QUIZ_CALL.sub(lambda m: f'quiz.{m.group(1)}({m.group(2)}, bank="{BANK_NAME}")',
                                            cell.source)
            cells.append(cell)
            if cell.cell_type == "code" and f"quiz.quiz({chapter}" in cell.source:
                cells.append(_answer_sheet(chapter, ids))
        nb.cells = cells
        nb.metadata["hetlab"] = {"chapter": chapter, "edition": "student"}
        notebooks[available[chapter].name] = nbformat.writes(nb)
    if key is not None:
        try:
            Path(key).parent.mkdir(parents=True, exist_ok=True)
            _atomic_write(Path(key), json.dumps(answer_key, ensure_ascii=False, indent=1) + "\n")
        except OSError as exc:   # nothing has been written to out_dir yet
            raise ValueError(f"key must be a writable file path, got {key} ({exc.strerror or exc})") from None
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, text in notebooks.items():
        _atomic_write(out_dir / name, text)
    _atomic_write(out_dir / BANK_NAME, json.dumps(_student_bank(chosen), ensure_ascii=False, indent=1) + "\n")
    return answer_key


@dataclass(frozen=True)
class GradeItem:
    """One graded item: a quiz question or an exercise."""

    id: str
    kind: str          # "question" or "exercise"
    score: float
    max_score: float
    status: str        # question: correct | wrong | unanswered | invalid; exercise: passed | failed | error |
    message: str = ""  # timeout | died

    def __post_init__(self) -> None:
        check_str("id", self.id)
        check_choice("kind", self.kind, ("question", "exercise"))
        check_nonnegative("max_score", self.max_score)
        if check_nonnegative("score", self.score) > self.max_score:
            raise ValueError(f"score must be in [0, max_score] = [0, {self.max_score:g}], got {self.score:g}")
        check_str("status", self.status)
        check_str("message", self.message, empty=True)


@dataclass
class GradeReport:
    """Per-item scores of one submission; :meth:`text`, :meth:`to_dict` (for ``--json``) and :meth:`csv`."""

    submission: str
    items: list[GradeItem] = field(default_factory=list)

    def __post_init__(self) -> None:
        check_str("submission", self.submission)
        if not isinstance(self.items, list) or not all(isinstance(i, GradeItem) for i in self.items):
            raise TypeError(f"items must be a list of GradeItem, got {describe(self.items)}")

    @property
    def score(self) -> float:
        return sum(item.score for item in self.items)

    @property
    def max_score(self) -> float:
        return sum(item.max_score for item in self.items)

    @property
    def rows(self) -> list[tuple[str, str, float, float, str]]:
        """(item, kind, score, max, note) per item."""
        return [(i.id, i.kind, i.score, i.max_score, i.message or ("" if i.status in ("correct", "wrong", "passed")
                                                                    else i.status)) for i in self.items]

    def text(self) -> str:
        lines = [f"{self.submission}", f"{'item':<16}{'kind':<10}{'score':>7}{'max':>6}  {'status':<11}note"]
        lines += [f"{i.id:<16}{i.kind:<10}{i.score:>7g}{i.max_score:>6g}  {i.status:<11}{i.message}"
                  for i in self.items]
        lines.append(f"{'total':<26}{self.score:>7g}{self.max_score:>6g}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """``{"score", "max_score", "items": [{"id", "kind", "score", "max_score", "status", "message"}]}``."""
        return {"score": self.score, "max_score": self.max_score,
                "items": [{"id": i.id, "kind": i.kind, "score": i.score, "max_score": i.max_score,
                           "status": i.status, "message": i.message} for i in self.items]}

    def csv(self) -> str:
        """One row per item, with the submission's name, for a spreadsheet or an LMS."""
        import csv
        import io

        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(["submission", "id", "kind", "score", "max_score", "status", "message"])
        for i in self.items:
            writer.writerow([self.submission, i.id, i.kind, f"{i.score:g}", f"{i.max_score:g}", i.status, i.message])
        return buffer.getvalue()


def _key_error(where: str, expected: str, got) -> GradingError:
    return GradingError(f"key is malformed: {where} must be {expected}, got {str(repr(got))[:60]}")


def _load_key(key) -> dict:
    """The key, checked field by field, so a damaged key gives one clear line instead of a traceback."""
    if isinstance(key, (str, Path)):
        try:
            key = json.loads(Path(key).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise GradingError(f"cannot read key {key}: {exc}") from None
    if not isinstance(key, dict) or key.get("version") not in (1, 2) or "exercises" not in key:
        raise GradingError("key is not a hetlab grading key (written by `python -m hetlab student-edition`)")
    chapters = key.get("chapters")
    if not isinstance(chapters, list) or not all(type(c) is int for c in chapters):
        raise _key_error("chapters", "a list of chapter numbers", chapters)
    for part in ("questions", "exercises"):
        if not isinstance(key.get(part), dict):
            raise _key_error(part, "an object", key.get(part))
    for qid, item in key["questions"].items():
        if not isinstance(item, dict):
            raise _key_error(f"questions[{qid!r}]", "an object", item)
        if type(item.get("chapter")) is not int:
            raise _key_error(f"questions[{qid!r}].chapter", "a chapter number", item.get("chapter"))
        if item.get("type") not in ("single", "multiple"):
            raise _key_error(f"questions[{qid!r}].type", "'single' or 'multiple'", item.get("type"))
        for name in ("answer", "letters") if key["version"] == 2 else ("answer",):
            value = item.get(name)
            if not (isinstance(value, str) and value and value.isalpha() and value.isupper()):
                raise _key_error(f"questions[{qid!r}].{name}", "capital letters", value)
    for gid, item in key["exercises"].items():
        if not isinstance(item, dict):
            raise _key_error(f"exercises[{gid!r}]", "an object", item)
        if type(item.get("chapter")) is not int:
            raise _key_error(f"exercises[{gid!r}].chapter", "a chapter number", item.get("chapter"))
        points = item.get("points")
        if isinstance(points, bool) or not isinstance(points, (int, float)) or not 0 <= points < float("inf"):
            raise _key_error(f"exercises[{gid!r}].points", "a number >= 0", points)
        if not isinstance(item.get("tests"), str):
            raise _key_error(f"exercises[{gid!r}].tests", "the test cell's source", item.get("tests"))
        if key["version"] == 2:
            if not isinstance(item.get("imports"), str):
                raise _key_error(f"exercises[{gid!r}].imports", "import statements", item.get("imports"))
            if not isinstance(item.get("given", ""), str):
                raise _key_error(f"exercises[{gid!r}].given", "the instructor's statements", item.get("given"))
            asks = item.get("asks")
            if not isinstance(asks, list) or not all(isinstance(a, str) and a.isidentifier() for a in asks):
                raise _key_error(f"exercises[{gid!r}].asks", "a list of names", asks)
    return key


def _read_answers(nb) -> tuple[dict, str]:
    """(the answer sheet's ``answers``, "") or ({}, why it cannot be read). Never executes the cell."""
    sheets = [c for c in nb.cells if c.get("cell_type") == "code"
              and "answer-sheet" in (c.get("metadata", {}).get("tags") or [])]
    if len(sheets) != 1:
        return {}, f"the submission must have exactly one answer-sheet cell, found {len(sheets)}"
    try:
        tree = ast.parse(str(sheets[0].source))
        assign = next(n for n in tree.body if isinstance(n, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "answers" for t in n.targets))
        answers = ast.literal_eval(assign.value)
    except (SyntaxError, StopIteration, ValueError, TypeError, RecursionError, MemoryError):
        return {}, "the answer sheet must assign a dict literal to `answers`"
    if not isinstance(answers, dict):
        return {}, "the answer sheet's `answers` must be a dict of question id -> letters"
    return answers, ""


def _grade_question(qid: str, item: dict, answers: dict, sheet_problem: str) -> GradeItem:
    from hetlab.book.quiz import Question, question

    if sheet_problem:
        return GradeItem(qid, "question", 0.0, 1.0, "invalid", sheet_problem)
    given = answers.get(qid, "")
    if given in ("", [], ()):
        return GradeItem(qid, "question", 0.0, 1.0, "unanswered")
    if not (isinstance(given, str) or (isinstance(given, (list, tuple)) and all(isinstance(g, str) for g in given))):
        return GradeItem(qid, "question", 0.0, 1.0, "invalid",
                         f"the answer must be letters in quotes, such as \"B\", got {str(repr(given))[:40]}")
    try:
        q = (Question(qid, item["chapter"], item["type"], "", tuple(item["letters"])) if "letters" in item
             else question(qid))
        chosen = "".join(sorted(q.parse(given)))
    except ValueError as exc:
        return GradeItem(qid, "question", 0.0, 1.0, "invalid", str(exc))
    right = chosen == item["answer"]
    return GradeItem(qid, "question", float(right), 1.0, "correct" if right else "wrong")


def grade(submission: str | Path, key, *, timeout: float = 60) -> GradeReport:
    """Score a submitted student notebook against ``key`` (a dict or the key file's path).

    Quiz answers are read from the answer-sheet cell as a literal (never run). The notebook's cells
    run in a Jupyter kernel, ``timeout`` seconds per cell at most; at each exercise's test cell the
    names the hidden tests need are copied out of the kernel as plain data (functions as source)
    and the tests run in a separate clean interpreter (:mod:`hetlab.book._sandbox`), so nothing the
    student's code does to its kernel can silence or fake them. A cell that ends the kernel or runs
    past ``timeout`` scores 0 for its exercise, with a message; grading carries on.
    """
    import nbformat

    from hetlab._validate import check_positive

    timeout = check_positive("timeout", timeout)
    key = _load_key(key)
    path = Path(submission)
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as exc:  # nbformat raises several kinds for a broken file
        raise GradingError(f"cannot read submission {path}: {str(exc).splitlines()[0][:200]}") from None
    meta = nb.metadata.get("hetlab") if isinstance(nb.metadata.get("hetlab"), dict) else {}
    chapter = meta.get("chapter") if type(meta.get("chapter")) is int else _chapter_of(path)
    if chapter not in key["chapters"]:
        raise GradingError(f"submission is chapter {chapter}, the key covers chapters {key['chapters']}")
    answers, sheet_problem = _read_answers(nb)
    report = GradeReport(path.name)
    for qid, item in key["questions"].items():
        if item["chapter"] == chapter:
            report.items.append(_grade_question(qid, item, answers, sheet_problem))
    graded = {gid: item for gid, item in key["exercises"].items() if item["chapter"] == chapter}
    if graded:
        for gid, verdict in _run_exercises(nb, graded, key["version"], timeout, chapter).items():
            points = float(graded[gid]["points"])
            report.items.append(GradeItem(gid, "exercise", points if verdict["status"] == "passed" else 0.0, points,
                                          verdict["status"], verdict["message"]))
    return report


def _run_exercises(nb, graded: dict, version: int, timeout: float, chapter: int) -> dict:
    """Run the submission's cells in a kernel, copy out each exercise's names, check them elsewhere."""
    from nbformat.v4 import new_code_cell

    from hetlab.book import _sandbox

    plan = []        # ("cell", index, cell) | ("extract", gid, None)
    for index, cell in enumerate(nb.cells):
        if cell.get("cell_type") != "code":
            continue
        gid = _nbgrader(cell).get("grade_id")
        if gid in graded:
            plan.append(("extract", gid, None))
            visible, _ = split_hidden_tests(graded[gid]["tests"])
            plan.append(("cell", index, new_code_cell(visible)))   # later cells may use what it defines
        elif not _nbgrader(cell).get("grade"):
            plan.append(("cell", index, new_code_cell(str(cell.source))))
    plan += [("extract", gid, None) for gid in graded if ("extract", gid, None) not in plan]   # cell deleted
    needs = {}
    for gid, item in graded.items():
        free = _sandbox.free_names(item["tests"]) if _parses(item["tests"]) else []
        imported = _imported(item.get("imports", ""))
        given = _given_names(item.get("given", ""))
        asks = set(item["asks"]) if version == 2 else set(free)
        needs[gid] = sorted(n for n in free if n in asks or (n not in imported and n not in given))
    claims, failures = _kernel_claims(plan, needs, timeout, chapter)
    verdicts = {}
    region_failure = None
    for kind, ref, _ in plan:        # a death or timeout counts against the exercise it precedes
        if kind == "cell" and ref in failures and region_failure is None:
            region_failure = failures[ref]
        if kind == "extract":
            if region_failure:
                verdicts[ref] = region_failure
            elif isinstance(claims.get(ref), str):
                verdicts[ref] = {"status": "error", "message": claims[ref]}
            else:
                item = graded[ref]
                verdicts[ref] = _sandbox.check(item["tests"], item.get("imports", ""), claims[ref]["names"],
                                               claims[ref]["support"], timeout=timeout, given=item.get("given", ""))
            region_failure = None
    return {gid: verdicts[gid] for gid in graded}


def _parses(source: str) -> bool:
    try:
        ast.parse(source)
        return True
    except SyntaxError:
        return False


def _given_names(given: str) -> set[str]:
    try:
        return {n for names, _ in _statements(given) for n in names}
    except SyntaxError:
        return set()


def _imported(imports: str) -> set[str]:
    try:
        tree = ast.parse(imports)
    except SyntaxError:
        return set()
    return {(a.asname or a.name).split(".")[0] for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))
            for a in n.names}


def _kernel_claims(plan: list, needs: dict, timeout: float, chapter: int) -> tuple[dict, dict]:
    """Execute ``plan`` in a kernel: {gid: claims or a reason}, {cell index: verdict for a dead/stuck cell}.

    After a cell ends the kernel or runs past ``timeout``, a fresh kernel replays the cells that ran
    before it (not the failed one) and goes on, so one bad cell costs only its own exercise.
    """
    from jupyter_client.kernelspec import NoSuchKernel
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError
    from nbformat.v4 import new_code_cell, new_notebook

    from hetlab.book import _sandbox

    claims, failures, done = {}, {}, []
    work = Path(tempfile.mkdtemp(prefix="hetlab-grade-"))
    position, restarts = 0, 0
    try:
        try:
            bank = _student_bank([chapter])
        except ValueError:          # grading does not need the package's bank
            bank = []
        (work / BANK_NAME).write_text(json.dumps(bank, ensure_ascii=False), encoding="utf-8")
        while position < len(plan) and restarts <= 5:
            client = NotebookClient(new_notebook(cells=[new_code_cell("")]), timeout=timeout, kernel_name="python3",
                                    allow_errors=True, shutdown_kernel="immediate",
                                    resources={"metadata": {"path": str(work)}})
            current = None
            try:
                with client.setup_kernel(stderr=subprocess.DEVNULL):   # not the kernel's log lines
                    for step in [*done, *plan[position:]]:
                        kind, ref, cell = current = step
                        if kind == "cell":
                            cell.outputs = []
                            client.execute_cell(cell, 0)
                            cell.outputs = []          # a chatty notebook must not fill the grader's memory
                        elif ref not in claims:
                            probe = new_code_cell("from hetlab.book._sandbox import extract as __hetlab_extract\n"
                                                  f"print(__hetlab_extract(get_ipython().user_ns, "
                                                  f"{json.dumps(needs[ref])}))")
                            client.execute_cell(probe, 0)
                            text = "".join(o.get("text", "") for o in probe.outputs
                                           if o.get("output_type") == "stream" and o.get("name") == "stdout")
                            try:
                                claims[ref] = _sandbox.parse_extract(text)
                            except ValueError as exc:
                                claims[ref] = str(exc)
                        if position < len(plan) and step is plan[position]:
                            done.append(step)
                            position += 1
            except (DeadKernelError, CellTimeoutError) as exc:
                if current is None:
                    raise GradingError(f"cannot start a python3 kernel to run the submission: {exc}") from None
                restarts += 1
                kind, ref, _ = current
                if kind == "extract":
                    claims[ref] = (f"reading the values took longer than {timeout:g} s"
                                   if isinstance(exc, CellTimeoutError) else "the kernel died while reading the values")
                elif isinstance(exc, CellTimeoutError):
                    failures[ref] = {"status": "timeout", "message": f"cell {ref} ran longer than {timeout:g} s"}
                else:
                    failures[ref] = {"status": "died", "message": f"the kernel died while running cell {ref} "
                                                                  "(os._exit, a crash or out of memory)"}
                if current in done:
                    done.remove(current)        # it failed on replay: leave it out from now on
                elif current is plan[position]:
                    position += 1
            except (NoSuchKernel, RuntimeError, OSError) as exc:
                raise GradingError(f"cannot run the submission in a python3 kernel: {exc}") from None
        for kind, ref, _ in plan[position:]:
            if kind == "extract":
                claims.setdefault(ref, "grading stopped: the kernel died or stalled more than 5 times")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return claims, failures
