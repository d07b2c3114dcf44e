"""A chapter's quiz as cards that work in the page (book/_assets/hetlab/quiz.js): options, 提交, feedback with the
explanation, and progress in the browser's localStorage.

The site is for self-study, so the answers travel with the page, but not as readable text: each card carries
its answer and explanation as base64 of the UTF-8 JSON XOR-ed with the question id (against a glance at the
page source or a search hit, not encryption; the student edition, built by ``python -m hetlab
student-edition``, has no answers at all). Nothing of the answer is in the visible text, so search cannot
find it either.
"""
from __future__ import annotations

import base64
import html
import json


def encode_key(question_id: str, answer: list[str], explanation: str) -> str:
    """What quiz.js decodes: base64(JSON bytes XOR the id's bytes, repeated)."""
    payload = json.dumps({"answer": sorted(answer), "explanation": explanation}, ensure_ascii=False).encode("utf-8")
    mask = question_id.encode("utf-8")
    return base64.b64encode(bytes(b ^ mask[k % len(mask)] for k, b in enumerate(payload))).decode("ascii")


def decode_key(question_id: str, encoded: str) -> dict:
    """The inverse of :func:`encode_key` (used by the tests)."""
    raw = base64.b64decode(encoded)
    mask = question_id.encode("utf-8")
    return json.loads(bytes(b ^ mask[k % len(mask)] for k, b in enumerate(raw)).decode("utf-8"))


def quiz_html(chapter: int) -> str:
    """The cards of one chapter's quiz (every question of the bank for that chapter)."""
    from hetlab.book import quiz

    cards = []
    for q in quiz.questions(chapter):
        key = q.key()
        if key is None:
            raise SystemExit(f"build_site: the question bank has no answer for {q.id} (HETLAB_BANK is a student bank)")
        answer, explanation = key
        kind = "checkbox" if q.type == "multiple" else "radio"
        tag = "（多选）" if q.type == "multiple" and "多选" not in q.prompt else ""
        level = f'<span class="hetlab-q-level">［{html.escape(q.level)}］</span> ' if q.level else ""
        options = "".join(
            f'<label class="hetlab-q-option"><input type="{kind}" name="{html.escape(q.id)}" value="{letter}"> '
            f"<span>{html.escape(text)}</span></label>" for letter, text in zip(q.letters, q.options))
        cards.append(
            f'<form class="hetlab-question" data-id="{html.escape(q.id)}" data-type="{q.type}" '
            f'data-key="{encode_key(q.id, list(answer), explanation)}">'
            f'<p class="hetlab-q-prompt"><b>{html.escape(q.id)}</b> {level}{html.escape(q.prompt)}{tag}</p>'
            f'{options}<button type="submit" class="hetlab-q-submit">提交</button>'
            f'<div class="hetlab-q-feedback" aria-live="polite"></div></form>')
    return (f'<div class="hetlab-quiz" data-chapter="{chapter}">{"".join(cards)}'
            f'<p class="hetlab-quiz-score" aria-live="polite"></p>'
            '<p class="hetlab-quiz-note">答案在本页里检查，记录只保存在这台设备的浏览器中（localStorage）；'
            '在 JupyterLab 里作答时，记录保存在 hetlab 的进度文件中。</p></div>')
