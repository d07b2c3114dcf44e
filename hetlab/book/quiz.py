"""Quizzes: check an answer without a browser, or ask with a widget. The bank itself is :mod:`hetlab.book.bank`.

:func:`check` is pure and deterministic, which lets nbval and pytest validate every question;
:func:`ask` and :func:`quiz` build the interactive version, which records each submission in the
learner's progress store (:mod:`hetlab.book.progress`). The bank's names (``questions``, ``question``,
``Question``, ``export_bank``, ``import_bank``, ...) are re-exported here, as chapters use them.

>>> check("c04-1", "A").text.startswith("[c04-1] 你的答案：A")
True
"""
from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from hetlab._validate import check_bool, check_int, check_str
from hetlab.book.bank import (
    BANK_ENV,
    BANK_PATH,
    Question,
    answer_free_bank,
    bank_path,
    export_bank,
    import_bank,
    question,
    questions,
    seal,
    unseal,
)

__all__ = ["Question", "Result", "questions", "question", "check", "ask", "quiz", "render_text", "seal", "unseal",
           "export_bank", "import_bank", "answer_free_bank", "bank_path", "BANK_PATH", "BANK_ENV"]


@dataclass(frozen=True)
class Result:
    """The outcome of checking one answer; ``text`` is deterministic (nbval compares it)."""

    question: Question
    chosen: frozenset[str]
    correct: bool
    answer: frozenset[str]
    explanation: str

    @property
    def text(self) -> str:
        chosen = "".join(sorted(self.chosen))
        verdict = "正确 ✓" if self.correct else f"错误 ✗（正确答案：{''.join(sorted(self.answer))}）"
        return f"[{self.question.id}] 你的答案：{chosen} —— {verdict}\n解析：{self.explanation}"

    def __post_init__(self) -> None:
        if not isinstance(self.question, Question):
            raise TypeError(f"question must be a Question, got {type(self.question).__name__}")
        for name in ("chosen", "answer"):
            value = getattr(self, name)
            if not (isinstance(value, frozenset) and all(v in self.question.letters for v in value)):
                raise TypeError(f"{name} must be a frozenset of the letters {''.join(self.question.letters)}, "
                                f"got {str(repr(value))[:40]}")
        check_bool("correct", self.correct)
        check_str("explanation", self.explanation, empty=True)

    def __str__(self) -> str:
        return self.text


def check(question_id: str, answer: str | Iterable[str], *, bank: str | os.PathLike | None = None) -> Result:
    """Check an answer. ``answer`` is letters (``"B"``, ``"ACD"``, ``["A", "C"]``)."""
    q = question(question_id, bank=bank)
    chosen = q.parse(answer)
    key = q.key()
    if key is None:
        raise ValueError(f"the question bank has no answer for {question_id}: it is a student edition")
    correct_set, explanation = key
    return Result(q, chosen, chosen == correct_set, correct_set, explanation)


# --- widgets -----------------------------------------------------------------------------------

def ask(question_id: str, *, bank: str | os.PathLike | None = None, store=None):
    """A quiz widget: options, a submit button, and feedback with the explanation.

    Each submission is recorded in the learner's progress store (see :mod:`hetlab.book.progress`).
    Returns the widget; ``widget.submit(answer)`` answers it programmatically (used by tests).
    """
    import ipywidgets as w

    from hetlab.book.progress import check_store

    q = question(question_id, bank=bank)
    if store is not None:
        check_store(store)
    if q.type == "single":
        choice = w.RadioButtons(options=list(q.options), value=None, layout=w.Layout(width="auto"))
        boxes = None
    else:
        boxes = [w.Checkbox(value=False, description=o, indent=False, layout=w.Layout(width="auto"))
                 for o in q.options]
        choice = w.VBox(boxes)
    button = w.Button(description="提交", button_style="primary")
    feedback = w.HTML()
    tag = "（多选）" if q.type == "multiple" and "多选" not in q.prompt else ""
    level = f" <span style='color:#666'>［{q.level}］</span>" if q.level else ""
    title = w.HTML(f"<b>{q.id}</b>{level} {q.prompt}{tag}")
    box = w.VBox([title, choice, button, feedback], layout=w.Layout(border="1px solid #ddd", padding="6px",
                                                                    margin="4px 0"))

    def chosen_letters() -> list[str]:
        if boxes is None:
            return [] if choice.value is None else [q.letters[q.options.index(choice.value)]]
        return [q.letters[k] for k, b in enumerate(boxes) if b.value]

    def submit(answer=None) -> str:
        letters = chosen_letters() if answer is None else sorted(q.parse(answer))
        if not letters:
            feedback.value = "<span style='color:#a60'>请先选择一个选项。</span>"
            return feedback.value
        if q.key() is None:
            _record(store, q, letters, None)
            feedback.value = f"已提交：{''.join(letters)}（本版不含答案，由教师评分）"
            return feedback.value
        result = check(q.id, letters, bank=bank)
        _record(store, q, letters, result.correct)
        colour = "#2a7" if result.correct else "#c33"
        head, _, expl = result.text.partition("\n")
        feedback.value = f"<div style='color:{colour}'><b>{head}</b></div><div>{expl}</div>"
        return feedback.value

    button.on_click(lambda _: submit())
    box.submit = submit
    box.question = q
    return box


def _record(store, q: Question, letters, correct) -> None:
    from hetlab.book.progress import check_store

    check_store(store).record(q.id, q.chapter, "".join(sorted(letters)), correct)


def quiz(chapter: int, *, bank: str | os.PathLike | None = None, store=None):
    """All questions of a chapter as widgets, followed by a score line that updates on submit."""
    import ipywidgets as w

    from hetlab.book.progress import check_store

    chapter = check_int("chapter", chapter, low=1, high=99)
    store = check_store(store)
    items = [ask(q.id, bank=bank, store=store) for q in questions(chapter, bank=bank)]
    score = w.HTML()

    def refresh(_=None) -> None:
        score.value = f"<b>{store.chapter_summary(chapter, len(items))}</b>"

    for item in items:
        item.children[2].on_click(refresh)
    refresh()
    box = w.VBox([*items, score])
    box.items = items
    box.refresh = refresh
    return box


def render_text(chapter: int, *, bank: str | os.PathLike | None = None) -> str:
    """The chapter's questions and options as plain text (no answers), for a printed copy."""
    chapter = check_int("chapter", chapter, low=1, high=99)
    lines = []
    for q in questions(chapter, bank=bank):
        kind = "多选" if q.type == "multiple" else "单选"
        level = f"·{q.level}" if q.level else ""
        lines.append(f"[{q.id}]（{kind}{level}）{q.prompt}")
        lines.extend(f"    {o}" for o in q.options)
    return "\n".join(lines)
