"""Quizzes: one question bank (package data), checked without a browser, asked with a widget.

Answers and explanations are stored sealed (zlib + base64) in ``data/questions/cNN.json`` (one file
per chapter; a bank may also be a single JSON list, as in a student edition), so a
learner reading a notebook's source, or skimming the data file, does not see them; they are
revealed only when an answer is checked. :func:`check` is pure and deterministic, which lets
nbval and pytest validate every question; :func:`ask` builds the interactive version.

>>> check("c04-1", "A").text.splitlines()[0]
'[c04-1] 你的答案：A —— 错误 ✗（正确答案：D）'
"""
from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

__all__ = ["Question", "Result", "questions", "question", "check", "ask", "quiz", "render_text", "seal", "unseal",
           "export_bank", "import_bank", "BANK_PATH"]

#: The package's bank: a folder with one JSON list per chapter (``c01.json`` ... ``c13.json``).
BANK_PATH = Path(str(resources.files("hetlab") / "data" / "questions"))


def seal(payload: dict) -> str:
    """Encode an answer payload so it is not readable at a glance (not encryption)."""
    raw = json.dumps(payload, ensure_ascii=False, sort_keys=True).encode()
    return base64.b64encode(zlib.compress(raw, 9)).decode()


def unseal(token: str) -> dict:
    return json.loads(zlib.decompress(base64.b64decode(token)).decode())


@dataclass(frozen=True)
class Question:
    """One question. ``answer`` and ``explanation`` are None in a student edition's bank."""

    id: str
    chapter: int
    type: str          # "single" or "multiple"
    prompt: str
    options: tuple[str, ...]
    sealed: str | None = None
    level: str | None = None

    @property
    def letters(self) -> tuple[str, ...]:
        return tuple(chr(ord("A") + k) for k in range(len(self.options)))

    def key(self) -> tuple[frozenset[str], str] | None:
        """The correct letters and the explanation, or None if the bank carries no answers."""
        if self.sealed is None:
            return None
        payload = unseal(self.sealed)
        return frozenset(payload["answer"]), payload["explanation"]

    def parse(self, answer: str | Iterable[str]) -> frozenset[str]:
        """Normalise ``"ac"``, ``"A,C"`` or ``["A", "C"]`` to ``{"A", "C"}``; ValueError if invalid."""
        if isinstance(answer, str):
            letters = [c for c in answer.upper() if not c.isspace() and c not in ",;、，"]
        else:
            letters = [str(a).strip().upper() for a in answer]
        chosen = frozenset(letters)
        bad = sorted(chosen - set(self.letters))
        if bad:
            raise ValueError(f"answer for {self.id} must use letters {', '.join(self.letters)}, got {bad}")
        if not chosen:
            raise ValueError(f"answer for {self.id} must choose at least one option")
        if self.type == "single" and len(chosen) != 1:
            raise ValueError(f"{self.id} is single-choice: answer with one letter, got {''.join(sorted(chosen))}")
        return chosen


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

    def __str__(self) -> str:
        return self.text


def _read_items(path: Path) -> list[dict]:
    """The plain items of a bank: a JSON list, or a folder of ``*.json`` lists read in name order."""
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    items: list[dict] = []
    for file in files:
        try:
            items.extend(json.loads(file.read_text(encoding="utf-8")))
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"cannot read question bank {file}: {exc}") from None
    return items


def _load(path: Path) -> tuple[Question, ...]:
    items = _read_items(Path(path))
    out = []
    for item in items:
        out.append(Question(item["id"], int(item["chapter"]), item["type"], item["prompt"], tuple(item["options"]),
                            item.get("sealed"), item.get("level")))
    return tuple(out)


@lru_cache(maxsize=8)
def _bank(path: str) -> dict[str, Question]:
    return {q.id: q for q in _load(Path(path))}


def questions(chapter: int | None = None, *, bank: str | Path | None = None) -> list[Question]:
    """All questions of the bank, or those of one chapter, in bank order."""
    items = _bank(str(bank or BANK_PATH)).values()
    return [q for q in items if chapter is None or q.chapter == chapter]


def question(question_id: str, *, bank: str | Path | None = None) -> Question:
    items = _bank(str(bank or BANK_PATH))
    if question_id not in items:
        raise ValueError(f"unknown question id {question_id!r}; known ids: {', '.join(items)}")
    return items[question_id]


def check(question_id: str, answer: str | Iterable[str], *, bank: str | Path | None = None) -> Result:
    """Check an answer. ``answer`` is letters (``"B"``, ``"ACD"``, ``["A", "C"]``)."""
    q = question(question_id, bank=bank)
    chosen = q.parse(answer)
    key = q.key()
    if key is None:
        raise ValueError(f"the question bank has no answer for {question_id}: it is a student edition")
    correct_set, explanation = key
    return Result(q, chosen, chosen == correct_set, correct_set, explanation)


def export_bank(path: str | Path, *, bank: str | Path | None = None, chapter: int | None = None) -> int:
    """Write the bank (or one chapter of it) with answers in plain text, for an instructor to edit;
    return the count. :func:`import_bank` of that file rewrites only the chapters it holds."""
    items = []
    for q in questions(chapter, bank=bank):
        item = {"id": q.id, "chapter": q.chapter, "type": q.type, "prompt": q.prompt, "options": list(q.options)}
        if q.level:
            item["level"] = q.level
        key = q.key()
        if key is not None:
            item["answer"], item["explanation"] = sorted(key[0]), key[1]
        items.append(item)
    Path(path).write_text(json.dumps(items, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return len(items)


def import_bank(path: str | Path, out: str | Path | None = None) -> int:
    """Validate a plain bank and write it sealed to ``out`` (default: the package's bank, where only the
    chapters the plain bank holds are rewritten)."""
    items = json.loads(Path(path).read_text(encoding="utf-8"))
    seen = set()
    sealed = []
    for k, item in enumerate(items):
        for field in ("id", "chapter", "type", "prompt", "options", "answer", "explanation"):
            if field not in item:
                raise ValueError(f"question {k} ({item.get('id', '?')}) lacks {field!r}")
        if item["id"] in seen:
            raise ValueError(f"question id {item['id']!r} appears twice")
        seen.add(item["id"])
        if item["type"] not in ("single", "multiple"):
            raise ValueError(f"{item['id']}: type must be 'single' or 'multiple', got {item['type']!r}")
        q = Question(item["id"], int(item["chapter"]), item["type"], item["prompt"], tuple(item["options"]))
        answer = sorted(q.parse(item["answer"]))
        entry = {"id": q.id, "chapter": q.chapter, "type": q.type, "prompt": q.prompt, "options": list(q.options),
                 "sealed": seal({"answer": answer, "explanation": item["explanation"]})}
        if item.get("level"):
            entry["level"] = item["level"]
        sealed.append(entry)
    target = Path(out or BANK_PATH)
    if target.is_dir():     # the package's layout: one file per chapter; only the chapters given are rewritten
        for chapter in sorted({e["chapter"] for e in sealed}):
            part = [e for e in sealed if e["chapter"] == chapter]
            (target / f"c{chapter:02d}.json").write_text(json.dumps(part, ensure_ascii=False, indent=1) + "\n",
                                                        encoding="utf-8")
    else:
        target.write_text(json.dumps(sealed, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    _bank.cache_clear()
    return len(sealed)


# --- widgets -----------------------------------------------------------------------------------

def ask(question_id: str, *, bank: str | Path | None = None, store=None):
    """A quiz widget: options, a submit button, and feedback with the explanation.

    Each submission is recorded in the learner's progress store (see :mod:`hetlab.progress`).
    Returns the widget; ``widget.submit(answer)`` answers it programmatically (used by tests).
    """
    import ipywidgets as w

    q = question(question_id, bank=bank)
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
    from .progress import default_store

    (store or default_store()).record(q.id, q.chapter, "".join(sorted(letters)), correct)


def quiz(chapter: int, *, bank: str | Path | None = None, store=None):
    """All questions of a chapter as widgets, followed by a score line that updates on submit."""
    import ipywidgets as w

    from .progress import default_store

    store = store or default_store()
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


def render_text(chapter: int, *, bank: str | Path | None = None) -> str:
    """The chapter's questions and options as plain text (no answers), for a printed copy."""
    lines = []
    for q in questions(chapter, bank=bank):
        kind = "多选" if q.type == "multiple" else "单选"
        level = f"·{q.level}" if q.level else ""
        lines.append(f"[{q.id}]（{kind}{level}）{q.prompt}")
        lines.extend(f"    {o}" for o in q.options)
    return "\n".join(lines)
