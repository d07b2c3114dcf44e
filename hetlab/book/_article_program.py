# Not part of the API (no input checks, on purpose): the seed article's Python demo, verbatim (its layout
# and its Chinese comments and docstrings included), kept runnable so chapter 11 can print it from the
# docstring on and run it. hetlab.schedulers.article_demo is the library's instrumented rewrite and gives
# the same makespan.
"""异构并行调度模拟: 串行 vs 多设备并行执行对比"""
import heapq

# 任务列表: (工作量, 偏好设备)
TASKS = [
    (10, 'CPU'), (20, 'GPU'), (15, 'NPU'),
    (8, 'CPU'), (12, 'GPU'), (25, 'NPU'),
    (18, 'CPU'), (6, 'GPU'),
]

# 设备及其速度(单位工作量/时间)
DEVICES = {'CPU': 10, 'GPU': 20, 'NPU': 15}


def serial_time(tasks):
    """串行: 所有任务在单个CPU上依次执行"""
    return sum(work / DEVICES['CPU'] for work, _ in tasks)


def parallel_time(tasks, devices):
    """并行: 调度器每次把任务派给最早空闲的设备"""
    heap = [(0.0, name) for name in devices]  # (空闲时刻, 设备名)
    heapq.heapify(heap)
    for work, pref in tasks:
        free_at, dev = heapq.heappop(heap)
        # 若偏好设备更早空闲, 则改派给它
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


if __name__ == '__main__':
    main()
