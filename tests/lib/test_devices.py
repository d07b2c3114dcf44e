"""Devices, links and the presets (hetlab.devices)."""
import math

import pytest

from hetlab.devices import Device, Link, check_devices, identical, kitchen, phone_soc, transfer_time


def test_devices_refuse_bad_input_by_name():
    cpu, gpu, _ = kitchen()
    with pytest.raises(ValueError, match="data must be in"):
        transfer_time(cpu, gpu, -5)                  # was a negative time
    with pytest.raises(TypeError, match="src must be a Device"):
        transfer_time([cpu], gpu, 1.0)               # was AttributeError
    with pytest.raises(ValueError, match="m must be in"):
        identical(10**12)                            # used to build devices for minutes
    with pytest.raises(TypeError, match="affinity must be True or False"):
        kitchen(affinity="no")                       # a non-empty string was truthy
    with pytest.raises(ValueError, match="speed must be in"):
        Device("x", speed=0)
    with pytest.raises(ValueError, match="device names must be unique"):
        check_devices([Device("x"), Device("x")])
    with pytest.raises(TypeError, match="single Device"):
        check_devices(Device("x"))


def test_the_article_kitchen_and_its_specialities():
    # the article's DEVICES: CPU 10, GPU 20, NPU 15; with affinity each cook is 2x on its own dish, 0.5x on others'
    assert [(d.name, d.speed) for d in kitchen()] == [("CPU", 10.0), ("GPU", 20.0), ("NPU", 15.0)]
    cpu, gpu, npu = kitchen(affinity=True)
    assert (cpu.speed_for("control"), gpu.speed_for("matmul"), npu.speed_for("conv")) == (20.0, 40.0, 30.0)
    assert (cpu.speed_for("matmul"), gpu.speed_for("conv"), npu.speed_for("control")) == (5.0, 10.0, 7.5)
    assert gpu.speed_for("unknown op") == gpu.speed_for() == 20.0
    assert all(transfer_time(a, b, 1e6) == 0.0 for a in kitchen() for b in kitchen())   # passing food is free


def test_transfer_time_is_set_by_the_slower_end():
    slow, fast = Device("S", link=Link(1e-3, 10.0)), Device("F", link=Link(1e-5, 1000.0))
    assert transfer_time(fast, slow, 50.0) == pytest.approx(1e-3 + 50.0 / 10.0)
    assert transfer_time(slow, fast, 50.0) == transfer_time(fast, slow, 50.0)
    assert transfer_time(Device("A"), Device("B"), 1e9) == 0.0       # default link: infinite bandwidth, no latency
    assert Link().bandwidth == math.inf


def test_identical_devices_sort_by_name_and_share_one_speed():
    devs = identical(11, speed=3.0, kind="GPU", prefix="G")
    assert [d.name for d in devs] == sorted(d.name for d in devs) and devs[-1].name == "G10"
    assert {(d.kind, d.speed) for d in devs} == {("GPU", 3.0)}


def test_phone_soc_units_are_tops_and_its_npu_is_poor_at_control():
    cpu, gpu, npu = phone_soc()
    assert npu.speed_for("conv") == pytest.approx(10 * cpu.speed_for("conv"))
    assert npu.speed_for("control") < gpu.speed_for("control") < cpu.speed_for("control")
    assert transfer_time(cpu, npu, 3.0) == pytest.approx(0.05 + 3.0 / 30.0)     # 3 MB over 30 GB/s, plus 0.05 ms
