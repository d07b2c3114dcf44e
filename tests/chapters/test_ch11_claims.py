"""Chapter 11's claims, each against an independent reason: a hand computation, a plain list-scheduling
oracle written here, or a brute force over all 3^8 assignments; seeded claims on 20 seeds."""
import heapq
import itertools
import random

import pytest

from hetlab import schedulers as S
from hetlab.devices import Device, kitchen
from hetlab.tasks import Task, TaskGraph, independent_tasks
from hetlab.workloads import ARTICLE_TASKS, article_tasks

WORK = [w for w, _ in ARTICLE_TASKS]


def list_schedule(work, speeds, tie):
    """Graham's list scheduling over plain lists (the chapter's function): ties to the smallest ``tie``."""
    heap = [(0.0, tie[j], j) for j in range(len(speeds))]
    heapq.heapify(heap)
    for w in work:
        free_at, key, j = heapq.heappop(heap)
        heapq.heappush(heap, (free_at + w / speeds[j], key, j))
    return max(f for f, _, _ in heap)


def brute_force(work, speeds):
    """The optimum over every assignment (no order matters for independent tasks)."""
    best = float("inf")
    for assign in itertools.product(range(len(speeds)), repeat=len(work)):
        load = [0.0] * len(speeds)
        for w, j in zip(work, assign):
            load[j] += w
        best = min(best, max(load[j] / speeds[j] for j in range(len(speeds))))
    return best


def test_seed_program_numbers():
    # By hand: 114 units on the CPU (speed 10) = 11.4; the NPU ends last with t2 + t5 = 40 units at 15.
    from hetlab.book import _article_program as seed

    assert seed.serial_time(seed.TASKS) == pytest.approx(11.4)
    assert seed.parallel_time(seed.TASKS, seed.DEVICES) == pytest.approx(40 / 15)
    assert S.article_demo(article_tasks(), kitchen()).makespan == pytest.approx(40 / 15)


def test_baselines_and_capacity_efficiency():
    # By hand: GPU alone 114/20 = 5.7 -> 5.7 / (40/15) = 2.14x; bound 114/45; S/C = (114/45)/(40/15) = 0.95
    # for every baseline.
    demo = S.article_demo(article_tasks(), kitchen()).makespan
    assert S.serial(article_tasks(), kitchen(), device="GPU").makespan / demo == pytest.approx(2.1375)
    assert S.lower_bound(article_tasks(), kitchen()) == pytest.approx(114 / 45)
    for d in kitchen():
        speedup = S.serial(article_tasks(), kitchen(), device=d.name).makespan / demo
        capacity = sum(x.speed for x in kitchen()) / d.speed
        assert speedup / capacity == pytest.approx(0.95)


def test_the_two_tie_rules_give_different_makespans():
    # By hand: by name, t0-t2 go to CPU/GPU/NPU, all free again at 1.0, t5 on the NPU ends at 1 + 25/15;
    # fastest first, the NPU takes t1 (20/15) and then t5: 45/15 = 3.0. The chapter says 12.5% more.
    speeds = [d.speed for d in kitchen()]
    by_name = list_schedule(WORK, speeds, [d.name for d in kitchen()])
    fastest = list_schedule(WORK, speeds, [-d.speed for d in kitchen()])
    assert by_name == pytest.approx(40 / 15) == S.article_demo(article_tasks(), kitchen()).makespan
    assert fastest == pytest.approx(3.0) == S.earliest_free(article_tasks(), kitchen()).makespan
    assert fastest / by_name - 1 == pytest.approx(0.125)


@pytest.mark.parametrize("seed", range(20))
def test_list_schedule_matches_the_library_on_random_bags(seed):
    rng = random.Random(seed)
    work = [rng.randint(1, 30) for _ in range(rng.randint(1, 12))]
    speeds = [float(rng.randint(1, 5)) for _ in range(rng.randint(1, 4))]   # small ints: many ties
    names = [f"D{k}" for k in range(len(speeds))]
    devices = [Device(n, "CPU", s) for n, s in zip(names, speeds)]
    graph = independent_tasks(work)
    assert list_schedule(work, speeds, names) == pytest.approx(S.article_demo(graph, devices).makespan)
    assert list_schedule(work, speeds, [(-s, k) for k, s in enumerate(speeds)]) == pytest.approx(
        S.earliest_free(graph, devices).makespan)


@pytest.mark.parametrize("s", [2.5, 4, 40, 400, 1e4])
def test_speed_blind_list_scheduling_has_no_constant_ratio(s):
    # Two unit tasks, speeds 1 and s: both devices free at 0, one task each, makespan 1; optimum 2/s.
    pair = [Device("slow", "CPU", 1.0), Device("fast", "GPU", float(s))]
    assert S.earliest_free(independent_tasks([1, 1]), pair).makespan == pytest.approx(1.0)
    assert S.article_demo(independent_tasks([1, 1]), pair).makespan == pytest.approx(1.0)
    assert S.optimal(independent_tasks([1, 1]), pair).makespan == pytest.approx(2 / s)


@pytest.mark.parametrize("seed", range(20))
def test_work_stealing_ties_the_demo_on_every_seed(seed):
    # The chapter: from the round-robin queues the GPU, idle at 1.9, steals t0 from the CPU; the NPU's
    # two dishes have started, so the makespan stays 40/15 whichever victim the seed tries first.
    s = S.work_stealing(article_tasks(), kitchen(), seed=seed)
    assert s.makespan == pytest.approx(40 / 15)
    assert [(e.thief, e.victim, e.task) for e in s.log if e.task] == [("GPU", "CPU", "t0")]


@pytest.mark.parametrize("seed", range(20))
def test_the_reroute_never_fires(seed):
    rng = random.Random(seed)
    names = ["CPU", "GPU", "NPU"]
    devices = [Device(n, n, rng.uniform(1, 50)) for n in names]
    tasks = [(rng.randint(1, 30), rng.choice(names)) for _ in range(12)]
    graph = TaskGraph(Task(f"t{k}", float(w), p) for k, (w, p) in enumerate(tasks))
    assert S.article_demo(graph, devices).info["preference_reroutes"] == 0


@pytest.mark.parametrize("gpu, demo, best", [(20, 40 / 15, 2.55), (40, 3.5, 1.8), (10, 4.3, 3.3)])
def test_gpu_speed_readouts(gpu, demo, best):
    # By hand: at GPU 40, t0-t2 end at 1.0 on every device, t3 and t4 fit on the GPU and NPU, t5 (25) ties
    # to the CPU at 1.0 and ends at 3.5. At GPU 10, t5 ties between CPU and NPU at 1.8 and goes to the CPU:
    # 1.8 + 2.5 = 4.3. The optimum by brute force over 3^8 assignments.
    speeds = [10.0, float(gpu), 15.0]
    assert list_schedule(WORK, speeds, ["CPU", "GPU", "NPU"]) == pytest.approx(demo)
    assert brute_force(WORK, speeds) == pytest.approx(best)
    devices = [Device(n, n, s) for n, s in zip(["CPU", "GPU", "NPU"], speeds)]
    assert S.optimal(article_tasks(), devices).makespan == pytest.approx(best)


def test_quiz_keys_follow_from_the_computation():
    from hetlab.book import quiz

    # c11-3: GPU 30, CPU 10, NPU 15: GPU alone 114/30 over the bound max(114/55, 25/30) = 55/30 = 1.83x.
    speeds = [10.0, 30.0, 15.0]
    devices = [Device(n, n, s) for n, s in zip(["CPU", "GPU", "NPU"], speeds)]
    ratio = (114 / 30) / S.lower_bound(article_tasks(), devices)
    assert ratio == pytest.approx(55 / 30)
    assert quiz.check("c11-3", "A").correct
    # c11-4: NPU 30: t5 ties to the CPU at 1.0 and runs 2.5 there, 3.5 in all (longer than 2.667).
    assert list_schedule(WORK, [10.0, 20.0, 30.0], ["CPU", "GPU", "NPU"]) == pytest.approx(3.5)
    assert quiz.check("c11-4", "B").correct
    # c11-7: speeds 1 and 10, two unit dishes: list scheduling 1, optimum 2/10, ratio 5.
    assert list_schedule([1, 1], [1.0, 10.0], [0, 1]) / brute_force([1, 1], [1.0, 10.0]) == pytest.approx(5)
    assert quiz.check("c11-7", "A").correct


@pytest.mark.parametrize("s", [1.0, 1.5, 2.0, 3.0, 4.0, 40.0])
def test_speed_blind_ratio_is_max_of_one_and_half_s(s):
    # two unit dishes, speeds 1 and s: list scheduling gives one to each (done at 1); by hand the optimum is
    # min(1, 2/s) (one each, or both on the fast device), so the ratio is max(1, s/2) -- s/2 only for s >= 2
    pair = [Device("slow", "CPU", 1.0), Device("fast", "GPU", s)]
    greedy = list_schedule([1, 1], [1.0, s], tie=[0, 1])
    best = S.optimal(independent_tasks([1, 1]), pair).makespan
    assert best == pytest.approx(min(1.0, 2.0 / s))
    assert greedy / best == pytest.approx(max(1.0, s / 2))
