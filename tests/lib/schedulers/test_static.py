"""hetlab.schedulers.static: serial, round-robin, block, by affinity, and the article's demo."""
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetlab import schedulers as S
from hetlab.book.demo import compare_policies
from hetlab.devices import Device, identical, kitchen
from hetlab.tasks import Task, TaskGraph, independent_tasks
from hetlab.workloads import article_tasks

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
import article_demo as article  # noqa: E402  the article's code (hetlab.book._article_program)


def test_static_round_robin_can_lose_to_serial_on_the_fast_device():
    devices = [Device("fast", speed=100.0), Device("slow", speed=1.0)]
    tasks = independent_tasks([1.0, 1.0])
    assert S.round_robin(tasks, devices).makespan == pytest.approx(1.0)
    assert S.serial(tasks, devices, device="fast").makespan == pytest.approx(0.02)


# --- the article's demo ---------------------------------------------------------------------------------

def test_article_demo_numbers_match_the_article():
    report = compare_policies()
    assert f"{report.serial:.2f}" == "11.40"
    assert f"{report.parallel:.2f}" == "2.67"
    assert f"{report.speedup:.2f}" == "4.27"
    assert report.schedules["article demo"].info["preference_reroutes"] == 0


def test_article_demo_by_hand():
    # The article's heap pops (free_at, name): CPU < GPU < NPU by name at 0, so t0 goes to the slowest cook.
    # CPU: t0 0-1, t3 1-1.8, t7 1.8-2.4; GPU: t1 0-1, t4 1-1.6, t6 1.6-2.5; NPU: t2 0-1, t5 1-2.667.
    s = S.article_demo(article_tasks(), kitchen()).validate()
    assert [s.devices[j].name for j in s.device_of] == ["CPU", "GPU", "NPU", "CPU", "GPU", "NPU", "GPU", "CPU"]
    assert s.makespan == pytest.approx(8 / 3)
    step = s.info["trace"][3]     # t3 prefers the CPU, which is the popped entry: nothing to re-route to
    assert step["popped"] == (1.0, "CPU") and step["preferred_entry"] is None and not step["reroute"]
    step = s.info["trace"][5]     # t5 prefers the NPU; by then CPU is free at 1.8, GPU at 1.6, NPU at 1: NPU pops
    assert step["popped"] == (1.0, "NPU") and step["preferred_entry"] is None
    step = s.info["trace"][6]     # t6 prefers the CPU (free at 1.8) but the GPU (1.6) pops: no re-route
    assert step["popped"] == (1.6, "GPU") and step["preferred_entry"] == (1.8, "CPU") and not step["reroute"]


@settings(derandomize=True, database=None, max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 40), st.sampled_from(["CPU", "GPU", "NPU"])), min_size=1, max_size=40),
       st.lists(st.integers(1, 30), min_size=3, max_size=3))
def test_article_demo_equals_the_articles_own_code(tasks, speeds):
    devices = {"CPU": speeds[0], "GPU": speeds[1], "NPU": speeds[2]}
    expected = article.parallel_time(tasks, devices)
    graph = TaskGraph(Task(f"t{i}", w, k) for i, (w, k) in enumerate(tasks))
    devs = [Device(n, n, s) for n, s in devices.items()]
    demo = S.article_demo(graph, devs).validate()
    assert demo.makespan == expected                 # the same arithmetic, bit for bit
    assert demo.info["preference_reroutes"] == 0
    # The article breaks ties by name; listing the devices in reverse does not change its schedule.
    backwards = S.article_demo(graph, devs[::-1])
    assert [backwards.devices[j].name for j in backwards.device_of] == [demo.devices[j].name for j in demo.device_of]


def test_earliest_free_differs_from_the_demo_only_in_its_tie_rule():
    # On the article's dishes the engine gives t0 to the GPU (fastest of the three free at 0), the demo to
    # the CPU (first by name). With the cooks named in speed order, the two rules coincide.
    tasks = article_tasks()
    assert S.earliest_free(tasks, kitchen()).device_of[0] == 1
    ranked = [Device(f"{k}{d.name}", d.kind, d.speed) for k, d in enumerate(sorted(kitchen(), key=lambda d: -d.speed))]
    a, b = S.earliest_free(tasks, ranked), S.article_demo(tasks, ranked)
    assert a.device_of.tolist() == b.device_of.tolist() and a.makespan == b.makespan


def test_article_demo_refuses_what_it_cannot_schedule():
    tasks = [Task("a", times={"D0": 1.0}), Task("b", times={"D0": 1.0})]
    with pytest.raises(ValueError, match="task 'a' cannot run on device 'D1'"):
        S.article_demo(tasks, identical(2))
    with pytest.raises(ValueError, match="independent tasks only"):
        S.article_demo(TaskGraph([Task("a"), Task("b")], [("a", "b")]), identical(2))
