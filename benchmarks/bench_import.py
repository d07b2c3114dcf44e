"""Benchmark 4: `import hetlab` time in a fresh interpreter (goal < 0.15 s).

Baselines in the same run: an empty interpreter, and `import numpy` for scale. Best of 5.
"""
from __future__ import annotations

import subprocess
import sys
import time


def fresh(code: str, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> dict:
    empty = fresh("pass")
    hetlab = fresh("import hetlab")
    numpy = fresh("import numpy")
    first_use = fresh("import hetlab; hetlab.amdahl(0.9, 8)")
    print("[4] import time in a fresh interpreter (best of 5, interpreter start-up subtracted)")
    print(f"    import hetlab: {hetlab - empty:.3f} s (goal < 0.15 s); import numpy: {numpy - empty:.3f} s; "
          f"first formula call (loads numpy): {first_use - empty:.3f} s")
    return {"import_s": hetlab - empty}


if __name__ == "__main__":
    main()
