"""The question bank on paper: a learner's question sheet with each question's difficulty, and the
instructor's answer key with the correct letters and the explanation (``python -m hetlab answer-key``).

>>> print(question_sheet(11).splitlines()[0])
[c11-1]（单选 · 进阶）原文演示程序里“若偏好设备更早空闲则改派”的分支为什么从不执行？
"""
from __future__ import annotations

from pathlib import Path

from . import quiz
from ._validate import check_int

__all__ = ["question_sheet", "answer_key"]


def _chapters(chapter) -> list[int]:
    numbers = sorted({q.chapter for q in quiz.questions()})
    if chapter is None:
        return numbers
    chapter = check_int("chapter", chapter, low=1, high=14)
    if chapter not in numbers:
        raise ValueError(f"chapter must be one of {numbers} (chapters with questions), got {chapter}")
    return [chapter]


def _head(q: quiz.Question) -> str:
    kind = "多选" if q.type == "multiple" else "单选"
    level = f" · {q.level}" if q.level else ""
    prompt = q.prompt.replace("（多选）", "")
    return f"[{q.id}]（{kind}{level}）{prompt}"


def question_sheet(chapter: int, *, bank: str | Path | None = None) -> str:
    """One chapter's questions and options with their type and difficulty, without answers."""
    (chapter,) = _chapters(chapter)
    lines = []
    for q in quiz.questions(chapter, bank=bank):
        lines.append(_head(q))
        lines.extend(f"    {o}" for o in q.options)
    return "\n".join(lines)


def answer_key(chapter: int | None = None, *, bank: str | Path | None = None) -> str:
    """The answer key for instructors: every question of one chapter (default: all chapters) with
    its difficulty, options, the correct letters and the explanation.

    Raises ``ValueError`` when the bank carries no answers (a student edition's bank)."""
    out = []
    for number in _chapters(chapter):
        items = quiz.questions(number, bank=bank)
        out.append(f"第 {number} 章（{len(items)} 题）")
        for q in items:
            key = q.key()
            if key is None:
                raise ValueError(f"the question bank has no answers (question {q.id}): it is a student edition")
            letters, explanation = key
            out.append(_head(q))
            out.extend(f"    {o}" for o in q.options)
            out.append(f"    答案：{''.join(sorted(letters))}")
            out.append(f"    解析：{explanation}")
        out.append("")
    return "\n".join(out).rstrip("\n")
