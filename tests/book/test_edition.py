"""The student edition without nbgrader (python -m hetlab student-edition), and grading its round trip.

Issue 19, items 11-12 (the adversarial review of 2026-12-04, reproductions 7, 14 and 15): marker typos,
saved widget state, two notebooks for one chapter and a key beside the book never leak or drop anything."""
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

from hetlab.book import quiz
from hetlab.book.edition import check_markers, make_student_edition, split_hidden_tests, strip_solutions
from hetlab.book.grading import grade

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = ROOT / "chapters"


def test_strip_solutions_keeps_indentation_and_split_hidden_tests():
    src = "def f():\n    ### BEGIN SOLUTION\n    return 42\n    ### END SOLUTION\n"
    assert strip_solutions(src) == "def f():\n    # 在这里写你的代码\n    raise NotImplementedError()"
    visible, hidden = split_hidden_tests("assert x\n### BEGIN HIDDEN TESTS\nassert x == 3\n### END HIDDEN TESTS\n")
    assert visible == "assert x" and hidden == "assert x == 3"


@pytest.fixture(scope="module")
def edition(tmp_path_factory):   # chapters 4 and 6 of the book, written by the command
    out = tmp_path_factory.mktemp("edition") / "students"
    key_path = out.parent / "key.json"
    result = subprocess.run([sys.executable, "-m", "hetlab", "student-edition", str(out), "--chapters", "4,6",
                             "--source", str(CHAPTERS), "--key", str(key_path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return out, key_path


@pytest.mark.slow
def test_edition_holds_only_the_chosen_chapters_and_a_bank_without_answers(edition):
    out, key_path = edition
    assert sorted(p.name for p in out.iterdir()) == ["04-granularity.ipynb", "06-sync-communication.ipynb",
                                                    "questions.json"]
    bank = json.loads((out / "questions.json").read_text(encoding="utf-8"))
    assert {q["chapter"] for q in bank} == {4, 6} and all("sealed" not in q for q in bank)
    assert not (out / key_path.name).exists()


def _regions(pattern: str) -> list[str]:
    """Lines inside the instructor's solution or hidden-test regions (long enough to be distinctive)."""
    import re

    lines = []
    for name in ("04-granularity.ipynb", "06-sync-communication.ipynb"):
        for cell in nbformat.read(CHAPTERS / name, as_version=4).cells:
            for body in re.findall(pattern, cell.source, re.S):
                lines += [ln.strip() for ln in body.splitlines() if len(ln.strip()) > 15]
    return lines


@pytest.mark.slow
def test_a_learner_cannot_read_answers_or_solutions_out_of_the_student_files(edition):
    out, _ = edition
    text = "\n".join(p.read_text(encoding="utf-8") for p in out.iterdir())
    for q in quiz.questions(4) + quiz.questions(6):
        _, explanation = q.key()
        assert explanation not in text
        assert q.sealed not in text
    assert "BEGIN SOLUTION" not in text and "HIDDEN TESTS" not in text
    solutions = _regions(r"### BEGIN SOLUTION[^\n]*\n(.*?)### END SOLUTION")
    hidden = _regions(r"### BEGIN HIDDEN TESTS[^\n]*\n(.*?)### END HIDDEN TESTS")
    assert solutions and hidden
    for line in solutions + hidden:
        # As a whole source line (JSON string, any indentation): "from hetlab import communication" inside the
        # learner's "from hetlab import communication, plotting, ..." gives nothing away.
        whole_line = r'"\s*' + re.escape(json.dumps(line)[1:-1]) + r'(\\n)?"'
        assert not re.search(whole_line, text), line
    for original in (CHAPTERS / "04-granularity.ipynb", CHAPTERS / "06-sync-communication.ipynb"):
        nb = nbformat.read(out / original.name, as_version=4)
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")


def _submission(out, name, tmp_path, *, correct: bool) -> Path:
    student = nbformat.read(out / name, as_version=4)
    if correct:
        instructor = nbformat.read(CHAPTERS / name, as_version=4)
        solutions = {c.metadata["nbgrader"]["grade_id"]: c.source for c in instructor.cells
                     if c.get("metadata", {}).get("nbgrader", {}).get("solution")}
        chapter = int(name[:2])
        letters = {q.id: "".join(sorted(q.key()[0])) for q in quiz.questions(chapter)}
        for cell in student.cells:
            gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            if gid in solutions:
                cell.source = solutions[gid]
            if "answer-sheet" in cell.get("metadata", {}).get("tags", []):
                cell.source = "answers = " + json.dumps(letters)
    path = tmp_path / name
    nbformat.write(student, path)
    return path


@pytest.mark.slow
@pytest.mark.parametrize("name", ["04-granularity.ipynb", "06-sync-communication.ipynb"])
def test_a_correct_submission_scores_full_marks_and_a_blank_one_zero(edition, tmp_path, name):
    out, key_path = edition
    key = json.loads(key_path.read_text(encoding="utf-8"))
    chapter = int(name[:2])
    expected = sum(e["points"] for e in key["exercises"].values() if e["chapter"] == chapter)
    expected += len(quiz.questions(chapter))
    (tmp_path / "ok").mkdir()
    full = grade(_submission(out, name, tmp_path / "ok", correct=True), key_path)
    assert full.score == full.max_score == expected, full.text()
    (tmp_path / "blank").mkdir()
    blank = grade(_submission(out, name, tmp_path / "blank", correct=False), key_path)
    assert blank.score == 0 and blank.max_score == expected, blank.text()
    assert all(i.status in ("failed", "error") and i.message for i in blank.items if i.kind == "exercise")
    assert all(i.status == "unanswered" for i in blank.items if i.kind == "question")


@pytest.mark.slow
def test_grade_command_prints_a_table_and_rejects_malformed_input(edition, tmp_path):
    out, key_path = edition
    (tmp_path / "ok").mkdir()
    good = _submission(out, "04-granularity.ipynb", tmp_path / "ok", correct=True)
    run = subprocess.run([sys.executable, "-m", "hetlab", "grade", str(good), "--key", str(key_path)],
                         capture_output=True, text=True)
    total = run.stdout.splitlines()[-1].split()
    assert run.returncode == 0 and total[0] == "total" and total[1] == total[2], run.stdout
    broken = tmp_path / "04-broken.ipynb"
    broken.write_text("{not a notebook", encoding="utf-8")
    for args in ([str(broken), "--key", str(key_path)], [str(good), "--key", str(tmp_path / "missing.json")],
                 [str(good), "--key", str(key_path), "--timeout", "0"]):
        run = subprocess.run([sys.executable, "-m", "hetlab", "grade", *args], capture_output=True, text=True)
        assert run.returncode == 2 and "error: " in run.stderr and "Traceback" not in run.stderr
    nb = nbformat.read(good, as_version=4)
    nb.cells = [c for c in nb.cells if "answer-sheet" not in c.get("metadata", {}).get("tags", [])]
    nbformat.write(nb, tmp_path / "04-nosheet.ipynb")
    report = grade(tmp_path / "04-nosheet.ipynb", key_path)
    assert all(i.status == "invalid" and "answer-sheet" in i.message for i in report.items if i.kind == "question")
    assert report.score == sum(i.max_score for i in report.items if i.kind == "exercise") > 0


def test_student_edition_refuses_bad_chapter_lists(tmp_path):
    run = subprocess.run([sys.executable, "-m", "hetlab", "student-edition", str(tmp_path / "x"), "--chapters", "0,3"],
                         capture_output=True, text=True)
    assert run.returncode == 2 and "chapters in [1, 13]" in run.stderr
    with pytest.raises(ValueError, match="chapters must be among"):
        make_student_edition(tmp_path / "y", [14], source=CHAPTERS)


# --- the command never destroys the book (issue 11, item 5) ---------------------------------------

def _book(tmp_path) -> Path:
    src = tmp_path / "chapters"
    src.mkdir()
    (src / "04-granularity.ipynb").write_bytes((CHAPTERS / "04-granularity.ipynb").read_bytes())
    return src


def _snapshot(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _edition_cli(cwd, *args):
    return subprocess.run([sys.executable, "-m", "hetlab", "student-edition", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_student_edition_refuses_to_overwrite_the_source_even_with_force(tmp_path):
    src = _book(tmp_path)
    before = _snapshot(src)
    for args in (["chapters"], ["chapters", "--force"], [str(src), "--source", str(src), "--force"],
                 [str(tmp_path), "--source", str(src), "--force"]):    # the last: OUT contains SRC
        run = _edition_cli(tmp_path, *args)
        assert run.returncode == 2, (args, run.stdout, run.stderr)
        assert "error: out_dir must not" in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert _snapshot(src) == before
    assert not list(tmp_path.glob("*key.json"))          # refused before anything was written


def test_student_edition_inside_the_source_or_into_a_nonempty_folder_needs_force(tmp_path):
    src = _book(tmp_path)
    before = _snapshot(src)
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine", encoding="utf-8")
    for out, message in ((src / "students", "outside the source"), (busy, "new or empty")):
        key_path = tmp_path / f"{out.name}-key.json"
        with pytest.raises(ValueError, match=message):
            make_student_edition(out, [4], source=src, key=key_path)
        assert not key_path.exists()
        key = make_student_edition(out, [4], source=src, key=key_path, force=True)
        assert (out / "04-granularity.ipynb").exists() and json.loads(key_path.read_text(encoding="utf-8")) == key
    assert (busy / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert {k: v for k, v in _snapshot(src).items() if not k.startswith("students/")} == before


def test_the_key_is_written_first_and_never_inside_the_edition(tmp_path):
    src = _book(tmp_path)
    with pytest.raises(ValueError, match="key must be outside out_dir"):
        make_student_edition(tmp_path / "out", [4], source=src, key=tmp_path / "out" / "key.json")
    blocker = tmp_path / "afile"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(ValueError, match="key must be in an existing folder"):
        make_student_edition(tmp_path / "out", [4], source=src, key=blocker / "key.json")
    assert not (tmp_path / "out").exists()                # no edition without its key
    (tmp_path / "precious.txt").write_text("not a key", encoding="utf-8")
    with pytest.raises(ValueError, match="old grading key"):
        make_student_edition(tmp_path / "out", [4], source=src, key=tmp_path / "precious.txt")
    run = _edition_cli(tmp_path, "out", "--chapters", "4")
    assert run.returncode == 0, run.stderr
    assert json.loads((tmp_path / "out-key.json").read_text(encoding="utf-8"))["chapters"] == [4]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["04-granularity.ipynb", "questions.json"]
    assert not [p for p in tmp_path.rglob("*.tmp")]        # atomic writes leave no temporary files


# --- an environment without recoverable answers (item 8) ----------------------------------------------

@pytest.mark.slow
def test_an_answer_free_environment_has_no_key_anywhere(edition, tmp_path):
    out, _ = edition
    shipped = b"\n".join(p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file())
    assert b'"sealed"' not in shipped
    for q in quiz.questions():                 # no sealed token, no explanation, in any shipped file
        assert q.sealed.encode() not in shipped and q.key()[1].encode() not in shipped
    probe = textwrap.dedent("""
        import json, sys
        from pathlib import Path
        from hetlab.book import bank, progress, quiz
        bank.BANK_PATH = Path("/nonexistent")      # prove the package's own files are never read
        ids = [q.id for q in quiz.questions()]
        feedback = quiz.ask(ids[0], store=progress.ProgressStore(sys.argv[1])).submit("A")
        print(json.dumps({"ids": ids, "keys": [quiz.question(i).key() for i in ids], "feedback": feedback,
                          "chapters": sorted({q.chapter for q in quiz.questions()})}))
    """)
    env = dict(os.environ, HETLAB_BANK=str(out / "questions.json"))
    run = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "p.sqlite3")], capture_output=True, text=True,
                         env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout)
    assert seen["chapters"] == [4, 6] and len(seen["ids"]) == len(quiz.questions(4)) + len(quiz.questions(6))
    assert seen["keys"] == [None] * len(seen["ids"])
    assert "本版不含答案" in seen["feedback"]
    written = tmp_path / "answer-free.json"
    assert quiz.answer_free_bank(written) == len(quiz.questions())
    assert '"sealed"' not in written.read_text(encoding="utf-8")
    assert all(q.key() is None for q in quiz.questions(bank=written))


# --- instructor typos never leak a solution (issue 19, item 11) ----------------------------------------

def _with_cell(src: Path, gid: str, change) -> None:
    """Change the source (or the whole cell) of chapter 4's cell ``gid`` in the copy ``src``."""
    path = src / "04-granularity.ipynb"
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == gid:
            change(cell)
    nbformat.write(nb, path)


def _source(replace_from: str, replace_to: str):
    def change(cell):
        assert replace_from in cell.source
        cell.source = cell.source.replace(replace_from, replace_to)
    return change


def _to_markdown(cell):
    cell.cell_type = "markdown"
    cell.pop("outputs", None)
    cell.pop("execution_count", None)


TYPOS = {   # review reproduction 7: each left the solution or the hidden tests in the student notebook, exit 0
    "begin without end": ("ex04-solution", _source("### END SOLUTION", ""), "BEGIN SOLUTION without ### END"),
    "no space": ("ex04-solution", _source("### BEGIN SOLUTION", "###BEGIN SOLUTION"), "marker typo"),
    "lower case": ("ex04-solution", _source("### BEGIN SOLUTION", "### begin solution"), "marker typo"),
    "two hashes": ("ex04-solution", _source("### BEGIN SOLUTION", "## BEGIN SOLUTION"), "marker typo"),
    "singular test": ("ex04-tests", _source("### END HIDDEN TESTS", "### END HIDDEN TEST"), "marker typo"),
    "markdown solution": ("ex04-solution", _to_markdown, "in a markdown cell"),
    "solution outside a solution cell": ("ex04-tests", _source("### BEGIN HIDDEN TESTS", "### BEGIN SOLUTION\nx = 1\n"
                                                               "### END SOLUTION\n### BEGIN HIDDEN TESTS"),
                                         "not a solution cell"),
}


@pytest.mark.parametrize("typo", sorted(TYPOS))
def test_a_marker_typo_refuses_the_edition_naming_the_cell(tmp_path, typo):
    gid, change, message = TYPOS[typo]
    src = _book(tmp_path)
    _with_cell(src, gid, change)
    with pytest.raises(ValueError, match=message) as caught:
        make_student_edition(tmp_path / "out", [4], source=src, key=tmp_path / "key.json")
    assert "04-granularity.ipynb cell " in str(caught.value) and f"({gid})" in str(caught.value)
    assert not (tmp_path / "out").exists() and not (tmp_path / "key.json").exists()


@pytest.mark.slow
def test_a_marker_typo_is_one_line_and_exit_2_from_the_command(tmp_path):
    src = _book(tmp_path)
    _with_cell(src, "ex04-solution", _source("### BEGIN SOLUTION", "###BEGIN SOLUTION"))
    run = _edition_cli(tmp_path, "out", "--chapters", "4")
    assert run.returncode == 2 and "04-granularity.ipynb cell" in run.stderr and "(ex04-solution)" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr


def test_windows_line_ends_and_a_solution_cell_without_markers_leak_nothing(tmp_path):
    src = _book(tmp_path)
    solution = next(c.source for c in nbformat.read(src / "04-granularity.ipynb", as_version=4).cells
                    if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "ex04-solution")
    body = [line for line in solution.split("### BEGIN SOLUTION")[1].split("### END SOLUTION")[0].splitlines()
            if len(line.strip()) > 10]
    assert body
    _with_cell(src, "ex04-solution", lambda cell: setattr(cell, "source", cell.source.replace("\n", "\r\n")))
    _with_cell(src, "ex04b-solution", lambda cell: setattr(cell, "source", "\n".join(
        line for line in cell.source.splitlines() if "### " not in line)))      # all of it is the solution
    make_student_edition(tmp_path / "out", [4], source=src, key=tmp_path / "key.json")
    text = (tmp_path / "out" / "04-granularity.ipynb").read_text(encoding="utf-8")
    assert all(json.dumps(line.strip())[1:-1] not in text for line in body)
    student = {c.metadata["nbgrader"]["grade_id"]: c.source
               for c in nbformat.read(tmp_path / "out" / "04-granularity.ipynb", as_version=4).cells
               if c.get("metadata", {}).get("nbgrader", {}).get("solution")}
    assert student["ex04b-solution"] == "# 在这里写你的代码\nraise NotImplementedError()"


def test_check_markers_accepts_the_book(tmp_path):
    for path in sorted(CHAPTERS.glob("[0-9][0-9]-*.ipynb")):
        for index, cell in enumerate(nbformat.read(path, as_version=4).cells, 1):
            check_markers(cell, f"{path.name} cell {index}")


def test_saved_widget_state_is_not_carried_into_the_student_edition(tmp_path):
    # Review reproduction 7: chapter 3's saved widget state (221 kB) held quiz c03-1's answer, 2.51 TFLOP/s.
    # (The prose quotes the number too; only the widget state carried the quiz's computed answer.)
    assert "widgets" in nbformat.read(CHAPTERS / "03-hardware.ipynb", as_version=4).metadata
    make_student_edition(tmp_path / "out", [3], source=CHAPTERS, key=tmp_path / "key.json")
    student = nbformat.read(tmp_path / "out" / "03-hardware.ipynb", as_version=4)
    assert "widgets" not in student.metadata and "application/vnd.jupyter.widget" not in json.dumps(student)


# --- loose ends: duplicates, the key's place, odd sources (issue 19, item 12) ---------------------------

def test_two_notebooks_for_one_chapter_are_refused_not_dropped(tmp_path):
    # Review reproduction 15: a copy of chapter 5 named 04-zzz-copy-of-05.ipynb silently replaced chapter 4.
    src = _book(tmp_path)
    (src / "04-zzz-copy-of-05.ipynb").write_bytes((CHAPTERS / "05-runtime-scheduling.ipynb").read_bytes())
    with pytest.raises(ValueError, match="04-granularity.ipynb and 04-zzz-copy-of-05.ipynb for chapter 4"):
        make_student_edition(tmp_path / "out", [4], source=src, key=tmp_path / "key.json")


def test_the_key_is_never_in_the_source_folder_nor_a_new_folder(tmp_path):
    src = _book(tmp_path)
    for key, message in ((src / "k.json", "outside the source folder"), (src / "sub" / "k.json", "outside the source"),
                         (tmp_path / "missing" / "k.json", "existing folder")):
        with pytest.raises(ValueError, match=message):
            make_student_edition(tmp_path / "out", [4], source=src, key=key)
    assert sorted(p.name for p in src.iterdir()) == ["04-granularity.ipynb"] and not (tmp_path / "missing").exists()
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    for key in (fifo, tmp_path):          # review 2026-12-04, part E: --key /dev/full read until MemoryError
        with pytest.raises(ValueError, match="key must be a regular file path"):
            make_student_edition(tmp_path / "out", [4], source=src, key=key, force=True)
    assert fifo.exists() and not fifo.is_file()


def test_odd_sources_and_places_are_refused_with_a_reason(tmp_path, monkeypatch):
    src = tmp_path / "odd"
    src.mkdir()
    (src / "04-empty.ipynb").write_text("{}", encoding="utf-8")
    with pytest.raises(ValueError, match="04-empty.ipynb is not a notebook of nbformat 3 or 4"):
        make_student_edition(tmp_path / "o1", [4], source=src, key=tmp_path / "k1.json")
    (src / "04-empty.ipynb").unlink()
    (src / "04-folder.ipynb").mkdir()
    with pytest.raises(ValueError, match="must be a regular file"):
        make_student_edition(tmp_path / "o2", [4], source=src, key=tmp_path / "k2.json")
    book = _book(tmp_path)
    with pytest.raises(ValueError, match="out_dir must be a folder that can be created"):
        make_student_edition("/proc/hetlab-edition", [4], source=book, key=tmp_path / "k3.json")

    def full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(ValueError, match="key must be a writable place.*No space left"):
        make_student_edition(tmp_path / "o4", [4], source=book, key=tmp_path / "k4.json")
    assert not (tmp_path / "o4").exists() and not list(tmp_path.glob(".k4.json.*"))


@pytest.mark.parametrize("chapters", ["+3", "١٣", "３", "1_0", "3.0", ",3", "3,", " ", "0x3"])
def test_chapter_lists_are_ascii_numbers_only(tmp_path, chapters, capsys):
    from hetlab.book.cli import main

    assert main(["student-edition", str(tmp_path / "out"), "--chapters", chapters]) == 2
    assert "--chapters" in capsys.readouterr().err and not (tmp_path / "out").exists()
