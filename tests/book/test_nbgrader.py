"""The chapters work with nbgrader itself: generate_assignment and autograde on two chapters."""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from hetlab.book import quiz

nbgrader_api = pytest.importorskip("nbgrader.api", reason="nbgrader not installed (test extra)")
pytestmark = pytest.mark.slow      # nbgrader generates, runs and grades two chapters

ROOT = Path(__file__).resolve().parents[2]
NAMES = ["04-granularity.ipynb", "06-sync-communication.ipynb"]


def nbgrader(course: Path, *args: str) -> subprocess.CompletedProcess:
    # nbgrader runs the `alembic` script of its environment, so that environment's bin must be on PATH.
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    run = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, capture_output=True, text=True,
                         timeout=300, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    return run


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course = tmp_path_factory.mktemp("course")
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        f"c.CourseDirectory.root = {str(course)!r}\n"
        "c.CourseDirectory.course_id = 'hetlab'\n"
        "c.ExecutePreprocessor.timeout = 60\n")
    source = course / "source" / "ps1"
    source.mkdir(parents=True)
    for name in NAMES:
        shutil.copy(ROOT / "chapters" / name, source / name)
    nbgrader(course, "db", "assignment", "add", "ps1")
    for student in ("alice", "bob"):
        nbgrader(course, "db", "student", "add", student)
    nbgrader(course, "generate_assignment", "ps1", "--force")
    release = course / "release" / "ps1"
    for student, correct in (("alice", True), ("bob", False)):
        target = course / "submitted" / student / "ps1"
        target.mkdir(parents=True)
        for name in NAMES:
            nb = nbformat.read(release / name, as_version=4)
            if correct:
                original = nbformat.read(source / name, as_version=4)
                solutions = {c.metadata["nbgrader"]["grade_id"]: c.source for c in original.cells
                             if c.get("metadata", {}).get("nbgrader", {}).get("solution")}
                for cell in nb.cells:
                    gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
                    if gid in solutions:
                        cell.source = solutions[gid]
            nbformat.write(nb, target / name)
        (target / "timestamp.txt").write_text("2026-12-01 10:00:00.000000 UTC")
    nbgrader(course, "autograde", "ps1", "--force")
    return course


def _region_lines(pattern: str) -> list[str]:
    """Distinctive lines inside the chapters' solution or hidden-test regions (read from the sources)."""
    lines = []
    for name in NAMES:
        for cell in nbformat.read(ROOT / "chapters" / name, as_version=4).cells:
            for body in re.findall(pattern, cell.source, re.S):
                lines += [ln.strip() for ln in body.splitlines() if len(ln.strip()) > 15]
    return lines


def _points() -> float:
    return sum(c.metadata["nbgrader"].get("points", 0) for name in NAMES
               for c in nbformat.read(ROOT / "chapters" / name, as_version=4).cells
               if c.get("metadata", {}).get("nbgrader", {}).get("grade"))


def test_release_has_no_solutions_hidden_tests_or_quiz_answers(course):
    release = course / "release" / "ps1"
    text = "\n".join((release / name).read_text(encoding="utf-8") for name in NAMES)
    assert "BEGIN SOLUTION" not in text and "HIDDEN TESTS" not in text
    secret = _region_lines(r"### BEGIN SOLUTION[^\n]*\n(.*?)### END SOLUTION")
    secret += _region_lines(r"### BEGIN HIDDEN TESTS[^\n]*\n(.*?)### END HIDDEN TESTS")
    # A leak is a whole source line (JSON string, any indentation): the learner's own longer line
    # "from hetlab import communication, plotting, ..." does not leak a solution's "from hetlab import communication".
    leaked = [line for line in secret if re.search(r'"\s*' + re.escape(json.dumps(line)[1:-1]) + r'(\\n)?"', text)]
    assert secret and not leaked
    assert "raise NotImplementedError()" in text
    for q in quiz.questions(4) + quiz.questions(6):
        assert q.key()[1] not in text


def test_autograde_gives_full_marks_to_a_correct_submission_and_zero_to_a_blank_one(course):
    with nbgrader_api.Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        alice = gb.find_submission("ps1", "alice")
        bob = gb.find_submission("ps1", "bob")
        assert alice.max_score == bob.max_score == _points() > 0
        assert alice.score == alice.max_score
        assert bob.score == 0
        details = json.dumps({nb.name: nb.score for nb in alice.notebooks})
        assert "04-granularity" in details
