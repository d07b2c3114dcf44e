"""Benchmark 5: overhead per task of hetlab's executor, for 1,000 tiny tasks (ratios in one run).

The same 1,000 independent no-op tasks on 2 workers: plain concurrent.futures (submit all, wait:
hetlab.real.measure.dispatch_overhead), hetlab.real.execute.run_graph on the same pool type (dependency
tracking + timing records), and Dask distributed on a LocalCluster (cluster start-up excluded).
"""
from __future__ import annotations

import time

from hetlab.real.execute import run_graph
from hetlab.real.measure import dispatch_overhead
from hetlab.tasks import independent_tasks


def noop() -> int:
    return 0


def dask_seconds(n: int, workers: int) -> float | None:
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        return None
    with LocalCluster(n_workers=workers, threads_per_worker=1, host="127.0.0.1", dashboard_address=None,
                      silence_logs=40) as cluster, Client(cluster) as client:
        client.wait_for_workers(workers)
        start = time.perf_counter()
        client.gather([client.submit(noop, pure=False) for _ in range(n)])
        return time.perf_counter() - start


def main(n: int = 1000, workers: int = 2) -> dict:
    graph = independent_tasks([1.0] * n)
    functions = {t.name: noop for t in graph.tasks}
    print(f"[5] executor overhead, {n:,} no-op tasks on {workers} workers (best of 3; per task)")
    out = {}
    for kind in ("thread", "process"):
        base = min(dispatch_overhead(n, workers, executor=kind) for _ in range(3)) * n
        ours_wall = min(run_graph(graph, functions, executor=kind, workers=workers).wall_time for _ in range(3))
        print(f"    {kind:<7} pool: concurrent.futures {base / n * 1e6:7.1f} us, hetlab {ours_wall / n * 1e6:7.1f} us "
              f"({ours_wall / base:.2f}x)")
        out[kind] = ours_wall / base
    d = dask_seconds(n, workers)
    if d is None:
        print("    dask: not installed (pip install 'hetlab[dask]')")
    else:
        print(f"    dask LocalCluster: {d / n * 1e6:7.1f} us per task")
        out["dask_us"] = d / n * 1e6
    return out


if __name__ == "__main__":
    main()
