"""The progress store (issue 11, items 9-10; issue 19, item 13): concurrent writers and openers lose nothing;
damage is survived with one warning; only a location that cannot work falls back to memory."""
import ast
import json
import multiprocessing
import os
import sqlite3
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import pytest

from hetlab.book import quiz
from hetlab.book.progress import CorruptProgressWarning, ProgressStore

ROOT = Path(__file__).resolve().parents[2]

WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from hetlab.book.progress import ProgressStore
    path, go, prefix, count = sys.argv[1], Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    store = ProgressStore(path)
    while not go.exists():        # start together, to collide as much as possible
        time.sleep(0.001)
    for k in range(count):
        qid = prefix.lstrip("=") if prefix == "shared" or prefix.startswith("=") else f"{prefix}-{k:03d}"
        store.record(qid, 1 + k % 13, "ABCD"[k % 4], k % 2 == 0)
""")


def test_six_processes_recording_at_once_lose_nothing(tmp_path):
    # 4 writers x 100 distinct questions, and 2 writers x 100 answers to one shared question, all at once.
    # The old JSON store (read, modify, replace) lost 197 of 400 records and counted 204 of 400 attempts.
    path, go = tmp_path / "progress.sqlite3", tmp_path / "go"
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(go), prefix, "100"])
               for prefix in ("w0", "w1", "w2", "w3", "shared", "shared")]
    time.sleep(1.0)
    go.touch()
    assert [w.wait(timeout=300) for w in writers] == [0] * 6
    with warnings.catch_warnings():
        warnings.simplefilter("error")       # a healthy database warns about nothing
        answers = ProgressStore(path).load()
    distinct = {qid: a for qid, a in answers.items() if qid != "shared"}
    assert len(distinct) == 400 and all(a["attempts"] == 1 for a in distinct.values())
    assert answers["shared"]["attempts"] == 200
    assert answers["w2-099"] == {"chapter": 1 + 99 % 13, "answer": "D", "correct": False,
                                 "time": answers["w2-099"]["time"], "attempts": 1}


def test_the_public_api_survives_a_restart(tmp_path):
    store = ProgressStore(tmp_path / "p.sqlite3")
    store.record("c06-1", 6, "A", False)
    store.record("c06-1", 6, "D", True)
    store.record("c07-1", 7, "B", None)
    again = ProgressStore(tmp_path / "p.sqlite3").load()     # a new store = a restarted kernel
    assert {k: (v["answer"], v["correct"], v["attempts"]) for k, v in again.items()} == {
        "c06-1": ("D", True, 2), "c07-1": ("B", None, 1)}
    assert ProgressStore(tmp_path / "p.sqlite3").chapter_score(6) == (1, 1)


def _legacy(path: Path, answers: dict) -> None:
    path.write_text(json.dumps({"version": 1, "answers": answers}), encoding="utf-8")


def test_a_json_progress_file_is_migrated_once(tmp_path):
    old = tmp_path / "progress.json"
    _legacy(old, {"c01-1": {"chapter": 1, "answer": "B", "correct": True, "time": 1.0, "attempts": 3},
                  "q02": {"chapter": 13, "answer": "AC", "correct": None, "time": 2.0, "attempts": 1}})
    store = ProgressStore(old)                  # HETLAB_PROGRESS may still name the .json file
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert store.load()["c01-1"]["attempts"] == 3
    assert not old.exists() and (tmp_path / "progress.json.migrated").exists()
    assert store.database == tmp_path / "progress.sqlite3"
    _legacy(old, {"c01-1": {"chapter": 1, "answer": "B", "correct": True, "time": 1.0, "attempts": 3}})
    store2 = ProgressStore(tmp_path / "progress.sqlite3")      # a stray copy of the old file reappears
    store2.record("c01-1", 1, "C", False)
    assert store2.load()["c01-1"]["attempts"] == 4              # migrated once: 3 + 1, not 3 + 3 + 1
    assert store2.load()["q02"] == {"chapter": 13, "answer": "AC", "correct": None, "time": 2.0, "attempts": 1}


def test_processes_starting_together_migrate_the_json_file_once(tmp_path):
    old, go = tmp_path / "progress.json", tmp_path / "go"
    _legacy(old, {"c01-1": {"chapter": 1, "answer": "B", "correct": True, "time": 1.0, "attempts": 3}})
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(old), str(go), "=c01-1", "1"]) for _ in range(4)]
    time.sleep(1.0)
    go.touch()
    assert [w.wait(timeout=300) for w in writers] == [0] * 4
    assert ProgressStore(old).load()["c01-1"]["attempts"] == 3 + 4       # the old 3 counted once, then 4 answers
    assert not old.exists() and (tmp_path / "progress.json.migrated").exists()


def _one_warning(action):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = action()
    ours = [w for w in caught if issubclass(w.category, CorruptProgressWarning)]
    assert len(ours) == 1, [str(w.message) for w in caught]
    return result, str(ours[0].message)


def _use(store: ProgressStore) -> dict:
    """What a chapter does: answer twice, read the score, answer again."""
    store.record("c05-1", 5, "A", False)
    store.record("c05-1", 5, "B", True)
    assert store.chapter_score(5) == (1, 1)
    store.record("c05-2", 5, "C", True)
    return store.load()


@pytest.mark.parametrize("name, damage, message", [
    ("invalid UTF-8", lambda p: p.write_bytes(b'{"version": 1, "answers": {"\xff\xfe": 1}}'), "UnicodeDecodeError"),
    ("deeply nested JSON", lambda p: p.write_text("[" * 200_000 + "]" * 200_000), "RecursionError"),
    ("not JSON", lambda p: p.write_text("{not json"), "damaged"),
])
def test_a_damaged_json_file_is_set_aside_with_one_warning(tmp_path, name, damage, message):
    old = tmp_path / "p.json"
    damage(old)
    before = old.read_bytes()
    answers, text = _one_warning(lambda: _use(ProgressStore(old)))
    assert answers["c05-1"]["attempts"] == 2 and message in text
    assert (tmp_path / "p.json.corrupt-1").read_bytes() == before     # kept for a human to look at
    assert ProgressStore(old).load() == answers                         # and the new record persists


def test_int_entries_in_a_json_file_are_skipped_and_the_rest_migrated(tmp_path):
    old = tmp_path / "p.json"
    _legacy(old, {"c01-1": 4, "c01-2": {"chapter": 1, "answer": "A", "correct": True, "time": 5.0, "attempts": 2},
                  "c01-3": {"chapter": "one", "answer": "A"}, "c01-4": {"chapter": 1, "answer": "A", "attempts": True}})
    answers, text = _one_warning(lambda: _use(ProgressStore(old)))
    assert "3 damaged entries" in text
    assert set(answers) == {"c01-2", "c05-1", "c05-2"} and answers["c01-2"]["attempts"] == 2
    assert (tmp_path / "p.json.migrated").exists()


def test_a_directory_in_place_of_the_json_file_is_left_alone(tmp_path):
    (tmp_path / "p.json").mkdir()
    answers, text = _one_warning(lambda: _use(ProgressStore(tmp_path / "p.json")))
    assert answers["c05-1"]["attempts"] == 2 and "not a file" in text and (tmp_path / "p.json").is_dir()
    with pytest.warns(CorruptProgressWarning, match="not a file"):     # each new store says so once
        assert ProgressStore(tmp_path / "p.json").load() == answers    # the database beside it works


def test_a_damaged_database_is_set_aside_with_one_warning(tmp_path):
    db = tmp_path / "p.sqlite3"
    db.write_bytes(b"this is not an SQLite database, it is a learner's essay" * 100)
    answers, text = _one_warning(lambda: _use(ProgressStore(db)))
    assert answers["c05-1"]["attempts"] == 2 and "damaged" in text
    assert (tmp_path / "p.sqlite3.corrupt-1").exists()
    assert ProgressStore(db).load() == answers


@pytest.mark.parametrize("where", ["directory", "read-only"])
def test_an_unusable_location_falls_back_to_memory_and_the_quiz_still_answers(tmp_path, where):
    if where == "directory":
        path = tmp_path / "p.sqlite3"
        path.mkdir()
    else:
        path = Path("/proc/hetlab-progress/p.sqlite3")    # /proc takes no new files, even from root
        assert not path.parent.exists()
    store = ProgressStore(path)

    def answer_in_the_widget():
        widget = quiz.ask("c06-1", store=store)
        return widget.submit("A"), widget.submit(sorted(quiz.question("c06-1").key()[0]))

    (wrong, right), text = _one_warning(answer_in_the_widget)
    assert "错误" in wrong and "正确" in right and "in memory" in text
    assert store.in_memory and store.load()["c06-1"]["attempts"] == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")       # still one warning in all: the fallback is kept
        _use(store)


def test_a_database_that_becomes_read_only_keeps_what_was_recorded(tmp_path, monkeypatch):
    store = ProgressStore(tmp_path / "p.sqlite3")
    store.record("c01-1", 1, "A", True)
    real_connect = sqlite3.connect

    def read_only(database, *args, **kwargs):
        if database == ":memory:":
            return real_connect(database, *args, **kwargs)
        return real_connect(f"file:{database}?mode=ro", *args, uri=True, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", read_only)
    answers, text = _one_warning(lambda: _use(store))
    assert "cannot write" in text and answers["c01-1"]["attempts"] == 1 and answers["c05-1"]["attempts"] == 2


@pytest.mark.parametrize("bad", [float("nan"), "", None, -1, True])
def test_record_checks_its_arguments(tmp_path, bad):
    store = ProgressStore(tmp_path / "p.sqlite3")
    for kwargs in ({"question_id": bad}, {"chapter": bad}, {"answer": bad}):
        call = {"question_id": "c01-1", "chapter": 1, "answer": "A", "correct": True, **kwargs}
        with pytest.raises((TypeError, ValueError), match=next(iter(kwargs))):
            store.record(**call)
    with pytest.raises(TypeError, match="correct"):
        store.record("c01-1", 1, "A", "yes")
    with pytest.raises(TypeError, match="path"):
        ProgressStore(3.5)
    assert store.load() == {}


def _imports(module: str) -> set[str]:
    """The hetlab.book modules that hetlab.book.<module> imports (at any depth, relative or absolute)."""
    tree = ast.parse((ROOT / "hetlab" / "book" / f"{module}.py").read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found |= {node.module} if node.module else {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("hetlab.book"):
            found |= {node.module.split(".")[2]} if node.module.count(".") >= 2 else {a.name for a in node.names}
    return found


def test_progress_and_quiz_import_each_other_in_one_direction_only():
    # bank <- progress <- quiz, never back (issue 11, "Structure"): imports inside functions count too.
    assert "quiz" not in _imports("progress") and "progress" not in _imports("bank") and "quiz" not in _imports("bank")
    assert {"bank", "progress"} <= _imports("quiz")
    run = subprocess.run([sys.executable, "-c", "import sys, hetlab.book.progress as p; p.ProgressStore('x').report;"
                          "print('hetlab.book.quiz' in sys.modules)"], capture_output=True, text=True, cwd=ROOT)
    assert run.stdout.strip() == "False", run.stderr


def test_chapter_label_names_the_appendix():
    import tempfile

    from hetlab.book.progress import ProgressStore, chapter_label

    assert chapter_label(5) == "第 5 章" and chapter_label(14) == "附录 A1"
    with pytest.raises(ValueError, match="chapter"):
        chapter_label(0)
    store = ProgressStore(Path(tempfile.mkdtemp()) / "p.db")
    assert store.chapter_summary(14, 6).startswith("附录 A1：已答 0/6 题")
    assert store.chapter_summary(3, 6).startswith("第 3 章：已答 0/6 题")


def test_progress_report_covers_all_chapters(tmp_path):
    store = ProgressStore(tmp_path / "p.json")
    store.record("q01", 13, "B", True)
    report = store.report()
    chapters = set(range(1, 14)) | {q.chapter for q in quiz.questions()}
    assert len(report.splitlines()) == len(chapters) + 2
    assert "面试题" in report and report.splitlines()[-1].split()[-3:] == ["1", "1", str(len(quiz.questions()))]



def test_a_special_file_is_never_written_to(tmp_path):
    # Review 2026-12-04, part C: HETLAB_PROGRESS=/dev/null fell back to memory but created /dev/null-journal.
    fifo = tmp_path / "p.sqlite3"
    os.mkfifo(fifo)
    answers, text = _one_warning(lambda: _use(ProgressStore(fifo)))
    assert "not a regular file" in text and answers["c05-1"]["attempts"] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sqlite3"]          # no journal, no WAL beside it


def test_a_busy_database_is_waited_for_not_given_up(tmp_path, monkeypatch):
    # Opening can answer "database is locked" at once (switching to WAL, creating the schema) while another
    # process opens the file: that is contention, retried until the busy timeout, not an unusable location.
    real_open, calls = ProgressStore._open_once, []

    def busy_twice(self):
        calls.append(1)
        if len(calls) <= 2:
            raise sqlite3.OperationalError("database is locked")
        return real_open(self)

    monkeypatch.setattr(ProgressStore, "_open_once", busy_twice)
    store = ProgressStore(tmp_path / "p.sqlite3")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        store.record("c01-1", 1, "A", True)
    assert len(calls) == 3 and not store.in_memory and store.load()["c01-1"]["attempts"] == 1


def _spin(stop) -> None:
    while not stop.is_set():
        pass


def _open_and_record(path: str, k: int, barrier, out) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        store = ProgressStore(path)
        barrier.wait()                     # every process opens the fresh store at the same moment
        store.record(f"c01-{k}", 1, "A", True)
    out.put((store.in_memory, [str(w.message) for w in caught]))


@pytest.mark.slow
@pytest.mark.parametrize("legacy", [False, True])
def test_fifty_rounds_of_eight_processes_opening_at_once_lose_nothing(tmp_path, legacy):
    # Issue 19, item 13: 4 processes opening a legacy store at once, one got "database is locked" while
    # opening, fell back to memory and lost its answer. How often depends on the machine's load: the same
    # 50 x 8 legacy rounds lost 4 and 7 of 400 answers before the fix while other tests ran, none on a
    # quiet machine (test_a_busy_database_is_waited_for_not_given_up is the deterministic check). Now none,
    # with two processes spinning on the CPU meanwhile.
    context = multiprocessing.get_context("fork")
    stop = context.Event()
    load = [context.Process(target=_spin, args=(stop,)) for _ in range(2)]
    for process in load:
        process.start()
    fallbacks, lost = [], 0
    try:
        for round_ in range(50):
            folder = tmp_path / f"r{round_}"
            folder.mkdir()
            path = folder / ("progress.json" if legacy else "progress.sqlite3")
            if legacy:            # 2,000 old answers: the migration holds the write lock a while
                _legacy(path, {f"c02-{k}": {"chapter": 2, "answer": "B", "correct": True, "time": 1.0, "attempts": 3}
                               for k in range(1, 2001)})
            barrier, out = context.Barrier(8), context.Queue()
            writers = [context.Process(target=_open_and_record, args=(str(path), k, barrier, out)) for k in range(8)]
            for writer in writers:
                writer.start()
            results = [out.get(timeout=300) for _ in writers]
            for writer in writers:
                writer.join(timeout=300)
            fallbacks += [messages for in_memory, messages in results if in_memory]
            saved = ProgressStore(path).load()
            lost += sum(f"c01-{k}" not in saved for k in range(8))
            if legacy:
                assert saved["c02-1"]["attempts"] == 3                 # migrated once
    finally:
        stop.set()
        for process in load:
            process.join()
    assert (lost, fallbacks) == (0, [])
