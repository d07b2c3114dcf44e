"""``python -m hetlab predict-cholesky READINGS.json``: predictions from the inputs and the machine profile only."""
import json
import subprocess
import sys
from importlib import resources

import pytest

from hetlab.book.cli import main

HETERO = resources.files("hetlab") / "data" / "readings" / "h200-2026-12-04" / "h200_hetero.json"


def _run(capsys, *argv):
    code = main(["predict-cholesky", *map(str, argv)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_prints_the_predicted_makespans_of_the_stored_reading(capsys):
    code, out, err = _run(capsys, HETERO)
    assert code == 0 and not err
    pred = json.loads(out)
    assert list(pred) == ["gpu_only", "cpu4", "cpu8", "cpu15"]
    measured = json.loads(HETERO.read_text())["hetero"]
    assert abs(pred["gpu_only"] / measured["gpu_only"]["measured_s"] - 1) <= 0.25
    for w in (4, 8, 15):
        p, m = pred[f"cpu{w}"], measured[f"cpu{w}"]
        assert set(p) == {"cpu_only", "hybrid_heft", "hybrid_dispatch_aware"}
        for key in ("cpu_only", "hybrid_heft"):
            assert abs(p[key] / m[key]["measured_s"] - 1) <= 0.25, (w, key)
        assert p["hybrid_dispatch_aware"] <= pred["gpu_only"]


def test_reads_nothing_measured(tmp_path, capsys):
    inner = json.loads(HETERO.read_text())["hetero"]
    bare = {"hetero": {k: inner[k] for k in ("n", "b", "op_costs", "tile_copy_s")} | {"cpu4": {}, "cpu8": {}}}
    path = tmp_path / "bare.json"
    path.write_text(json.dumps(bare))
    full = json.loads(_run(capsys, HETERO)[1])
    code, out, _ = _run(capsys, path)
    assert code == 0 and json.loads(out) == {k: full[k] for k in ("gpu_only", "cpu4", "cpu8")}


@pytest.mark.parametrize("content, message", [
    ("{oops", "is not JSON"),
    ('{"hetero": {"n": 3072}}', "must give 'b'"),
    ("[]", "must be a JSON object"),
])
def test_a_bad_file_gives_one_error_line(tmp_path, capsys, content, message):
    path = tmp_path / "r.json"
    path.write_text(content)
    code, out, err = _run(capsys, path)
    assert code == 2 and not out
    assert err.startswith("hetlab: error: ") and err.count("\n") == 1 and message in err


def test_a_missing_file_and_an_unknown_profile(tmp_path, capsys):
    code, _, err = _run(capsys, tmp_path / "none.json")
    assert code == 2 and err.startswith("hetlab: error: ") and err.count("\n") == 1
    code, _, err = _run(capsys, HETERO, "--profile", "nonesuch")
    assert code == 2 and "profile" in err and err.count("\n") == 1


def test_runs_as_a_module():
    out = subprocess.run([sys.executable, "-m", "hetlab", "predict-cholesky", str(HETERO)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0 and json.loads(out.stdout)["cpu8"]["hybrid_heft"] > 0


def test_predicts_a_holdout_reading_plan_by_plan(capsys):
    from hetlab.real.readings import measured_makespans

    path = resources.files("hetlab") / "data" / "readings" / "h200-2026-12-04b" / "n4096_b256.json"
    code, out, err = _run(capsys, path)
    assert code == 0 and not err
    pred, measured = json.loads(out), measured_makespans(json.loads(path.read_text()))
    assert list(pred) == list(measured) == ["gpu_only", "cpu2", "cpu4", "cpu6", "cpu12"]   # the measured W
    assert all(set(pred[k]) == set(measured[k]) for k in measured if k != "gpu_only")
