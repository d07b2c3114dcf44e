"""Argument checks shared by the public functions: clear messages that name the parameter."""
from __future__ import annotations

import math
from numbers import Real
from typing import Any

__all__ = ["check_real", "check_positive", "check_nonnegative", "check_int", "as_float_array", "check_bool",
           "check_str", "check_choice", "check_seed", "check_instance", "check_callable", "check_sequence",
           "check_strings", "check_finite_result", "check_fields", "describe"]


def describe(value: Any, limit: int = 60) -> str:
    """A short description of a value for an error message: its type and a truncated repr."""
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return f"array of shape {value.shape}"
    text = repr(value)
    if len(text) > limit:
        text = text[:limit - 3] + "..."
    return f"{type(value).__name__} {text}"


_describe = describe


def check_real(name: str, value: Any, *, finite: bool = False) -> float:
    """Return ``value`` as a float; TypeError if it is not a real number, ValueError if NaN
    (or infinite, with ``finite``)."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a real number, got {describe(value)}")
    try:
        value = float(value)
    except OverflowError:
        raise ValueError(f"{name} must be a finite number, got an integer too large for a float") from None
    if math.isnan(value):
        raise ValueError(f"{name} must be a number, got nan")
    if finite and math.isinf(value):
        raise ValueError(f"{name} must be in (-inf, inf), got {value!r}")
    return value


def _bound(low: str, high: float | None, allow_inf: bool) -> str:
    if high is not None:
        return f"{low}{high:g}]"
    return f"{low}inf]" if allow_inf else f"{low}inf)"


def check_positive(name: str, value: Any, *, allow_inf: bool = False, high: float | None = None) -> float:
    """``value`` as a float in (0, inf), (0, inf] with ``allow_inf``, or (0, high]."""
    value = check_real(name, value)
    if not value > 0 or (math.isinf(value) and not allow_inf) or (high is not None and value > high):
        raise ValueError(f"{name} must be in {_bound('(0, ', high, allow_inf)}, got {value!r}")
    return value


def check_nonnegative(name: str, value: Any, *, allow_inf: bool = False, high: float | None = None) -> float:
    """``value`` as a float in [0, inf), [0, inf] with ``allow_inf``, or [0, high]."""
    value = check_real(name, value)
    if value < 0 or (math.isinf(value) and not allow_inf) or (high is not None and value > high):
        raise ValueError(f"{name} must be in {_bound('[0, ', high, allow_inf)}, got {value!r}")
    return value


def check_bool(name: str, value: Any) -> bool:
    """``value`` if it is True or False (numpy booleans too); a number or text is not a flag here."""
    import numpy as np

    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"{name} must be True or False, got {describe(value)}")


def check_str(name: str, value: Any, *, empty: bool = False) -> str:
    """``value`` if it is a string (non-empty unless ``empty``)."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {describe(value)}")
    if not value and not empty:
        raise ValueError(f"{name} must be a non-empty string, got ''")
    return value


def check_choice(name: str, value: Any, choices) -> Any:
    """``value`` if it is one of ``choices`` (compared by equality, types checked first)."""
    choices = tuple(choices)
    if not isinstance(value, str) and all(isinstance(c, str) for c in choices):
        raise TypeError(f"{name} must be one of {', '.join(map(repr, choices))}; got {describe(value)}")
    try:
        ok = value in choices
    except TypeError:
        ok = False
    if not ok:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


def check_seed(name: str, value: Any) -> int:
    """A random seed: an integer in [0, 2**63)."""
    return check_int(name, value, low=0, high=2**63 - 1)


def check_instance(name: str, value: Any, types, what: str | None = None) -> Any:
    """``value`` if it is an instance of ``types``; TypeError naming the expected type otherwise."""
    if isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
        ok = False
    else:
        ok = isinstance(value, types)
    if not ok:
        if what is None:
            names = [t.__name__ for t in (types if isinstance(types, tuple) else (types,))]
            what = "a " + " or ".join(names)
        raise TypeError(f"{name} must be {what}, got {describe(value)}")
    return value


def check_callable(name: str, value: Any) -> Any:
    if not callable(value) or isinstance(value, type) and issubclass(value, BaseException):
        raise TypeError(f"{name} must be callable (a function), got {describe(value)}")
    return value


def check_sequence(name: str, value: Any, *, empty: bool = False, limit: int | None = None) -> tuple:
    """``value`` as a tuple, if it is a finite sequence or iterable that is not text or a mapping
    (a string would otherwise be split into characters, a dict into its keys)."""
    from collections.abc import Iterable, Mapping

    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable) or hasattr(value, "shape") \
            and getattr(value, "ndim", 1) == 0:
        raise TypeError(f"{name} must be a sequence (a list or tuple), got {describe(value)}")
    if limit is not None and hasattr(value, "__len__") and len(value) > limit:
        raise ValueError(f"{name} must hold at most {limit:,} items, got {len(value):,}")
    items = tuple(value)
    if not items and not empty:
        raise ValueError(f"{name} must not be empty, got {describe(value)}")
    return items


def check_strings(name: str, value: Any, *, empty: bool = False) -> tuple[str, ...]:
    """A non-empty sequence of non-empty strings; a single string is refused (it is not a list of them)."""
    items = check_sequence(name, value, empty=empty)
    for item in items:
        if not isinstance(item, str) or not item:
            raise TypeError(f"{name} must hold non-empty strings, got {describe(item)}")
    return items


def check_finite_result(result: Any, **inputs: Any) -> Any:
    """``result`` if every entry is finite; else ValueError naming the inputs (an overflow, or an
    infinite input that makes the formula meaningless)."""
    import numpy as np

    arr = np.asarray(result, dtype=float)
    if np.isfinite(arr).all():
        return result
    shown = ", ".join(f"{k}={v:g}" if isinstance(v, (int, float)) and not isinstance(v, bool)
                      else f"{k}={describe(v)}" for k, v in inputs.items())
    raise ValueError(f"the result is not a finite number for {shown}: reduce {' or '.join(inputs)} "
                     "to a range where it is (every input must be finite and the result below 1.8e308)")


def check_fields(record: Any, *, signed: tuple[str, ...] = (), allow_inf: tuple[str, ...] = ()) -> None:
    """Check a frozen dataclass's fields against their annotations: ``float`` finite and >= 0 (unless
    listed in ``signed`` / ``allow_inf``), ``int`` >= 0, ``str``, ``bool``; ``X | None`` also takes None.
    Other annotations are left to the class. Call it from ``__post_init__``."""
    import dataclasses

    for f in dataclasses.fields(record):
        value = getattr(record, f.name)
        ann = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
        parts = [p.strip() for p in ann.split("|")]
        if "None" in parts:
            if value is None:
                continue
            parts.remove("None")
        if len(parts) != 1:
            continue
        kind = parts[0]
        if kind == "float":
            if f.name in signed:
                check_real(f.name, value, finite=f.name not in allow_inf)
            else:
                check_nonnegative(f.name, value, allow_inf=f.name in allow_inf)
        elif kind == "int":
            check_int(f.name, value, low=None if f.name in signed else 0)
        elif kind == "str":
            check_str(f.name, value, empty=True)
        elif kind == "bool":
            check_bool(f.name, value)


def check_int(name: str, value: Any, *, low: int | None = None, high: int | None = None) -> int:
    """Return ``value`` as an int within [low, high]; accepts numpy integers, rejects bool/float."""
    if isinstance(value, bool) or not hasattr(value, "__index__") or hasattr(value, "shape") and value.shape:
        raise TypeError(f"{name} must be an integer, got {describe(value)}")
    value = int(value.__index__())
    if (low is not None and value < low) or (high is not None and value > high):
        lo = "-inf" if low is None else low
        hi = "inf" if high is None else high
        raise ValueError(f"{name} must be in [{lo}, {hi}], got {value}")
    return value


def as_float_array(name: str, value: Any, *, low: float | None = None, high: float | None = None,
                   low_open: bool = False, finite: bool = False, integer: bool = False, empty: bool = True,
                   size_limit: int = 10**8):
    """Return ``value`` as a float ndarray (0-d for scalars) whose entries lie in the given range.

    The range check reports the parameter, the allowed interval and an offending value. ``finite``
    rejects +-inf, ``integer`` rejects non-integral entries (counts: devices, stages, micro-batches),
    ``empty=False`` an empty array.
    """
    from collections.abc import Mapping

    import numpy as np

    if isinstance(value, (str, bytes, Mapping, set)) or value is None or isinstance(value, bool):
        raise TypeError(f"{name} must be a real number or an array of them, got {describe(value)}")
    try:
        with np.errstate(all="ignore"):
            arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise TypeError(f"{name} must be a real number or an array of them, got {describe(value)}") from None
    if np.asarray(value).dtype == bool or (arr.ndim and any(isinstance(v, bool) for v in np.ravel(value)[:100])):
        raise TypeError(f"{name} must be numeric, got booleans")
    if arr.size > size_limit:
        raise ValueError(f"{name} must hold at most {size_limit:,} numbers, got {arr.size:,}")
    if arr.size == 0 and not empty:
        raise ValueError(f"{name} must hold at least one number, got an empty {type(value).__name__}")
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not contain nan, got nan")
    if finite and np.isinf(arr).any():
        raise ValueError(f"{name} must be finite, got {arr[np.isinf(arr)].flat[0]:g}")
    if integer and not (np.isinf(arr) | (arr == np.round(arr))).all():
        bad_value = arr[arr != np.round(arr)].flat[0]
        raise ValueError(f"{name} must be a whole number (a count), got {bad_value:g}")
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
