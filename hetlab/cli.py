"""``python -m hetlab``: the article's demo and the book's formulas from the shell."""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["main"]


def _demo(args: argparse.Namespace) -> int:
    from .demo import compare_policies

    print(compare_policies().text())
    return 0


def _amdahl(args: argparse.Namespace) -> int:
    from .formulas import amdahl, amdahl_efficiency, amdahl_limit, gustafson

    s = amdahl(args.p, args.n)
    print(f"Amdahl speed-up S = 1/((1-p) + p/N) with p={args.p:g}, N={args.n:g}: {s:.4f}x")
    print(f"efficiency E = S/N: {amdahl_efficiency(args.p, args.n):.4f}")
    print(f"ceiling 1/(1-p) as N -> inf: {amdahl_limit(args.p):.4f}x")
    print(f"Gustafson scaled speed-up (1-p) + pN: {gustafson(args.p, args.n):.4f}x")
    return 0


def _granularity(args: argparse.Namespace) -> int:
    from .formulas import optimal_tasks, total_time

    n_star = optimal_tasks(args.W, args.Os)
    best = max(1, round(n_star))
    print(f"T(N) = N*Os + W/N with W={args.W:g}, Os={args.Os:g}")
    print(f"N* = sqrt(W/Os) = {n_star:.4f}; T(N*) = {total_time(max(n_star, 1.0), args.W, args.Os):.4f}")
    print(f"best whole task count {best}: T = {total_time(best, args.W, args.Os):.4f}")
    return 0


def _heft(args: argparse.Namespace) -> int:
    from .demo import heft_paper_example
    from .schedulers import heft, optimal

    graph, devices = heft_paper_example()
    s = heft(graph, devices).validate()
    print("HEFT on the worked example of Topcuoglu, Hariri & Wu (2002)")
    for name, rank in s.info["upward_rank"].items():
        print(f"  rank_u({name}) = {rank:.3f}")
    for p in s.placements():
        print(f"  {p.task:<4} on {p.device}: {p.start:5.1f} -> {p.end:5.1f}")
    print(f"makespan {s.makespan:g}; exact optimum {optimal(graph, devices).makespan:g}")
    return 0


def _chapter_list(text: str) -> list[int]:
    try:
        chapters = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--chapters must be numbers separated by commas, got {text!r}") from None
    if not chapters or any(not 1 <= c <= 13 for c in chapters):
        raise argparse.ArgumentTypeError(f"--chapters must list chapters in [1, 13], got {text!r}")
    return chapters


def _student_edition(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .edition import make_student_edition

    out = Path(args.out_dir)
    key_path = Path(args.key) if args.key else out.parent / f"{out.name}-key.json"
    # The key is written first and atomically; OUT_DIR may not be (or contain) the source, see edition.py.
    key = make_student_edition(out, args.chapters, source=args.source, key=key_path, force=args.force)
    print(f"student edition of chapters {key['chapters']} written to {out}")
    print(f"grading key (keep it private): {key_path}")
    return 0


def _grade(args: argparse.Namespace) -> int:
    from .edition import grade

    report = grade(args.submission, args.key)
    print(report.text())
    return 0


def _answer_key(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .answer_key import answer_key

    text = answer_key(args.chapter)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
        print(f"answer key written to {args.out} (keep it private)")
    else:
        print(text)
    return 0


def _progress(args: argparse.Namespace) -> int:
    from .progress import default_path, default_store

    print(f"progress file: {default_path()}")
    print(default_store().report())
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m hetlab",
                                     description="Parallel execution and scheduling on heterogeneous devices.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    p = sub.add_parser("demo", help="the article's demo (8 tasks on CPU/GPU/NPU) and better policies")
    p.set_defaults(func=_demo)
    p = sub.add_parser("amdahl", help="Amdahl speed-up, efficiency and ceiling, e.g. 'amdahl 0.95 1024'")
    p.add_argument("p", type=float, help="parallel fraction in [0, 1]")
    p.add_argument("n", type=float, help="number of devices (>= 1)")
    p.set_defaults(func=_amdahl)
    p = sub.add_parser("granularity", help="optimal task count N* = sqrt(W/Os), e.g. 'granularity 10000 1'")
    p.add_argument("W", type=float, help="total work")
    p.add_argument("Os", type=float, help="scheduling overhead per task (> 0)")
    p.set_defaults(func=_granularity)
    p = sub.add_parser("heft", help="HEFT on the published ten-task example")
    p.set_defaults(func=_heft)
    p = sub.add_parser("student-edition", help="write chapters without solutions or quiz answers, plus a grading key")
    p.add_argument("out_dir", metavar="OUT_DIR", help="folder for the student notebooks")
    p.add_argument("--chapters", type=_chapter_list, default=None, help="e.g. 3,5,6 (default: all)")
    p.add_argument("--source", default="chapters", help="folder of the instructor's chapters (default: chapters)")
    p.add_argument("--key", default=None, help="where to write the key (default: OUT_DIR-key.json beside OUT_DIR)")
    p.add_argument("--force", action="store_true",
                   help="write into a non-empty OUT_DIR or one inside the source (never the source itself)")
    p.set_defaults(func=_student_edition)
    p = sub.add_parser("grade", help="score a submitted student notebook with the instructor's key")
    p.add_argument("submission", metavar="SUBMISSION.ipynb")
    p.add_argument("--key", required=True, help="the key written by student-edition")
    p.set_defaults(func=_grade)
    p = sub.add_parser("answer-key", help="instructors: questions with answers and explanations, for printing")
    p.add_argument("--chapter", type=int, default=None, help="one chapter, e.g. 13 (default: all chapters)")
    p.add_argument("--out", default=None, help="write to this file instead of printing")
    p.set_defaults(func=_answer_key)
    p = sub.add_parser("progress", help="this learner's quiz progress across the 13 chapters")
    p.set_defaults(func=_progress)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except (ValueError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
