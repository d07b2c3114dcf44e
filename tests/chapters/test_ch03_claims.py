"""Chapter 3's claims, checked where they could break: offloading is decided by intensity (size only through the
fixed cost), the stored H200 machine agrees with the offload model, and the reader's measured point keeps its
lesson on one busy CPU.

The measured test runs the chapter's own measuring cell (found by its id) in a fresh interpreter pinned to one
CPU next to a competing busy process, and checks the two things the prose says: the matmul does at least ten
times the FLOP/s of the elementwise add, and the add lands within a small factor of the roofline's prediction
(bandwidth x 1/24).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from hetlab.communication import offload_breakeven
from hetlab.models import hardware as H
from hetlab.models import roofline as R
from hetlab.real.readings import reading

CHAPTER = Path(__file__).resolve().parents[2] / "chapters" / "03-hardware.ipynb"
EPYC = H.entry("EPYC 7763", "FP32").peak, H.memory("EPYC 7763 DDR4").bandwidth


def _slowdown(n: int, flops: float = 1.0, latency: float = 0.0) -> float:
    t = H.offload_times(n, flops_per_element=flops, latency=latency)
    return (t["copy"] + t["kernel"]) / R.kernel_time(n * flops, 12 * n, *EPYC)


def test_a_thousand_times_more_elements_lose_by_the_same_factor():
    # every term is proportional to n: (12/32e9 + 12/1555e9) / (12/204.8e9) = 6.53 at any size
    assert _slowdown(2**20) == pytest.approx(6.53, abs=0.01)
    assert _slowdown(2**30) == pytest.approx(_slowdown(2**20))


def _min_flops(n: int, latency: float) -> int:
    f = 1
    while _slowdown(n, f, latency) >= 1.0:
        f *= 2
    lo, hi = f // 2, f               # the GPU wins at hi and not at lo: bisect on integers
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if _slowdown(n, mid, latency) < 1.0 else (mid, hi)
    return hi


def test_the_fixed_cost_raises_the_breakeven_of_small_sizes_only():
    sizes = [2**12, 2**16, 2**20, 2**30]
    needed = [_min_flops(n, 30e-6) for n in sizes]
    assert needed == sorted(needed, reverse=True)
    assert needed[0] > 20 * needed[-1]                 # 30 us against a 1.5 us copy of 2^12 elements
    assert needed[-1] - 2534 <= 1 and _min_flops(2**20, 0.0) == 2534


def test_matmul_breakeven_is_its_intensity_reaching_the_offload_intensity():
    # n/6 FLOP per byte over PCIe against 12 / 32e9 / (1/P_cpu - 1/P_gpu) / 12 = 211.2 FLOP per byte
    gpu = H.entry("A100", "FP32").peak
    n = offload_breakeven(cpu_flops=EPYC[0], gpu_flops=gpu, bandwidth=32e9, latency=0.0)
    assert n == 1267


def test_stored_h200_crossover_and_model_agree():
    data = reading("h200")
    rows = {r["n"]: r for r in data["matmul"]["rows"] if r["dtype"] == "float64"}
    assert rows[256]["gpu_with_copies_s"] > rows[256]["cpu_s"] and rows[512]["gpu_with_copies_s"] < rows[512]["cpu_s"]
    pinned = data["h2d"]["fit"]["pinned"]
    n = offload_breakeven(cpu_flops=rows[4096]["cpu_gflops"] * 1e9, gpu_flops=rows[4096]["gpu_tflops"] * 1e12,
                          bandwidth=pinned["GBps"] * 1e9, latency=pinned["alpha_us"] * 1e-6, element_bytes=8)
    assert 256 < n <= 512
    # the big FP64 product beats the FP64 vector peak (34 TFLOP/s): it ran on the FP64 tensor cores (67)
    assert H.H200_FP64.value < rows[4096]["gpu_tflops"] * 1e12 < H.H200_FP64_TENSOR.value


def test_stored_h200_offload_advantage_is_not_monotone_because_of_the_copies():
    data = reading("h200")
    rows = {(r["dtype"], r["n"]): r for r in data["matmul"]["rows"]}
    adv = {k: r["cpu_s"] / r["gpu_with_copies_s"] for k, r in rows.items()}
    # the reviewer's hand division of the stored seconds: FP64 1.75, 3.54, 1.02, 2.06; FP32 2.57, 5.10, 1.83
    fp64 = [round(adv["float64", n], 2) for n in (512, 1024, 2048, 4096)]
    assert fp64 == [1.75, 3.54, 1.02, 2.06]
    assert adv["float32", 2048] > 2 * adv["float32", 4096]
    pinned = data["h2d"]["fit"]["pinned"]

    def copies(n: int) -> tuple[float, float]:
        r = rows["float64", n]
        model = 3 * (pinned["alpha_us"] * 1e-6 + 8 * n * n / (pinned["GBps"] * 1e9))
        return r["gpu_with_copies_s"] - r["gpu_kernel_s"], model

    # 256 ... 1024: the three copies take about twice the pinned fit; 2048, 4096: more than ten times
    assert all(1.5 < m / p < 2.5 for m, p in map(copies, (256, 512, 1024)))
    assert all(m / p > 10 for m, p in map(copies, (2048, 4096)))
    # at n = 256 most of what the model misses on the GPU side is the copies (103 - 54 us), not the kernel
    measured, model = copies(256)
    kernel_miss = rows["float64", 256]["gpu_kernel_s"] - 2 * 256**3 / (rows["float64", 4096]["gpu_tflops"] * 1e12)
    assert measured - model > kernel_miss > 0


def test_wider_bandwidth_makes_the_64_matmul_compute_bound():
    # ridge 19.5 TFLOP/s / 2039 GB/s = 9.56 < n/6 = 10.67 < 19.5 / 1.555 = 12.5
    peak, i64 = H.entry("A100", "FP32").peak, R.matmul_intensity(64)
    assert R.ridge_point(peak, 2039e9) < i64 < R.ridge_point(peak, 1555e9)
    assert R.attainable(i64, peak, 2039e9) == peak
    assert R.attainable(i64, peak, 1555e9) / peak == pytest.approx(10.667 * 1.555 / 19.49, rel=1e-3)


def test_a_tiny_kernel_is_almost_all_launch():
    # 10^4 elements x 12 bytes / 1,555 GB/s = 0.077 us against the stored 7.7 us asynchronous launch: ~1%
    launch = reading("h200")["launch"]["per_launch_async_us"] * 1e-6
    add = R.kernel_time(10_000, 120_000, H.entry("A100", "FP32").peak, 1555e9)
    assert add == pytest.approx(120_000 / 1555e9)
    assert 0.005 < add / launch < 0.015


def _measuring_cell() -> str:
    nb = nbformat.read(CHAPTER, as_version=4)
    return next(c.source for c in nb.cells if c.get("id") == "c3-measure")


RUN = """
import json
{cell}
print(json.dumps({{"matmul": 2 * n**3 / best["matmul"], "bandwidth": 16 * m / best["scale"],
                  "add": m / best["add"]}}))
"""


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("taskset"), reason="needs taskset to pin the run to one CPU")
def test_measured_lesson_holds_on_one_busy_cpu():
    cpu = sorted(os.sched_getaffinity(0))[0]
    busy = subprocess.Popen(["taskset", "-c", str(cpu), sys.executable, "-c", "while True: pass"])
    try:
        found = []
        for _ in range(3):
            out = subprocess.run(["taskset", "-c", str(cpu), sys.executable, "-c",
                                  RUN.format(cell=_measuring_cell())],
                                 capture_output=True, text=True, timeout=120, check=True)
            found.append(json.loads(out.stdout.strip().splitlines()[-1]))
    finally:
        busy.kill()
        busy.wait()
    for mine in found:
        assert mine["matmul"] >= 10 * mine["add"], mine
        assert 0.2 <= mine["add"] / (mine["bandwidth"] / 24) <= 5, mine
