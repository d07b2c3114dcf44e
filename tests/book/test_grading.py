"""Grading a student's notebook cannot be silenced, faked, escaped or exhausted by the submission
(issue 11, items 6-7; issue 19, items 1-5 and the adversarial review of 2026-12-04).

A small instructor notebook (chapter 4's number, so the quiz bank has its questions) with two exercises:
``n_star`` (a value: sqrt(2500 / 4) = 25) and ``ceiling(p)`` (a function: Amdahl's ceiling 1 / (1 - p),
checked against the library on inputs the learner never sees). Each submission below tries a way to
score without solving; the right answers score 1 + 2 = 3, so any exercise point a junk answer gets is a
cheat. Processes a submission starts write a heartbeat file; after grading the file must stay still.
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from hetlab.book import _isolation, quiz
from hetlab.book.edition import make_student_edition
from hetlab.book.grading import GradingError, grade

pytestmark = pytest.mark.slow      # each grading run starts Jupyter kernels


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
JUNK_B = "def ceiling(p):\n    return 2.0 if p == 0.5 else 0.0"     # right on the visible input only


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


def cli(*args, timeout=300, env=None):
    return subprocess.run([sys.executable, "-m", "hetlab", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=env)


def still(heartbeat: Path) -> bool:
    """True when nothing writes ``heartbeat`` any more (the processes that did are gone)."""
    before = heartbeat.stat().st_mtime_ns
    time.sleep(0.5)
    return heartbeat.stat().st_mtime_ns == before


def test_the_right_answers_score_full_marks_in_the_clean_checker(course):
    report = grade(submit(course, "right", RIGHT), course / "key.json", timeout=30)
    assert {k: (i.score, i.status) for k, i in exercises(report).items()} == {"exa-tests": (1, "passed"),
                                                                              "exb-tests": (2, "passed")}
    assert report.chapter == 4 and report.text().splitlines()[0] == "04-right.ipynb (chapter 4)"


# Writes a verdict line into every output (pipe or socket) of every checker or worker it can open through /proc.
FORGE = ("    v = (json.dumps({'status': 'passed', 'message': ''}) + '\\n').encode()\n"
         "    for pid in [str(os.getppid())] + [p for p in os.listdir('/proc') if p.isdigit()]:\n"
         "        try:\n"
         "            if b'hetlab.book._sandbox import main' not in open(f'/proc/{pid}/cmdline', 'rb').read():\n"
         "                continue\n"
         "            for fd in set(os.listdir(f'/proc/{pid}/fd')) - {'0'}:\n"
         "                try:\n"
         "                    w = os.open(f'/proc/{pid}/fd/{fd}', os.O_WRONLY | os.O_NONBLOCK)\n"
         "                    os.write(w, v)\n"
         "                    os.close(w)\n"
         "                except OSError:\n"
         "                    pass\n"
         "        except OSError:\n"
         "            pass\n")
ATTACKS = {
    # The two: silence every error in the kernel, or make abs() return 0 so every
    # `abs(x - expected) < tol` holds. Both scored full marks when the hidden tests ran in the kernel.
    "custom_exc": {"exa-solution": "get_ipython().set_custom_exc((BaseException,), lambda *a, **k: None)\n"
                                   "n_star = 1.0",
                   "exb-solution": "def ceiling(p):\n    raise ValueError('no idea')"},
    "builtins_abs": {"exa-solution": "import builtins\nbuiltins.abs = lambda x: 0\nn_star = 1.0",
                     "exb-solution": "def ceiling(p):\n    import builtins\n    builtins.abs = lambda x: 0\n"
                                     "    return 2.0 if p == 0.5 else 0.0"},
    # Make AssertionError harmless, and patch the helper the hidden test compares with.
    "assert_and_helpers": {"exa-solution": "import builtins, hetlab.formulas\n"
                                           "builtins.AssertionError = type('AssertionError', (Warning,), {})\n"
                                           "hetlab.formulas.amdahl_limit = lambda p: 0.0\n"
                                           "formulas.amdahl_limit = lambda p: 0.0\nn_star = 1.0",
                           "exb-solution": JUNK_B},
    # Redefine the notebook's own helper that the hidden test calls.
    "redefined_helper": {"exa-solution": "close = lambda *args, **kwargs: True\nn_star = 1.0", "exb-solution": JUNK_B},
    # A result that claims to equal anything, and a float subclass whose difference is always 0.
    "sly_values": {"exa-solution": "class Zero(float):\n    def __sub__(self, other):\n        return 0.0\n"
                                   "n_star = Zero(1.0)",
                   "exb-solution": "class Anything:\n    def __eq__(self, other):\n        return True\n"
                                   "    def __sub__(self, other):\n        return 0.0\n"
                                   "def ceiling(p):\n    return 2.0 if p == 0.5 else Anything()"},
    # Print what a passing run prints.
    "fake_output": {"exa-solution": "print('exa-tests: passed 1/1')\nprint('All tests passed')\nn_star = 1.0",
                    "exb-solution": "print('exb-tests: passed 2/2')\ndef ceiling(p):\n    return 0.0"},
    # The student's function attacks the process that calls it with the hidden inputs.
    "function_kills_its_caller": {"exa-solution": "n_star = 1.0",
                                  "exb-solution": "def ceiling(p):\n    import os\n    if p != 0.5:\n"
                                                  "        os.kill(os.getppid(), 9)\n    return 1 / (1 - p)"},
    # Review 2026-12-04, reproduction 1: a detached daemon writes a passing verdict into the checker's pipes.
    "forge_daemon": {"exa-solution": "import os, json, time\nif os.fork() == 0:\n    os.setsid()\n"
                                     "    if os.fork() == 0:\n        end = time.time() + 120\n"
                                     "        while time.time() < end:\n"
                                     + "\n".join("        " + line for line in FORGE.splitlines()) + "\n"
                                     "            time.sleep(0.002)\n        os._exit(0)\n    os._exit(0)\n"
                                     "n_star = 1.0",
                     "exb-solution": JUNK_B},
    # Reproduction 2: the student's function, run in the worker, forges its parent's verdict.
    "forge_worker": {"exa-solution": "n_star = 1.0",
                     "exb-solution": "def ceiling(p):\n    import os, json\n" + FORGE
                                     + "    return 2.0 if p == 0.5 else 0.0"},
    # Reproduction 3: offer the checker names it never asked for (abs -> numpy.zeros_like makes every
    # `abs(x - c) < tol` hold; close -> numpy.ones_like passes `assert close(...)`), by patching the
    # probe of old, and print() for the probe of now.
    "inject_names": {"exa-solution": "import builtins, json\n_print = builtins.print\n"
                                     "EXTRA = {'abs': {'kind': 'import', 'module': 'numpy',\n"
                                     "                 'qualname': 'zeros_like'},\n"
                                     "         'close': {'kind': 'import', 'module': 'numpy',\n"
                                     "                   'qualname': 'ones_like'}}\n"
                                     "def _forged(*args, **kwargs):\n"
                                     "    if args and str(args[0]).startswith('@@hetlab-extract@@'):\n"
                                     "        d = json.loads(args[0][18:])\n"
                                     "        d['names'].update(EXTRA)\n"
                                     "        args = ('@@hetlab-extract@@' + json.dumps(d),) + args[1:]\n"
                                     "    return _print(*args, **kwargs)\n"
                                     "builtins.print = _forged\n"
                                     "try:\n    import hetlab.book._sandbox as sb\n    orig = sb.extract\n"
                                     "    sb.extract = lambda ns, names: _forged(orig(ns, names))\n"
                                     "except Exception:\n    pass\nn_star = 1.0",
                     "exb-solution": JUNK_B},
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_submission_cannot_score_without_solving(course, attack):
    report = grade(submit(course, attack, ATTACKS[attack]), course / "key.json", timeout=30)
    items = exercises(report)
    assert [items[k].score for k in ("exa-tests", "exb-tests")] == [0, 0], report.text()
    assert all(i.status in ("failed", "error") and i.message for i in items.values()), report.text()


def _ptrace_capable() -> bool:
    """Whether this process holds CAP_SYS_PTRACE (root outside a container): it ignores non-dumpable."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("CapEff:"):
            return bool(int(line.split()[1], 16) >> 19 & 1)
    return False


@pytest.mark.skipif(_ptrace_capable() and not _isolation.namespace_prefix(),
                    reason="root with CAP_SYS_PTRACE and no user namespaces: only a container keeps the kernel "
                           "out of the grader's output (book/instructors.md)")
def test_the_kernel_cannot_write_into_the_graders_report(course):
    # Review reproduction 9: a cell wrote a CSV row into /proc/<grader>/fd/1, ahead of the real report.
    forged = "04-forge.ipynb,4,exa-tests,exercise,1,1,passed,"
    cell = ("import os\nfor pid in [os.getppid()] + [int(p) for p in os.listdir('/proc') if p.isdigit()]:\n"
            "    try:\n        if b'grade' in open(f'/proc/{pid}/cmdline', 'rb').read():\n"
            "            fd = os.open(f'/proc/{pid}/fd/1', os.O_WRONLY | os.O_APPEND)\n"
            f"            os.write(fd, b'{forged}\\n')\n            os.close(fd)\n"
            "    except OSError:\n        pass\nn_star = 1.0")
    run = cli("grade", submit(course, "forge-stdout", {"exa-solution": cell}), "--key", course / "key.json", "--csv")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "submission,chapter,id,kind,score,max_score,status,message"
    assert forged not in run.stdout and all(line.startswith("04-forge-stdout.ipynb,4,") for line in lines[1:])


def _heartbeat_source(heartbeat: Path) -> str:
    return f"import time\nwhile True:\n    open({str(heartbeat)!r}, 'w').write(str(time.time()))\n    time.sleep(0.02)"


def test_no_process_a_submission_starts_outlives_its_grading(course, tmp_path):
    # Review reproduction 12: a cell's Popen(start_new_session=True), one in the kernel's own group,
    # and one started by the student's function in the worker all survived grading.
    cell_beat, group_beat, function_beat = tmp_path / "cell", tmp_path / "group", tmp_path / "function"
    wait = "while not os.path.exists({0!r}):\n    time.sleep(0.01)\n"      # until the process is running
    solutions = {
        "exa-solution": "import os, subprocess, sys, time\n"
                        f"subprocess.Popen([sys.executable, '-c', {_heartbeat_source(cell_beat)!r}], "
                        "start_new_session=True)\n"
                        f"subprocess.Popen([sys.executable, '-c', {_heartbeat_source(group_beat)!r}])\n"
                        + wait.format(str(cell_beat)) + wait.format(str(group_beat)) + "n_star = 25.0",
        "exb-solution": "def ceiling(p):\n    import os, subprocess, sys, time\n"
                        f"    subprocess.Popen([sys.executable, '-c', {_heartbeat_source(function_beat)!r}], "
                        "start_new_session=True)\n"
                        + "".join("    " + line + "\n" for line in wait.format(str(function_beat)).splitlines())
                        + "    return 1 / (1 - p)"}
    items = exercises(grade(submit(course, "survivors", solutions), course / "key.json", timeout=30))
    assert (items["exa-tests"].score, items["exb-tests"].score) == (1, 2)
    for beat in (cell_beat, group_beat, function_beat):
        assert beat.exists() and still(beat), beat.name


def test_a_detached_fork_bomb_is_ended_and_costs_nothing_else(course, tmp_path):
    # Review reproduction 12: a fork bomb after setsid() blocked grading for the bomb's whole life and left
    # the worker unable to start. This one (bounded at 40 processes, each replacing a child that dies) would
    # live ten minutes; grading ends it, still grades both exercises and returns well before.
    beat = tmp_path / "bomb"
    cell = ("import os, time\n"
            "def bomb(depth):\n    end, kids = time.time() + 600, 0\n    while time.time() < end:\n"
            f"        open({str(beat)!r}, 'w').write(str(time.time()))\n"
            "        try:\n            while os.waitpid(-1, os.WNOHANG)[0]:\n                kids -= 1\n"
            "        except ChildProcessError:\n            pass\n"
            "        if depth < 3 and kids < 3:\n            if os.fork() == 0:\n                bomb(depth + 1)\n"
            "                os._exit(0)\n            kids += 1\n        time.sleep(0.02)\n"
            "if os.fork() == 0:\n    os.setsid()\n    try:\n        bomb(0)\n    finally:\n        os._exit(0)\n"
            "time.sleep(1)\nn_star = 25.0")
    path = submit(course, "forkbomb", {"exa-solution": cell, "exb-solution": RIGHT["exb-solution"]})
    run = cli("grade", path, "--key", course / "key.json", "--json", timeout=240)
    assert run.returncode == 0, run.stderr
    items = {i["id"]: i for i in json.loads(run.stdout)["items"]}
    assert (items["exa-tests"]["score"], items["exb-tests"]["score"]) == (1, 2), items
    assert still(beat)


@pytest.mark.skipif(not _isolation.namespace_prefix(), reason="no user namespaces here: the kernel sees the grader")
def test_in_its_own_namespace_the_kernel_cannot_see_the_grader(course, tmp_path):
    # Review reproduction 17 (documented): the key's path in /proc/<grader>/cmdline. In a PID namespace the
    # kernel sees only its own processes.
    seen = tmp_path / "seen.json"
    cell = ("import os, json\nprocs = [open(f'/proc/{p}/cmdline', 'rb').read().decode(errors='replace')\n"
            "         for p in os.listdir('/proc') if p.isdigit()]\n"
            f"json.dump({{'ppid': os.getppid(), 'procs': procs}}, open({str(seen)!r}, 'w'))\nn_star = 1.0")
    grade(submit(course, "look-around", {"exa-solution": cell}), course / "key.json", timeout=30)
    view = json.loads(seen.read_text(encoding="utf-8"))
    assert view["ppid"] == 0 and not [p for p in view["procs"] if "grade" in p or "key.json" in p], view


def test_a_dead_or_stuck_kernel_costs_only_its_own_exercise(course):
    dead = submit(course, "dead", {"exa-solution": "import os\nos._exit(1)", "exb-solution": RIGHT["exb-solution"]})
    items = exercises(grade(dead, course / "key.json", timeout=30))
    assert (items["exa-tests"].score, items["exa-tests"].status) == (0, "died")
    assert "kernel died" in items["exa-tests"].message
    assert (items["exb-tests"].score, items["exb-tests"].status) == (2, "passed")
    stuck = submit(course, "stuck", {"exa-solution": RIGHT["exa-solution"],
                                     "exb-solution": "while True:\n    try:\n        pass\n"
                                                     "    except BaseException:\n        pass"})
    items = exercises(grade(stuck, course / "key.json", timeout=2.5))     # a fraction of a second is fine
    assert (items["exa-tests"].score, items["exa-tests"].status) == (1, "passed")
    assert (items["exb-tests"].score, items["exb-tests"].status) == (0, "timeout")
    assert "longer than 2.5 s" in items["exb-tests"].message


def test_a_function_that_hangs_or_exits_fails_its_exercise(course):
    for body, message in (("    while True:\n        pass", "did not return within 3 s"),
                          ("    import os\n    os._exit(0)", "ended its process")):
        path = submit(course, "fn-" + str(len(body)), {"exa-solution": RIGHT["exa-solution"],
                                                       "exb-solution": f"def ceiling(p):\n{body}"})
        items = exercises(grade(path, course / "key.json", timeout=3))
        assert items["exa-tests"].score == 1
        assert (items["exb-tests"].score, items["exb-tests"].status) == (0, "failed")
        assert message in items["exb-tests"].message


def test_the_whole_submission_has_a_time_limit(course):
    # Review reproduction 6: 5,000 cells took 45 s and kernel deaths replayed them (162 s); nothing bounded
    # the total. Here each solution cell takes 4 s, within the 10 s per cell, but the total is 5 s.
    slow = {"exa-solution": "import time\ntime.sleep(4)\nn_star = 25.0",
            "exb-solution": "import time\ntime.sleep(4)\n" + RIGHT["exb-solution"]}
    run = cli("grade", submit(course, "slow", slow), "--key", course / "key.json", "--json", "--timeout", "10",
              "--total-timeout", "5", timeout=120)
    assert run.returncode == 0, run.stderr
    items = {i["id"]: i for i in json.loads(run.stdout)["items"]}
    assert items["exb-tests"]["score"] == 0 and items["exb-tests"]["status"] in ("timeout", "error")
    assert "total time" in items["exb-tests"]["message"] or "longer than" in items["exb-tests"]["message"]


def test_a_flood_of_output_is_not_kept(course):
    # Review reproduction 6: a 300 MB print took the grader to 1 GB. Here 64 MB: a cell's output past 1 MB is
    # dropped in the kernel, the rest as it arrives, and the report still comes through. A cell that writes
    # 100 MB in one message past that cap loses its own report (ZMQ drops a message over 16 MB), nothing
    # else; benchmarks/bench_grading_bounds.py measures the grader's memory.
    cell = ("import sys\nfor _ in range(64):\n    sys.stdout.write('x' * (1 << 20) + '\\n')\nn_star = 25.0")
    items = exercises(grade(submit(course, "flood", {"exa-solution": cell}), course / "key.json", timeout=60))
    assert (items["exa-tests"].score, items["exa-tests"].status) == (1, "passed")
    cell = "import sys\ntype(sys.stdout).write(sys.stdout, 'x' * 100 * 2**20)\nsys.stdout.flush()\nn_star = 25.0"
    items = exercises(grade(submit(course, "flood-raw", {"exa-solution": cell}), course / "key.json", timeout=20,
                            total_timeout=120))
    assert items["exa-tests"].score == 0 and items["exa-tests"].message


def test_a_value_too_large_to_grade_is_refused_in_the_kernel(course):
    # Review reproduction 6: a 2e7-element array in an asked-for name took the grader to 4 GB over 90 s.
    cell = "import numpy as np\nn_star = np.arange(2 * 10**7, dtype=float)"
    items = exercises(grade(submit(course, "huge", {"exa-solution": cell}), course / "key.json", timeout=60))
    assert items["exa-tests"].score == 0 and "more than 1000000 items" in items["exa-tests"].message


# --- chapters, reports and odd input never crash grading (issue 11 item 7, issue 19 items 4-5) -------

def test_a_notebook_of_another_chapter_is_refused(course, tmp_path):
    # Review reproduction 9: a chapter-3 notebook renamed 04-... was graded as chapter 3 without a word.
    nb = nbformat.read(submit(course, "right", RIGHT), as_version=4)
    nb.metadata["hetlab"]["chapter"] = 3
    nbformat.write(nb, tmp_path / "04-swapped.ipynb")
    with pytest.raises(GradingError, match="named for chapter 4 but is the notebook of chapter 3"):
        grade(tmp_path / "04-swapped.ipynb", course / "key.json")
    nb.metadata["hetlab"]["chapter"] = "4"
    nbformat.write(nb, tmp_path / "12-string.ipynb")
    with pytest.raises(GradingError, match="hetlab.chapter must be a chapter number"):
        grade(tmp_path / "12-string.ipynb", course / "key.json")
    run = cli("grade", course / "04-right.ipynb", "--key", course / "key.json", "--chapter", "3")
    assert run.returncode == 2 and "is chapter 4, expected chapter 3 (--chapter)" in run.stderr
    for bad in ("+3", "١٣", "1_0", "x"):
        assert cli("grade", course / "04-right.ipynb", "--key", course / "key.json", "--chapter", bad).returncode == 2


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
    run = cli("grade", course / "04-right.ipynb", "--key", bad)
    assert run.returncode == 2 and "error: key is malformed" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr


def test_special_files_are_refused_without_reading_or_quoting_them(course, tmp_path):
    # Review reproduction 13: a FIFO hung, /dev/zero ran out of memory, /etc/passwd was quoted back.
    fifo = tmp_path / "fifo.ipynb"
    os.mkfifo(fifo)
    secret = tmp_path / "04-secret.ipynb"
    secret.write_text("root:x:0:0:the first line of a private file\n", encoding="utf-8")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    right, key = course / "04-right.ipynb", course / "key.json"
    cases = [((right, "--key", fifo), "regular file"), ((right, "--key", "/dev/zero"), "regular file"),
             ((fifo, "--key", key), "regular file"), ((secret, "--key", key), "not JSON"),
             ((right, "--key", deep), "nested too deeply"), ((right, "--key", tmp_path), "a folder"),
             ((tmp_path / ("x" * 5000), "--key", key), "cannot read submission"),
             ((right, "--key", key, "--timeout", "1e308"), "timeout must be in"),
             ((right, "--key", key, "--timeout", "nan"), "timeout must be a number")]
    for args, message in cases:
        run = cli("grade", *args, timeout=60)
        assert run.returncode == 2 and message in run.stderr, (args, run.stderr)
        assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr
        assert "first line of a private" not in run.stderr


def test_messages_from_the_kernel_stay_inside_their_field(course):
    # A message quotes the student's exception: newlines, carriage returns and terminal escapes are
    # flattened, and a field a spreadsheet would run as a formula is quoted.
    evil = ("def ceiling(p):\n"
            "    raise ValueError('=HYPERLINK(1)\\n04-x.ipynb,4,exb-tests,exercise,2,2,passed,\\r\\x1b[2K')")
    report = grade(submit(course, "evil-message", {"exb-solution": evil}), course / "key.json", timeout=30)
    row = [line for line in report.csv().splitlines() if ",exb-tests," in line]
    assert len(row) == 1 and "\x1b" not in report.text() and "\r" not in report.csv()
    assert exercises(report)["exb-tests"].score == 0


def test_grade_json_and_csv_for_an_lms(course):
    path = submit(course, "right", RIGHT)
    run = cli("grade", path, "--key", course / "key.json", "--json", "--timeout", "30")
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert set(result) == {"submission", "chapter", "score", "max_score", "items"} and result["chapter"] == 4
    assert result["max_score"] == len(quiz.questions(4)) + 3 and result["score"] == 3   # the quiz is blank
    assert all(set(i) == {"id", "kind", "score", "max_score", "status", "message"} for i in result["items"])
    assert {i["kind"] for i in result["items"]} == {"exercise", "question"}
    run = cli("grade", path, "--key", course / "key.json", "--csv")
    lines = run.stdout.splitlines()
    assert run.returncode == 0 and lines[0] == "submission,chapter,id,kind,score,max_score,status,message"
    assert "04-right.ipynb,4,exb-tests,exercise,2,2,passed," in lines
