import subprocess
import sys


def run(*args):
    return subprocess.run([sys.executable, "-m", "hetlab", *args], capture_output=True, text=True, timeout=120)


def test_demo_prints_the_articles_numbers_then_better_policies():
    out = run("demo")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split()[-1] == "11.40"
    assert lines[1].split()[-1] == "2.67"
    assert lines[2].split()[-1] == "4.27x"
    table = {line.split()[0]: line.split() for line in lines[4:]}
    assert table["optimal"][1] == "2.550" and table["lower"][2] == "2.533"
    assert {"EFT", "LPT", "HEFT", "work", "round-robin", "by"} <= set(table)


def test_amdahl_and_granularity_commands():
    out = run("amdahl", "0.95", "1024")
    assert out.returncode == 0 and "19.6357x" in out.stdout and "20.0000x" in out.stdout
    out = run("granularity", "10000", "1")
    assert "N* = sqrt(W/Os) = 100.0000" in out.stdout


def test_heft_command_reproduces_the_paper():
    out = run("heft")
    assert out.returncode == 0 and "makespan 80" in out.stdout and "rank_u(n1) = 108.000" in out.stdout


def test_bad_input_exits_2_with_a_clear_message():
    out = run("amdahl", "1.3", "4")
    assert out.returncode == 2 and "p must be in [0, 1], got 1.3" in out.stderr
    assert run("amdahl", "x", "4").returncode == 2
    for digits in ("٤", "０.５", "1_0"):          # review 2026-12-04, part E: float() takes these silently
        out = run("amdahl", "0.5", digits)
        assert out.returncode == 2 and "ASCII digits" in out.stderr


def test_help_lists_the_commands():
    out = run("--help")
    assert out.returncode == 0
    for command in ("demo", "amdahl", "granularity", "heft"):
        assert command in out.stdout
    assert run().returncode == 2


def test_errors_are_one_line_without_traceback_in_a_real_process():
    # issue 11: 'granularity 1e300 1e-10' ended in an OverflowError traceback; N* = sqrt(1e300)/sqrt(1e-10) = 1e155.
    out = run("granularity", "1e300", "1e-10")
    assert out.returncode == 0 and "N* = sqrt(W/Os) = 1.0000e+155" in out.stdout, out.stderr
    for args, code in [(("amdahl", "nan", "4"), 2), (("granularity", "1", "text"), 2), (("granularity",), 2),
                       (("grade", "missing.ipynb", "--key", "missing.json"), None), ((), 2)]:
        out = run(*args)
        lines = out.stderr.strip().splitlines()
        # A missing file is 2 if the library reports it as a bad argument, 1 if as an unexpected error.
        assert out.returncode == code if code else out.returncode in (1, 2)
        assert len(lines) == 1 and lines[0].startswith("hetlab: error: "), out.stderr
        assert "Traceback" not in out.stderr
