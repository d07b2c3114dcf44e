"""The CPU + GPU executor, tested with the stand-in GPU (no GPU here or in CI) and a stand-in torch."""
import subprocess
import sys
import types

import numpy as np
import pytest

from hetlab.real.hybrid import NumpyCPU, StandInGPU, TorchCPU, TorchCUDA, cuda_available, factor, run_on_devices
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


# --- the CPU tile kernels ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("order", [3, 64, 100, 257])
def test_numpy_trsm_solves_the_triangular_system(order):
    # An oracle by construction: pick X and lower-triangular L, form A = X L^T; TRSM must give X back.
    rng = np.random.default_rng(order)
    low = np.tril(rng.standard_normal((order, order))) + order * np.eye(order)
    x = rng.standard_normal((order, order))
    assert np.allclose(NumpyCPU().run("trsm", [low, x @ low.T]), x, atol=1e-10)


class _FakeTensor(np.ndarray):
    """A numpy array that answers like a CPU tensor (``.numpy()``, ``.device.type``)."""

    def numpy(self):
        return np.asarray(self)

    @property
    def device(self):
        return types.SimpleNamespace(type="cpu")


@pytest.fixture
def fake_torch(monkeypatch):
    """A stand-in ``torch`` module (numpy underneath) that records the thread counts it is given."""
    module = types.ModuleType("torch")
    module.threads = []
    module.Tensor = _FakeTensor
    module.from_numpy = lambda a: np.asarray(a).view(_FakeTensor)
    module.set_num_threads = module.threads.append
    module.linalg = types.SimpleNamespace(
        cholesky=lambda a: np.linalg.cholesky(a).view(_FakeTensor),
        solve_triangular=lambda a, b, upper: np.linalg.solve(a, b).view(_FakeTensor))
    monkeypatch.setitem(sys.modules, "torch", module)
    return module


def test_torch_cpu_workers_factor_beside_numpy_ones(fake_torch):
    plan = _plan(4, 3)
    a = _spd(32, seed=2)
    backends = {"GPU": StandInGPU(0.0), "CPU0": TorchCPU(), "CPU1": NumpyCPU(), "CPU2": TorchCPU()}
    L, run = factor(plan, a, 8, backends)
    assert np.allclose(L, np.linalg.cholesky(a))
    assert fake_torch.threads == [1, 1]             # one intra-op thread, set by each TorchCPU
    used = {plan.devices[j].name for j in run.schedule.device_of}
    assert {"CPU0", "CPU1", "CPU2"} <= used         # each worker ran tasks: tiles pass between the two kinds


def test_torch_cpu_kernels_and_their_checks(fake_torch):
    cpu = TorchCPU(threads=2)
    low = np.array([[2.0, 0.0], [1.0, 3.0]])
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    out = cpu.run("trsm", [cpu.put(low), cpu.put(x @ low.T)])
    assert np.allclose(cpu.get(out), x) and fake_torch.threads == [2]
    assert cpu.get(cpu.run("syrk", [cpu.put(np.ones((2, 2))), cpu.put(np.eye(2) * 3)])).tolist() == \
        [[1.0, -2.0], [-2.0, 1.0]]
    with pytest.raises(TypeError, match=r"tiles\[0\] must be a 2-D CPU tensor"):
        cpu.run("potrf", [np.eye(2)])                # a numpy array, not a tile of this worker
    with pytest.raises(ValueError, match="threads must be in"):
        TorchCPU(threads=0)


def test_torch_cpu_says_what_it_needs(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch fails
    with pytest.raises(ValueError, match="TorchCPU needs torch"):
        TorchCPU()


def test_torch_cpu_with_real_torch():
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    try:
        plan = _plan(3, 2)
        a = _spd(24, seed=3)
        L, _ = factor(plan, a, 8, {"GPU": StandInGPU(0.0), "CPU0": TorchCPU(), "CPU1": TorchCPU()})
        assert np.allclose(L, np.linalg.cholesky(a)) and torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
