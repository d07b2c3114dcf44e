"""Not part of the API (no input checks, on purpose): the seed article's Python demo as a whole
program (our English comments), kept runnable so chapter 11 can print it and run it. Its logic is the
article's, line for line; :func:`hetlab.schedulers.article_demo` is the library's instrumented rewrite
and gives the same makespan.
"""
import heapq

# (work, preferred device)
TASKS = [(10, "CPU"), (20, "GPU"), (15, "NPU"), (8, "CPU"), (12, "GPU"), (25, "NPU"), (18, "CPU"), (6, "GPU")]
# device -> speed (work units per time unit)
DEVICES = {"CPU": 10, "GPU": 20, "NPU": 15}


def serial_time(tasks):
    """Every task on the CPU, one after another."""
    return sum(work / DEVICES["CPU"] for work, _ in tasks)


def parallel_time(tasks, devices):
    """Each task to the device free first; reroute to the preferred device if it is free strictly earlier."""
    heap = [(0.0, name) for name in devices]          # (free at, device)
    heapq.heapify(heap)
    for work, pref in tasks:
        free_at, dev = heapq.heappop(heap)
        cand = [(t, n) for t, n in heap if n == pref]
        if cand and cand[0][0] < free_at:
            heapq.heappush(heap, (free_at, dev))
            free_at, dev = cand[0]
            heap.remove(cand[0])
            heapq.heapify(heap)
        heapq.heappush(heap, (free_at + work / devices[dev], dev))
    return max(heap)[0]


def main():
    serial = serial_time(TASKS)
    parallel = parallel_time(TASKS, DEVICES)
    print(f"串行总耗时: {serial:.2f} 时间单位")
    print(f"并行总耗时: {parallel:.2f} 时间单位")
    print(f"加速比: {serial / parallel:.2f}x")


if __name__ == "__main__":
    main()
