"""``python -m hetlab``: the article's demo and the book's formulas from the shell."""
from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence

__all__ = ["main"]


def _demo(args: argparse.Namespace) -> int:
    from hetlab.book.demo import compare_policies

    print(compare_policies().text())
    return 0


def _num(x: float) -> str:
    """Four decimals, or four significant digits in scientific notation for huge or tiny values."""
    return f"{x:.4f}" if x == 0 or 1e-4 <= abs(x) < 1e15 else f"{x:.4e}"


def _amdahl(args: argparse.Namespace) -> int:
    from hetlab.formulas import amdahl, amdahl_efficiency, amdahl_limit, gustafson

    # Everything is computed before anything is printed: a rejected input prints one error line only.
    s, e, ceiling = amdahl(args.p, args.n), amdahl_efficiency(args.p, args.n), amdahl_limit(args.p)
    scaled = gustafson(args.p, args.n) if args.n < float("inf") else None
    print(f"Amdahl speed-up S = 1/((1-p) + p/N) with p={args.p:g}, N={args.n:g}: {_num(s)}x")
    print(f"efficiency E = S/N: {e:.4f}")
    print(f"ceiling 1/(1-p) as N -> inf: {_num(ceiling)}x" if ceiling < float("inf") else
          "ceiling 1/(1-p) as N -> inf: none (p = 1, the speed-up grows without bound)")
    if scaled is not None:
        print(f"Gustafson scaled speed-up (1-p) + pN: {_num(scaled)}x")
    return 0


def _granularity(args: argparse.Namespace) -> int:
    from hetlab.formulas import optimal_tasks, total_time

    n_star = optimal_tasks(args.W, args.Os)
    best = max(1, round(n_star))
    t_star, t_best = total_time(max(n_star, 1.0), args.W, args.Os), total_time(best, args.W, args.Os)
    print(f"T(N) = N*Os + W/N with W={args.W:g}, Os={args.Os:g}")
    print(f"N* = sqrt(W/Os) = {_num(n_star)}; T(N*) = {_num(t_star)}")
    print(f"best whole task count {best if best < 1e15 else _num(best)}: T = {_num(t_best)}")
    return 0


def _heft(args: argparse.Namespace) -> int:
    from hetlab.book.demo import heft_paper_example
    from hetlab.schedulers import heft, optimal

    graph, devices = heft_paper_example()
    s = heft(graph, devices).validate()
    print("HEFT on the worked example of Topcuoglu, Hariri & Wu (2002)")
    for name, rank in s.info["upward_rank"].items():
        print(f"  rank_u({name}) = {rank:.3f}")
    for p in s.placements():
        print(f"  {p.task:<4} on {p.device}: {p.start:5.1f} -> {p.end:5.1f}")
    print(f"makespan {s.makespan:g}; exact optimum {optimal(graph, devices).makespan:g}")
    return 0


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error: ``hetlab: error: ...`` and exit status 2 (subcommands inherit it)."""

    def error(self, message: str):
        command = self.prog.removeprefix("python -m hetlab").strip()
        where = f" {command}" if command else ""
        hint = f" (see python -m hetlab{where} --help)"
        _fail(message + hint, 2)


def _fail(message: str, code: int):
    print(f"hetlab: error: {' '.join(str(message).split())}", file=sys.stderr)
    raise SystemExit(code)


def _number(text: str) -> float:
    """A command-line number in ASCII digits (float() alone also takes '1_0', '١٣' and '３')."""
    if not (text.isascii() and "_" not in text):
        raise argparse.ArgumentTypeError(f"expected a number in ASCII digits, got {text!r}")
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def _whole(text: str) -> int:
    """A whole number in ASCII digits, nothing else (int() alone also takes '+3', '1_0' and '١٣')."""
    if not re.fullmatch(r"[0-9]{1,4}", text.strip()):
        raise argparse.ArgumentTypeError(f"expected a whole number such as 4, got {text!r}")
    return int(text)


def _chapter_list(text: str) -> list[int]:
    parts = [part.strip() for part in text.split(",")]
    if not all(re.fullmatch(r"[0-9]{1,2}", part) for part in parts):
        raise argparse.ArgumentTypeError(f"--chapters must be numbers separated by commas, got {text!r}")
    chapters = [int(part) for part in parts]
    if not chapters or any(not 1 <= c <= 13 for c in chapters):
        raise argparse.ArgumentTypeError(f"--chapters must list chapters in [1, 13], got {text!r}")
    return chapters


def _student_edition(args: argparse.Namespace) -> int:
    from pathlib import Path

    from hetlab.book.edition import make_student_edition

    out = Path(args.out_dir)
    key_path = Path(args.key) if args.key else out.parent / f"{out.name}-key.json"
    # The key is written first and atomically; OUT_DIR may not be (or contain) the source, see edition.py.
    key = make_student_edition(out, args.chapters, source=args.source, key=key_path, force=args.force)
    print(f"student edition of chapters {key['chapters']} written to {out}")
    print(f"grading key (keep it private): {key_path}")
    return 0


def _grade(args: argparse.Namespace) -> int:
    from hetlab.book.grading import grade

    report = grade(args.submission, args.key, timeout=args.timeout, total_timeout=args.total_timeout,
                   chapter=args.chapter)
    if args.json:
        import json

        print(json.dumps(report.to_dict(), ensure_ascii=False, indent=1))
    else:
        print(report.csv() if args.csv else report.text(), end="\n" * (not args.csv))
    return 0


def _answer_key(args: argparse.Namespace) -> int:
    from pathlib import Path

    from hetlab.book.answer_key import answer_key

    if args.out is not None and not args.out.strip():
        raise ValueError("--out must be a file path (omit it to print the key), got ''")
    text = answer_key(args.chapter)
    if args.out is not None:
        try:
            Path(args.out).write_text(text + "\n", encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"--out must be a writable file path, got {args.out} ({exc.strerror or exc})") from None
        print(f"answer key written to {args.out} (keep it private)")
    else:
        print(text)
    return 0


def _predict_cholesky(args: argparse.Namespace) -> int:
    import json

    from hetlab.models.host import load_profile
    from hetlab.real.readings import read_case
    from hetlab.workloads.cholesky import predict_makespans

    case, workers = read_case(args.readings)
    print(json.dumps(predict_makespans(case, workers, load_profile(args.profile)), indent=1))
    return 0


def _progress(args: argparse.Namespace) -> int:
    from hetlab.book.progress import default_path, default_store

    print(f"progress file: {default_path()}")
    print(default_store().report())
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m hetlab",
                                     description="Parallel execution and scheduling on heterogeneous devices.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    p = sub.add_parser("demo", help="the article's demo (8 tasks on CPU/GPU/NPU) and better policies")
    p.set_defaults(func=_demo)
    p = sub.add_parser("amdahl", help="Amdahl speed-up, efficiency and ceiling, e.g. 'amdahl 0.95 1024'")
    p.add_argument("p", type=_number, help="parallel fraction in [0, 1]")
    p.add_argument("n", type=_number, help="number of devices (>= 1)")
    p.set_defaults(func=_amdahl)
    p = sub.add_parser("granularity", help="optimal task count N* = sqrt(W/Os), e.g. 'granularity 10000 1'")
    p.add_argument("W", type=_number, help="total work")
    p.add_argument("Os", type=_number, help="scheduling overhead per task (> 0)")
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
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print {score, max_score, items: [...]} as JSON")
    fmt.add_argument("--csv", action="store_true", help="print one CSV row per item")
    p.add_argument("--timeout", type=_number, default=60.0, help="seconds per notebook cell, e.g. 2.5 (default: 60)")
    p.add_argument("--total-timeout", type=_number, default=600.0,
                   help="seconds for the whole submission, cells and hidden tests (default: 600)")
    p.add_argument("--chapter", type=_whole, default=None, help="refuse a notebook of any other chapter, e.g. 4")
    p.set_defaults(func=_grade)
    p = sub.add_parser("answer-key", help="instructors: questions with answers and explanations, for printing")
    p.add_argument("--chapter", type=_whole, default=None, help="one chapter, e.g. 13 (default: all chapters)")
    p.add_argument("--out", default=None, help="write to this file instead of printing")
    p.set_defaults(func=_answer_key)
    p = sub.add_parser("predict-cholesky", help="predicted makespans (s) of a tiled Cholesky reading, as JSON")
    p.add_argument("readings", metavar="READINGS.json",
                   help="a reading in the format of h200_hetero.json (only n, b, op_costs, tile_copy_s, cpuW are read)")
    p.add_argument("--profile", default="h200-2026-12-04", help="machine profile (default: h200-2026-12-04)")
    p.set_defaults(func=_predict_cholesky)
    p = sub.add_parser("progress", help="this learner's quiz progress across the 13 chapters")
    p.set_defaults(func=_progress)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; returns the exit status. Never a traceback: bad arguments and inputs the library
    rejects give one ``hetlab: error: ...`` line and status 2, anything unexpected one line and status 1."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            commands = ", ".join(parser._subparsers._group_actions[0].choices)
            _fail(f"choose a command: {commands} (see python -m hetlab --help)", 2)
        return args.func(args)
    except SystemExit as exc:        # --help (0) and parser errors (2, already printed)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except (ValueError, TypeError) as exc:
        print(f"hetlab: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except OSError as exc:           # a path the user gave cannot be used: say which and why
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"hetlab: error: {where}{' '.join(str(exc.strerror or exc).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("hetlab: error: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the command line reports, it does not dump a traceback
        print(f"hetlab: error: {type(exc).__name__}: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
