"""How a chapter notebook becomes a page of the website (used by scripts/build_site.py while staging).

The notebooks in chapters/ are not changed; the staged copy is:

- free of test markers (``# NBVAL_...``, nbgrader's ``### BEGIN/END ...`` lines);
- answer-safe: each exercise shows the student's stub, its reference solution folded behind a
  ``<details>`` "参考答案" that asks the reader to try first, and its visible tests only (hidden tests are
  dropped, never published);
- honest about its widgets: every ipywidgets output is replaced by a block that either computes in the page,
  steps through positions drawn at build time, or shows one figure with a note and launch links
  (scripts/site_widgets.py decides which);
- a quiz shown once, as cards that check answers in the page (the text dump printed for the PDF is dropped);
- figures numbered per chapter (图 4.2) with a caption and alt text: the cell's ``caption`` metadata if the
  chapter gives one, else the section the figure belongs to.
"""
from __future__ import annotations

import base64
import html
import json
import re
import struct
from dataclasses import dataclass, field

MARKER = re.compile(r"^[ \t]*#[ \t]*NBVAL_\w+[^\n]*\n?", re.M)
NBGRADER_MARKER = re.compile(r"^[ \t]*### (BEGIN|END) (SOLUTION|HIDDEN TESTS)[^\n]*\n?", re.M)
QUIZ_TEXT = re.compile(r"^\s*print\(\s*quiz\.render_text\(\s*\d+\s*\)\s*\)\s*$")
QUIZ_CARDS = re.compile(r"quiz\.quiz\(\s*(\d+)\s*\)")
VIEW_CALL = re.compile(r"\b(?:\w+\.)?(\w+)\(([^()]*)\)\s*\.widget\b")   # views.granularity_explorer().widget
HEADING = re.compile(r"^(#{1,3})\s+(.+?)\s*$", re.M)
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
SOLUTION_SUMMARY = "参考答案（先自己动手写一遍，运行上面的测试，再展开对照）"


@dataclass
class PageContext:
    """What the transformation needs to know about one chapter page."""

    stem: str                      # "04-granularity"
    label: str                     # "4" or "A1": figures are numbered 图 4.1, 图 A1.1
    binder: str                    # launch links for this chapter
    colab: str
    widget_html: object            # callable(name, args, cell, context) -> str | None (site_widgets.widget_html)
    quiz_html: object              # callable(chapter) -> str (site_quiz.quiz_html)
    figures: int = 0
    report: dict = field(default_factory=lambda: {"solutions": 0, "hidden_tests": 0, "widgets": [], "quizzes": 0,
                                                   "figures": 0, "markers": 0})

    def next_figure(self) -> str:
        self.figures += 1
        return f"{self.label}.{self.figures}"


def strip_markers(source: str) -> tuple[str, int]:
    """The source without test-harness lines; and how many were removed."""
    source, n = MARKER.subn("", source)
    source, m = NBGRADER_MARKER.subn("", source)
    return source.strip("\n"), n + m


def _markdown_escape(text: str) -> str:
    return re.sub(r"([*_`\[\]<>|\\])", r"\\\1", text)


def _plain_heading(text: str) -> str:
    text = re.sub(r"\$([^$]*)\$", r"\1", text)
    text = re.sub(r"[*_`]", "", text)
    return text.strip()


def png_size(data: str) -> tuple[int, int, float]:
    """Width and height in pixels and dots per inch of a base64 PNG (dpi 100 when it does not say)."""
    raw = base64.b64decode(data[:200_000] if len(data) > 200_000 else data, validate=False)
    width, height = struct.unpack(">II", raw[16:24])
    dpi = 100.0
    at = raw.find(b"pHYs")
    if at > 0:
        ppu_x, _, unit = struct.unpack(">IIB", raw[at + 4:at + 13])
        if unit == 1 and ppu_x:
            dpi = ppu_x * 0.0254
    return width, height, dpi


def phone_class(width_px: float, dpi: float) -> str:
    """A class that keeps a figure at least 72 CSS px per inch on a phone (10 pt text at >= 10 px), in 20 px steps."""
    inches = width_px / max(dpi, 1.0)
    return f"hetlab-minw-{int(min(1000, 20 * round(inches * 72 / 20)))}"


def _solution_block(source: str, cell_id: str) -> dict:
    code, _ = strip_markers(source)
    body = (f'<details class="hetlab-solution">\n<summary>{SOLUTION_SUMMARY}</summary>\n\n'
            f"```python\n{code}\n```\n\n</details>")
    return {"cell_type": "markdown", "id": f"{cell_id}-solution"[:64], "metadata": {}, "source": body}


def _caption_metadata(cell: dict, context: PageContext, section: str) -> None:
    """Number and caption every image output of ``cell`` (MyST-NB's figure and image options)."""
    images = [o for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
    if not images:
        return
    number = context.next_figure()
    given = cell.get("metadata", {}).get("caption")
    text = given or (f"{section}" if section else "本章的图")
    alt = f"图 {number}：{_plain_heading(text)}"
    options = cell.setdefault("metadata", {}).setdefault("mystnb", {})
    options["figure"] = {"caption": f"图 {number}　{_markdown_escape(_plain_heading(text))}",
                         "name": f"fig-{context.label.lower()}-{context.figures}"}
    width, _, dpi = png_size(images[0]["data"]["image/png"])
    options["image"] = {"alt": alt, "classes": f"hetlab-figure-img {phone_class(width, dpi)}"}
    context.report["figures"] += 1


def transform(nb: dict, context: PageContext) -> dict:
    """The page version of a chapter notebook (a dict as read by json); ``context.report`` counts what changed."""
    cells, section = [], ""
    report = context.report
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            found = [m.group(2) for m in HEADING.finditer(src) if len(m.group(1)) >= 2]
            if found:
                section = _plain_heading(found[-1])
            cells.append(cell)
            continue
        if cell["cell_type"] != "code":
            cells.append(cell)
            continue
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        grader = cell.get("metadata", {}).get("nbgrader", {})
        if QUIZ_TEXT.match(src):               # the quiz's text version: the cards below show the same questions
            continue
        if grader.get("solution") and "### BEGIN SOLUTION" in src:
            from hetlab.book import edition

            stub, _ = strip_markers(edition.strip_solutions(src))
            cells.append({**cell, "source": stub, "outputs": [], "execution_count": None})
            cells.append(_solution_block(src, str(cell.get("id", len(cells)))))
            report["solutions"] += 1
            continue
        if "### BEGIN HIDDEN TESTS" in src:
            from hetlab.book import edition

            visible, _ = edition.split_hidden_tests(src)
            report["hidden_tests"] += 1
            src = visible
        stripped, markers = strip_markers(src)
        report["markers"] += markers
        if not stripped.strip():
            continue
        cell = {**cell, "source": stripped}
        outputs = []
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if WIDGET_VIEW not in data:
                outputs.append(output)
                continue
            quiz = QUIZ_CARDS.search(stripped)
            view = VIEW_CALL.search(stripped)
            if quiz:
                block = context.quiz_html(int(quiz.group(1)))
                report["quizzes"] += 1
            else:
                name = view.group(1) if view else None
                number = context.next_figure()
                block, mode = context.widget_html(name, view.group(2) if view else "", number, section, nb,
                                                  data[WIDGET_VIEW].get("model_id"), context)
                report["widgets"].append((name, mode))
            outputs.append({"output_type": "display_data", "metadata": {}, "data": {"text/html": block}})
        cell["outputs"] = outputs
        images = [o for o in outputs if "image/png" in o.get("data", {})]
        others = [o for o in outputs if o not in images and o.get("output_type") != "stream"]
        if images and others:
            # MyST-NB captions every rich output of a figure cell: a table displayed beside the figure would carry
            # the figure's caption (and number) too. The figure moves to a cell of its own whose code is hidden.
            cells.append({**cell, "outputs": [o for o in outputs if o not in images]})
            cell = {**cell, "id": f"{cell.get('id', len(cells))}-figure"[:64], "outputs": images,
                    "metadata": {**cell.get("metadata", {}),
                                 "tags": [*cell.get("metadata", {}).get("tags", []), "remove-input"]}}
        _caption_metadata(cell, context, section)
        cells.append(cell)
    metadata = {k: v for k, v in nb.get("metadata", {}).items() if k != "widgets"}
    return {**nb, "cells": cells, "metadata": metadata}


def launch_links(context: PageContext) -> str:
    """The two launch links a widget note offers."""
    return (f'<a class="hetlab-launch" href="{html.escape(context.binder)}">在 Binder 中运行</a> · '
            f'<a class="hetlab-launch" href="{html.escape(context.colab)}">在 Colab 中运行</a>')


def dumps(nb: dict) -> str:
    return json.dumps(nb, ensure_ascii=False, indent=1)
