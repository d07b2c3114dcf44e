"""Dispatch-aware planning: never predicted slower than the GPU alone, and the host model decides."""
import pytest

from hetlab.models.host import HostProfile, load_profile, simulate_host
from hetlab.real.readings import measured_runs
from hetlab.schedulers import heft
from hetlab.schedulers.host_aware import host_aware
from hetlab.workloads.cholesky import OPS, CholeskyCase, cholesky_devices, cholesky_graph


def _cases():
    seen = {}
    for run in measured_runs():
        seen.setdefault((run.source, run.case.n, run.case.b), run.case)
    return list(seen.values())


@pytest.mark.parametrize("workers", [4, 15])
def test_never_predicted_slower_than_the_gpu_alone_on_the_stored_cases(workers):
    profile = load_profile()
    for case in _cases():
        devices = case.devices(workers)
        gpu_only = simulate_host(heft(case.graph(case.devices(0)), case.devices(0)), profile).makespan
        plan = host_aware(case.graph(devices), devices, profile=profile)
        predicted = plan.info["predicted"]
        assert predicted.makespan <= gpu_only * (1 + 1e-12)
        assert plan.info["candidates"][0] == pytest.approx(gpu_only, rel=1e-12)
        assert predicted.makespan == min(plan.info["candidates"].values())
        plan.validate()                                    # the plan itself: HEFT's feasible times
        predicted.validate(check_durations=False)
        assert predicted.device_of.tolist() == plan.device_of.tolist()


def test_a_free_host_makes_every_worker_worth_using():
    # With no host cost and no slowdown the model is HEFT's: more CPU workers never predict a later end here,
    # so the plan on all four workers (or one as fast) is chosen.
    free = HostProfile("free", 0.0, 0.0)
    costs = {op: {"CPU": 4.0, "GPU": 1.0} for op in OPS}
    devices = cholesky_devices(4)
    graph = cholesky_graph(5, costs, devices)
    plan = host_aware(graph, devices, profile=free)
    assert sorted(plan.info["candidates"]) == [0, 1, 2, 4]
    assert plan.info["predicted"].makespan == pytest.approx(heft(graph, devices).makespan)
    assert plan.info["predicted"].makespan < plan.info["candidates"][0]


def test_cpu_only_devices_are_planned_without_a_gpu_candidate():
    devices = cholesky_devices(3, gpu=False)
    graph = cholesky_graph(3, {op: {"CPU": 1.0} for op in OPS}, devices)
    plan = host_aware(graph, devices, profile=HostProfile("p", 0.1, 0.2))
    assert sorted(plan.info["candidates"]) == [1, 2, 3] and plan.policy == "host-aware"


def test_the_profile_is_checked():
    case = CholeskyCase(512, 256, {op: {"CPU": 1.0, "GPU": 1.0} for op in OPS})
    devices = case.devices(1)
    with pytest.raises(TypeError, match="profile must be a HostProfile or a profile name"):
        host_aware(case.graph(devices), devices, profile=3)
    with pytest.raises(ValueError, match="name must be one of the shipped profiles"):
        host_aware(case.graph(devices), devices, profile="nonesuch")


def test_listed_among_the_policies():
    from hetlab.schedulers import POLICIES

    assert POLICIES["host_aware"] is host_aware
