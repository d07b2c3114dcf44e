"""The question bank: questions as data, with sealed answers, read from package files or an answer-free copy.

Answers and explanations are stored sealed (zlib + base64) in ``data/questions/cNN.json`` (one file per
chapter), so a learner reading a notebook's source, or skimming the data file, does not see them; this
is not encryption. A bank may also be one JSON list, as in a student edition's ``questions.json``,
which has no ``sealed`` fields at all (:func:`answer_free_bank` writes one).

Which bank: the ``bank`` argument, else ``$HETLAB_BANK`` if set (an instructor's answer-free bank for
graded use: then the package's own files are never read), else the package's folder :data:`BANK_PATH`.

Chapter authors edit one chapter as plain JSON: ``export_bank('/tmp/c04.json', chapter=4)``, edit,
``import_bank('/tmp/c04.json')`` (rewrites only that chapter's file). :mod:`hetlab.book.quiz` checks answers
and builds the widgets; :mod:`hetlab.book.progress` counts questions per chapter from here.
"""
from __future__ import annotations

import base64
import binascii
import json
import os
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from hetlab._validate import check_int, check_str

__all__ = ["Question", "questions", "question", "seal", "unseal", "export_bank", "import_bank", "answer_free_bank",
           "bank_path", "BANK_PATH", "BANK_ENV"]

#: The package's bank: a folder with one JSON list per chapter (``c01.json`` ... ``c13.json``).
BANK_PATH = Path(str(resources.files("hetlab.book") / "data" / "questions"))
#: Environment variable naming the bank to use instead of the package's (e.g. an answer-free one).
BANK_ENV = "HETLAB_BANK"


def seal(payload: dict) -> str:
    """Encode an answer payload so it is not readable at a glance (not encryption)."""
    if not isinstance(payload, dict):
        raise TypeError(f"payload must be a dict such as {{'answer': ['B'], 'explanation': '...'}}, "
                        f"got {type(payload).__name__}")
    try:
        raw = json.dumps(payload, ensure_ascii=False, sort_keys=True, allow_nan=False).encode()
    except (TypeError, ValueError) as exc:
        raise TypeError(f"payload must hold only JSON values (text, numbers, lists), got {exc}") from None
    return base64.b64encode(zlib.compress(raw, 9)).decode()


def unseal(token: str) -> dict:
    """The payload of a token written by :func:`seal`."""
    check_str("token", token)
    try:
        payload = json.loads(zlib.decompress(base64.b64decode(token, validate=True)).decode())
    except (binascii.Error, zlib.error, UnicodeDecodeError, ValueError):
        raise ValueError(f"token must be a sealed answer written by seal(), got {token[:40]!r}") from None
    if not isinstance(payload, dict):
        raise ValueError(f"token must be a sealed answer written by seal(), got {token[:40]!r}")
    return payload


def _text_tuple(name: str, value) -> tuple[str, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        raise TypeError(f"{name} must be a list of option texts, got {type(value).__name__}")
    if not 2 <= len(value) <= 26 or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"{name} must hold 2 to 26 non-empty texts, got {len(value)} items")
    return tuple(value)


@dataclass(frozen=True)
class Question:
    """One question. ``sealed`` (answer and explanation) is None in an answer-free bank."""

    id: str
    chapter: int
    type: str          # "single" or "multiple"
    prompt: str
    options: tuple[str, ...]
    sealed: str | None = None
    level: str | None = None

    def __post_init__(self) -> None:
        check_str("id", self.id)
        check_int("chapter", self.chapter, low=1, high=99)
        if self.type not in ("single", "multiple"):
            raise ValueError(f"type must be 'single' or 'multiple', got {self.type!r}")
        check_str("prompt", self.prompt, empty=True)
        object.__setattr__(self, "options", _text_tuple("options", self.options))
        if self.sealed is not None:
            check_str("sealed", self.sealed)
        if self.level is not None:
            check_str("level", self.level)

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
        elif isinstance(answer, (list, tuple, set, frozenset)) and all(isinstance(a, str) for a in answer):
            letters = [a.strip().upper() for a in answer]
        else:
            raise TypeError(f"answer must be letters such as 'B', 'AC' or ['A', 'C'], got {type(answer).__name__} "
                            f"{str(repr(answer))[:40]}")
        chosen = frozenset(letters)
        bad = sorted(chosen - set(self.letters))
        if bad:
            raise ValueError(f"answer for {self.id} must use letters {', '.join(self.letters)}, got {bad}")
        if not chosen:
            raise ValueError(f"answer for {self.id} must choose at least one option, got {answer!r}")
        if self.type == "single" and len(chosen) != 1:
            raise ValueError(f"answer: {self.id} is single-choice: answer with one letter, "
                             f"got {''.join(sorted(chosen))}")
        return chosen


def _read_items(path: Path) -> list[dict]:
    """The plain items of a bank: a JSON list, or a folder of ``*.json`` lists read in name order."""
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    items: list[dict] = []
    for file in files:
        try:
            part = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise ValueError(f"bank: cannot read question bank {file}: {exc}") from None
        if not isinstance(part, list) or not all(isinstance(item, dict) for item in part):
            raise ValueError(f"bank: question bank {file} must be a JSON list of questions")
        items.extend(part)
    return items


def _load(path: Path) -> tuple[Question, ...]:
    out = []
    for k, item in enumerate(_read_items(Path(path))):
        try:
            out.append(Question(item["id"], item["chapter"], item["type"], item["prompt"], item["options"],
                                item.get("sealed"), item.get("level")))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"bank: question {k} ({item.get('id', '?')}) of {path} is malformed: {exc}") from None
    return tuple(out)


@lru_cache(maxsize=8)
def _bank(path: str) -> dict[str, Question]:
    return {q.id: q for q in _load(Path(path))}


def bank_path(bank: str | os.PathLike | None = None) -> Path:
    """The bank in use: ``bank``, else ``$HETLAB_BANK``, else the package's :data:`BANK_PATH`."""
    if bank is None:
        return Path(os.environ[BANK_ENV]) if os.environ.get(BANK_ENV) else BANK_PATH
    if not isinstance(bank, (str, os.PathLike)) or not str(bank):
        raise TypeError(f"bank must be a path to a question bank (or None), got {type(bank).__name__} {bank!r}")
    return Path(bank)


def questions(chapter: int | None = None, *, bank: str | os.PathLike | None = None) -> list[Question]:
    """All questions of the bank, or those of one chapter, in bank order."""
    if chapter is not None:
        chapter = check_int("chapter", chapter, low=1, high=99)
    items = _bank(str(bank_path(bank))).values()
    return [q for q in items if chapter is None or q.chapter == chapter]


def question(question_id: str, *, bank: str | os.PathLike | None = None) -> Question:
    check_str("question_id", question_id)
    items = _bank(str(bank_path(bank)))
    if question_id not in items:
        raise ValueError(f"question_id must be a known id, got {question_id!r} (unknown question id; known ids: "
                         f"{', '.join(list(items)[:8])}, ...)")
    return items[question_id]


def _plain(q: Question) -> dict:
    item = {"id": q.id, "chapter": q.chapter, "type": q.type, "prompt": q.prompt, "options": list(q.options)}
    if q.level:
        item["level"] = q.level
    return item


def answer_free_items(chapters: Iterable[int] | None = None, *, bank: str | os.PathLike | None = None) -> list[dict]:
    """The questions of ``chapters`` (default all) without answers or explanations, as plain items."""
    wanted = None if chapters is None else {check_int("chapters", c, low=1, high=99) for c in chapters}
    return [_plain(q) for q in questions(bank=bank) if wanted is None or q.chapter in wanted]


def _write(path: str | os.PathLike, items: list, name: str = "path") -> None:
    """``items`` as indented JSON in ``path``; ValueError naming ``name`` where it cannot be written (a folder,
    a full disk, a missing folder), not an OSError."""
    try:
        Path(path).write_text(json.dumps(items, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"{name} must be a writable file path, got {path} ({exc.strerror or exc})") from None


def answer_free_bank(path: str | os.PathLike, chapters: Iterable[int] | None = None, *,
                     bank: str | os.PathLike | None = None) -> int:
    """Write a bank with no answers (a JSON list) for students' environments; return its size.

    Point the package at it with ``HETLAB_BANK=path`` and remove the package's ``data/questions``
    folder from that environment: then no file a learner can read holds an answer (see the README, 给教师).
    """
    if not isinstance(path, (str, os.PathLike)) or not str(path):
        raise TypeError(f"path must be a file path, got {type(path).__name__}")
    items = answer_free_items(chapters, bank=bank)
    _write(path, items)
    return len(items)


def export_bank(path: str | os.PathLike, *, bank: str | os.PathLike | None = None, chapter: int | None = None) -> int:
    """Write the bank (or one chapter of it) with answers in plain text, for an instructor to edit;
    return the count. :func:`import_bank` of that file rewrites only the chapters it holds."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file path, got {type(path).__name__}")
    chosen = questions(chapter, bank=bank)
    if chapter is not None and not chosen:     # nothing to edit: a typo, not an empty file to fill
        known = sorted({q.chapter for q in questions(bank=bank)})
        raise ValueError(f"chapter must be one of the bank's chapters {known}, got {chapter}")
    items = []
    for q in chosen:
        item = _plain(q)
        key = q.key()
        if key is not None:
            item["answer"], item["explanation"] = sorted(key[0]), key[1]
        items.append(item)
    _write(path, items)
    return len(items)


def import_bank(path: str | os.PathLike, out: str | os.PathLike | None = None) -> int:
    """Validate a plain bank and write it sealed to ``out`` (default: the package's bank, where only the
    chapters the plain bank holds are rewritten)."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file path, got {type(path).__name__}")
    items = _read_items(Path(path))
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
        q = Question(item["id"], item["chapter"], item["type"], item["prompt"], item["options"])
        answer = sorted(q.parse(item["answer"]))
        entry = {"id": q.id, "chapter": q.chapter, "type": q.type, "prompt": q.prompt, "options": list(q.options),
                 "sealed": seal({"answer": answer, "explanation": item["explanation"]})}   # the files' key order
        if item.get("level"):
            entry["level"] = item["level"]
        sealed.append(entry)
    target = Path(out or BANK_PATH)
    if target.is_dir():     # the package's layout: one file per chapter; only the chapters given are rewritten
        for chapter in sorted({e["chapter"] for e in sealed}):
            part = [e for e in sealed if e["chapter"] == chapter]
            _write(target / f"c{chapter:02d}.json", part, "out")
    else:
        _write(target, sealed, "out")
    _bank.cache_clear()
    return len(sealed)
