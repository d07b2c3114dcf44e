"""Values as tagged JSON, and the probe that describes a kernel's names (used by :mod:`hetlab.book.grading`).

This module imports only the standard library at its top, because its whole source text is also what
the grader sends into the student's kernel as the *probe* (:data:`PROBE`): the probe never imports
anything from hetlab inside the kernel, where the student could have replaced it. Whatever the probe
prints is still only a *claim*: the checker (:mod:`hetlab.book._sandbox`) takes from it only the names
it asked for, and rebuilds every value with :func:`decode`, which trusts nothing.

The codec is bounded on both sides: :func:`encode` stops at :data:`MAX_NODES` values or
:data:`MAX_DEPTH` levels (a 2·10⁷-element array is refused in the kernel, not sent), the probe's line
is at most :data:`MAX_BYTES`, and :func:`decode` re-checks every bound.
"""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from numbers import Integral, Real

#: Top-level packages whose modules and functions a submission may name (the checker imports them afresh).
ALLOWED_MODULES = frozenset({"hetlab", "math", "cmath", "statistics", "fractions", "decimal", "itertools",
                             "functools", "collections", "heapq", "bisect", "operator", "random", "numpy"})
MARK = "@@hetlab-extract@@"
MAX_DEPTH = 60
MAX_NODES = 1_000_000
MAX_BYTES = 8 * 2**20
KINDS = ("value", "module", "import", "function", "missing", "unsupported")


def encode(obj, depth: int = 0, budget: list | None = None):
    """``obj`` as tagged JSON-able lists; TypeError for anything that is not plain data or is too large."""
    budget = [MAX_NODES] if budget is None else budget
    budget[0] -= 1
    if budget[0] < 0:
        raise TypeError(f"the value holds more than {MAX_NODES} items")
    if depth > MAX_DEPTH:
        raise TypeError("the value is nested too deeply")
    if obj is None:
        return ["n"]
    if isinstance(obj, bool) or type(obj).__name__ == "bool_":
        return ["b", bool(obj)]
    if isinstance(obj, Integral):
        return ["i", str(int(obj))]
    if isinstance(obj, Real):
        return ["f", repr(float(obj))]
    if isinstance(obj, complex):
        return ["c", repr(obj.real), repr(obj.imag)]
    if isinstance(obj, str):
        return ["s", str(obj)]
    if isinstance(obj, (list, tuple, set, frozenset)):
        tag = {list: "l", tuple: "t", set: "set", frozenset: "fset"}[next(
            t for t in (list, tuple, set, frozenset) if isinstance(obj, t))]
        if len(obj) > budget[0]:
            raise TypeError(f"the value holds more than {MAX_NODES} items")
        return [tag, [encode(x, depth + 1, budget) for x in obj]]
    if isinstance(obj, Mapping):      # dict, and the read-only mappings inside hetlab's dataclasses
        if len(obj) > budget[0]:
            raise TypeError(f"the value holds more than {MAX_NODES} items")
        return ["d", [[encode(k, depth + 1, budget), encode(v, depth + 1, budget)] for k, v in obj.items()]]
    if type(obj).__module__ == "numpy" and type(obj).__name__ == "ndarray":
        if obj.dtype.kind not in "biufc":
            raise TypeError(f"a numpy array of dtype {obj.dtype} is not plain data")
        if obj.size > budget[0]:          # checked before tolist(), which would copy it all
            raise TypeError(f"the value holds more than {MAX_NODES} items")
        return ["a", obj.dtype.str, encode(obj.tolist(), depth + 1, budget)]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type) and type(obj).__module__.startswith("hetlab."):
        fields = [[f.name, encode(getattr(obj, f.name), depth + 1, budget)]
                  for f in dataclasses.fields(obj) if f.init]
        return ["dc", type(obj).__module__, type(obj).__qualname__, fields]
    raise TypeError(f"a {type(obj).__module__}.{type(obj).__qualname__} is not plain data")


def allowed(module) -> bool:
    """Whether ``module`` lies in one of :data:`ALLOWED_MODULES`."""
    return isinstance(module, str) and module.split(".")[0] in ALLOWED_MODULES


def resolve(module: str, qualname: str):
    """``module.qualname``, imported by the caller (never the kernel's copy); ValueError outside the allow-list."""
    import importlib

    if not allowed(module) or not isinstance(qualname, str) or not qualname:
        raise ValueError(f"module {module!r} is not among the modules grading may import")
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        if part.startswith("_") and part != "__init__":
            raise ValueError(f"{module}.{qualname} is private")
        obj = getattr(obj, part)
    return obj


def decode(data, depth: int = 0, budget: list | None = None):
    """Rebuild a value written by :func:`encode`, trusting nothing in it (ValueError if malformed)."""
    budget = [MAX_NODES] if budget is None else budget
    budget[0] -= 1
    if budget[0] < 0 or depth > MAX_DEPTH:
        raise ValueError("the value is too large or nested too deeply")
    if not isinstance(data, list) or not data or not isinstance(data[0], str):
        raise ValueError("malformed value")
    tag, args = data[0], data[1:]

    def sub(x):
        return decode(x, depth + 1, budget)

    def items(x) -> list:
        if not isinstance(x, list):
            raise ValueError("malformed value")
        return x

    try:
        if tag == "n" and not args:
            return None
        if tag == "b" and len(args) == 1 and isinstance(args[0], bool):
            return args[0]
        if tag == "i" and len(args) == 1 and isinstance(args[0], str) and len(args[0]) < 4000:
            return int(args[0])
        if tag == "f" and len(args) == 1 and isinstance(args[0], str) and len(args[0]) < 40:
            return float(args[0])
        if tag == "c" and len(args) == 2 and all(isinstance(a, str) and len(a) < 40 for a in args):
            return complex(float(args[0]), float(args[1]))
        if tag == "s" and len(args) == 1 and isinstance(args[0], str):
            return args[0]
        if tag in ("l", "t", "set", "fset") and len(args) == 1:
            values = [sub(x) for x in items(args[0])]
            return {"l": list, "t": tuple, "set": set, "fset": frozenset}[tag](values)
        if tag == "d" and len(args) == 1:
            pairs = [items(p) for p in items(args[0])]
            if any(len(p) != 2 for p in pairs):
                raise ValueError("malformed dict")
            return {sub(k): sub(v) for k, v in pairs}
        if tag == "a" and len(args) == 2 and isinstance(args[0], str) and len(args[0]) < 8:
            import numpy as np

            dtype = np.dtype(args[0])
            if dtype.kind not in "biufc":
                raise ValueError(f"dtype {args[0]!r} is not plain data")
            return np.array(sub(args[1]), dtype=dtype)
        if tag == "dc" and len(args) == 3 and isinstance(args[0], str) and args[0].startswith("hetlab."):
            cls = resolve(args[0], args[1])
            if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
                raise ValueError(f"{args[0]}.{args[1]} is not a dataclass")
            fields = {f.name for f in dataclasses.fields(cls) if f.init}
            kwargs = {}
            for pair in items(args[2]):
                if not (isinstance(pair, list) and len(pair) == 2 and pair[0] in fields):
                    raise ValueError(f"malformed field of {args[1]}")
                kwargs[pair[0]] = sub(pair[1])
            return cls(**kwargs)
    except (TypeError, ValueError, OverflowError, AttributeError, ImportError, RecursionError) as exc:
        raise ValueError(f"cannot rebuild the value: {exc}") from None
    raise ValueError(f"malformed value (tag {tag!r})")


# --- in the student's kernel (the probe) ---------------------------------------------------------

def _loaded_names(source: str) -> set[str]:
    import ast

    return {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name)}


def _describe(name: str, namespace: dict, support: dict) -> dict:
    import builtins
    import inspect
    import sys
    import textwrap
    import types

    if name not in namespace:
        return {"kind": "missing"}
    obj = namespace[name]
    if isinstance(obj, types.ModuleType):
        return {"kind": "module", "name": obj.__name__}
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if callable(obj) and isinstance(module, str) and module not in ("__main__", "builtins") and qualname:
        try:
            target = sys.modules[module]
            for part in qualname.split("."):
                target = getattr(target, part)
            if target is obj:
                return {"kind": "import", "module": module, "qualname": qualname}
        except (KeyError, AttributeError):
            pass
    if isinstance(obj, types.FunctionType):
        if obj.__code__.co_freevars:
            return {"kind": "unsupported", "message": f"{name} uses variables of an enclosing function"}
        try:
            source = textwrap.dedent(inspect.getsource(obj))
            needed = _loaded_names(source)
        except (OSError, TypeError, SyntaxError) as exc:
            return {"kind": "unsupported", "message": f"the source of {name} cannot be read ({exc})"}
        for other in sorted(needed - set(support) - {name}):
            if other in namespace and not hasattr(builtins, other):
                support[other] = {"kind": "pending"}
                support[other] = _describe(other, namespace, support)
        return {"kind": "function", "name": obj.__name__, "source": source}
    try:
        return {"kind": "value", "value": encode(obj)}
    except (TypeError, ValueError, RecursionError) as exc:
        return {"kind": "unsupported", "message": f"{name} cannot be graded: {exc}"}


def extract(namespace: dict, names: list[str]) -> str:
    """The line the probe prints: the requested names and what their functions need, described;
    a description longer than :data:`MAX_BYTES` is replaced by a note that it is too large."""
    support: dict = {}
    described = {name: _describe(name, namespace, support) for name in names}
    for table in (described, support):
        for name, d in table.items():
            if len(json.dumps(d)) > MAX_BYTES // 4:
                table[name] = {"kind": "unsupported", "message": f"{name} is too large to grade"}
    text = json.dumps({"names": described, "support": support})
    if len(text) > MAX_BYTES - 100:
        text = json.dumps({"names": {n: {"kind": "unsupported", "message": "the values are too large to grade"}
                                     for n in names}, "support": {}})
    return MARK + text


def parse_extract(text: str) -> dict:
    """The grader's reading of the probe's output: the last marked line, checked for shape."""
    lines = [line for line in text.splitlines() if line.startswith(MARK)]
    if not lines or len(text) > MAX_BYTES:
        raise ValueError("the kernel did not report the values (did the notebook replace print or sys.stdout?)")
    try:
        data = json.loads(lines[-1][len(MARK):])
    except (ValueError, RecursionError):
        raise ValueError("the kernel's report is not readable") from None
    if not (isinstance(data, dict) and isinstance(data.get("names"), dict) and isinstance(data.get("support"), dict)):
        raise ValueError("the kernel's report has the wrong shape")
    for table in (data["names"], data["support"]):
        for name, d in table.items():
            if not (isinstance(name, str) and name.isidentifier() and isinstance(d, dict) and d.get("kind") in KINDS):
                raise ValueError("the kernel's report has the wrong shape")
    return data


def probe(names: list[str]) -> str:
    """The probe cell: this module's own source, run in a fresh namespace in the kernel, printing
    :func:`extract` of the kernel's names (no import of hetlab there, nothing left in the namespace)."""
    import inspect
    import sys

    source = inspect.getsource(sys.modules[__name__])
    return (f"(lambda __g: (exec(compile({source!r}, '<hetlab probe>', 'exec'), __g), "
            f"print(__g['extract'](get_ipython().user_ns, {json.dumps(list(names))}))))"
            "({'__name__': 'hetlab_probe'})")


__all__ = ["encode", "decode", "extract", "parse_extract", "probe", "allowed", "resolve"]
