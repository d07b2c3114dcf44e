"""Faithful copy of the source article's Python demo, kept as a benchmark baseline.

Only the names are translated; the algorithm, including its preference branch
(which can never fire, see ``hetlab.schedulers.article_demo``), is unchanged.
"""
import heapq

TASKS = [
    (10, 'CPU'), (20, 'GPU'), (15, 'NPU'),
    (8, 'CPU'), (12, 'GPU'), (25, 'NPU'),
    (18, 'CPU'), (6, 'GPU'),
]
DEVICES = {'CPU': 10, 'GPU': 20, 'NPU': 15}


def serial_time(tasks, devices=DEVICES):
    return sum(work / devices['CPU'] for work, _ in tasks)


def parallel_time(tasks, devices):
    heap = [(0.0, name) for name in devices]
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
    print(f"serial:   {serial:.2f}")
    print(f"parallel: {parallel:.2f}")
    print(f"speed-up: {serial / parallel:.2f}x")


if __name__ == '__main__':
    main()
