"""Scoring a submitted student notebook with the key written by :func:`hetlab.book.edition.make_student_edition`.

Quiz answers are read from the answer-sheet cell as a literal, never run. The notebook's cells run in a
Jupyter kernel (:mod:`hetlab.book._kernel`); at each exercise the names its hidden tests ask for are
copied out as plain data (functions as source), and once the kernel and every process it started have
ended, the tests run in a separate clean interpreter (:mod:`hetlab.book._sandbox`). Nothing the
submission runs can reach the verdict or the checker's names: see book/instructors.md for what holds
where, and what needs a container.
"""
from __future__ import annotations

import ast
import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from hetlab._validate import check_choice, check_int, check_nonnegative, check_positive, check_str, describe
from hetlab.book._kernel import GradingError
from hetlab.book.edition import (
    MAX_KEY_BYTES,
    chapter_of,
    free_names,
    imported,
    read_notebook,
    read_regular,
    split_hidden_tests,
    statements,
    student_bank,
)

__all__ = ["grade", "GradeReport", "GradeItem", "GradingError"]

MAX_TIMEOUT = 86_400.0
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def clean(text: str, limit: int = 300) -> str:
    """One line of at most ``limit`` characters, without control characters (a message may quote the kernel)."""
    return " ".join(CONTROL.sub(" ", str(text)).split())[:limit]


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
    """Per-item scores of one submission of one chapter; :meth:`text`, :meth:`to_dict` (``--json``), :meth:`csv`."""

    submission: str
    chapter: int
    items: list[GradeItem] = field(default_factory=list)

    def __post_init__(self) -> None:
        check_str("submission", self.submission)
        check_int("chapter", self.chapter, low=1, high=99)
        if not isinstance(self.items, list) or not all(isinstance(i, GradeItem) for i in self.items):
            raise TypeError(f"items must be a list of GradeItem, got {describe(self.items)}")

    @property
    def score(self) -> float:
        return sum(item.score for item in self.items)

    @property
    def max_score(self) -> float:
        return sum(item.max_score for item in self.items)

    def text(self) -> str:
        lines = [f"{clean(self.submission)} (chapter {self.chapter})",
                 f"{'item':<16}{'kind':<10}{'score':>7}{'max':>6}  {'status':<11}note"]
        lines += [f"{clean(i.id, 40):<16}{i.kind:<10}{i.score:>7g}{i.max_score:>6g}  {clean(i.status, 20):<11}"
                  f"{clean(i.message)}" for i in self.items]
        lines.append(f"{'total':<26}{self.score:>7g}{self.max_score:>6g}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """``{"submission", "chapter", "score", "max_score", "items": [{"id", "kind", "score", "max_score",
        "status", "message"}]}``."""
        return {"submission": self.submission, "chapter": self.chapter, "score": self.score,
                "max_score": self.max_score,
                "items": [{"id": i.id, "kind": i.kind, "score": i.score, "max_score": i.max_score,
                           "status": i.status, "message": clean(i.message)} for i in self.items]}

    def csv(self) -> str:
        """One row per item, with the submission's name and chapter, for a spreadsheet or an LMS. Every
        field is one line; one that a spreadsheet would read as a formula is prefixed with ``'``."""
        import csv
        import io

        def cell(text) -> str:
            text = clean(text, 1000)
            return "'" + text if text[:1] in ("=", "+", "-", "@") else text

        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(["submission", "chapter", "id", "kind", "score", "max_score", "status", "message"])
        for i in self.items:
            writer.writerow([cell(self.submission), self.chapter, cell(i.id), i.kind, f"{i.score:g}",
                             f"{i.max_score:g}", cell(i.status), cell(i.message)])
        return buffer.getvalue()


def _key_error(where: str, expected: str, got) -> GradingError:
    return GradingError(f"key is malformed: {where} must be {expected}, got {clean(repr(got), 60)}")


def _load_key(key) -> dict:
    """The key, checked field by field, so a damaged key gives one clear line instead of a traceback."""
    if isinstance(key, (str, Path)):
        data = read_regular(key, MAX_KEY_BYTES, "key", GradingError)
        try:
            key = json.loads(data.decode("utf-8"))
        except UnicodeDecodeError:
            raise GradingError(f"key {key} is not a grading key (not UTF-8 text)") from None
        except json.JSONDecodeError as exc:
            raise GradingError(f"key {key} is not a grading key "
                               f"(not JSON: line {exc.lineno}, column {exc.colno})") from None
        except (ValueError, RecursionError):
            raise GradingError(f"key {key} is not a grading key (JSON nested too deeply)") from None
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
                         f"the answer must be letters in quotes, such as \"B\", got {clean(repr(given), 40)}")
    try:
        q = (Question(qid, item["chapter"], item["type"], "", tuple(item["letters"])) if "letters" in item
             else question(qid))
        chosen = "".join(sorted(q.parse(given)))
    except ValueError as exc:
        return GradeItem(qid, "question", 0.0, 1.0, "invalid", clean(exc))
    right = chosen == item["answer"]
    return GradeItem(qid, "question", float(right), 1.0, "correct" if right else "wrong")


def _chapter(nb, path: Path, expected: int | None) -> int:
    """The submission's chapter: its metadata's, which its file name may not contradict, and ``expected``."""
    meta = nb.metadata.get("hetlab") if isinstance(nb.metadata.get("hetlab"), dict) else {}
    said, named = meta.get("chapter"), chapter_of(path.name)
    named = named if named is not None and 1 <= named <= 99 else None
    if said is not None and type(said) is not int:
        raise GradingError(f"submission {path.name}: its metadata hetlab.chapter must be a chapter number, "
                           f"got {clean(repr(said), 40)}")
    if said is not None and named is not None and said != named:
        raise GradingError(f"submission {path.name} is named for chapter {named} but is the notebook of chapter "
                           f"{said}; rename it or check that it is the right notebook")
    chapter = said if said is not None else named
    if chapter is None:
        raise GradingError(f"cannot tell the chapter of {path.name}: expected a name like 04-granularity.ipynb")
    if expected is not None and chapter != expected:
        raise GradingError(f"submission {path.name} is chapter {chapter}, expected chapter {expected} (--chapter)")
    return chapter


def grade(submission: str | Path, key, *, timeout: float = 60, total_timeout: float = 600,
          chapter: int | None = None) -> GradeReport:
    """Score a submitted student notebook against ``key`` (a dict or the key file's path).

    Each cell runs at most ``timeout`` seconds, the whole submission (cells and hidden tests) at most
    ``total_timeout``; ``chapter`` refuses a notebook of another chapter. A cell that ends the kernel or
    runs past ``timeout`` scores 0 for its exercise, with a message; grading carries on. For its duration
    the calling process is non-dumpable and the reaper of its orphans, and any process started below it
    meanwhile (the submission's) is ended before the hidden tests run and when grading ends.
    """
    timeout = check_positive("timeout", timeout, high=MAX_TIMEOUT)
    total_timeout = check_positive("total_timeout", total_timeout, high=7 * MAX_TIMEOUT)
    if chapter is not None:
        chapter = check_int("chapter", chapter, low=1, high=99)
    key = _load_key(key)
    path = Path(submission)
    nb = read_notebook(path, "submission", GradingError)
    chapter = _chapter(nb, path, chapter)
    if chapter not in key["chapters"]:
        raise GradingError(f"submission is chapter {chapter}, the key covers chapters {key['chapters']}")
    deadline = time.monotonic() + total_timeout
    answers, sheet_problem = _read_answers(nb)
    report = GradeReport(path.name, chapter)
    for qid, item in key["questions"].items():
        if item["chapter"] == chapter:
            report.items.append(_grade_question(qid, item, answers, sheet_problem))
    graded = {gid: item for gid, item in key["exercises"].items() if item["chapter"] == chapter}
    if graded:
        for gid, verdict in _run_exercises(nb, graded, key["version"], timeout, deadline, chapter).items():
            points = float(graded[gid]["points"])
            report.items.append(GradeItem(gid, "exercise", points if verdict["status"] == "passed" else 0.0, points,
                                          verdict["status"], clean(verdict["message"])))
    return report


def _needs(item: dict, version: int) -> list[str]:
    """The names an exercise's tests take from the submission."""
    try:
        free = free_names(item["tests"])
    except SyntaxError:
        return []
    if version == 2:
        return sorted(n for n in free if n in set(item["asks"]))
    given = {n for names, _ in statements(item.get("given", "")) for n in names}
    names_imported = imported(item.get("imports", ""))
    return sorted(n for n in free if n not in names_imported and n not in given)


def _run_exercises(nb, graded: dict, version: int, timeout: float, deadline: float, chapter: int) -> dict:
    """Run the submission's cells in a kernel, copy out each exercise's names, check them once it is gone."""
    from nbformat.v4 import new_code_cell

    from hetlab.book import _isolation, _kernel, _sandbox
    from hetlab.book.edition import _nbgrader

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
    needs = {gid: _needs(item, version) for gid, item in graded.items()}
    try:
        bank = student_bank([chapter])
    except ValueError:          # grading does not need the package's bank
        bank = []
    verdicts = {}
    with _isolation.guarded() as known:
        claims, failures = _kernel.run_plan(plan, needs, timeout=timeout, deadline=deadline, bank=bank, known=known)
        prefix = _isolation.namespace_prefix()
        region_failure = None
        for kind, ref, _ in plan:        # a death or timeout counts against the exercise it precedes
            if kind == "cell" and ref in failures and region_failure is None:
                region_failure = failures[ref]
            if kind == "extract":
                left = deadline - time.monotonic()
                if region_failure:
                    verdicts[ref] = region_failure
                elif isinstance(claims.get(ref), str):
                    over = claims[ref].startswith("grading stopped: the submission used up")
                    verdicts[ref] = {"status": "timeout" if over else "error", "message": claims[ref]}
                elif left <= 0:
                    verdicts[ref] = {"status": "timeout", "message": "grading stopped: the submission used up "
                                                                     "its total time"}
                else:
                    item = graded[ref]
                    verdicts[ref] = _sandbox.check(item["tests"], item.get("imports", ""), claims[ref]["names"],
                                                   claims[ref]["support"], asks=needs[ref], timeout=min(timeout, left),
                                                   wait=left, given=item.get("given", ""), prefix=prefix)
                    _isolation.end_tree([], orphans_of=os.getpid(), known=known)
                region_failure = None
    return {gid: verdicts[gid] for gid in graded}
