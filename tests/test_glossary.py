"""The book-wide glossary (hetlab/book/data/glossary.json, the site's page 术语表 and its search word list).

The data must be well formed, each term must really occur in the chapter it names as its first use, and the
chapters' prose must not use a variant the glossary rules out (算子（kernel） for 核函数, 组件 for 控件, ...).
The variant check reads markdown cells only, without inline code and math, and names every offending chapter.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
GLOSSARY = json.loads((ROOT / "hetlab" / "book" / "data" / "glossary.json").read_text(encoding="utf-8"))
CHAPTERS = {p.stem.split("-")[0]: p for p in sorted((ROOT / "chapters").glob("*.ipynb")) if "-" in p.stem}

#: Chapters that still used a ruled-out variant when the glossary was introduced (2026-12); the chapter editors
#: replace them. The test below is xfail while any of these remain, and fails on any new offender.
KNOWN = {"05": {"动态队列"}}


def prose(path: Path) -> str:
    """A chapter's markdown, without fenced code, inline code and math (where other spellings are legitimate)."""
    nb = nbformat.read(path, as_version=4)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r"\$\$.*?\$\$", " ", text, flags=re.S)
    return re.sub(r"\$[^$\n]*\$", " ", text)


def test_glossary_entries_are_well_formed():
    assert len(GLOSSARY) >= 40
    terms = [item["term"] for item in GLOSSARY]
    assert len(terms) == len(set(terms)), "a term is listed twice"
    for item in GLOSSARY:
        assert set(item) == {"term", "english", "variants", "chapter"}, item
        assert re.search(r"[\u4e00-\u9fff]", item["term"]) and item["english"].isascii(), item
        assert item["chapter"] in CHAPTERS, item
        assert all(v and v != item["term"] and v not in terms for v in item["variants"]), item


def test_every_term_occurs_in_its_chapter_of_first_use():
    missing = []
    for item in GLOSSARY:
        text = prose(CHAPTERS[item["chapter"]]).lower()
        if item["term"] not in text and item["english"].split(" (")[0].lower() not in text:
            missing.append(f"{item['term']} (第 {item['chapter']} 章)")
    assert missing == []


def offenders() -> dict[str, dict[str, int]]:
    """chapter -> {variant: occurrences} for every ruled-out variant in the chapters' prose."""
    found: dict[str, dict[str, int]] = {}
    for chapter, path in CHAPTERS.items():
        text = prose(path)
        for item in GLOSSARY:
            for variant in item["variants"]:
                if variant in text:
                    found.setdefault(chapter, {})[variant] = text.count(variant)
    return found


def test_chapters_use_the_glossary_terms():
    found = offenders()
    instead = {v: item["term"] for item in GLOSSARY for v in item["variants"]}
    report = "; ".join(f"第 {c} 章: " + ", ".join(f"{v} ×{n}（应为 {instead[v]}）" for v, n in vs.items())
                       for c, vs in found.items())
    new = {c: [v for v in vs if v not in KNOWN.get(c, set())] for c, vs in found.items()}
    new = {c: vs for c, vs in new.items() if vs}
    assert new == {}, f"variants the glossary rules out, not known before: {new}"
    if found:   # only the variants listed in KNOWN remain: expected to fail until the chapter editors fix them
        pytest.xfail(f"chapters still use ruled-out variants: {report}")
