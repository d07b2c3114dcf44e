"""The book's glossary (hetlab/book/data/glossary.json) on the website: the page 术语表, the word list jieba
splits the search index with, and the search's scorer.

- jieba does not know the book's compound terms (关键路径, 张量并行, 屋顶线模型 ...) and used to split them, so a
  search for the whole term found nothing; every glossary term goes into a user dictionary at build time.
- Sphinx ranks a term found in a heading (15) above one in the body (5); the scorer widens that gap (40 against
  5) and, when the reader searches for a glossary term, ranks pages by how often they use it (up to +30, so a
  page with the term in a heading still comes first): 气泡 finds chapter 8 before chapter 1's one mention.
- The query is split like the index: a run of Chinese characters that is not a word of the index is cut into
  the longest words the index has (so "流水线气泡" finds pages with 流水线 and 气泡).
"""
from __future__ import annotations

import json


def glossary_page(glossary: list[dict], docnames: dict[str, str]) -> str:
    """MyST markdown of the 术语表 page: term, English, where it first appears, variants not to use."""
    rows = []
    for item in sorted(glossary, key=lambda t: (t["chapter"] or "ZZ", t["term"])):
        chapter = item["chapter"]
        where = "—"
        if chapter and chapter in docnames:
            label = f"附录 {chapter}" if chapter.startswith("A") else f"第 {int(chapter)} 章"
            where = f"[{label}]({docnames[chapter]}.ipynb)"
        avoid = "、".join(item["variants"]) or "—"
        rows.append(f"| {item['term']} | {item['english']} | {where} | {avoid} |")
    return ("# 术语表\n\n全书统一使用下表的中文术语；第一次出现时在括号里附上英文。"
            "“不要写成”一列是书中曾经混用过的说法，tests/test_glossary.py 会在章节里找出它们。\n\n"
            "| 术语 | English | 首次出现 | 不要写成 |\n|---|---|---|---|\n" + "\n".join(rows) + "\n")


def jieba_dictionary(glossary: list[dict]) -> str:
    """jieba's user-dictionary format, one word a line: word, frequency, part of speech. A high frequency keeps
    the term whole; cut_for_search still adds its shorter words (关键路径 -> 关键, 路径, 关键路径)."""
    return "".join(f"{item['term']} 20000 n\n" for item in glossary if " " not in item["term"])


def term_counts(glossary: list[dict], texts: dict[str, str]) -> dict[str, dict[str, int]]:
    """How often each page (docname -> its text) uses each glossary term."""
    counts = {}
    for item in glossary:
        found = {doc: text.count(item["term"]) for doc, text in texts.items() if item["term"] in text}
        if found:
            counts[item["term"]] = found
    return counts


def scorer(counts: dict[str, dict[str, int]]) -> str:
    """The search scorer and query splitter (Sphinx inlines this file into language_data.js)."""
    return _SCORER.replace("@COUNTS@", json.dumps(counts, ensure_ascii=False))


_SCORER = """/* Written by scripts/build_site.py (scripts/site_search.py). */
var HETLAB_TERM_COUNTS = @COUNTS@;
var hetlabQuery = () => {
  return ((typeof Search !== "undefined" && Search._hetlabQuery) ||
          new URLSearchParams(window.location.search).get("q") || "").trim();
};
var Scorer = {
  score: (result) => {
    const pages = HETLAB_TERM_COUNTS[hetlabQuery()];
    const count = pages && !result[2] ? pages[result[0]] || 0 : 0;
    return result[4] + Math.min(30, 3 * count);
  },
  objNameMatch: 11, objPartialMatch: 6, objPrio: {0: 15, 1: 5, 2: -5}, objPrioDefault: 0,
  title: 40, partialTitle: 14, term: 5, partialTerm: 2,
};
var splitQuery = (query) => {
  if (typeof Search !== "undefined") Search._hetlabQuery = query;
  const parts = query.split(/[^\\p{Letter}\\p{Number}_\\p{Emoji_Presentation}]+/gu).filter((t) => t);
  const index = typeof Search !== "undefined" && Search._index ? Search._index : null;
  const known = (w) => index && (index.terms[w] !== undefined || index.titleterms[w] !== undefined);
  const out = [];
  for (const part of parts) {
    if (!index || !/[\\u3400-\\u9fff]/.test(part) || known(part)) { out.push(part); continue; }
    let k = 0;
    while (k < part.length) {
      let n = Math.min(8, part.length - k);
      while (n > 1 && !known(part.substr(k, n))) n--;
      if (n > 1) out.push(part.substr(k, n));
      k += n;
    }
  }
  return out.length ? out : parts;
};
"""
