"""Run every benchmark and print its figures (ratios against baselines measured in the same run)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import bench_cpop  # noqa: E402
import bench_executor  # noqa: E402
import bench_grading_bounds  # noqa: E402
import bench_heft  # noqa: E402
import bench_import  # noqa: E402
import bench_list_scheduling  # noqa: E402
import bench_serving  # noqa: E402
import bench_widget_latency  # noqa: E402
import bench_work_stealing  # noqa: E402

if __name__ == "__main__":
    bench_list_scheduling.main()
    bench_heft.main()
    bench_cpop.main()
    bench_work_stealing.main()
    bench_import.main()
    bench_executor.main()
    bench_widget_latency.main()
    bench_serving.main()
    bench_grading_bounds.main()
