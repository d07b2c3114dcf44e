"""Tests for the chapter-12 additions: interleaved pool repeats, spread verdict, crossover, best cards."""
import pytest

from hetlab.book import misconceptions as M
from hetlab.real import measure


def test_time_pools_repeated_shape():
    rounds = measure.time_pools_repeated(jobs=2, size=1000, workers=2, repeats=2)
    assert len(rounds) == 2 and all(r.jobs == 2 and r.workers == 2 for r in rounds)
    with pytest.raises(ValueError, match="repeats"):
        measure.time_pools_repeated(repeats=0)
    with pytest.raises(ValueError, match="loop steps"):
        measure.time_pools_repeated(jobs=64, size=5_000_000, repeats=10)


def test_pool_spread_verdict_noise_only_when_overlapping():
    overlap = M.pool_spread_verdict((1.0, 1.1, 0.9), (1.05, 0.95, 1.0), (0.5, 0.6, 0.55), load=0.1)
    assert "波动之内" in overlap
    apart = M.pool_spread_verdict((1.4, 1.5, 1.45), (1.0, 1.05, 1.02), (0.7, 0.75, 0.72), load=0.1)
    assert "超出了重复测量的波动" in apart and "波动之内" not in apart
    slower = M.pool_spread_verdict((1.0, 1.02, 1.01), (1.3, 1.35, 1.32), (0.5, 0.52, 0.51), load=0.1)
    assert "比串行还慢" in slower
    with pytest.raises(ValueError, match="same length"):
        M.pool_spread_verdict((1.0,), (1.0, 1.0), (1.0,))
    with pytest.raises(ValueError, match="serial"):
        M.pool_spread_verdict((), (1.0,), (1.0,))


def test_offload_crossover_moves_down_with_slower_cpu():
    assert M.offload_crossover() == 373
    assert M.offload_crossover(cpu_flops=100e9) < M.offload_crossover()
    assert M.offload_crossover(cpu_flops=1e15, max_n=100) == 101


def test_best_cards_matches_chapter():
    assert M.best_cards(0.95)[0] == 151
    assert M.best_cards(0.95, latency=2e-6)[0] == 477
    assert M.best_cards(0.95, grad_bytes=0)[0] == 154
    assert M.best_cards(0.95, grad_bytes=0, latency=0, max_n=64)[0] == 64


def test_overhead_reading_zh_branches():
    from hetlab.models import granularity as G
    assert "量级一致" in G.overhead_reading_zh(13e-6, 110e-6)
    assert "机器在忙" in G.overhead_reading_zh(86e-6, 1043e-6, busy=True)
    assert "更小" in G.overhead_reading_zh(3e-6, 30e-6)
    assert "差距比上表小" in G.overhead_reading_zh(100e-6, 150e-6)
    with pytest.raises(ValueError, match="thread"):
        G.overhead_reading_zh(0.0, 1e-4)


@pytest.mark.parametrize("knobs", [{}, {"cpu_flops": 100e9}, {"cpu_flops": 50e9}, {"copies": 0}, {"copies": 1},
                                   {"launch": 0.0}, {"bandwidth": 1e9}, {"gpu_flops": 2e12, "launch": 1e-3}])
def test_offload_crossover_is_the_first_size_where_the_cost_model_favours_the_gpu(knobs):
    # One cost model (formulas.matmul_offload_ms), one search (measure.offload_breakeven): checked against a
    # plain scan of the model over every size.
    import numpy as np

    from hetlab.formulas import matmul_offload_ms

    sizes = np.arange(1, 20_001)
    cpu, gpu, _ = matmul_offload_ms(sizes, **knobs)
    wins = np.asarray(gpu) < np.asarray(cpu)
    assert M.offload_crossover(max_n=20_000, **knobs) == int(sizes[np.argmax(wins)])


def test_offload_crossover_names_its_own_parameters_when_out_of_range():
    with pytest.raises(ValueError, match="cpu_flops"):
        M.offload_crossover(cpu_flops=1e17)
    with pytest.raises(ValueError, match="launch"):
        M.offload_crossover(launch=-1.0)


def test_matmul_offload_copy_time_scales_with_element_size():
    from hetlab.formulas import matmul_offload_ms

    _, _, copy4 = matmul_offload_ms(1000, launch=0.0)
    _, _, copy8 = matmul_offload_ms(1000, launch=0.0, element_bytes=8)
    assert copy4 == pytest.approx(3 * 4 * 1000**2 / 25e9 * 1e3)   # three float32 matrices over 25 GB/s, in ms
    assert copy8 == pytest.approx(2 * copy4)
    with pytest.raises(ValueError, match="element_bytes"):
        matmul_offload_ms(1000, element_bytes=0)
