"""The instructor's answer key: every question of the bank with its difficulty, options, the correct
letters and the explanation, as printable text (``python -m hetlab answer-key --chapter 13``).

>>> print(answer_key(11).splitlines()[0])
第 11 章（7 题）
"""
from __future__ import annotations

from pathlib import Path

from hetlab._validate import check_int
from hetlab.book import quiz

__all__ = ["answer_key"]


def answer_key(chapter: int | None = None, *, bank: str | Path | None = None) -> str:
    """Every question of one chapter (default: all chapters), each with its type and difficulty,
    its options, ``答案：`` the correct letters and ``解析：`` the explanation.

    Raises ``ValueError`` for a chapter without questions, and when the bank carries no answers
    (a student edition's bank)."""
    numbers = sorted({q.chapter for q in quiz.questions(bank=bank)})
    if chapter is not None:
        chapter = check_int("chapter", chapter, low=1, high=14)
        if chapter not in numbers:
            raise ValueError(f"chapter must be one of {numbers} (chapters with questions), got {chapter}")
        numbers = [chapter]
    out = []
    for number in numbers:
        items = quiz.questions(number, bank=bank)
        out.append(f"第 {number} 章（{len(items)} 题）")
        for q in items:
            key = q.key()
            if key is None:
                raise ValueError(f"the question bank has no answers (question {q.id}): it is a student edition")
            letters, explanation = key
            kind = "多选" if q.type == "multiple" else "单选"
            level = f"·{q.level}" if q.level else ""
            out.append(f"[{q.id}]（{kind}{level}）{q.prompt.replace('（多选）', '')}")
            out.extend(f"    {o}" for o in q.options)
            out.append(f"    答案：{''.join(sorted(letters))}")
            out.append(f"    解析：{explanation}")
        out.append("")
    return "\n".join(out).rstrip("\n")
