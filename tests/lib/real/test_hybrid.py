"""The CPU + GPU executor, tested with the stand-in GPU (no GPU here or in CI)."""
import subprocess
import sys

import numpy as np
import pytest

from hetlab.real.hybrid import NumpyCPU, StandInGPU, TorchCUDA, cuda_available, factor, run_on_devices
from hetlab.schedulers import heft
from hetlab.workloads.cholesky import OPS, cholesky_devices, cholesky_graph


def _spd(order: int, seed: int = 0) -> np.ndarray:
    m = np.random.default_rng(seed).standard_normal((order, order))
    return m @ m.T + order * np.eye(order)


def _plan(tiles: int, workers: int, gpu_cost: float = 1.0):
    devices = cholesky_devices(workers, tile_copy_s=0.5)
    costs = {op: {"CPU": 3.0, "GPU": gpu_cost} for op in OPS}
    return heft(cholesky_graph(tiles, costs, devices), devices)


def _backends(plan, gpu):
    return {d.name: (gpu if d.kind == "GPU" else NumpyCPU()) for d in plan.devices}


def test_the_factor_is_right_and_the_run_follows_the_plan():
    plan = _plan(4, 3)
    assert len(set(plan.device_of.tolist())) > 1       # the plan uses the GPU and CPU workers
    a = _spd(32)
    L, run = factor(plan, a, 8, _backends(plan, StandInGPU(launch_s=2e-4)))
    assert np.allclose(L, np.linalg.cholesky(a))
    s = run.schedule.validate(check_durations=False)   # dependencies respected, no overlap on a device
    assert s.device_of.tolist() == plan.device_of.tolist()
    for d in plan.devices:                              # each device ran its tasks in the plan's order
        assert s.tasks_on(d.name) == plan.tasks_on(d.name)
    gpu = [i for i, j in enumerate(s.device_of) if plan.devices[j].kind == "GPU"]
    assert min(s.end[i] - s.start[i] for i in gpu) >= 2e-4     # every GPU task paid its launch
    assert run.wall_time == s.makespan


def test_without_synchronise_and_with_a_held_interpreter():
    plan = _plan(3, 2, gpu_cost=0.1)
    a = _spd(24, seed=1)
    L, run = factor(plan, a, 8, _backends(plan, StandInGPU(launch_s=0.0, hold_s=1e-4)), synchronize=False)
    assert np.allclose(L @ L.T, a) and run.schedule.info["synchronize"] is False


def test_a_failing_task_stops_every_thread_and_is_raised():
    plan = _plan(3, 2)
    bodies = {t.name: (lambda backend: None) for t in plan.graph.tasks}

    def boom(backend):
        raise RuntimeError("tile kernel failed")

    bodies["TRSM_1_0"] = boom
    with pytest.raises(RuntimeError, match="tile kernel failed"):
        run_on_devices(plan, bodies, _backends(plan, StandInGPU(0.0)))


def test_arguments_are_checked():
    plan = _plan(2, 1)
    with pytest.raises(ValueError, match="missing 'CPU0'"):
        run_on_devices(plan, {t.name: (lambda b: None) for t in plan.graph.tasks}, {"GPU": StandInGPU()})
    with pytest.raises(ValueError, match="bodies must map every task to a callable"):
        run_on_devices(plan, {}, _backends(plan, StandInGPU()))
    with pytest.raises(TypeError, match=r"backends\['GPU'\] must have a run\(\) method"):
        run_on_devices(plan, {t.name: (lambda b: None) for t in plan.graph.tasks}, {"GPU": 1, "CPU0": NumpyCPU()})
    with pytest.raises(ValueError, match="matrix must be square, finite, with b = 4 dividing its order"):
        factor(plan, np.eye(15), 4, _backends(plan, StandInGPU()))
    with pytest.raises(ValueError, match="plan must be a tiled-Cholesky plan for 4 x 4 tiles"):
        factor(plan, np.eye(16), 4, _backends(plan, StandInGPU()))
    with pytest.raises(ValueError, match="launch_s must be in"):
        StandInGPU(launch_s=-1.0)


@pytest.mark.skipif(cuda_available(), reason="a CUDA device is present")
def test_the_cuda_backend_says_what_it_needs():
    with pytest.raises(ValueError, match=r"pip install 'hetlab\[gpu\]'"):
        TorchCUDA()


def test_nothing_but_the_cuda_backend_imports_torch():
    code = ("import sys, hetlab, hetlab.real.hybrid, hetlab.models.host, hetlab.schedulers.host_aware, "
            "hetlab.workloads.cholesky, hetlab.real.readings, hetlab.book.cli; "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
