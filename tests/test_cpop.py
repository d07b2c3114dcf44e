"""CPOP (Topcuoglu, Hariri & Wu, IEEE TPDS 2002) on the paper's example and on properties any schedule has."""
import pytest

from hetlab import schedulers as S
from hetlab.devices import Device, Link, identical, kitchen
from hetlab.tasks import Task, TaskGraph, random_dag
from hetlab.workloads import heft_paper_example


@pytest.fixture(scope="module")
def paper():
    graph, procs = heft_paper_example()
    return graph, procs, S.cpop(graph, procs).validate()


def test_reproduces_the_papers_schedule_length_86(paper):
    # The paper's Fig. 4(b): CPOP schedules its ten-task example in 86 time units (HEFT: 80).
    _, _, s = paper
    assert s.makespan == pytest.approx(86.0)


def test_critical_path_and_its_processor_match_the_paper(paper):
    # |CP| = rank_u(n1) = 108 (the HEFT paper's Table); the path n1 -> n2 -> n9 -> n10 runs in
    # 14+13+18+21 = 66 on P1, 16+19+12+7 = 54 on P2 and 9+18+20+16 = 63 on P3, so P2 is chosen.
    _, _, s = paper
    assert s.info["critical_path"] == ["n1", "n2", "n9", "n10"]
    assert s.info["cp_device"] == "P2"
    assert all(s.placement(t).device == "P2" for t in s.info["critical_path"])
    for name in s.info["critical_path"]:
        assert s.info["priority"][name] == pytest.approx(108.0)
    assert max(s.info["priority"].values()) == pytest.approx(108.0)


def test_downward_ranks_by_hand(paper):
    graph, procs, _ = paper
    rd = S.downward_rank(graph, procs)
    mean = {1: 13.0, 2: 50 / 3, 3: 43 / 3}     # mean run times of n1, n2, n3 over P1..P3
    assert rd["n1"] == 0.0                      # the entry task
    assert rd["n2"] == pytest.approx(0 + mean[1] + 18)          # 31
    assert rd["n3"] == pytest.approx(0 + mean[1] + 12)          # 25
    assert rd["n7"] == pytest.approx(rd["n3"] + mean[3] + 23)   # 62.333
    # rank_d(n9) = max over n2, n4, n5 (31 + 50/3 + 16, 22 + 38/3 + 23, 24 + 35/3 + 13) = 63.667
    assert rd["n9"] == pytest.approx(max(31 + 50 / 3 + 16, 22 + 38 / 3 + 23, 24 + 35 / 3 + 13))


def test_a_chain_runs_entirely_on_the_device_fastest_for_it():
    # A chain is its own critical path: all of it goes to the device with the smallest total, 2 + 2 + 2 = 6.
    procs = [Device("A", "CPU", link=Link(0.0, 1.0)), Device("B", "GPU", link=Link(0.0, 1.0))]
    chain = TaskGraph([Task("x", times={"A": 1, "B": 2}), Task("y", times={"A": 5, "B": 2}),
                       Task("z", times={"A": 1, "B": 2})], [("x", "y", 100), ("y", "z", 100)])
    s = S.cpop(chain, procs).validate()
    assert s.info["cp_device"] == "B" and s.makespan == pytest.approx(6.0)


def test_falls_back_when_no_device_runs_the_whole_critical_path():
    procs = [Device("A", "CPU"), Device("B", "GPU")]
    chain = TaskGraph([Task("x", times={"A": 1}), Task("y", times={"B": 3})], [("x", "y")])
    s = S.cpop(chain, procs).validate()
    assert s.info["cp_device"] is None
    assert (s.placement("x").device, s.placement("y").device) == ("A", "B") and s.makespan == 4.0


@pytest.mark.parametrize("seed", range(6))
def test_random_graphs_valid_deterministic_and_above_the_lower_bound(seed):
    graph = random_dag(30, mean_degree=2.0, data=(0.0, 3.0), seed=seed)
    devices = kitchen(link=Link(0.1, 10.0))
    s = S.cpop(graph, devices).validate()
    assert s.makespan >= S.lower_bound(graph, devices) - 1e-9
    assert S.cpop(graph, devices).makespan == s.makespan
    cp = s.info["critical_path"]
    assert {s.placement(t).device for t in cp} == {s.info["cp_device"]}


def test_independent_tasks_and_empty_graph():
    s = S.cpop([Task("a", 10), Task("b", 10)], identical(2, speed=10.0)).validate()
    assert s.makespan == pytest.approx(1.0)        # one task per device
    with pytest.raises(ValueError, match="graph must hold at least one task"):   # empty input (issue 11 contract)
        S.cpop([], kitchen())
    assert "CPOP" in S.POLICIES


@pytest.mark.parametrize("graph, devices, error", [(5, kitchen(), TypeError), ([], [], ValueError),
                                                   ([Task("a", 1)], 3, TypeError)])
def test_rejects_bad_inputs_naming_the_parameter(graph, devices, error):
    with pytest.raises(error, match="graph|devices"):
        S.cpop(graph, devices)
