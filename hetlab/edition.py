"""Instructor tools without nbgrader: a student edition of chosen chapters, and grading.

``make_student_edition`` copies chapters with every ``### BEGIN SOLUTION`` ... ``### END SOLUTION``
region replaced by a stub, hidden tests removed, outputs cleared, and quiz answers taken out:
the quiz widgets read a ``questions.json`` beside the notebooks that has no answers, and an
answer-sheet cell collects the learner's letters. Everything needed to grade (answers, hidden
tests, points) goes into a key that the instructor keeps; ``grade`` scores a submission with it.
"""
from __future__ import annotations

import ast
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["make_student_edition", "check_edition_paths", "grade", "GradeReport", "GradingError", "strip_solutions",
           "split_hidden_tests"]

STUB = "# 在这里写你的代码\nraise NotImplementedError()"
SOLUTION = re.compile(r"^([ \t]*)### BEGIN SOLUTION[^\n]*\n.*?^[ \t]*### END SOLUTION[^\n]*(\n|$)", re.S | re.M)
HIDDEN = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS[^\n]*\n(.*?)^[ \t]*### END HIDDEN TESTS[^\n]*(\n|$)", re.S | re.M)
QUIZ_CALL = re.compile(r"quiz\.(quiz|render_text|ask)\(([^()]*)\)")
BANK_NAME = "questions.json"


class GradingError(ValueError):
    """The submission or the key is malformed."""


def strip_solutions(source: str) -> str:
    """Replace each solution region by a stub at the region's indentation."""
    def stub(match: re.Match) -> str:
        indent = match.group(1)
        return "".join(f"{indent}{line}\n" for line in STUB.splitlines())

    return SOLUTION.sub(stub, source).rstrip("\n")


def split_hidden_tests(source: str) -> tuple[str, str]:
    """(the visible tests, the hidden tests) of a test cell."""
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


def _student_bank(chapters: list[int]) -> list[dict]:
    from .quiz import questions

    return [{"id": q.id, "chapter": q.chapter, "type": q.type, "prompt": q.prompt, "options": list(q.options),
             **({"level": q.level} if q.level else {})} for q in questions() if q.chapter in chapters]


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

    from .quiz import questions

    if not isinstance(force, bool):
        raise TypeError(f"force must be True or False, got {force!r}")
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
    answer_key: dict = {"version": 1, "chapters": chosen, "questions": {}, "exercises": {}}
    notebooks = {}
    for chapter in chosen:   # everything is built in memory first: a failure here writes nothing
        nb = nbformat.read(available[chapter], as_version=4)
        ids = [q.id for q in questions(chapter)]
        for q in questions(chapter):
            answer_key["questions"][q.id] = {"chapter": chapter, "type": q.type,
                                             "answer": "".join(sorted(q.key()[0]))}
        cells = []
        for cell in nb.cells:
            meta = _nbgrader(cell)
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
                if meta.get("solution"):
                    cell.source = strip_solutions(cell.source)
                if meta.get("grade"):
                    visible, _ = split_hidden_tests(cell.source)   # the key keeps the whole cell
                    answer_key["exercises"][meta["grade_id"]] = {"chapter": chapter, "points": meta.get("points", 0),
                                                                 "tests": cell.source}
                    cell.source = visible
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


@dataclass
class GradeReport:
    """Per-item scores of one submission."""

    submission: str
    rows: list[tuple[str, str, float, float, str]] = field(default_factory=list)  # item, kind, got, max, note

    @property
    def score(self) -> float:
        return sum(r[2] for r in self.rows)

    @property
    def max_score(self) -> float:
        return sum(r[3] for r in self.rows)

    def text(self) -> str:
        lines = [f"{self.submission}", f"{'item':<16}{'kind':<10}{'score':>7}{'max':>6}  note"]
        lines += [f"{item:<16}{kind:<10}{got:>7g}{top:>6g}  {note}" for item, kind, got, top, note in self.rows]
        lines.append(f"{'total':<26}{self.score:>7g}{self.max_score:>6g}")
        return "\n".join(lines)


def _load_key(key) -> dict:
    if isinstance(key, (str, Path)):
        try:
            key = json.loads(Path(key).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise GradingError(f"cannot read key {key}: {exc}") from None
    if not isinstance(key, dict) or key.get("version") != 1 or "questions" not in key or "exercises" not in key:
        raise GradingError("key is not a hetlab grading key (written by `python -m hetlab student-edition`)")
    return key


def _read_answers(nb) -> dict:
    sheets = [c for c in nb.cells if c.cell_type == "code" and "answer-sheet" in c.get("metadata", {}).get("tags", [])]
    if len(sheets) != 1:
        raise GradingError(f"submission must have exactly one answer-sheet cell, found {len(sheets)}")
    try:
        tree = ast.parse(sheets[0].source)
        assign = next(n for n in tree.body if isinstance(n, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "answers" for t in n.targets))
        answers = ast.literal_eval(assign.value)
    except (SyntaxError, StopIteration, ValueError) as exc:
        raise GradingError(f"the answer sheet must assign a dict literal to `answers`: {exc}") from None
    if not isinstance(answers, dict):
        raise GradingError("the answer sheet's `answers` must be a dict of question id -> letters")
    return answers


def grade(submission: str | Path, key, *, timeout: int = 60) -> GradeReport:
    """Score a submitted student notebook against ``key`` (a dict or the key file's path).

    Quiz answers come from the answer-sheet cell; each exercise's test cell is restored from the
    key (hidden tests included) and the notebook is executed; a test cell that raises scores 0.
    """
    import nbformat
    from nbclient import NotebookClient

    key = _load_key(key)
    path = Path(submission)
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as exc:  # nbformat raises several kinds for a broken file
        raise GradingError(f"cannot read submission {path}: {exc}") from None
    chapter = nb.metadata.get("hetlab", {}).get("chapter") or _chapter_of(path)
    if chapter not in key.get("chapters", []):
        raise GradingError(f"submission is chapter {chapter}, the key covers chapters {key.get('chapters')}")
    from .quiz import question

    answers = _read_answers(nb)
    report = GradeReport(path.name)
    for qid, item in key["questions"].items():
        if item["chapter"] != chapter:
            continue
        given = answers.get(qid, "")
        try:
            chosen = "".join(sorted(question(qid).parse(given))) if given else ""
            note = "" if given else "unanswered"
        except ValueError as exc:
            chosen, note = "", f"invalid: {exc}"
        report.rows.append((qid, "quiz", float(chosen == item["answer"]), 1.0, note))
    graded = {gid: item for gid, item in key["exercises"].items() if item["chapter"] == chapter}
    test_cells = {}
    for index, cell in enumerate(nb.cells):
        gid = _nbgrader(cell).get("grade_id")
        if gid in graded:
            cell.source = graded[gid]["tests"]
            test_cells[gid] = index
    work = Path(tempfile.mkdtemp(prefix="hetlab-grade-"))
    try:
        (work / BANK_NAME).write_text(json.dumps(_student_bank([chapter]), ensure_ascii=False), encoding="utf-8")
        NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                       resources={"metadata": {"path": str(work)}}).execute()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for gid, item in graded.items():
        if gid not in test_cells:
            report.rows.append((gid, "exercise", 0.0, float(item["points"]), "test cell missing"))
            continue
        errors = [o for o in nb.cells[test_cells[gid]].outputs if o.get("output_type") == "error"]
        note = "" if not errors else f"{errors[0].get('ename')}: {errors[0].get('evalue', '')}"[:80]
        report.rows.append((gid, "exercise", 0.0 if errors else float(item["points"]), float(item["points"]), note))
    return report
