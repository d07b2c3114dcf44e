"""A learner's quiz answers and scores, kept across kernel restarts.

Stored as one small JSON file, written atomically (temporary file + ``os.replace``) so a
crash never leaves half a file. A file that cannot be read is reported with a warning,
moved aside as ``*.corrupt-N`` and replaced by an empty record, never crashing a chapter.

Location: ``$HETLAB_PROGRESS`` if set, else ``$XDG_DATA_HOME/hetlab/progress.json``
(``~/.local/share/hetlab/progress.json``).
"""
from __future__ import annotations

import json
import os
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ProgressStore", "default_store", "default_path", "panel", "CorruptProgressWarning", "CHAPTERS"]

#: Chapter number -> title, in the book's order.
CHAPTERS = {1: "可视化演示", 2: "并行执行概念", 3: "硬件并行基础", 4: "调度粒度划分", 5: "运行时调度策略",
            6: "同步与通信", 7: "性能分析指标", 8: "典型应用场景", 9: "优化策略", 10: "AI 应用场景",
            11: "Python 演示", 12: "常见误区", 13: "面试题"}


class CorruptProgressWarning(UserWarning):
    """The progress file could not be read; it was moved aside and a fresh one started."""


def default_path() -> Path:
    if os.environ.get("HETLAB_PROGRESS"):
        return Path(os.environ["HETLAB_PROGRESS"])
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "hetlab" / "progress.json"


@dataclass
class ProgressStore:
    """Answers by question id: ``{"chapter", "answer", "correct", "time", "attempts"}``."""

    path: Path

    def __post_init__(self) -> None:
        self.path = Path(self.path)

    def load(self) -> dict:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except OSError as exc:
            warnings.warn(f"cannot read progress file {self.path}: {exc}", CorruptProgressWarning, stacklevel=2)
            return {}
        try:
            data = json.loads(text)
            if not isinstance(data, dict) or not isinstance(data.get("answers", {}), dict):
                raise ValueError("not a progress record")
            return data.get("answers", {})
        except ValueError as exc:
            aside = self._set_aside()
            warnings.warn(f"progress file {self.path} is corrupt ({exc}); moved it to {aside} and started afresh",
                          CorruptProgressWarning, stacklevel=2)
            return {}

    def _set_aside(self) -> Path:
        k = 1
        while (aside := self.path.with_name(f"{self.path.name}.corrupt-{k}")).exists():
            k += 1
        os.replace(self.path, aside)
        return aside

    def _save(self, answers: dict) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".progress-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"version": 1, "answers": answers}, f, ensure_ascii=False, indent=1, sort_keys=True)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    def record(self, question_id: str, chapter: int, answer: str, correct: bool | None) -> None:
        """Store the latest answer to a question (``correct`` is None when no key is available)."""
        answers = self.load()
        previous = answers.get(question_id, {})
        answers[question_id] = {"chapter": int(chapter), "answer": answer, "correct": correct,
                                "time": round(time.time(), 3), "attempts": int(previous.get("attempts", 0)) + 1}
        self._save(answers)

    def chapter_score(self, chapter: int) -> tuple[int, int]:
        """(correct, answered) for one chapter."""
        items = [a for a in self.load().values() if a.get("chapter") == chapter]
        return sum(1 for a in items if a.get("correct")), len(items)

    def chapter_summary(self, chapter: int, total: int) -> str:
        right, answered = self.chapter_score(chapter)
        return f"第 {chapter} 章：已答 {answered}/{total} 题，答对 {right} 题"

    def report(self) -> str:
        """A table of progress across all chapters (questions from the package's bank)."""
        from .quiz import questions

        answers = self.load()
        lines = [f"{'章':>3}  {'标题':<10}{'已答':>6}{'答对':>6}{'题数':>6}"]
        totals = [0, 0, 0]
        for number, title in CHAPTERS.items():
            ids = [q.id for q in questions(number)]
            answered = [answers[i] for i in ids if i in answers]
            right = sum(1 for a in answered if a.get("correct"))
            totals = [totals[0] + len(answered), totals[1] + right, totals[2] + len(ids)]
            lines.append(f"{number:>3}  {title:<10}{len(answered):>6}{right:>6}{len(ids):>6}")
        lines.append(f"{'合计':>3}  {'':<10}{totals[0]:>6}{totals[1]:>6}{totals[2]:>6}")
        return "\n".join(lines)


def default_store() -> ProgressStore:
    return ProgressStore(default_path())


def panel(store: ProgressStore | None = None):
    """A widget showing :meth:`ProgressStore.report`, with a button to refresh it."""
    import html

    import ipywidgets as w

    store = store or default_store()
    text = w.HTML()
    button = w.Button(description="刷新进度")

    def refresh(_=None) -> str:
        text.value = f"<pre>{html.escape(store.report())}</pre>"
        return store.report()

    button.on_click(refresh)
    refresh()
    box = w.VBox([button, text])
    box.refresh = refresh
    return box
