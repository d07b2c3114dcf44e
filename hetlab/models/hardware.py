"""The hardware a schedule runs on, from its own numbers: peak compute, memory, systolic arrays,
SIMT branch divergence and GPU occupancy, with every figure tied to its datasheet and precision.
(The roofline that combines a peak with a bandwidth is :mod:`hetlab.models.roofline`.)

Peak compute.

A chip's peak is ``P = N_cores * f * FLOPs/cycle`` where, for chips built from fused multiply-add
(FMA) units, ``FLOPs/cycle = FMA units per core * SIMD lanes per unit * 2`` (an FMA ``a*b + c`` counts
as two floating-point operations). "Core" means a unit with its own instruction stream: a CPU core, or
a GPU streaming multiprocessor (SM); NVIDIA's "CUDA cores" are the SM's FP32 lanes.

Sources (precision stated per entry):

- NVIDIA A100 Tensor Core GPU datasheet (2020/2021): FP64 9.7 TFLOPS, FP64 Tensor Core 19.5, FP32 19.5,
  FP16/BF16 Tensor Core 312 (dense; 624 with 2:4 sparsity); HBM2 1,555 GB/s (40 GB), HBM2e 2,039 GB/s
  (80 GB SXM).
- NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020): 108 SMs, boost clock 1,410 MHz; per SM and
  clock 64 FP32 FMA, 32 FP64 FMA, 1,024 dense FP16 FMA and 64 FP64 FMA in the tensor cores.
- AMD EPYC 7763 product specification (2021): 64 cores, base 2.45 GHz, boost up to 3.5 GHz, 8 channels
  of DDR4-3200. Zen 3 has two 256-bit FMA pipes per core (AMD Software Optimization Guide for Family 19h,
  2020), so 2 x 4 FP64 lanes x 2 = 16 FP64 FLOPs/cycle. AMD does not print a FLOPS figure; ours is
  computed, at the *base* clock.
- A100 tensor cores also run TF32 (156 TFLOPS dense) and INT8 (624 TOPS dense); 2:4 structured sparsity
  doubles every tensor-core figure.
- Jouppi et al., "In-Datacenter Performance Analysis of a Tensor Processing Unit", ISCA 2017: a 256 x 256
  systolic array of 8-bit multiply-accumulate cells at 700 MHz, 92 TOPS.
- NVIDIA H100 (2023) and H200 (2024) Tensor Core GPU datasheets, SXM: BF16 tensor cores 1,979 TFLOPS
  with sparsity (989 dense), 80 GB HBM3 at 3.35 TB/s and 141 GB HBM3e at 4.8 TB/s, NVLink 900 GB/s
  (:data:`GPUS`, with the A100 80 GB SXM).

>>> a100 = entry("A100", "FP64")
>>> round(a100.peak / 1e12, 2), a100.datasheet / 1e12
(9.75, 9.7)
>>> round(entry("EPYC 7763", "FP64").peak / 1e12, 2)
2.51
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from hetlab._validate import check_int, check_nonnegative, check_positive
from hetlab.devices import Device

__all__ = ["ComputeEngine", "Memory", "ENGINES", "MEMORIES", "flops_per_cycle", "peak_flops", "entry",
           "memory", "systolic_peak", "systolic_utilisation", "specialised_kitchen", "VendorFigure",
           "NPU_PEAKS", "TPU_V1", "npu_peak", "offload_times", "A100_THREADS_PER_SM", "dram_bandwidth",
           "PHONE_LPDDR5", "gpu_occupancy", "bytes_in_flight", "WarpDivergence", "warp_divergence",
           "H200_FP64", "H200_FP64_TENSOR", "PCIE5_X16",
           "GPUDatasheet", "GPUS"]


def _check_text(name: str, value) -> None:
    if not isinstance(value, str) or not value.strip():
        raise TypeError(f"{name} must be a non-empty string, got {value!r}")


def flops_per_cycle(fma_units: int, simd_lanes: int) -> int:
    """FLOPs one core finishes per clock: ``fma_units * simd_lanes * 2`` (an FMA is 2 FLOPs)."""
    return 2 * check_int("fma_units", fma_units, low=1, high=10**6) * check_int("simd_lanes", simd_lanes,
                                                                               low=1, high=10**6)


def peak_flops(cores: int, frequency_hz: float, flops_per_cycle: float) -> float:
    """``P = N_cores * f * FLOPs/cycle`` in FLOP/s."""
    cores = check_int("cores", cores, low=1, high=10**9)
    f = check_positive("frequency_hz", frequency_hz)
    if f > 1e11:
        raise ValueError(f"frequency_hz must be in (0, 1e11], got {f:g}")
    per_cycle = check_positive("flops_per_cycle", flops_per_cycle)
    if per_cycle > 1e7:
        raise ValueError(f"flops_per_cycle must be in (0, 1e7], got {per_cycle:g}")
    return cores * f * per_cycle


@dataclass(frozen=True)
class ComputeEngine:
    """One way a chip computes at one precision (its vector units, or its tensor cores).

    ``cores`` are CPU cores or GPU SMs; ``fma_units`` x ``simd_lanes`` FMAs per core per clock.
    ``datasheet`` is the vendor's printed peak in FLOP/s (0 when the vendor prints none).
    """

    chip: str
    precision: str
    engine: str           # "vector" (CPU SIMD, GPU CUDA cores) or "tensor" (tensor cores)
    cores: int
    frequency_hz: float
    clock: str            # which clock the figure uses: "base" or "boost"
    fma_units: int
    simd_lanes: int
    datasheet: float
    source: str

    def __post_init__(self) -> None:
        for name in ("chip", "precision", "engine", "clock", "source"):
            _check_text(name, getattr(self, name))
        check_int("cores", self.cores, low=1, high=10**9)
        check_int("fma_units", self.fma_units, low=1, high=10**6)
        check_int("simd_lanes", self.simd_lanes, low=1, high=10**6)
        peak_flops(self.cores, self.frequency_hz, 2.0)       # checks frequency_hz
        if check_nonnegative("datasheet", self.datasheet) > 1e20:
            raise ValueError(f"datasheet must be in [0, 1e20] FLOP/s, got {self.datasheet:g}")

    @property
    def flops_per_cycle(self) -> int:
        return flops_per_cycle(self.fma_units, self.simd_lanes)

    @property
    def peak(self) -> float:
        return peak_flops(self.cores, self.frequency_hz, self.flops_per_cycle)


_A100 = "NVIDIA A100 datasheet (2021); A100 architecture whitepaper (2020)"
_EPYC = "AMD EPYC 7763 specification (2021); AMD Family 19h optimization guide (2020)"

#: Peak-compute engines with their datasheet figures. A100 SM: 4 partitions of 16 FP32 / 8 FP64 lanes;
#: 4 tensor cores of 256 dense FP16 FMA (or 16 FP64 FMA) per clock.
ENGINES: tuple[ComputeEngine, ...] = (
    ComputeEngine("EPYC 7763", "FP64", "vector", 64, 2.45e9, "base", 2, 4, 0.0, _EPYC),
    ComputeEngine("EPYC 7763", "FP32", "vector", 64, 2.45e9, "base", 2, 8, 0.0, _EPYC),
    ComputeEngine("A100", "FP64", "vector", 108, 1.41e9, "boost", 4, 8, 9.7e12, _A100),
    ComputeEngine("A100", "FP32", "vector", 108, 1.41e9, "boost", 4, 16, 19.5e12, _A100),
    ComputeEngine("A100", "FP64", "tensor", 108, 1.41e9, "boost", 4, 16, 19.5e12, _A100),
    ComputeEngine("A100", "TF32", "tensor", 108, 1.41e9, "boost", 4, 128, 156e12, _A100),
    ComputeEngine("A100", "FP16/BF16", "tensor", 108, 1.41e9, "boost", 4, 256, 312e12, _A100),
    ComputeEngine("A100", "INT8", "tensor", 108, 1.41e9, "boost", 4, 512, 624e12, _A100),   # integer ops, TOPS
)


def entry(chip: str = "A100", precision: str = "FP64", engine: str = "vector") -> ComputeEngine:
    """The engine of ``chip`` at ``precision`` (``engine`` "vector" or "tensor")."""
    for e in ENGINES:
        if (e.chip, e.precision, e.engine) == (chip, precision, engine):
            return e
    known = sorted({(e.chip, e.precision, e.engine) for e in ENGINES})
    raise ValueError(f"(chip, precision, engine) must be one of {known}, got {(chip, precision, engine)!r}")


@dataclass(frozen=True)
class Memory:
    """A memory space: where it sits, its size (bytes) and its peak bandwidth (bytes/s)."""

    name: str
    where: str            # "host" (next to the CPU) or "device" (on the accelerator)
    kind: str
    capacity: float
    bandwidth: float
    source: str

    def __post_init__(self) -> None:
        for name in ("name", "where", "kind", "source"):
            _check_text(name, getattr(self, name))
        check_nonnegative("capacity", self.capacity)
        check_positive("bandwidth", self.bandwidth)


#: Memory spaces of the machine in this chapter. DDR4-3200: 3.2e9 transfers/s x 8 bytes x 8 channels.
MEMORIES: tuple[Memory, ...] = (
    Memory("EPYC 7763 DDR4", "host", "DDR4-3200 x 8", 512e9, 8 * 3.2e9 * 8, _EPYC),
    Memory("A100 40GB HBM2", "device", "HBM2", 40e9, 1555e9, _A100),
    Memory("A100 80GB SXM HBM2e", "device", "HBM2e (SXM)", 80e9, 2039e9, _A100),
    Memory("PCIe 4.0 x16", "link", "PCIe Gen4", 0.0, 32e9, "PCI-SIG PCIe 4.0 specification (2017), per direction"),
)


def memory(name: str = "A100 40GB HBM2") -> Memory:
    """The memory space called ``name``."""
    for m in MEMORIES:
        if m.name == name:
            return m
    raise ValueError(f"name must be one of {[m.name for m in MEMORIES]}, got {name!r}")


def systolic_peak(rows: int, cols: int, frequency_hz: float) -> float:
    """Peak of a ``rows x cols`` systolic array of multiply-accumulate cells: one MAC (2 ops) per cell
    per clock. TPU v1 (Jouppi et al. 2017): 256 x 256 at 0.7 GHz = 9.175e13 ops/s ("92 TOPS")."""
    rows = check_int("rows", rows, low=1, high=65536)
    cols = check_int("cols", cols, low=1, high=65536)
    return peak_flops(rows * cols, frequency_hz, 2.0)


def systolic_utilisation(k: int, n: int, rows: int, cols: int) -> float:
    """Share of a weight-stationary ``rows x cols`` array's cells that hold a weight when a ``k x n``
    weight matrix is cut into ``ceil(k/rows) * ceil(n/cols)`` tiles (fill and drain ignored).

    A matmul with ``k, n`` multiples of the array uses every cell; an elementwise product has no
    reduction dimension (``k = 1``): mapped onto the array it uses one cell per column (the diagonal
    of a diagonal weight matrix), ``1/rows`` of the cells. Real NPUs run elementwise work on a
    separate vector unit instead (TPU v1's activation pipeline, Ascend's Vector unit).
    """
    k = check_int("k", k, low=1, high=10**9)
    n = check_int("n", n, low=1, high=10**9)
    rows = check_int("rows", rows, low=1, high=65536)
    cols = check_int("cols", cols, low=1, high=65536)
    tiles_k, tiles_n = -(-k // rows), -(-n // cols)
    return (k * n) / (tiles_k * rows * tiles_n * cols)


def specialised_kitchen() -> list[Device]:
    """The kitchen of chapter 1 (the article's speeds CPU 10, GPU 20, NPU 15) with specialities that agree
    with the hardware: the NPU is a multiply-accumulate array, so matmul *and* conv (a convolution is
    lowered to a matmul) run at twice its base speed; the GPU's SIMT lanes also double matmul and speed
    up conv by 1.25; control flow (branches, scalar code) runs best on the CPU and badly on the arrays.

    The factors are this book's illustrative assumptions, not measurements.
    """
    factors = {
        "CPU": {"control": 2.0, "matmul": 0.5, "conv": 0.5},
        "GPU": {"matmul": 2.0, "conv": 1.25, "control": 0.25},
        "NPU": {"matmul": 2.0, "conv": 2.0, "control": 0.1},
    }
    speeds = {"CPU": 10.0, "GPU": 20.0, "NPU": 15.0}
    return [Device(kind, kind, speeds[kind], factors[kind]) for kind in speeds]


@dataclass(frozen=True)
class VendorFigure:
    """A peak the vendor itself published: ``value`` in operations per second, with the precision the
    vendor states ("not stated" when the announcement gives none) and where and when it was said."""

    chip: str
    unit: str
    value: float
    precision: str
    source: str

    def __post_init__(self) -> None:
        for name in ("chip", "unit", "precision", "source"):
            _check_text(name, getattr(self, name))
        check_positive("value", self.value)


#: NPU peaks stated by the vendors themselves. Neither announcement names the precision (INT8 is the
#: usual convention for such TOPS figures, but the vendor does not say so).
NPU_PEAKS: tuple[VendorFigure, ...] = (
    VendorFigure("Apple A17 Pro Neural Engine", "ops/s", 35e12, "not stated",
                 "Apple newsroom, 'Apple unveils iPhone 15 Pro and iPhone 15 Pro Max', 12 Sept 2023: "
                 "'35 trillion operations per second'"),
    VendorFigure("Qualcomm Snapdragon X Elite Hexagon NPU", "TOPS", 45e12, "not stated",
                 "Qualcomm Snapdragon X Elite announcement, Snapdragon Summit, Oct 2023: '45 TOPS' NPU "
                 "(a laptop chip, not a phone chip)"),
)


#: The TPU v1 figure as its paper states it (the formula in ``systolic_peak`` gives 91.75 TOPS).
TPU_V1 = VendorFigure("Google TPU v1", "TOPS", 92e12, "INT8",
                      "Jouppi et al., 'In-Datacenter Performance Analysis of a Tensor Processing Unit', ISCA 2017")


#: A newer GPU, as its datasheet prints it (dense figures): the H200 SXM of the stored readings in
#: ``hetlab/data/readings/h200-2026-12-04``. The NVL card prints 30 and 60 TFLOPS FP64 instead. Kept out of
#: ``ENGINES``: these are the vendor's numbers, not computed from an SM layout here.
_H200 = "NVIDIA H200 Tensor Core GPU datasheet (2024), H200 SXM"
H200_FP64 = VendorFigure("NVIDIA H200 SXM", "FLOP/s", 34e12, "FP64 (vector units)", _H200)
H200_FP64_TENSOR = VendorFigure("NVIDIA H200 SXM", "FLOP/s", 67e12, "FP64 (tensor cores)", _H200)
#: (Its memory is ``GPUS["H200 SXM"]``.) The PCIe 5.0 x16 link to the host: 32 GT/s x 16 lanes / 8 =
#: 64 GB/s per direction (before line encoding, the convention of the PCIe 4.0 entry of ``MEMORIES``).
PCIE5_X16 = Memory("PCIe 5.0 x16", "link", "PCIe Gen5", 0.0, 64e9,
                   "PCI-SIG PCIe 5.0 specification (2019), per direction")


def npu_peak(chip: str = "Apple A17 Pro Neural Engine") -> VendorFigure:
    """The vendor-stated NPU peak of ``chip`` (one of ``NPU_PEAKS``)."""
    for f in NPU_PEAKS:
        if f.chip == chip:
            return f
    raise ValueError(f"chip must be one of {[f.chip for f in NPU_PEAKS]}, got {chip!r}")


@dataclass(frozen=True)
class GPUDatasheet:
    """A data-centre GPU as its vendor datasheet prints it: the dense 16-bit (BF16/FP16) tensor-core peak in
    FLOP/s, the memory in bytes, its bandwidth and the NVLink bandwidth per direction, in bytes/s (the datasheets
    print tensor peaks *with* 2:4 sparsity and say the dense figure is half of it).

    >>> h100 = GPUS["H100 SXM"]
    >>> h100.bf16_flops / 1e12, round(h100.bf16_flops / h100.memory_bandwidth)   # FLOP per byte at the ridge
    (989.0, 295)
    """

    name: str
    bf16_flops: float
    memory: float
    memory_bandwidth: float
    nvlink_bandwidth: float
    source: str

    def __post_init__(self) -> None:
        for name in ("name", "source"):
            _check_text(name, getattr(self, name))
        for name in ("bf16_flops", "memory", "memory_bandwidth", "nvlink_bandwidth"):
            check_positive(name, getattr(self, name), high=1e20)


_SHEET = "NVIDIA {} Tensor Core GPU datasheet ({}), SXM: BF16 1,979 TFLOPS with sparsity, {}, NVLink 900 GB/s"
#: Three generations of data-centre GPU by name (NVLink: 600 and 900 GB/s for both directions together). The
#: A100's figures are those of :data:`ENGINES` and :data:`MEMORIES`.
GPUS: dict[str, GPUDatasheet] = {g.name: g for g in (
    GPUDatasheet("A100 80GB SXM", entry("A100", "FP16/BF16", "tensor").datasheet,
                 memory("A100 80GB SXM HBM2e").capacity, memory("A100 80GB SXM HBM2e").bandwidth, 300e9,
                 _A100 + "; NVLink 600 GB/s"),
    GPUDatasheet("H100 SXM", 989e12, 80e9, 3.35e12, 450e9, _SHEET.format("H100", 2023, "80 GB HBM3 at 3.35 TB/s")),
    GPUDatasheet("H200 SXM", 989e12, 141e9, 4.8e12, 450e9, _SHEET.format("H200", 2024, "141 GB HBM3e at 4.8 TB/s")),
)}


def offload_times(n_elements: int, *, bytes_per_element: float = 12.0, flops_per_element: float = 1.0,
                  device: str = "A100 40GB HBM2", precision: str = "FP32",
                  link: str = "PCIe 4.0 x16", latency: float = 0.0) -> dict[str, float]:
    """Seconds to run an elementwise kernel on the A100 from its own memory (roofline time) against the
    seconds to move the same bytes over ``link`` at its theoretical rate, plus a fixed ``latency`` (seconds
    per offload: copy and launch set-up, independent of the bytes; default none), without overlap: a
    :func:`hetlab.communication.copy_time`.

    Defaults are ``c = a + b`` in FP32: 12 bytes and 1 FLOP per element. Returns ``kernel``, ``copy``,
    ``ratio`` (copy / kernel) and ``bytes``. Without ``latency`` every term is proportional to
    ``n_elements``, so whether offloading pays does not depend on the size; the latency makes small
    kernels pay a cost of their own.

    >>> t = offload_times(2**20)
    >>> round(t["kernel"] * 1e6, 1), round(t["copy"] * 1e6)
    (8.1, 393)
    >>> round(offload_times(2**20, latency=30e-6)["copy"] * 1e6)
    423
    """
    from hetlab.communication import copy_time
    from hetlab.models.roofline import kernel_time

    n = check_int("n_elements", n_elements, low=1, high=10**13)
    b = check_positive("bytes_per_element", bytes_per_element)
    f = check_positive("flops_per_element", flops_per_element)
    devices = [m.name for m in MEMORIES if m.where == "device"]
    links = [m.name for m in MEMORIES if m.where == "link"]
    if not isinstance(device, str) or device not in devices:
        raise ValueError(f"device must be one of {devices}, got {device!r}")
    if not isinstance(link, str) or link not in links:
        raise ValueError(f"link must be one of {links}, got {link!r}")
    if not isinstance(precision, str) or precision not in ("FP64", "FP32"):
        raise ValueError(f"precision must be one of ['FP64', 'FP32'], got {precision!r}")
    mem, wire = memory(device), memory(link)
    kernel = kernel_time(n * f, n * b, entry("A100", precision).peak, mem.bandwidth)
    copy = copy_time(n * b, wire.bandwidth, latency=latency)
    return {"kernel": kernel, "copy": copy, "ratio": copy / kernel, "bytes": n * b}


#: Most resident threads per A100 SM (compute capability 8.0: 64 warps of 32 threads; NVIDIA A100
#: architecture whitepaper, 2020).
A100_THREADS_PER_SM = 2048


def dram_bandwidth(transfers_per_s: float, bus_bits: int) -> float:
    """Peak bandwidth in bytes/s of a DRAM interface: ``transfers_per_s * bus_bits / 8``.

    >>> dram_bandwidth(6400e6, 64) / 1e9      # 64-bit LPDDR5-6400
    51.2
    """
    rate = check_positive("transfers_per_s", transfers_per_s)
    if rate > 1e12:
        raise ValueError(f"transfers_per_s must be in (0, 1e12], got {rate:g}")
    bits = check_int("bus_bits", bus_bits, low=8, high=65536)
    if bits % 8:
        raise ValueError(f"bus_bits must be a multiple of 8, got {bits}")
    return rate * bits / 8


#: An illustrative phone memory: LPDDR5 at its top JEDEC data rate (JESD209-5, 2019: 6400 MT/s) on a
#: 64-bit interface (an assumption typical of flagship phone SoCs; vendors do not publish the width).
PHONE_LPDDR5 = Memory("phone LPDDR5-6400 x64", "device", "LPDDR5-6400 x64", 8e9,
                      dram_bandwidth(6400e6, 64), "JEDEC JESD209-5 LPDDR5 standard (2019): 6400 MT/s")


@dataclass(frozen=True)
class Occupancy:
    """How a 1-D launch of ``threads`` threads in blocks of ``block_size`` lands on the SMs (one block per SM
    while blocks are fewer than SMs, as the block scheduler spreads them)."""

    blocks: int
    sms_used: int
    warps_per_used_sm: float      # resident warps on an SM that got work (average)
    warp_slots: int               # resident-warp capacity of one SM


def gpu_occupancy(threads: int = 10_000, block_size: int = 256, sms: int = 108,
                  threads_per_sm: int = A100_THREADS_PER_SM) -> Occupancy:
    """Blocks, SMs that receive a block, and resident warps per such SM for a 1-D launch (A100 defaults).

    Simplification: blocks are spread evenly (round robin) over the SMs, and the only occupancy limit is the
    resident-thread limit (registers and shared memory are ignored).

    >>> o = gpu_occupancy(10_000, 256)
    >>> (o.blocks, o.sms_used, o.warps_per_used_sm, o.warp_slots)
    (40, 40, 8.0, 64)
    """
    threads = check_int("threads", threads, low=1, high=10**12)
    block_size = check_int("block_size", block_size, low=32, high=1024)
    sms = check_int("sms", sms, low=1, high=100_000)
    threads_per_sm = check_int("threads_per_sm", threads_per_sm, low=32, high=65536)
    if block_size % 32:
        raise ValueError(f"block_size must be a multiple of 32 (a warp), got {block_size}")
    if block_size > threads_per_sm:
        raise ValueError(f"block_size must be <= threads_per_sm={threads_per_sm}, got {block_size}")
    blocks = -(-threads // block_size)
    used = min(blocks, sms)
    resident_blocks = min(blocks, used * (threads_per_sm // block_size))
    return Occupancy(blocks=blocks, sms_used=used,
                     warps_per_used_sm=resident_blocks * (block_size // 32) / used,
                     warp_slots=threads_per_sm // 32)


@dataclass(frozen=True)
class InFlight:
    """Little's law for memory: bytes that must be in flight to sustain ``bandwidth`` at ``latency``."""

    total_bytes: float
    per_sm_bytes: float
    warp_loads_per_sm: float      # outstanding warp-wide loads per SM needed (each ``bytes_per_warp_load``)


def bytes_in_flight(bandwidth: float = 1555e9, latency_s: float = 500e-9, sms: int = 108,
                    bytes_per_warp_load: float = 128.0) -> InFlight:
    """Little's law: in-flight bytes = bandwidth x latency, split over ``sms`` SMs and counted in warp loads.

    Defaults: A100 40GB HBM2 bandwidth; ``latency_s`` = 500 ns is an illustrative DRAM load latency (the
    real value depends on the chip and access pattern); a warp load of 32 threads x 4 bytes = 128 bytes.

    >>> f = bytes_in_flight()
    >>> round(f.total_bytes), round(f.per_sm_bytes), round(f.warp_loads_per_sm)
    (777500, 7199, 56)
    """
    bandwidth = check_positive("bandwidth", bandwidth)
    latency_s = check_positive("latency_s", latency_s, high=1.0)
    sms = check_int("sms", sms, low=1, high=100_000)
    bytes_per_warp_load = check_positive("bytes_per_warp_load", bytes_per_warp_load)
    total = bandwidth * latency_s
    return InFlight(total_bytes=total, per_sm_bytes=total / sms, warp_loads_per_sm=total / sms / bytes_per_warp_load)


# --- SIMT branch divergence --------------------------------------------------------------------------------------
# A warp of ``width`` threads (32 on NVIDIA GPUs) issues one instruction for all its lanes. When ``taken``
# lanes follow the ``if`` side of a branch (``if_time`` each) and the rest the ``else`` side (``else_time``
# each), the hardware runs the two sides one after the other, masking the lanes that did not take the side
# being run (Lindholm et al. 2008): ``T_warp = if_time + else_time`` when both sides have a lane, and the
# share of lane-time doing useful work is ``U = (taken * if_time + (width - taken) * else_time) / (width * T_warp)``.
# Model limits: one level of branching, no reconvergence tricks (independent thread scheduling of Volta and
# later still serialises the two sides within a warp), every lane's side costs the same.

@dataclass(frozen=True)
class WarpDivergence:
    """The cost of one branch in one warp: ``time`` (warp busy time) and ``utilisation`` (useful lane-time share)."""

    taken: int
    width: int
    if_time: float
    else_time: float
    time: float
    utilisation: float

    def __post_init__(self) -> None:
        width = check_int("width", self.width, low=1, high=1024)
        taken = check_int("taken", self.taken, low=0, high=width)
        if_time = check_nonnegative("if_time", self.if_time)
        else_time = check_nonnegative("else_time", self.else_time)
        time, utilisation = _warp_cost(taken, width, if_time, else_time)
        for name, expected in (("time", time), ("utilisation", utilisation)):
            value = check_nonnegative(name, getattr(self, name))
            if not math.isclose(value, expected, rel_tol=1e-9, abs_tol=1e-12):
                raise ValueError(f"{name} must equal the model's value {expected:g} for taken={taken}, "
                                 f"width={width}, if_time={if_time:g}, else_time={else_time:g}; got {value:g}")

    @property
    def idle_share(self) -> float:
        """Share of lane-time spent masked off (``1 - utilisation``)."""
        return 1.0 - self.utilisation


def warp_divergence(taken: int, if_time: float, else_time: float, *, width: int = 32) -> WarpDivergence:
    """Time and lane utilisation of a warp whose ``taken`` of ``width`` lanes take the ``if`` side.

    ``taken`` must be in ``[0, width]``; times are non-negative (same unit for both). A side no lane
    takes is skipped, so ``taken = 0`` or ``taken = width`` costs one side only (utilisation 1).

    >>> round(warp_divergence(8, 1.0, 1.0).utilisation, 2)
    0.5
    >>> warp_divergence(32, 1.0, 3.0).time      # every lane takes the if side: no divergence
    1.0
    """
    width = check_int("width", width, low=1, high=1024)
    taken = check_int("taken", taken, low=0, high=width)
    if_time = check_nonnegative("if_time", if_time)
    else_time = check_nonnegative("else_time", else_time)
    return WarpDivergence(taken, width, if_time, else_time, *_warp_cost(taken, width, if_time, else_time))


def _warp_cost(taken: int, width: int, if_time: float, else_time: float) -> tuple[float, float]:
    """``(T_warp, U)`` for validated inputs: a side no lane takes is skipped."""
    time = (if_time if taken > 0 else 0.0) + (else_time if taken < width else 0.0)
    useful = taken * if_time + (width - taken) * else_time
    return time, (useful / (width * time) if time > 0 else 1.0)
