"""Argument checks shared by the public functions: clear messages that name the parameter."""
from __future__ import annotations

import math
from numbers import Real
from typing import Any

__all__ = ["check_real", "check_positive", "check_nonnegative", "check_int", "as_float_array"]


def _describe(value: Any) -> str:
    return repr(value) if not hasattr(value, "shape") else f"array of shape {value.shape}"


def check_real(name: str, value: Any) -> float:
    """Return ``value`` as a float; TypeError if it is not a real number, ValueError if NaN."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"{name} must be a number, got nan")
    return value


def check_positive(name: str, value: Any, *, allow_inf: bool = False) -> float:
    value = check_real(name, value)
    if not value > 0 or (math.isinf(value) and not allow_inf):
        bound = "(0, inf]" if allow_inf else "(0, inf)"
        raise ValueError(f"{name} must be in {bound}, got {value!r}")
    return value


def check_nonnegative(name: str, value: Any, *, allow_inf: bool = False) -> float:
    value = check_real(name, value)
    if value < 0 or (math.isinf(value) and not allow_inf):
        bound = "[0, inf]" if allow_inf else "[0, inf)"
        raise ValueError(f"{name} must be in {bound}, got {value!r}")
    return value


def check_int(name: str, value: Any, *, low: int | None = None, high: int | None = None) -> int:
    """Return ``value`` as an int within [low, high]; accepts numpy integers, rejects bool/float."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    value = int(value.__index__())
    if (low is not None and value < low) or (high is not None and value > high):
        lo = "-inf" if low is None else low
        hi = "inf" if high is None else high
        raise ValueError(f"{name} must be in [{lo}, {hi}], got {value}")
    return value


def as_float_array(name: str, value: Any, *, low: float | None = None, high: float | None = None,
                   low_open: bool = False):
    """Return ``value`` as a float ndarray (0-d for scalars) whose entries lie in the given range.

    The range check reports the parameter, the allowed interval and an offending value.
    """
    import numpy as np

    if isinstance(value, (str, bytes)) or value is None or isinstance(value, bool):
        raise TypeError(f"{name} must be a real number or an array of them, got {value!r}")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number or an array of them, got {_describe(value)}") from None
    if arr.dtype == bool:
        raise TypeError(f"{name} must be numeric, got booleans")
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not contain nan")
    bad = np.zeros(arr.shape, dtype=bool)
    if low is not None:
        bad |= (arr <= low) if low_open else (arr < low)
    if high is not None:
        bad |= arr > high
    if bad.any():
        left = "(" if low_open else "["
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf)" if high is None else f"{high:g}]"
        example = arr[bad].flat[0]
        raise ValueError(f"{name} must be in {left}{lo}, {hi}, got {example:g}")
    return arr
