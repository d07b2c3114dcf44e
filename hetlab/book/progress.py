"""A learner's quiz answers and scores, kept across kernel restarts, in one SQLite database.

Why SQLite (standard library): several kernels (two notebooks open, a JupyterLab and a terminal) may
record answers at once. Each record is one ``BEGIN IMMEDIATE`` transaction holding SQLite's write lock
(WAL journal, a 30 s busy timeout), so concurrent writers queue instead of overwriting each other;
attempts are counted by the database (``attempts = attempts + 1``), never read-modify-written here.
Opening is retried too: switching to WAL and creating the schema can answer "database is locked" at
once, without the busy timeout, while another process opens the same file; that is contention, not an
unusable location, so it is retried (with growing pauses) until the timeout.

Location: ``$HETLAB_PROGRESS`` if set, else ``$XDG_DATA_HOME/hetlab/progress.sqlite3``
(``~/.local/share/hetlab/``). A path ending in ``.json`` names the old JSON file: the database is kept
beside it with the suffix ``.sqlite3``, and the JSON file is migrated once, then renamed ``*.migrated``.

Nothing here may stop a chapter or a quiz: a damaged database or JSON file is moved aside as
``*.corrupt-N`` with a warning; a location that cannot be used at all (a directory where the file
should be, a FIFO or device, a read-only place, a lock held past the timeout) gives one
:class:`CorruptProgressWarning` and an in-memory store for the rest of the session.
"""
from __future__ import annotations

import json
import math
import os
import sqlite3
import time
import warnings
from pathlib import Path

from hetlab._validate import check_bool, check_int, check_str, describe

__all__ = ["ProgressStore", "default_store", "default_path", "panel", "CorruptProgressWarning", "CHAPTERS",
           "APPENDICES", "chapter_label"]

#: Chapter number -> title, in the book's order.
CHAPTERS = {1: "可视化演示", 2: "并行执行概念", 3: "硬件并行基础", 4: "调度粒度划分", 5: "运行时调度策略",
            6: "同步与通信", 7: "性能分析指标", 8: "典型应用场景", 9: "优化策略", 10: "AI 应用场景",
            11: "Python 演示", 12: "常见误区", 13: "面试题"}

#: Bank chapter number -> appendix name, for the appendices (their questions sit after the chapters).
APPENDICES = {14: "A1", 15: "A2"}


def chapter_label(chapter: int) -> str:
    """How the book names a bank chapter: "第 5 章" for a chapter, "附录 A1" for an appendix (:data:`APPENDICES`).

    >>> chapter_label(5), chapter_label(14)
    ('第 5 章', '附录 A1')
    """
    chapter = check_int("chapter", chapter, low=1, high=99)
    return f"附录 {APPENDICES[chapter]}" if chapter in APPENDICES else f"第 {chapter} 章"


SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    question_id TEXT PRIMARY KEY,
    chapter     INTEGER NOT NULL,
    answer      TEXT NOT NULL,
    correct     INTEGER,            -- 1, 0, or NULL when the bank had no key
    time        REAL NOT NULL,
    attempts    INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
UPSERT = """
INSERT INTO answers (question_id, chapter, answer, correct, time, attempts) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (question_id) DO UPDATE SET
    attempts = attempts + excluded.attempts,
    chapter = CASE WHEN excluded.time >= time THEN excluded.chapter ELSE chapter END,
    answer = CASE WHEN excluded.time >= time THEN excluded.answer ELSE answer END,
    correct = CASE WHEN excluded.time >= time THEN excluded.correct ELSE correct END,
    time = max(time, excluded.time)
"""
BUSY_TIMEOUT_S = 30.0
SQLITE_BUSY, SQLITE_LOCKED = 5, 6


def _contention(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` says another connection holds a lock (worth waiting for), not that the file is unusable."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in (SQLITE_BUSY, SQLITE_LOCKED)
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc))


def _retrying(action, deadline: float):
    """``action()``, again after a pause while the database is busy, until ``deadline`` (then the error)."""
    pause = 0.002
    while True:
        try:
            return action()
        except sqlite3.Error as exc:
            if not _contention(exc) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(2 * pause, 0.2)


class CorruptProgressWarning(UserWarning):
    """The progress store was damaged or unusable; it was set aside, or kept in memory for this session."""


def _database_of(path: Path) -> Path:
    return path.with_suffix(".sqlite3") if path.suffix == ".json" else path


def default_path() -> Path:
    """The learner's progress database."""
    if os.environ.get("HETLAB_PROGRESS"):
        return _database_of(Path(os.environ["HETLAB_PROGRESS"]))
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "hetlab" / "progress.sqlite3"


def _aside(path: Path, tag: str) -> Path:
    k = 1
    while (target := path.with_name(f"{path.name}.{tag}-{k}")).exists():
        k += 1
    os.replace(path, target)
    return target


def _legacy_entries(text: bytes) -> tuple[list[tuple], int]:
    """(valid rows, number of entries skipped) of an old JSON progress file; ValueError if unreadable."""
    try:
        data = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ValueError(f"{type(exc).__name__}: {str(exc)[:80]}") from None
    answers = data.get("answers") if isinstance(data, dict) else None
    if not isinstance(answers, dict):
        raise ValueError("not a progress record (no 'answers' object)")
    rows, skipped = [], 0
    for qid, entry in answers.items():
        try:
            chapter, attempts = entry["chapter"], entry.get("attempts", 1)
            stamp, correct, answer = entry.get("time", 0.0), entry.get("correct"), entry["answer"]
            ok = (isinstance(qid, str) and qid and type(chapter) is int and 1 <= chapter <= 99
                  and type(attempts) is int and attempts >= 1 and isinstance(answer, str)
                  and (correct is None or isinstance(correct, bool))
                  and isinstance(stamp, (int, float)) and not isinstance(stamp, bool) and math.isfinite(stamp))
        except (TypeError, KeyError, AttributeError):
            ok = False
        if not ok:
            skipped += 1
            continue
        rows.append((qid, chapter, answer, None if correct is None else int(correct), float(stamp), attempts))
    return rows, skipped


class ProgressStore:
    """Answers by question id: ``{"chapter", "answer", "correct", "time", "attempts"}``.

    ``path`` is the database, or an old ``*.json`` progress file (then the database sits beside it).
    """

    def __init__(self, path: str | os.PathLike) -> None:
        if not isinstance(path, (str, os.PathLike)) or not str(path):
            raise TypeError(f"path must be a file path for the progress database, got {describe(path)}")
        self.path = Path(path)
        self.database = _database_of(self.path)
        self.legacy = self.path if self.path.suffix == ".json" else self.path.with_suffix(".json")
        self._memory: sqlite3.Connection | None = None
        self._warned = False
        self._ready = False

    def __repr__(self) -> str:
        where = "in memory" if self._memory is not None else str(self.database)
        return f"ProgressStore({str(self.path)!r}, {where})"

    @property
    def in_memory(self) -> bool:
        """True once the location proved unusable and answers are kept for this session only."""
        return self._memory is not None

    # --- connections -----------------------------------------------------------------------------

    def _warn(self, message: str) -> None:
        if not self._warned:      # one warning per store: a quiz keeps working without a stream of them
            self._warned = True
            warnings.warn(message, CorruptProgressWarning, stacklevel=4)

    def _open(self) -> sqlite3.Connection:
        return _retrying(self._open_once, time.monotonic() + BUSY_TIMEOUT_S)

    def _open_once(self) -> sqlite3.Connection:
        if self.database.is_dir():
            raise IsADirectoryError(f"{self.database} is a directory")
        if os.path.exists(self.database) and not self.database.is_file():   # /dev/null, a FIFO: never touch
            raise OSError(f"{self.database} is not a regular file")
        self.database.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.database, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.executescript(SCHEMA)
            conn.execute("SELECT count(*) FROM answers").fetchone()
        except BaseException:
            conn.close()
            raise
        return conn

    def _connect(self) -> sqlite3.Connection:
        if self._memory is not None:
            return self._memory
        try:
            try:
                conn = self._open()
            except sqlite3.DatabaseError as exc:
                if isinstance(exc, sqlite3.OperationalError):
                    raise         # locked beyond the timeout, cannot open, read-only: not damage
                aside = _aside(self.database, "corrupt")
                for suffix in ("-wal", "-shm"):
                    side = self.database.with_name(self.database.name + suffix)
                    if side.exists():
                        os.replace(side, aside.with_name(aside.name + suffix))
                self._warn(f"progress database {self.database} is damaged ({exc}); moved it to {aside} "
                           "and started afresh")
                conn = self._open()
            if not self._ready:
                try:
                    _retrying(lambda: self._migrate(conn), time.monotonic() + BUSY_TIMEOUT_S)
                except BaseException:
                    conn.close()
                    raise
                self._ready = True
            return conn
        except (sqlite3.Error, OSError) as exc:
            return self._fall_back(f"cannot use the progress database {self.database} ({exc})")

    def _fall_back(self, reason: str, rows: list | None = None) -> sqlite3.Connection:
        self._warn(f"{reason}; answers are kept in memory for this session only")
        memory = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        memory.executescript(SCHEMA)
        if rows:
            memory.executemany(UPSERT, rows)
        self._memory = memory
        return memory

    def _close(self, conn: sqlite3.Connection) -> None:
        if conn is not self._memory:
            conn.close()

    def _migrate(self, conn: sqlite3.Connection) -> None:
        """Copy an old JSON progress file into the database once, then rename it ``*.migrated``."""
        legacy = self.legacy
        if legacy == self.database or not os.path.lexists(legacy):
            return
        if not legacy.is_file():
            self._warn(f"old progress file {legacy} is not a file; it was left alone")
            return
        try:
            text = legacy.read_bytes()
        except OSError as exc:
            self._warn(f"cannot read old progress file {legacy} ({exc}); it was left alone")
            return
        try:
            rows, skipped = _legacy_entries(text)
        except ValueError as exc:
            try:
                aside = _aside(legacy, "corrupt")
            except OSError:
                aside = legacy
            self._warn(f"old progress file {legacy} is damaged ({exc}); moved it to {aside}")
            return
        conn.execute("BEGIN IMMEDIATE")   # one process migrates; the others see the mark and skip
        try:
            if conn.execute("SELECT 1 FROM meta WHERE key = 'migrated'").fetchone() is None:
                conn.executemany(UPSERT, rows)
                conn.execute("INSERT INTO meta (key, value) VALUES ('migrated', ?)", (str(legacy),))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        try:
            os.replace(legacy, legacy.with_name(legacy.name + ".migrated"))
        except OSError:
            pass                          # another process renamed it first
        if skipped:
            self._warn(f"old progress file {legacy}: {skipped} damaged entries were skipped, the rest migrated "
                       f"(the file is kept as {legacy.name}.migrated)")

    # --- the public API -------------------------------------------------------------------------

    def load(self) -> dict:
        """Every answered question: id -> ``{"chapter", "answer", "correct", "time", "attempts"}``."""
        conn = self._connect()
        try:
            rows = _retrying(lambda: conn.execute("SELECT question_id, chapter, answer, correct, time, attempts "
                                                  "FROM answers ORDER BY question_id").fetchall(),
                             time.monotonic() + BUSY_TIMEOUT_S)
        except sqlite3.Error as exc:
            self._close(conn)
            conn = self._fall_back(f"cannot read the progress database {self.database} ({exc})")
            rows = []
        finally:
            self._close(conn)
        return {qid: {"chapter": chapter, "answer": answer, "correct": None if correct is None else bool(correct),
                      "time": stamp, "attempts": attempts} for qid, chapter, answer, correct, stamp, attempts in rows}

    def record(self, question_id: str, chapter: int, answer: str, correct: bool | None) -> None:
        """Store the latest answer to a question and count the attempt (``correct`` is None when no key
        is available). One transaction: safe with several processes recording at once."""
        check_str("question_id", question_id)
        chapter = check_int("chapter", chapter, low=1, high=99)
        check_str("answer", answer)
        if correct is not None:
            correct = check_bool("correct", correct)
        row = (question_id, chapter, answer, None if correct is None else int(correct), round(time.time(), 3), 1)
        conn = self._connect()

        def write() -> None:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute(UPSERT, row)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

        try:
            _retrying(write, time.monotonic() + BUSY_TIMEOUT_S)
        except sqlite3.Error as exc:          # read-only, disk full, damaged since it was opened
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            try:
                saved = conn.execute("SELECT question_id, chapter, answer, correct, time, attempts "
                                     "FROM answers").fetchall()
            except sqlite3.Error:
                saved = []
            self._close(conn)
            memory = self._fall_back(f"cannot write the progress database {self.database} ({exc})", saved)
            memory.execute(UPSERT, row)
            return
        finally:
            self._close(conn)

    def chapter_score(self, chapter: int) -> tuple[int, int]:
        """(correct, answered) for one chapter."""
        chapter = check_int("chapter", chapter, low=1, high=99)
        items = [a for a in self.load().values() if a["chapter"] == chapter]
        return sum(1 for a in items if a["correct"]), len(items)

    def chapter_summary(self, chapter: int, total: int) -> str:
        total = check_int("total", total, low=0, high=10_000)
        right, answered = self.chapter_score(chapter)
        return f"{chapter_label(chapter)}：已答 {answered}/{total} 题，答对 {right} 题"

    def report(self) -> str:
        """A table of progress across all chapters (question counts from the bank, :mod:`hetlab.book.bank`)."""
        from hetlab.book.bank import questions

        answers = self.load()
        lines = [f"{'章':>3}  {'标题':<10}{'已答':>6}{'答对':>6}{'题数':>6}"]
        totals = [0, 0, 0]
        numbers = sorted(set(CHAPTERS) | {q.chapter for q in questions()})   # appendices have questions too
        for number in numbers:
            title = CHAPTERS.get(number, "附录")
            ids = [q.id for q in questions(number)]
            answered = [answers[i] for i in ids if i in answers]
            right = sum(1 for a in answered if a["correct"])
            totals = [totals[0] + len(answered), totals[1] + right, totals[2] + len(ids)]
            lines.append(f"{number:>3}  {title:<10}{len(answered):>6}{right:>6}{len(ids):>6}")
        lines.append(f"{'合计':>3}  {'':<10}{totals[0]:>6}{totals[1]:>6}{totals[2]:>6}")
        return "\n".join(lines)


_STORES: dict[str, ProgressStore] = {}


def default_store() -> ProgressStore:
    """The learner's store (one per location and process, so a fallback to memory lasts the session)."""
    path = str(default_path())
    if path not in _STORES:
        _STORES[path] = ProgressStore(path)
    return _STORES[path]


def check_store(store) -> ProgressStore:
    """``store`` if it is a ProgressStore (or None: the learner's own store)."""
    if store is None:
        return default_store()
    if not isinstance(store, ProgressStore):
        raise TypeError(f"store must be a ProgressStore (or None for the learner's own), got {describe(store)}")
    return store


def panel(store: ProgressStore | None = None):
    """A widget showing :meth:`ProgressStore.report`, with a button to refresh it."""
    import html

    import ipywidgets as w

    store = check_store(store)
    text = w.HTML()
    button = w.Button(description="刷新进度")

    def refresh(_=None) -> str:
        report = store.report()
        text.value = f"<pre>{html.escape(report)}</pre>"
        return report

    button.on_click(refresh)
    refresh()
    box = w.VBox([button, text])
    box.refresh = refresh
    return box
