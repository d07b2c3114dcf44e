"""The instructor's answer key (``python -m hetlab answer-key``)."""
import json

import pytest

from hetlab.book import quiz
from hetlab.book.answer_key import answer_key
from hetlab.book.cli import main


def _blocks(text: str) -> dict[str, list[str]]:
    """Question id -> the lines of its block in the printed key."""
    blocks, current = {}, None
    for line in text.splitlines():
        if line.startswith("["):
            current = line[1:line.index("]")]
            blocks[current] = [line]
        elif current:
            blocks[current].append(line)
    return blocks


def test_chapter_13_key_lists_every_question_with_level_answer_and_explanation():
    blocks = _blocks(answer_key(13))
    assert list(blocks) == [q.id for q in quiz.questions(13)] and len(blocks) >= 10
    for q in quiz.questions(13):
        lines = blocks[q.id]
        assert f"·{q.level}）" in lines[0]
        letters = next(line for line in lines if line.strip().startswith("答案：")).split("：")[1]
        assert quiz.check(q.id, letters).correct           # the printed letters are the right ones
        assert any(line.strip().startswith("解析：") and len(line) > 20 for line in lines)


def test_key_matches_the_seed_article_answers():
    # The seed marks Q1 "将大任务拆成小任务同时完成" and Q7 "约 1.1 倍" correct; our bank shuffles the options.
    blocks = _blocks(answer_key(13))
    for qid, words in [("q01", "拆成小任务"), ("q07", "1.1")]:
        letters = next(line for line in blocks[qid] if "答案：" in line).split("：")[1]
        option = next(line for line in blocks[qid] if line.strip().startswith(f"{letters}."))
        assert words in option


def test_cli_prints_and_writes_the_key(tmp_path, capsys):
    assert main(["answer-key", "--chapter", "13"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("第 13 章") and printed.count("答案：") == len(quiz.questions(13))
    out = tmp_path / "key.txt"
    assert main(["answer-key", "--chapter", "13", "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8").strip() == printed.strip()
    assert main(["answer-key"]) == 0
    every = capsys.readouterr().out
    assert every.count("答案：") == len(quiz.questions())


@pytest.mark.parametrize("out, message", [("", "--out must be a file path"), ("/dev/full", "No space left"),
                                          ("/nonexistent_dir/key.txt", "No such file"), (".", "Is a directory")])
def test_cli_refuses_an_out_it_cannot_write_without_printing_the_key(out, message, capsys):
    # Review reproduction 14: `answer-key --out ''` printed every answer to the terminal.
    assert main(["answer-key", "--chapter", "13", "--out", out]) == 2
    captured = capsys.readouterr()
    assert message in captured.err and "答案：" not in captured.out and len(captured.err.splitlines()) == 1


@pytest.mark.parametrize("bad", ["0", "99", "x", "1_3", "١٣", "+13"])
def test_cli_rejects_a_chapter_without_questions(bad, capsys):
    assert main(["answer-key", "--chapter", bad]) == 2
    assert "chapter" in capsys.readouterr().err


@pytest.mark.parametrize("bad, error", [(True, TypeError), (2.0, TypeError), (-1, ValueError), (99, ValueError)])
def test_answer_key_validates_chapter(bad, error):
    with pytest.raises(error, match="chapter"):
        answer_key(bad)


def test_a_student_bank_without_answers_has_no_key(tmp_path):
    plain = tmp_path / "plain.json"
    quiz.export_bank(plain, chapter=13)
    items = json.loads(plain.read_text(encoding="utf-8"))
    student = [{k: v for k, v in item.items() if k not in ("answer", "explanation")} for item in items]
    bank = tmp_path / "student.json"
    bank.write_text(json.dumps(student, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(ValueError, match="student edition"):
        answer_key(13, bank=bank)

