"""Device models: what a processor can do, and what it costs to move data between two of them.

A :class:`Device` is plain data. Its ``speed`` is in work units per time unit; an
optional ``affinity`` scales that speed per operation kind (a GPU is fast at
``"matmul"``, an NPU at ``"conv"``, a CPU at ``"control"``). Presets: :func:`kitchen` (the
article's restaurant), :func:`phone_soc` (a phone's CPU, GPU and NPU) and :func:`identical`.
Peak compute from cores, clock and FLOPs per cycle is :func:`hetlab.models.hardware.peak_flops`.

>>> cpu, gpu, npu = kitchen()
>>> gpu.speed, npu.speed_for("conv")
(20.0, 15.0)
>>> transfer_time(cpu, cpu, 100.0)
0.0
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from hetlab._validate import (
    check_bool,
    check_finite_result,
    check_instance,
    check_int,
    check_nonnegative,
    check_positive,
    check_str,
    describe,
)

__all__ = ["Link", "Device", "transfer_time", "kitchen", "phone_soc", "identical"]

#: The most devices a model may hold (``identical``, a ``devices`` list).
MAX_DEVICES = 10_000


@dataclass(frozen=True)
class Link:
    """A device's connection to the others: a fixed latency plus data / bandwidth.

    ``bandwidth`` is in data units per time unit; ``inf`` means moving data is free
    apart from the latency.

    >>> Link(latency=0.05, bandwidth=30.0)
    Link(latency=0.05, bandwidth=30.0)

    See also :func:`transfer_time`.
    """

    latency: float = 0.0
    bandwidth: float = math.inf

    def __post_init__(self) -> None:
        object.__setattr__(self, "latency", check_nonnegative("latency", self.latency))
        object.__setattr__(self, "bandwidth", check_positive("bandwidth", self.bandwidth, allow_inf=True))


@dataclass(frozen=True)
class Device:
    """A processor in a heterogeneous system.

    Parameters
    ----------
    name: unique name, e.g. ``"GPU0"``.
    kind: processor class, e.g. ``"CPU"``, ``"GPU"``, ``"NPU"``.
    speed: work units per time unit (the article's ``DEVICES`` values).
    affinity: speed factor per operation kind; kinds not listed run at factor 1.
    link: latency and bandwidth of the device's connection to other devices.
    power_watts: power drawn while busy, for energy estimates.

    >>> gpu = Device("GPU0", "GPU", 20.0, {"matmul": 2.0})
    >>> gpu.speed_for("matmul"), gpu.speed_for("control")
    (40.0, 20.0)
    """

    name: str
    kind: str = "CPU"
    speed: float = 1.0
    affinity: Mapping[str, float] = field(default_factory=dict, hash=False)
    link: Link = field(default_factory=Link)
    power_watts: float = 0.0

    def __post_init__(self) -> None:
        check_str("name", self.name)
        check_str("kind", self.kind)
        object.__setattr__(self, "speed", check_positive("speed", self.speed))
        if not isinstance(self.affinity, Mapping):
            raise TypeError(f"affinity must be a mapping of operation kind to speed factor, got "
                            f"{describe(self.affinity)}")
        factors = {}
        for op, factor in self.affinity.items():
            check_str("affinity key", op)
            factors[op] = check_positive(f"affinity[{op!r}]", factor)
        object.__setattr__(self, "affinity", MappingProxyType(factors))
        object.__setattr__(self, "power_watts", check_nonnegative("power_watts", self.power_watts))
        check_instance("link", self.link, Link)

    def speed_for(self, op: str | None = None) -> float:
        """Speed for an operation kind: ``speed * affinity.get(op, 1)``.

        >>> Device("NPU", "NPU", 15.0, {"conv": 2.0}).speed_for("conv")
        30.0
        """
        if op is None:
            return self.speed
        return self.speed * self.affinity.get(check_str("op", op), 1.0)


def transfer_time(src: Device, dst: Device, data: float) -> float:
    """Time to move ``data`` from ``src`` to ``dst``: zero on the same device, otherwise
    the larger latency plus data over the smaller bandwidth (the slower end sets the pace).

    >>> a = Device("A", link=Link(latency=1.0, bandwidth=10.0))
    >>> b = Device("B", link=Link(latency=2.0, bandwidth=5.0))
    >>> transfer_time(a, b, 20.0), transfer_time(a, a, 20.0)      # 2 + 20 / 5
    (6.0, 0.0)

    See also :func:`hetlab.communication.copy_time` (a host-device copy in bytes and seconds).
    """
    check_instance("src", src, Device)
    check_instance("dst", dst, Device)
    data = check_nonnegative("data", data)
    if src.name == dst.name:
        return 0.0
    latency = max(src.link.latency, dst.link.latency)
    bandwidth = min(src.link.bandwidth, dst.link.bandwidth)
    return check_finite_result(latency + (data / bandwidth if data else 0.0), data=data, bandwidth=bandwidth)


def identical(m: int, speed: float = 1.0, kind: str = "CPU", prefix: str = "D") -> list[Device]:
    """``m`` identical devices named ``D0 .. D{m-1}`` (zero-padded so names sort in order); at most
    10,000 (a larger machine is a model no chapter needs, and would take seconds to build).

    >>> [d.name for d in identical(12, speed=2.0)][:3]
    ['D00', 'D01', 'D02']
    """
    m = check_int("m", m, low=1, high=MAX_DEVICES)
    check_str("kind", kind)
    check_str("prefix", prefix, empty=True)
    width = len(str(m - 1))
    return [Device(f"{prefix}{i:0{width}d}", kind, speed) for i in range(m)]


def kitchen(affinity: bool = False, link: Link | None = None) -> list[Device]:
    """The article's 'smart restaurant' kitchen: CPU 10, GPU 20 and NPU 15 work units per time.

    With ``affinity=True`` each cook gets a speciality (factor 2 on its own dish kind,
    0.5 on the others' specialities), for the chapters on placement by affinity. ``link``
    connects the cooks (default: passing food costs nothing).

    >>> [(d.name, d.speed) for d in kitchen()]
    [('CPU', 10.0), ('GPU', 20.0), ('NPU', 15.0)]
    >>> cpu, gpu, npu = kitchen(affinity=True)
    >>> gpu.speed_for("matmul"), gpu.speed_for("conv")      # its speciality, and another cook's
    (40.0, 10.0)
    """
    check_bool("affinity", affinity)
    if link is not None:
        check_instance("link", link, Link)
    specials = {"CPU": "control", "GPU": "matmul", "NPU": "conv"}
    speeds = {"CPU": 10.0, "GPU": 20.0, "NPU": 15.0}
    devices = []
    for kind, speed in speeds.items():
        factors = {}
        if affinity:
            factors = {op: (2.0 if k == kind else 0.5) for k, op in specials.items()}
        devices.append(Device(kind, kind, speed, factors, link=link or Link()))
    return devices


def phone_soc() -> list[Device]:
    """A flagship phone SoC (rounded from Qualcomm's Snapdragon 8 Gen 3 product brief, 2023).

    Units: work in GOP, time in ms, so speed is GOP/ms (= TOPS); data in MB, bandwidth MB/ms (= GB/s).

    Speeds are *sustained* rates on a small real-time model, far below the peaks, because such
    layers are memory-bound and a frame is one small batch:

    - CPU: 8 Kryo cores up to 3.3 GHz; about 0.1 TOPS sustained on convolutions (NEON),
      and the only unit good at control flow.
    - GPU: Adreno 750, about 4.6 TFLOPS FP32 peak; about 0.3 TOPS sustained on image operators.
    - NPU: Hexagon; its peak is often quoted as about 45 TOPS INT8, but Qualcomm's 8 Gen 3 brief gives
      only relative gains (the official 45 TOPS is the Snapdragon X Elite laptop NPU; see
      ``hardware.NPU_PEAKS`` for vendor-stated NPU peaks); about 1 TOPS sustained on convolutions,
      poor at control flow and irregular operators.
    Devices share LPDDR5X memory (about 77 GB/s), but handing a tensor to another unit still
    costs a cache flush and a driver call: about 0.05 ms latency is a common measured order.
    Busy power: CPU big cores about 5 W, GPU about 3 W, NPU about 1.5 W (orders of magnitude
    reported in mobile-SoC power studies; vendors do not publish per-unit figures).

    >>> cpu, gpu, npu = phone_soc()
    >>> npu.speed_for("conv") / cpu.speed_for("conv"), npu.speed_for("control")   # 10x on convolutions
    (10.0, 0.001)
    """
    bus = Link(latency=0.05, bandwidth=30.0)
    return [
        Device("CPU", "CPU", 0.1, {"control": 1.0, "conv": 1.0, "image": 0.5}, link=bus, power_watts=5.0),
        Device("GPU", "GPU", 0.3, {"image": 1.0, "conv": 0.6, "control": 0.02}, link=bus, power_watts=3.0),
        Device("NPU", "NPU", 1.0, {"conv": 1.0, "image": 0.1, "control": 0.001}, link=bus, power_watts=1.5),
    ]


def check_devices(devices: Sequence[Device], name: str = "devices") -> tuple[Device, ...]:
    """Return ``devices`` as a tuple after checking it is a non-empty sequence of uniquely named Devices
    (``name``: the parameter, for messages).

    >>> len(check_devices(kitchen()))
    3
    >>> check_devices([Device("x"), Device("x")])
    Traceback (most recent call last):
    ...
    ValueError: devices: device names must be unique, 'x' appears twice
    """
    if isinstance(devices, Device):
        raise TypeError(f"{name} must be a sequence of Device, got a single Device; wrap it in a list")
    if isinstance(devices, (str, bytes, Mapping)) or not isinstance(devices, Iterable):
        raise TypeError(f"{name} must be a sequence of Device (e.g. kitchen()), got {describe(devices)}")
    devices = tuple(devices)
    if not devices:
        raise ValueError(f"{name} must hold at least one Device, got none")
    if len(devices) > MAX_DEVICES:
        raise ValueError(f"{name} must hold at most {MAX_DEVICES:,} devices, got {len(devices):,}")
    names = set()
    for device in devices:
        if not isinstance(device, Device):
            raise TypeError(f"{name} must hold Device objects, got {describe(device)}")
        if device.name in names:
            raise ValueError(f"{name}: device names must be unique, {device.name!r} appears twice")
        names.add(device.name)
    return devices
