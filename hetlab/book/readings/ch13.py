"""Chapter 13 (interview questions): the sentences the whiteboard on gradient buckets prints."""
from __future__ import annotations

from hetlab._validate import check_nonnegative, check_positive
from hetlab.communication import NETWORK_STEP_LATENCY, best_bucket_count, exposed_allreduce, ring_allreduce_time

__all__ = ["bucket_readout"]


def bucket_readout(bucket_mb: float, *, grad_gb: float = 3.0, n_devices: int = 64, bandwidth_gbs: float = 50.0,
                   latency_us: float = NETWORK_STEP_LATENCY * 1e6, backward_s: float = 0.3) -> str:
    """One line for the whiteboard: with ``grad_gb`` GB of gradients sent in buckets of ``bucket_mb`` MB during a
    ``backward_s``-second backward pass (ring all-reduce over ``n_devices``, ``bandwidth_gbs`` GB/s and
    ``latency_us`` per hop, by default the book's network step, 14 us), whether the link keeps up, how much
    all-reduce is left when the backward pass ends, and the same without buckets and at the best bucket size
    (:func:`hetlab.communication.exposed_allreduce`).

    >>> for clause in bucket_readout(50).split("；"):
    ...     print(clause)
    桶 50 MB（60 个）：每个桶的全归约 3.73 ms，反向每 5.00 ms 交出一个桶，链路跟得上，只露出最后一个桶的 3.73 ms
    不分桶露出 119.9 ms
    最好的桶约 29.1 MB（103 个），露出 2.91 ms
    """
    size = check_positive("bucket_mb", bucket_mb)
    grad = check_positive("grad_gb", grad_gb, high=1e6) * 1e9
    link = dict(backward_time=check_nonnegative("backward_s", backward_s, high=1e6), grad_bytes=grad,
                n_devices=n_devices, bandwidth=check_positive("bandwidth_gbs", bandwidth_gbs, high=1e6) * 1e9,
                latency=check_nonnegative("latency_us", latency_us, high=1e6) * 1e-6)
    k = max(1, round(grad / (size * 1e6)))
    if k > 10 ** 6:
        raise ValueError(f"bucket_mb must make at most a million buckets of grad_gb = {grad_gb!r}, i.e. be at least "
                         f"{grad / 1e12:g} MB, got {bucket_mb!r}")
    each = ring_allreduce_time(n_devices, grad / k, link["bandwidth"], link["latency"])
    gap = link["backward_time"] / k
    left = exposed_allreduce(k, **link)
    whole = exposed_allreduce(1, **link)
    best = best_bucket_count(**link, max_buckets=min(10 ** 6, max(1, round(grad / 1e6))))   # buckets of 1 MB or more
    if k == 1:
        head = f"不分桶（一个 {_mb(grad / 1e6)} MB 的桶）：反向结束才开始全归约，整整 {left * 1e3:.2f} ms 都露在外面"
    else:
        pace = "链路跟得上，只露出最后一个桶的" if each <= gap else "链路跟不上（每个桶的全归约比产出一个桶还慢），露出"
        head = (f"桶 {_mb(grad / k / 1e6)} MB（{k} 个）：每个桶的全归约 {each * 1e3:.2f} ms，反向每 {gap * 1e3:.2f} ms "
                f"交出一个桶，{pace} {left * 1e3:.2f} ms；不分桶露出 {whole * 1e3:.1f} ms")
    return (f"{head}；最好的桶约 {_mb(grad / best / 1e6)} MB（{best} 个），"
            f"露出 {exposed_allreduce(best, **link) * 1e3:.2f} ms")


def _mb(megabytes: float) -> str:
    """Megabytes as the readout prints them: three significant digits, whole numbers from 100 MB up."""
    return f"{megabytes:,.0f}" if megabytes >= 100 else f"{megabytes:.3g}"
