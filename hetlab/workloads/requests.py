"""Streams of generation requests for the serving simulation (:func:`hetlab.models.serving.simulate`).

A request stream is arrival times (seconds, sorted) with each request's prompt and output lengths (tokens):

- :func:`bursty_arrivals`: a two-state Markov-modulated Poisson process, calm periods at ``rate`` and bursts at
  ``rate * burst_factor`` (the bursty traffic of inference services);
- :func:`bursty_requests`: those arrivals with lognormal prompt and output lengths (a long tail, as in chat
  traces);
- :func:`skewed_requests`: evenly spaced requests where every ``every``-th one is long, the case where
  stealing between GPU queues matters.

All randomness goes through ``seed``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hetlab._validate import as_float_array, check_int, check_nonnegative, check_positive, check_seed

__all__ = ["RequestStream", "bursty_arrivals", "bursty_requests", "skewed_requests"]

#: Size limits: a stream of more requests, or of longer requests, takes too long to simulate; drawing more
#: than _MAX_ARRIVALS arrival times at once takes seconds.
_MAX_REQUESTS = 10 ** 7
_MAX_TOKENS = 10 ** 7
_MAX_ARRIVALS = 2_000_000


def _tokens(name: str, value, n: int) -> np.ndarray:
    arr = as_float_array(name, value, low=1.0, high=_MAX_TOKENS, integer=True)
    if arr.shape != (n,):
        raise ValueError(f"{name} must have one entry per request (arrivals has {n}), got shape {arr.shape}")
    return arr.astype(np.int64)


def bursty_arrivals(rate: float, duration: float, *, burst_factor: float = 10.0, burst_share: float = 0.1,
                    mean_burst: float = 1.0, seed: int = 0) -> np.ndarray:
    """Request arrival times from a two-state Markov-modulated Poisson process.

    The process alternates between calm periods at ``rate`` and bursts at ``rate * burst_factor``
    (exponential lengths; bursts last ``mean_burst`` on average and take ``burst_share`` of the
    time). Vectorised: segment lengths, then Poisson counts, then sorted uniform times.

    >>> times = bursty_arrivals(5.0, 100.0, seed=1)
    >>> bool((times[1:] >= times[:-1]).all()), bool(times.max() < 100.0)
    (True, True)
    """
    rate = check_positive("rate", rate)
    duration = check_positive("duration", duration)
    factor = check_positive("burst_factor", burst_factor)
    share = check_nonnegative("burst_share", burst_share)
    if share >= 1:
        raise ValueError(f"burst_share must be in [0, 1), got {share}")
    mean_burst = check_positive("mean_burst", mean_burst)
    rng = np.random.default_rng(check_seed("seed", seed))
    requests = rate * duration * ((1 - share) + share * factor)
    if not requests <= _MAX_ARRIVALS:
        raise ValueError(f"rate={rate:g}, duration={duration:g}, burst_factor={factor:g} and burst_share={share:g} "
                         f"expect {requests:.3g} requests; at most {_MAX_ARRIVALS:,} (lower the rate or the duration)")
    mean_calm = mean_burst * (1 - share) / share if share > 0 else duration
    segments = duration / (mean_burst + mean_calm)
    if not segments <= _MAX_ARRIVALS:
        raise ValueError(f"mean_burst={mean_burst:g} and burst_share={share:g} cut duration={duration:g} into "
                         f"{segments:.3g} calm/burst periods; at most {_MAX_ARRIVALS:,} (raise mean_burst)")
    expected = int(segments) + 4
    segments = []
    total = 0.0
    while total < duration:  # usually one pass; loops again only if the draw fell short
        calm = rng.exponential(mean_calm, expected)
        burst = rng.exponential(mean_burst, expected) if share > 0 else np.zeros(expected)
        pair = np.column_stack([calm, burst]).ravel()
        segments.append(pair)
        total += pair.sum()
    lengths = np.concatenate(segments)
    bounds = np.concatenate([[0.0], np.cumsum(lengths)])
    keep = bounds[:-1] < duration
    starts, ends = bounds[:-1][keep], np.minimum(bounds[1:][keep], duration)
    rates = np.where(np.arange(starts.size) % 2 == 0, rate, rate * factor)
    counts = rng.poisson(rates * (ends - starts))
    seg = np.repeat(np.arange(starts.size), counts)
    times = starts[seg] + rng.random(seg.size) * (ends - starts)[seg]
    return np.sort(times)


@dataclass(frozen=True)
class RequestStream:
    """Arrival times (s, sorted) with each request's prompt and output lengths (tokens)."""

    arrivals: np.ndarray
    prompt: np.ndarray
    output: np.ndarray

    def __post_init__(self) -> None:
        arr = as_float_array("arrivals", self.arrivals, low=0.0, finite=True, empty=False, size_limit=_MAX_REQUESTS)
        if arr.ndim != 1:
            raise ValueError(f"arrivals must be a 1-D sequence, got shape {arr.shape}")
        object.__setattr__(self, "arrivals", arr)
        for name in ("prompt", "output"):
            object.__setattr__(self, name, _tokens(name, getattr(self, name), arr.size))

    def __len__(self) -> int:
        return int(self.arrivals.size)


def _lengths(rng: np.random.Generator, mean: float, n: int) -> np.ndarray:
    # Lognormal lengths (sigma 0.6: a long tail, as in chat traces), at least one token.
    sigma = 0.6
    draws = rng.lognormal(math.log(mean) - sigma ** 2 / 2, sigma, n)
    return np.maximum(1, np.rint(draws)).astype(np.int64)


def bursty_requests(rate: float, duration: float, *, burst_factor: float = 10.0, burst_share: float = 0.1,
                    mean_burst: float = 1.0, prompt_mean: float = 200.0, output_mean: float = 100.0,
                    seed: int = 0) -> RequestStream:
    """Bursty requests: calm periods at ``rate`` per second and bursts at ``rate * burst_factor`` taking
    ``burst_share`` of the time (a two-state Markov-modulated Poisson process,
    :func:`bursty_arrivals`); prompt and output lengths lognormal with the given means.

    >>> w = bursty_requests(rate=20, duration=10, seed=1)
    >>> len(w) == w.prompt.size == w.output.size, int(w.output.min()) >= 1
    (True, True)
    """
    check_int("seed", seed, low=0)
    p_mean = check_positive("prompt_mean", prompt_mean)
    o_mean = check_positive("output_mean", output_mean)
    for name, value in (("prompt_mean", p_mean), ("output_mean", o_mean)):
        if value > 1e5:
            raise ValueError(f"{name} must be in (0, 100000], got {value:g}")
    r = check_positive("rate", rate)
    d = check_positive("duration", duration)
    b = check_positive("burst_factor", burst_factor)
    if r * d * max(1.0, b) > _MAX_REQUESTS:
        raise ValueError(f"rate * duration * burst_factor must be at most {_MAX_REQUESTS:g} requests, got "
                         f"rate={r:g}, duration={d:g}, burst_factor={b:g}")
    arrivals = bursty_arrivals(r, d, burst_factor=burst_factor, burst_share=burst_share, mean_burst=mean_burst,
                               seed=seed)
    if arrivals.size == 0:
        raise ValueError(f"rate * duration must bring at least one request, got rate={r:g}, duration={d:g}")
    rng = np.random.default_rng([seed, 1])
    return RequestStream(arrivals, _lengths(rng, p_mean, arrivals.size), _lengths(rng, o_mean, arrivals.size))


def skewed_requests(n: int, *, every: int = 4, long_output: int = 400, short_output: int = 20,
                    prompt: int = 100, gap: float = 0.01) -> RequestStream:
    """``n`` requests ``gap`` seconds apart; every ``every``-th one (0, every, 2 every, ...) is long.

    With ``every`` GPUs and round-robin dispatch all long requests land on GPU 0: the case where stealing
    between queues matters.

    >>> skewed_requests(8, every=4).output.tolist()
    [400, 20, 20, 20, 400, 20, 20, 20]
    """
    n = check_int("n", n, low=1, high=_MAX_REQUESTS)
    every = check_int("every", every, low=1, high=n)
    long_output = check_int("long_output", long_output, low=1, high=_MAX_TOKENS)
    short_output = check_int("short_output", short_output, low=1, high=_MAX_TOKENS)
    prompt = check_int("prompt", prompt, low=1, high=_MAX_TOKENS)
    gap = check_positive("gap", gap)
    idx = np.arange(n)
    output = np.where(idx % every == 0, long_output, short_output).astype(np.int64)
    return RequestStream(idx * gap, np.full(n, prompt, dtype=np.int64), output)
