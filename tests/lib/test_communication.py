"""hetlab.communication: ring all-reduce, Amdahl with the all-reduce, copy/compute overlap, offload.

Expected values are hand computations of the closed forms, the calculus optimum, or a plain scan of the model.
"""
import math

import numpy as np
import pytest

from hetlab import amdahl
from hetlab import communication as C
from hetlab.communication import (
    allreduce_step_time,
    best_device_count,
    efficiency_knee,
    peak_devices,
    speedup_with_allreduce,
)

LINK = {"grad_bytes": 0.5e9, "bandwidth": 25e9, "latency": 20e-6}
#: Chapter 6's step: 64 s on one device, 1 GB of gradients, 10 GB/s.
CH6 = {"compute_time": 64.0, "grad_bytes": 1e9, "bandwidth": 10e9}


def test_ring_allreduce_by_hand():
    # 4 devices, 1 GB, 10 GB/s: each device sends 2 * 3/4 GB.
    assert C.ring_allreduce_time(4, 1e9, 10e9) == pytest.approx(0.15)
    assert C.ring_allreduce_time(1, 1e9, 10e9) == 0
    assert C.ring_allreduce_time(8, 0.0, 10e9, 1e-5) == pytest.approx(2 * 7 * 1e-5)     # latency only
    with pytest.raises(ValueError, match="n_devices"):
        C.ring_allreduce_time(math.inf, 1.0, 1.0)       # (inf - 1) / inf was NaN


def test_halving_doubling_sends_the_ring_bytes_in_log_steps():
    # Rabenseifner: 2 log2 N latency steps; the bytes, 2 (N - 1) / N * G, as in the ring.
    assert C.halving_doubling_allreduce_time(4, 1e9, 10e9) == pytest.approx(0.15)
    assert C.halving_doubling_allreduce_time(1024, 0.0, 10e9, 1e-3) == pytest.approx(2 * 10 * 1e-3)
    assert C.halving_doubling_allreduce_time(1, 1e9, 10e9, 1e-3) == 0
    # a count between powers of two pays the next power's steps: 5 devices -> 3 rounds each way
    assert C.halving_doubling_allreduce_time(5, 0.0, 1.0, 1.0) == pytest.approx(6.0)
    n = np.array([2, 8, 64, 4096])
    gap = C.ring_allreduce_time(n, 1e9, 10e9, 1e-3) - C.halving_doubling_allreduce_time(n, 1e9, 10e9, 1e-3)
    assert np.allclose(gap, 2 * ((n - 1) - np.log2(n)) * 1e-3)     # only the latency steps differ


def test_the_peak_moves_out_by_orders_of_magnitude_with_log_latency():
    # Chapter 6: C = 64 s, p = 0.99, 1 GB at 10 GB/s, 1 ms per step. Ring: sqrt((63.36 - 0.2) / 0.002) = 177.7;
    # halving-doubling: (63.36 - 0.2) ln 2 / 0.002 = 21,889.
    ring = peak_devices(0.99, **CH6, latency=1e-3)
    tree = peak_devices(0.99, **CH6, latency=1e-3, algorithm="halving_doubling")
    assert ring == pytest.approx(math.sqrt(63.16 / 2e-3))
    assert tree == pytest.approx(63.16 * math.log(2) / 2e-3)
    powers = 2 ** np.arange(0, 17)
    s = speedup_with_allreduce(0.99, powers, **CH6, latency=1e-3, algorithm="halving_doubling")
    best = powers[np.argmax(s)]
    assert tree / 2 <= best <= 2 * tree                 # the best power of two brackets the continuous optimum
    # at 1024 devices: 64 / (0.64 + 63.36/1024 + 20 ms + 2 * 1023/1024 * 0.1 s)
    by_hand = 64 / (0.64 + 63.36 / 1024 + 0.02 + 0.2 * 1023 / 1024)
    assert s[10] == pytest.approx(by_hand)


@pytest.mark.parametrize("call", [
    lambda: allreduce_step_time(0.9, 4, algorithm="tree"),
    lambda: speedup_with_allreduce(0.9, 4, algorithm="Ring"),
    lambda: peak_devices(0.9, algorithm="butterfly"),
])
def test_an_unknown_algorithm_is_refused_by_name(call):
    with pytest.raises(ValueError, match="algorithm"):
        call()


def test_without_communication_it_is_amdahls_law():
    n = np.array([1, 2, 8, 64, 1024])
    assert np.allclose(speedup_with_allreduce(0.9, n, grad_bytes=0, latency=0), amdahl(0.9, n))


def test_step_time_by_hand_at_1024_devices():
    # (1 - p) + p / N + 2 (N - 1) latency + 2 (N - 1) / N * S / B, with S = 0.5 GB, B = 25 GB/s and the
    # default latency, the book's network step (NCCL's ring/Simple estimate, 14 us)
    assert C.NETWORK_STEP_LATENCY == 14e-6
    by_hand = 0.05 + 0.95 / 1024 + 2 * 1023 * 14e-6 + 2 * 1023 / 1024 * 0.5e9 / 25e9
    assert allreduce_step_time(0.95, 1024) == pytest.approx(by_hand, rel=1e-12)
    assert allreduce_step_time(0.95, 1) == 1.0          # one device needs no all-reduce


def test_best_count_matches_the_calculus_optimum():
    # T(N) = const + (p - 2S/B) / N + 2 latency N  =>  N* = sqrt((p - 2S/B) / (2 latency)) ~ 150.8 at 20 us
    n_star = math.sqrt((0.95 - 2 * 0.5e9 / 25e9) / (2 * 20e-6))
    assert best_device_count(0.95, **LINK) in (math.floor(n_star), math.ceil(n_star))
    assert peak_devices(0.95, **LINK) == pytest.approx(n_star)
    default = math.sqrt((0.95 - 2 * 0.5e9 / 25e9) / (2 * 14e-6))       # ~ 180.3 at the default 14 us
    assert best_device_count(0.95) in (math.floor(default), math.ceil(default))
    # past the optimum more devices make the step slower, which Amdahl's law never predicts
    assert speedup_with_allreduce(0.95, 1024) < speedup_with_allreduce(0.95, 151) < amdahl(0.95, 1024)


def test_no_latency_means_more_devices_never_hurt_when_compute_dominates():
    assert best_device_count(0.95, max_devices=512, latency=0) == 512


@pytest.mark.parametrize("kwargs, match", [
    (dict(p=1.5, n_devices=4), "p must be in"), (dict(p=0.9, n_devices=0), "n_devices"),
    (dict(p=0.9, n_devices=2.5), "n_devices"), (dict(p=float("nan"), n_devices=2), "p"),
    (dict(p=0.9, n_devices=2, bandwidth=0), "bandwidth"), (dict(p=0.9, n_devices=2, latency=-1), "latency"),
    (dict(p=0.9, n_devices=2, grad_bytes=float("inf")), "grad_bytes"),
])
def test_bad_input_names_the_parameter(kwargs, match):
    with pytest.raises(ValueError, match=match):
        allreduce_step_time(**kwargs)


def test_best_device_count_checks_its_range():
    with pytest.raises(ValueError, match="max_devices must be in"):
        best_device_count(0.9, max_devices=0)
    with pytest.raises(TypeError, match="max_devices must be an integer"):
        best_device_count(0.9, max_devices=2.0)


def test_amdahl_with_allreduce_peaks_where_the_formula_says():
    n = np.arange(1, 1025)
    s = C.speedup_with_allreduce(0.99, n, **CH6, latency=1e-3)
    best = int(n[np.argmax(s)])
    assert abs(best - peak_devices(0.99, **CH6, latency=1e-3)) < 1.0
    assert s[0] == 1.0 and s[-1] < s.max() and np.all(s <= amdahl(0.99, n) + 1e-12)
    # a larger alpha moves the peak left; with a 0.1 s step the all-reduce never pays off
    assert peak_devices(0.99, **CH6, latency=1e-2) < peak_devices(0.99, **CH6, latency=1e-3)
    assert peak_devices(0.99, **{**CH6, "compute_time": 0.1}, latency=1e-3) == 1.0
    with pytest.raises(ValueError, match="latency"):
        C.speedup_with_allreduce(0.9, 4, latency=-1.0)
    with pytest.raises(ValueError, match="latency"):
        peak_devices(0.99, latency=0.0)          # no latency: the speed-up never peaks


def test_copy_compute_pipeline_hides_the_shorter_stage():
    assert C.copy_compute_pipeline(8, 1.0, 3.0) == (32.0, 4.0 + 7 * 3.0)
    assert C.copy_compute_pipeline(1, 1.0, 3.0) == (4.0, 4.0)
    with pytest.raises(ValueError, match="batches"):
        C.copy_compute_pipeline(0)


def test_speedup_is_the_one_device_step_over_the_n_device_step():
    # 2 devices: 0.05 + 0.475 + 2 * 14 us + 2 * 1/2 * 0.5 GB / 25 GB/s = 0.545028 s
    assert allreduce_step_time(0.95, 2) == pytest.approx(0.05 + 0.475 + 28e-6 + 0.02)
    assert speedup_with_allreduce(0.95, 2) == pytest.approx(1 / 0.545028)
    assert speedup_with_allreduce(0.95, 2, compute_time=64.0) > speedup_with_allreduce(0.95, 2)   # comm matters less


def test_whiteboard_figure_numbers_agree_with_the_model():
    link = {"grad_bytes": 0.5e9, "bandwidth": 25e9, "latency": 80e-6}
    best = best_device_count(0.95, max_devices=1024, **link)
    assert best == 75
    assert float(speedup_with_allreduce(0.95, 1024, **link)) == pytest.approx(3.93, abs=0.005)


def test_efficiency_knee_is_the_largest_count_with_enough_efficiency():
    n = efficiency_knee(0.95, min_efficiency=0.5, max_devices=1024, **LINK)
    assert n == 12
    assert speedup_with_allreduce(0.95, n, **LINK) / n >= 0.5
    assert speedup_with_allreduce(0.95, n + 1, **LINK) / (n + 1) < 0.5
    assert efficiency_knee(0.95, min_efficiency=1.0, max_devices=64, **LINK) == 1
    # without communication and p = 1 every count is fully efficient: the cap binds
    assert efficiency_knee(1.0, min_efficiency=0.9, max_devices=64, grad_bytes=0, latency=0) == 64


@pytest.mark.parametrize("kwargs, error, word", [
    ({"min_efficiency": 0}, ValueError, "min_efficiency"), ({"min_efficiency": 1.5}, ValueError, "min_efficiency"),
    ({"max_devices": 2.0}, TypeError, "max_devices"), ({"max_devices": 0}, ValueError, "max_devices"),
])
def test_efficiency_knee_rejects_bad_inputs(kwargs, error, word):
    with pytest.raises(error, match=word):
        efficiency_knee(0.95, **kwargs)


# --- offloading one matrix product: one model in seconds, bytes, bytes/s and FLOP/s ----------------------------------

def test_matmul_offload_counts_compute_and_three_copies():
    cpu, gpu, copies = C.matmul_offload_time(512)
    flops, moved = 2 * 512**3, 3 * 4 * 512**2
    assert cpu == pytest.approx(flops / 1e12)
    assert copies == pytest.approx(3 * 1e-5 + moved / 25e9)
    assert gpu == pytest.approx(flops / 15e12 + copies)
    cpu, gpu, _ = C.matmul_offload_time(np.array([16.0, 4096.0]))
    assert gpu[0] > cpu[0] and gpu[1] < cpu[1]
    with pytest.raises(ValueError, match="bandwidth must be in"):
        C.matmul_offload_time(8, bandwidth=0)


def test_matmul_offload_copy_time_scales_with_element_size():
    _, _, copy4 = C.matmul_offload_time(1000, latency=0.0)
    _, _, copy8 = C.matmul_offload_time(1000, latency=0.0, element_bytes=8)
    assert copy4 == pytest.approx(3 * 4 * 1000**2 / 25e9)     # three float32 matrices over 25 GB/s
    assert copy8 == pytest.approx(2 * copy4)
    with pytest.raises(ValueError, match="element_bytes"):
        C.matmul_offload_time(1000, element_bytes=0)


@pytest.mark.parametrize("call, name", [
    (lambda: C.matmul_offload_time(64, copies=-1), "copies"),     # was a negative time
    (lambda: C.matmul_offload_time(64, copies=2.5), "copies"),
    (lambda: C.matmul_offload_time(1e300), "n"),                  # n**3 overflows
    (lambda: C.offload_breakeven(cpu_flops=1e17), "cpu_flops"),
    (lambda: C.offload_breakeven(latency=-1.0), "latency"),
    (lambda: C.offload_breakeven(bandwidth=1e-300), "bandwidth"),  # no break-even below n = 1e9
    (lambda: C.offload_breakeven(element_bytes=2.5), "element_bytes"),
])
def test_offload_refuses_bad_input_by_name(call, name):
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    assert name in str(info.value)


@pytest.mark.parametrize("knobs", [{}, {"cpu_flops": 100e9}, {"cpu_flops": 50e9}, {"copies": 0}, {"copies": 1},
                                   {"latency": 0.0}, {"bandwidth": 1e9}, {"gpu_flops": 2e12, "latency": 1e-3}])
def test_offload_breakeven_is_the_first_size_where_the_model_favours_the_gpu(knobs):
    # The search against a plain scan of the model over every size.
    sizes = np.arange(1, 20_001)
    cpu, gpu, _ = C.matmul_offload_time(sizes, **knobs)
    wins = np.asarray(gpu) < np.asarray(cpu)
    assert C.offload_breakeven(**knobs) == int(sizes[np.argmax(wins)])


def test_offload_breakeven_matches_the_closed_form():
    # FP64, bandwidth only: the GPU wins when 2 n^3 (1/cpu - 1/gpu) > 3 * 8 n^2 / bw, i.e. n > root
    cpu, gpu, bw = 40e9, 9.7e12, 25e9
    fp64 = dict(cpu_flops=cpu, gpu_flops=gpu, bandwidth=bw, element_bytes=8)
    root = 3 * 8 / bw / (2 * (1 / cpu - 1 / gpu))
    assert C.offload_breakeven(**fp64, latency=0.0) == math.floor(root) + 1
    n = C.offload_breakeven(**fp64, latency=10e-6)            # plus 10 us to launch each of the 3 copies
    a, c = 2 * (1 / cpu - 1 / gpu), 3 * 8 / bw
    assert a * n ** 3 > c * n ** 2 + 30e-6 and not a * (n - 1) ** 3 > c * (n - 1) ** 2 + 30e-6
    assert C.offload_breakeven(cpu_flops=40e9, gpu_flops=10e9) == 0      # the GPU is slower: never worth it
    assert C.offload_breakeven(cpu_flops=100e9) < C.offload_breakeven()  # a slower CPU: the GPU wins sooner


def test_copy_time_and_a_round_trip():
    # a 2 MB tensor over 25 GB/s with 10 us per launch, there and back: 2 x (10 + 80) us
    assert 2 * C.copy_time(2e6) == pytest.approx(180e-6)
    assert C.copy_time(np.array([0.0, 25e9]), 25e9, 0.0) == pytest.approx([0.0, 1.0])
    with pytest.raises(ValueError, match="bandwidth"):
        C.copy_time(1.0, 0.0)


def test_row_block_intensity_by_hand_and_its_checks():
    # 10 x 10 block of a 10 x 10 product in FP32: 2000 FLOP over 4 * (200 + 100) bytes
    assert C.row_block_intensity(10, 10, 4) == pytest.approx(2 * 10 / 12)
    assert C.row_block_intensity(1, 600, 8, reads_all_of_b=False) == pytest.approx(600 / 8)    # n / b
    with pytest.raises(ValueError, match="rows"):
        C.row_block_intensity(0, 10)
    with pytest.raises(ValueError, match="rows"):
        C.row_block_intensity(11, 10)
    with pytest.raises(TypeError, match="reads_all_of_b"):
        C.row_block_intensity(1, 10, 8, "yes")


def test_collectives_send_the_share_nccl_tests_counts():
    # by hand, 8 devices of 100 GB/s, 8 GB buffers: every device sends 7/8 of the buffer in a reduce-scatter,
    # an all-gather or an all-to-all (70 ms), twice that in an all-reduce (140 ms)
    for name in ("reduce_scatter", "all_gather", "all_to_all"):
        assert C.collective_time(name, 8, 8e9, 100e9) == pytest.approx(0.07)
        assert C.collective_time(name, 8, 8e9, 100e9, 1e-5) == pytest.approx(0.07 + 7 * 1e-5)
    assert C.collective_time("all_reduce", 8, 8e9, 100e9, 1e-5) == C.ring_allreduce_time(8, 8e9, 100e9, 1e-5)
    assert C.collective_time("all_gather", 1, 8e9, 100e9, 1e-5) == 0.0
    assert np.allclose(C.collective_time("all_gather", np.array([2, 4]), 8e9, 100e9), [0.04, 0.06])


def test_bus_bandwidth_is_the_link_rate_whatever_the_device_count():
    # a perfect 100 GB/s link: the algorithm bandwidth falls with n, the bus bandwidth stays at the link's rate
    for n in (2, 4, 8, 64):
        for name in C.COLLECTIVES:
            t = C.collective_time(name, n, 1e9, 100e9)
            assert C.bus_bandwidth(name, n, 1e9, t) == pytest.approx(100e9)
    # nccl-tests' factors (doc/PERFORMANCE.md): all-reduce 2(n-1)/n, the others (n-1)/n
    assert C.bus_bandwidth("all_reduce", 8, 1e9, 0.01) == pytest.approx(100e9 * 14 / 8)
    assert C.bus_bandwidth("all_to_all", 8, 1e9, 0.01) == pytest.approx(100e9 * 7 / 8)


@pytest.mark.parametrize("call, match", [
    (lambda: C.collective_time("broadcast", 8, 1e9, 1e9), "collective"),
    (lambda: C.collective_time("all_gather", 0, 1e9, 1e9), "n_devices"),
    (lambda: C.collective_time("all_gather", 8, -1, 1e9), "nbytes"),
    (lambda: C.collective_time("all_gather", 8, 1e9, 0), "bandwidth"),
    (lambda: C.collective_time("all_gather", 8, 1e9, 1e9, -1), "latency"),
    (lambda: C.bus_bandwidth("all_reduce", 8, 1e9, 0), "seconds"),
    (lambda: C.bus_bandwidth("all_reduce", 2.5, 1e9, 1), "n_devices"),
])
def test_collectives_reject_bad_inputs(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def _bucket_pipeline(k, backward, grad, n, bandwidth, latency):
    """Oracle: bucket i is ready at i * backward / k; each all-reduce starts when its bucket is ready and the
    previous one has finished (an event-by-event walk, not the closed form)."""
    each = 2 * (n - 1) * latency + 2 * (n - 1) / n * (grad / k) / bandwidth
    done = 0.0
    for i in range(1, k + 1):
        done = max(done, i * backward / k) + each
    return done - backward


@pytest.mark.parametrize("k", [1, 2, 7, 60, 120, 144, 145, 300, 3000])
@pytest.mark.parametrize("backward", [0.0, 0.05, 0.3, 2.0])
def test_exposed_allreduce_matches_the_bucket_by_bucket_walk(k, backward):
    args = dict(backward_time=backward, grad_bytes=3e9, n_devices=64, bandwidth=50e9, latency=10e-6)
    assert C.exposed_allreduce(k, **args) == pytest.approx(_bucket_pipeline(k, backward, 3e9, 64, 50e9, 10e-6),
                                                           rel=1e-12, abs=1e-15)


def test_exposed_allreduce_by_hand():
    # one bucket: nothing overlaps, the whole ring all-reduce shows: 2 * 63/64 * 3 GB / 50 GB/s = 118.125 ms
    one = C.exposed_allreduce(1, backward_time=0.3, grad_bytes=3e9, n_devices=64, bandwidth=50e9)
    assert one == pytest.approx(2 * 63 / 64 * 3e9 / 50e9)
    # 120 buckets of 25 MB: each takes 1.26 ms latency + 0.984 ms < 2.5 ms between buckets: only the last shows
    k = C.exposed_allreduce(120, backward_time=0.3, grad_bytes=3e9, n_devices=64, bandwidth=50e9, latency=10e-6)
    assert k == pytest.approx(2 * 63 * 10e-6 + 2 * 63 / 64 * 25e6 / 50e9)
    # 300 buckets: 300 x 1.26 ms of latency alone exceeds the 0.3 s backward pass: the link falls behind
    many = C.exposed_allreduce(300, backward_time=0.3, grad_bytes=3e9, n_devices=64, bandwidth=50e9, latency=10e-6)
    assert many == pytest.approx(0.3 / 300 + 300 * (2 * 63 * 10e-6) + 2 * 63 / 64 * 3e9 / 50e9 - 0.3)
    assert many > one
    # arrays give one value per bucket count; a single device has nothing to reduce
    assert C.exposed_allreduce(np.array([1, 120]), backward_time=0.3, grad_bytes=3e9, n_devices=64,
                               bandwidth=50e9).shape == (2,)
    assert C.exposed_allreduce(5, backward_time=0.3, grad_bytes=3e9, n_devices=1, bandwidth=50e9) == 0.0


@pytest.mark.parametrize("kwargs, match", [
    ({"buckets": 0}, "buckets"), ({"buckets": 2.5}, "buckets"), ({"backward_time": -1}, "backward_time"),
    ({"grad_bytes": -1}, "grad_bytes"), ({"n_devices": 0}, "n_devices"), ({"bandwidth": 0}, "bandwidth"),
    ({"latency": -1e-6}, "latency"),
])
def test_exposed_allreduce_rejects_bad_inputs(kwargs, match):
    args = {"buckets": 4, "backward_time": 0.3, "grad_bytes": 3e9, "n_devices": 8, "bandwidth": 50e9, **kwargs}
    with pytest.raises((ValueError, TypeError), match=match):
        C.exposed_allreduce(args.pop("buckets"), **args)


def test_best_bucket_count_sits_where_the_link_stops_keeping_up():
    # c = 2 * 63/64 * 3 GB / 50 GB/s = 0.118125 s, a = 2 * 63 * 10 us = 1.26 ms: (0.3 - c) / a = 144.3 buckets
    args = dict(backward_time=0.3, grad_bytes=3e9, n_devices=64, bandwidth=50e9, latency=10e-6)
    assert C.best_bucket_count(**args) == 144
    walk = [_bucket_pipeline(k, 0.3, 3e9, 64, 50e9, 10e-6) for k in range(1, 401)]
    assert C.best_bucket_count(**args, max_buckets=400) == 1 + walk.index(min(walk))
    # the backward pass shorter than the bandwidth term: nothing keeps up, and the best count balances the
    # per-bucket latency against the backward pass, k = sqrt(T_b / a) (chapter 4's sqrt(W / Os) again)
    short = dict(args, backward_time=0.05)
    assert C.best_bucket_count(**short) in (math.floor(math.sqrt(0.05 / 1.26e-3)), math.ceil(math.sqrt(0.05 / 1.26e-3)))
    # no latency: the smaller the buckets the better, up to the cap
    assert C.best_bucket_count(**dict(args, latency=0.0), max_buckets=50) == 50
    with pytest.raises(ValueError, match="max_buckets"):
        C.best_bucket_count(**args, max_buckets=0)
