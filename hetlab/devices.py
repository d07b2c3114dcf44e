"""Device models: what a processor can do, and what it costs to move data between two of them.

A :class:`Device` is plain data. Its ``speed`` is in work units per time unit; an
optional ``affinity`` scales that speed per operation kind (a GPU is fast at
``"matmul"``, an NPU at ``"conv"``, a CPU at ``"control"``). Peak compute follows
the article's formula ``P = N_cores * f * IPC``.

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

__all__ = ["Link", "Device", "transfer_time", "kitchen", "phone_soc", "gpu_server", "identical"]

#: The most devices a model may hold (``identical``, ``gpu_server``, a ``devices`` list).
MAX_DEVICES = 10_000


@dataclass(frozen=True)
class Link:
    """A device's connection to the others: a fixed latency plus data / bandwidth.

    ``bandwidth`` is in data units per time unit; ``inf`` means moving data is free
    apart from the latency.
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
    cores, frequency_hz, ipc: for the peak-compute formula ``P = N_cores * f * IPC``.
    memory_bytes: size of the device's own memory space.
    link: latency and bandwidth of the device's connection to other devices.
    power_watts: power drawn while busy, for energy estimates.
    """

    name: str
    kind: str = "CPU"
    speed: float = 1.0
    affinity: Mapping[str, float] = field(default_factory=dict, hash=False)
    cores: int = 1
    frequency_hz: float = 0.0
    ipc: float = 0.0
    memory_bytes: float = math.inf
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
        object.__setattr__(self, "cores", check_int("cores", self.cores, low=1))
        object.__setattr__(self, "frequency_hz", check_nonnegative("frequency_hz", self.frequency_hz))
        object.__setattr__(self, "ipc", check_nonnegative("ipc", self.ipc))
        object.__setattr__(self, "memory_bytes", check_positive("memory_bytes", self.memory_bytes, allow_inf=True))
        object.__setattr__(self, "power_watts", check_nonnegative("power_watts", self.power_watts))
        check_instance("link", self.link, Link)

    def speed_for(self, op: str | None = None) -> float:
        """Speed for an operation kind: ``speed * affinity.get(op, 1)``."""
        if op is None:
            return self.speed
        return self.speed * self.affinity.get(check_str("op", op), 1.0)

    @property
    def peak_ops(self) -> float:
        """Peak instructions per second, ``P = N_cores * f * IPC``."""
        return self.cores * self.frequency_hz * self.ipc


def transfer_time(src: Device, dst: Device, data: float) -> float:
    """Time to move ``data`` from ``src`` to ``dst``: zero on the same device, otherwise
    the larger latency plus data over the smaller bandwidth (the slower end sets the pace)."""
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
    100,000 (a larger machine is a model no chapter needs, and would take seconds to build)."""
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
    """
    bus = Link(latency=0.05, bandwidth=30.0)
    return [
        Device("CPU", "CPU", 0.1, {"control": 1.0, "conv": 1.0, "image": 0.5}, cores=8,
               frequency_hz=3.3e9, ipc=4.0, memory_bytes=12e9, link=bus, power_watts=5.0),
        Device("GPU", "GPU", 0.3, {"image": 1.0, "conv": 0.6, "control": 0.02}, cores=1536,
               frequency_hz=1.0e9, ipc=2.0, memory_bytes=12e9, link=bus, power_watts=3.0),
        Device("NPU", "NPU", 1.0, {"conv": 1.0, "image": 0.1, "control": 0.001}, cores=1,
               frequency_hz=1.0e9, ipc=4.5e4, memory_bytes=12e9, link=bus, power_watts=1.5),
    ]


def gpu_server(gpus: int = 8) -> list[Device]:
    """A GPU server: one 64-core CPU and ``gpus`` NVIDIA A100 SXM 80 GB (NVIDIA A100 datasheet, 2021).

    Units: work in TFLOP, time in s, speed in TFLOP/s; data in GB, bandwidth in GB/s.

    - CPU: AMD EPYC 7742, 64 cores at 2.25 GHz, 16 FP64 FLOP/cycle: about 2.3 TFLOP/s peak.
    - GPU: 312 TFLOP/s FP16 tensor-core peak, 19.5 TFLOP/s FP32; 80 GB HBM2e at 2,039 GB/s.
      NVLink 3: 600 GB/s between GPUs (about 300 GB/s each way); PCIe 4 x16 to the host
      about 25 GB/s achieved, with about 10 microseconds per copy launch.
    """
    gpus = check_int("gpus", gpus, low=1, high=MAX_DEVICES)
    devices = [Device("CPU", "CPU", 2.3, {"control": 1.0, "matmul": 1.0}, cores=64, frequency_hz=2.25e9,
                      ipc=16.0, memory_bytes=512e9, link=Link(latency=1e-5, bandwidth=25.0))]
    width = len(str(gpus - 1))
    for i in range(gpus):
        devices.append(Device(f"GPU{i:0{width}d}", "GPU", 150.0, {"matmul": 1.0, "control": 0.001},
                              cores=6912, frequency_hz=1.41e9, ipc=32.0, memory_bytes=80e9,
                              link=Link(latency=1e-5, bandwidth=300.0)))
    return devices


def check_devices(devices: Sequence[Device], name: str = "devices") -> tuple[Device, ...]:
    """Return ``devices`` as a tuple after checking it is a non-empty sequence of uniquely named Devices
    (``name``: the parameter, for messages)."""
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
