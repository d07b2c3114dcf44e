"""Grading a student's notebook cannot be silenced, faked or crashed by the submission (issue 11, items 6-7).

A small instructor notebook (chapter 4's number, so the quiz bank has its questions) with two exercises:
``n_star`` (a value: sqrt(2500 / 4) = 25) and ``ceiling(p)`` (a function: Amdahl's ceiling 1 / (1 - p),
checked against the library on inputs the learner never sees). Each submission below tries a way to
score without solving; the right answers score 1 + 2 = 3.
"""
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from hetlab.book import quiz
from hetlab.book.edition import GradingError, grade, make_student_edition


def _graded(source: str, gid: str, *, points: int = 0, solution: bool = False):
    meta = {"grade": not solution, "grade_id": gid, "locked": not solution, "schema_version": 3,
            "solution": solution, "task": False}
    if not solution:
        meta["points"] = points
    return new_code_cell(source, metadata={"nbgrader": meta})


SOLUTION_A = "### BEGIN SOLUTION\nn_star = hetlab.optimal_tasks(2500, 4)\n### END SOLUTION"
SOLUTION_B = "def ceiling(p):\n    ### BEGIN SOLUTION\n    return 1 / (1 - p)\n    ### END SOLUTION"
INSTRUCTOR = [
    new_markdown_cell("# 第 4 章（评分测试）"),
    new_code_cell("import hetlab\nfrom hetlab import formulas\nfrom hetlab.book import quiz"),
    new_code_cell("def close(a, b, tol=1e-9):\n    return abs(a - b) < tol"),      # a helper the tests use
    new_code_cell("quiz.quiz(4)"),
    _graded(SOLUTION_A, "exa-solution", solution=True),
    _graded("assert n_star > 0\n### BEGIN HIDDEN TESTS\nassert close(n_star, 25)\n### END HIDDEN TESTS",
            "exa-tests", points=1),
    _graded(SOLUTION_B, "exb-solution", solution=True),
    _graded("assert ceiling(0.5) > 1\n### BEGIN HIDDEN TESTS\nfor p in (0.9, 0.75, 0.2):\n"
            "    assert abs(ceiling(p) - formulas.amdahl_limit(p)) < 1e-9\n### END HIDDEN TESTS",
            "exb-tests", points=2),
]
RIGHT = {"exa-solution": "n_star = 25.0", "exb-solution": "def ceiling(p):\n    return 1 / (1 - p)"}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = tmp_path_factory.mktemp("grading")
    (root / "src").mkdir()
    nbformat.write(new_notebook(cells=INSTRUCTOR), root / "src" / "04-grading.ipynb")
    make_student_edition(root / "out", [4], source=root / "src", key=root / "key.json")
    return root


def submit(course: Path, name: str, solutions: dict, answers: str | None = None) -> Path:
    nb = nbformat.read(course / "out" / "04-grading.ipynb", as_version=4)
    for cell in nb.cells:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid in solutions:
            cell.source = solutions[gid]
        if answers is not None and "answer-sheet" in cell.get("metadata", {}).get("tags", []):
            cell.source = answers
    path = course / f"04-{name}.ipynb"
    nbformat.write(nb, path)
    return path


def exercises(report) -> dict:
    return {i.id: i for i in report.items if i.kind == "exercise"}


def test_the_right_answers_score_full_marks_in_the_clean_checker(course):
    report = grade(submit(course, "right", RIGHT), course / "key.json", timeout=30)
    assert {k: (i.score, i.status) for k, i in exercises(report).items()} == {"exa-tests": (1, "passed"),
                                                                              "exb-tests": (2, "passed")}


ATTACKS = {
    # The two: silence every error in the kernel, or make abs() return 0 so every
    # `abs(x - expected) < tol` holds. Both scored full marks when the hidden tests ran in the kernel.
    "custom_exc": {"exa-solution": "get_ipython().set_custom_exc((BaseException,), lambda *a, **k: None)\n"
                                   "n_star = 1.0",
                   "exb-solution": "def ceiling(p):\n    raise ValueError('no idea')"},
    # (`ceiling` answers the visible input right and nothing else.)
    "builtins_abs": {"exa-solution": "import builtins\nbuiltins.abs = lambda x: 0\nn_star = 1.0",
                     "exb-solution": "def ceiling(p):\n    import builtins\n    builtins.abs = lambda x: 0\n"
                                     "    return 2.0 if p == 0.5 else 0.0"},
    # Make AssertionError harmless, and patch the helper the hidden test compares with.
    "assert_and_helpers": {"exa-solution": "import builtins, hetlab.formulas\n"
                                           "builtins.AssertionError = type('AssertionError', (Warning,), {})\n"
                                           "hetlab.formulas.amdahl_limit = lambda p: 0.0\n"
                                           "formulas.amdahl_limit = lambda p: 0.0\nn_star = 1.0",
                           "exb-solution": "def ceiling(p):\n    return 2.0 if p == 0.5 else 0.0"},
    # Redefine the notebook's own helper that the hidden test calls.
    "redefined_helper": {"exa-solution": "close = lambda *args, **kwargs: True\nn_star = 1.0",
                         "exb-solution": "def ceiling(p):\n    return 2.0 if p == 0.5 else 0.0"},
    # A result that claims to equal anything, and a float subclass whose difference is always 0.
    "sly_values": {"exa-solution": "class Zero(float):\n    def __sub__(self, other):\n        return 0.0\n"
                                   "n_star = Zero(1.0)",
                   "exb-solution": "class Anything:\n    def __eq__(self, other):\n        return True\n"
                                   "    def __sub__(self, other):\n        return 0.0\n"
                                   "def ceiling(p):\n    return 2.0 if p == 0.5 else Anything()"},
    # Print what a passing run prints.
    "fake_output": {"exa-solution": "print('exa-tests: passed 1/1')\nprint('All tests passed')\nn_star = 1.0",
                    "exb-solution": "print('exb-tests: passed 2/2')\ndef ceiling(p):\n    return 0.0"},
    # The student's function attacks the process that calls it with the hidden inputs (the kernel
    # itself could kill the grader, its parent: see the README on grading in a container).
    "function_kills_its_caller": {"exa-solution": "n_star = 1.0",
                                  "exb-solution": "def ceiling(p):\n    import os\n    if p != 0.5:\n"
                                                  "        os.kill(os.getppid(), 9)\n    return 1 / (1 - p)"},
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_submission_cannot_score_without_solving(course, attack):
    report = grade(submit(course, attack, ATTACKS[attack]), course / "key.json", timeout=30)
    items = exercises(report)
    assert [items[k].score for k in ("exa-tests", "exb-tests")] == [0, 0], report.text()
    assert all(i.status in ("failed", "error") and i.message for i in items.values()), report.text()


def test_a_dead_or_stuck_kernel_costs_only_its_own_exercise(course):
    dead = submit(course, "dead", {"exa-solution": "import os\nos._exit(1)", "exb-solution": RIGHT["exb-solution"]})
    items = exercises(grade(dead, course / "key.json", timeout=30))
    assert (items["exa-tests"].score, items["exa-tests"].status) == (0, "died")
    assert "kernel died" in items["exa-tests"].message
    assert (items["exb-tests"].score, items["exb-tests"].status) == (2, "passed")
    stuck = submit(course, "stuck", {"exa-solution": RIGHT["exa-solution"],
                                     "exb-solution": "while True:\n    try:\n        pass\n"
                                                     "    except BaseException:\n        pass"})
    items = exercises(grade(stuck, course / "key.json", timeout=3))
    assert (items["exa-tests"].score, items["exa-tests"].status) == (1, "passed")
    assert (items["exb-tests"].score, items["exb-tests"].status) == (0, "timeout")
    assert "longer than 3 s" in items["exb-tests"].message


def test_a_function_that_hangs_or_exits_fails_its_exercise(course):
    for body, message in (("    while True:\n        pass", "did not return within 3 s"),
                          ("    import os\n    os._exit(0)", "ended its process")):
        path = submit(course, "fn-" + str(len(body)), {"exa-solution": RIGHT["exa-solution"],
                                                       "exb-solution": f"def ceiling(p):\n{body}"})
        items = exercises(grade(path, course / "key.json", timeout=3))
        assert items["exa-tests"].score == 1
        assert (items["exb-tests"].score, items["exb-tests"].status) == (0, "failed")
        assert message in items["exb-tests"].message


# --- odd input never crashes grading (item 7) -------------------------------------------------------

def test_odd_answers_mark_only_their_item_invalid(course):
    ids = [q.id for q in quiz.questions(4)]
    right = "".join(sorted(quiz.question(ids[1]).key()[0]))
    sheet = f"answers = {{{ids[0]!r}: 4, {ids[1]!r}: {right!r}, {ids[2]!r}: 'ZZ', 7: 'A'}}"
    report = grade(submit(course, "odd", RIGHT, sheet), course / "key.json", timeout=30)
    status = {i.id: i.status for i in report.items if i.kind == "question"}
    assert status[ids[0]] == "invalid" and status[ids[1]] == "correct" and status[ids[2]] == "invalid"
    assert all(status[i] == "unanswered" for i in ids[3:])
    assert report.score == 1 + 3, report.text()
    broken = grade(submit(course, "nosheet", RIGHT, "answers = [1, 2"), course / "key.json", timeout=30)
    assert all(i.status == "invalid" for i in broken.items if i.kind == "question")
    assert broken.score == 3                     # the exercises are still graded


@pytest.mark.parametrize("damage, message", [
    (lambda k: k.pop("chapters"), "chapters must be a list"),
    (lambda k: k["questions"].update({"c04-1": 4}), "questions\\['c04-1'\\] must be an object"),
    (lambda k: k["questions"][next(iter(k["questions"]))].update(answer=None), "answer must be capital letters"),
    (lambda k: k["exercises"]["exa-tests"].update(points="two"), "points must be a number"),
    (lambda k: k["exercises"]["exa-tests"].pop("tests"), "tests must be the test cell"),
    (lambda k: k.update(exercises=[]), "exercises must be an object"),
])
def test_a_malformed_key_gives_one_clear_line(course, damage, message):
    key = json.loads((course / "key.json").read_text(encoding="utf-8"))
    damage(key)
    with pytest.raises(GradingError, match=message):
        grade(submit(course, "right", RIGHT), key)
    bad = course / "bad-key.json"
    bad.write_text(json.dumps(key), encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "hetlab", "grade", str(course / "04-right.ipynb"), "--key", str(bad)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "error: key is malformed" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr


def test_grade_json_and_csv_for_an_lms(course):
    path = submit(course, "right", RIGHT)
    run = subprocess.run([sys.executable, "-m", "hetlab", "grade", str(path), "--key", str(course / "key.json"),
                          "--json", "--timeout", "30"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert set(result) == {"score", "max_score", "items"}
    assert result["max_score"] == len(quiz.questions(4)) + 3 and result["score"] == 3   # the quiz is blank
    assert all(set(i) == {"id", "kind", "score", "max_score", "status", "message"} for i in result["items"])
    assert {i["kind"] for i in result["items"]} == {"exercise", "question"}
    run = subprocess.run([sys.executable, "-m", "hetlab", "grade", str(path), "--key", str(course / "key.json"),
                          "--csv"], capture_output=True, text=True, timeout=300)
    lines = run.stdout.splitlines()
    assert run.returncode == 0 and lines[0] == "submission,id,kind,score,max_score,status,message"
    assert "04-right.ipynb,exb-tests,exercise,2,2,passed," in lines
