"""Run hidden tests where a student's code cannot reach them (used by :func:`hetlab.book.edition.grade`).

The student's notebook runs in a Jupyter kernel, and everything that kernel reports is treated as a
*claim*, never as code or as a verdict:

1. In the kernel, :func:`extract` describes the names a hidden test needs: a plain value (numbers,
   strings, lists, dicts, numpy arrays, hetlab's dataclasses) as tagged JSON, a module or library
   function by its import path, a function the student wrote by its *source*. A kernel that lies
   can only claim values, which the student could have typed in anyway.
2. A fresh ``python -I -S`` process, the *checker* (:func:`checker_main`), runs the instructor's
   imports and the hidden tests on those values. No student code ever runs in it: values are decoded
   by :func:`decode` (only plain types and hetlab dataclasses, built by their own constructors), and
   modules come from a short allow-list, imported afresh, so a patched ``builtins``, a custom
   exception handler or a monkeypatched library in the kernel has no effect here.
3. A student's function is called through a proxy: the arguments are encoded as in (1) and sent
   to a second ``python -I -S`` process, the *worker* (:func:`worker_main`), which
   rebuilds the function from its source under resource limits and sends back only the return value,
   encoded as in (1). A worker that hangs, exits or garbles its answer fails the exercise.

The verdict is what the checker writes at the end of its run; the kernel's printed output is never read
as a result. See the README (给教师) for what this does not defend against.
"""
from __future__ import annotations

import ast
import builtins
import dataclasses
import importlib
import json
import os
import selectors
import subprocess
import sys
import time
from collections.abc import Mapping
from numbers import Integral, Real

#: Top-level packages the checker will import when a submission names a module or a library function.
ALLOWED_MODULES = frozenset({"hetlab", "math", "cmath", "statistics", "fractions", "decimal", "itertools",
                             "functools", "collections", "heapq", "bisect", "operator", "random", "numpy"})
MARK = "@@hetlab-extract@@"
MAX_DEPTH = 60
MAX_NODES = 1_000_000
MAX_BYTES = 32 * 2**20


# --- the value codec ---------------------------------------------------------------------------

def encode(obj, depth: int = 0):
    """``obj`` as tagged JSON-able lists; TypeError for anything that is not plain data."""
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
        return [tag, [encode(x, depth + 1) for x in obj]]
    if isinstance(obj, Mapping):      # dict, and the read-only mappings inside hetlab's dataclasses
        return ["d", [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in obj.items()]]
    if type(obj).__module__ == "numpy" and type(obj).__name__ == "ndarray":
        if obj.dtype.kind not in "biufc":
            raise TypeError(f"a numpy array of dtype {obj.dtype} is not plain data")
        return ["a", obj.dtype.str, encode(obj.tolist(), depth + 1)]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type) and type(obj).__module__.startswith("hetlab."):
        fields = [[f.name, encode(getattr(obj, f.name), depth + 1)] for f in dataclasses.fields(obj) if f.init]
        return ["dc", type(obj).__module__, type(obj).__qualname__, fields]
    raise TypeError(f"a {type(obj).__module__}.{type(obj).__qualname__} is not plain data")


def _allowed(module: str) -> bool:
    return isinstance(module, str) and module.split(".")[0] in ALLOWED_MODULES


def _resolve(module: str, qualname: str):
    if not _allowed(module):
        raise ValueError(f"module {module!r} is not among the modules grading may import")
    obj = importlib.import_module(module)
    for part in str(qualname).split("."):
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
            cls = _resolve(args[0], args[1])
            if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
                raise ValueError(f"{args[0]}.{args[1]} is not a dataclass")
            fields = {f.name for f in dataclasses.fields(cls) if f.init}
            kwargs = {}
            for pair in items(args[2]):
                if not (isinstance(pair, list) and len(pair) == 2 and pair[0] in fields):
                    raise ValueError(f"malformed field of {args[1]}")
                kwargs[pair[0]] = sub(pair[1])
            return cls(**kwargs)
    except (TypeError, ValueError, OverflowError, AttributeError, ImportError) as exc:
        raise ValueError(f"cannot rebuild the value: {exc}") from None
    raise ValueError(f"malformed value (tag {tag!r})")


# --- in the student's kernel -------------------------------------------------------------------

def _loaded_names(source: str) -> set[str]:
    return {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name)}


def _describe(name: str, namespace: dict, support: dict) -> dict:
    import inspect
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
    """The line the kernel prints: the requested names and what their functions need, described."""
    support: dict = {}
    described = {name: _describe(name, namespace, support) for name in names}
    return MARK + json.dumps({"names": described, "support": support})


def parse_extract(text: str) -> dict:
    """The grader's reading of the kernel's output: the last marked line, checked for shape."""
    lines = [line for line in text.splitlines() if line.startswith(MARK)]
    if not lines or len(text) > MAX_BYTES:
        raise ValueError("the kernel did not report the values (did the notebook replace print or sys.stdout?)")
    try:
        data = json.loads(lines[-1][len(MARK):])
    except (ValueError, RecursionError):
        raise ValueError("the kernel's report is not readable") from None
    if not (isinstance(data, dict) and isinstance(data.get("names"), dict) and isinstance(data.get("support"), dict)):
        raise ValueError("the kernel's report has the wrong shape")
    return data


# --- processes ---------------------------------------------------------------------------------

def trusted_path() -> list[str]:
    """The grader's own import path (taken before any student code runs), for ``python -I -S``."""
    import hetlab

    here = os.path.dirname(os.path.dirname(os.path.abspath(hetlab.__file__)))
    path = [p for p in sys.path if p and os.path.isdir(p) and os.path.abspath(p) != os.getcwd()]
    return path + [here]


BOOT = ("import sys, json; cfg = json.loads(sys.stdin.readline()); sys.path[:] = cfg['path']; "
        "from hetlab.book._sandbox import main; main(cfg)")


def _limits(cpu_s: int, memory: int) -> None:   # runs in the child, before the student's code
    import resource

    os.setsid()
    for limit, value in ((resource.RLIMIT_CPU, cpu_s), (resource.RLIMIT_AS, memory),
                         (resource.RLIMIT_FSIZE, 64 * 2**20), (resource.RLIMIT_CORE, 0)):
        try:
            resource.setrlimit(limit, (value, value))
        except (ValueError, OSError):
            pass


def spawn(cfg: dict, *, limits: tuple[int, int] | None = None, stderr=subprocess.DEVNULL) -> subprocess.Popen:
    """Start ``python -I -S`` running :func:`main` with ``cfg``."""
    preexec = None
    if limits and os.name == "posix":
        def preexec():
            _limits(*limits)
    proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", BOOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=stderr, preexec_fn=preexec, start_new_session=preexec is None,
                            env={"PATH": os.environ.get("PATH", ""), "OPENBLAS_NUM_THREADS": "1",
                                 "MPLBACKEND": "Agg", "HOME": os.environ.get("HOME", "/")}, cwd="/")
    proc.stdin.write((json.dumps(cfg) + "\n").encode())
    proc.stdin.flush()
    return proc


def kill(proc: subprocess.Popen) -> None:
    """End ``proc`` and anything it started in its session."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, 9)
        except (OSError, AttributeError):
            proc.kill()
    proc.wait()


def read_line(proc: subprocess.Popen, deadline: float, limit: int = MAX_BYTES) -> bytes | None:
    """One line from ``proc``'s stdout by ``deadline``; None on timeout, b"" when it ended."""
    fd = proc.stdout.fileno()
    buffer = getattr(proc, "_hetlab_buffer", b"")
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while b"\n" not in buffer:
            left = deadline - time.monotonic()
            if left <= 0 or len(buffer) > limit:
                return None
            if not sel.select(left):
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return b""
            buffer += chunk
    line, _, rest = buffer.partition(b"\n")
    proc._hetlab_buffer = rest
    return line


# --- the worker: the student's functions, alone --------------------------------------------------

def _worker(cfg: dict) -> None:
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)                      # whatever the student prints goes to stderr, not the protocol
    sys.stdout = sys.stderr
    namespace: dict = {"__name__": "__main__", "__builtins__": builtins}
    broken = {}
    functions = []
    for name, d in cfg["support"].items():
        try:
            if d.get("kind") == "module":
                namespace[name] = importlib.import_module(d["name"])
            elif d.get("kind") == "import":
                obj = importlib.import_module(d["module"])
                for part in d["qualname"].split("."):
                    obj = getattr(obj, part)
                namespace[name] = obj
            elif d.get("kind") == "value":
                namespace[name] = decode(d["value"])
            elif d.get("kind") == "function":
                functions.append((name, d))
        except Exception as exc:
            broken[name] = f"{type(exc).__name__}: {exc}"
    for name, d in functions:
        try:
            exec(compile(d["source"], f"<{name}>", "exec"), namespace)
            if d.get("name") in namespace:      # `alias = helper` describes helper's source
                namespace[name] = namespace[d["name"]]
        except BaseException as exc:
            broken[name] = f"{type(exc).__name__}: {exc}"
    out.write("ready\n")
    out.flush()
    for line in sys.stdin:
        request = json.loads(line)
        try:
            if request["name"] in broken:
                raise RuntimeError(f"{request['name']} could not be rebuilt: {broken[request['name']]}")
            args, kwargs = decode(request["payload"])
            reply = {"ok": encode(namespace[request["name"]](*args, **kwargs))}
        except BaseException as exc:
            reply = {"error": [type(exc).__name__, str(exc)[:500]]}
        out.write(json.dumps(reply) + "\n")
        out.flush()


class ProxyFailure(Exception):
    """The student's function hung, ended its process or answered garbage: the exercise fails."""


class _Worker:
    def __init__(self, support: dict, timeout: float) -> None:
        self.support, self.timeout, self.proc, self.failure = support, timeout, None, None

    def call(self, name: str, args: tuple, kwargs: dict):
        if self.failure:
            raise ProxyFailure(self.failure)
        try:
            payload = encode([list(args), kwargs])
        except (TypeError, ValueError, RecursionError) as exc:
            raise TypeError(f"the arguments for {name} cannot be sent to the student's function: {exc}") from None
        if self.proc is None:
            self.proc = spawn({"path": sys.path, "mode": "worker", "support": self.support},
                              limits=(int(self.timeout * 4) + 30, 4 * 2**30))
            if read_line(self.proc, time.monotonic() + self.timeout + 30) != b"ready":
                self.fail(f"the process for {name} did not start")
        self.proc.stdin.write((json.dumps({"name": name, "payload": payload}) + "\n").encode())
        self.proc.stdin.flush()
        line = read_line(self.proc, time.monotonic() + self.timeout)
        if line is None:
            self.fail(f"{name} did not return within {self.timeout:g} s")
        if line == b"":
            code = self.proc.wait()
            self.fail(f"{name} ended its process (exit status {code})")
        try:
            reply = json.loads(line)
            if "ok" in reply:
                return decode(reply["ok"])
            kind, message = reply["error"]
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            self.fail(f"{name} returned something that is not plain data ({exc})"[:300])
        error = getattr(builtins, str(kind), None)
        if isinstance(error, type) and issubclass(error, Exception) and not issubclass(error, Warning):
            raise error(str(message))
        raise RuntimeError(f"{kind}: {message}")

    def fail(self, message: str):
        self.failure = message
        self.close()
        raise ProxyFailure(message)

    def close(self) -> None:
        if self.proc is not None:
            kill(self.proc)


class _StudentFunction:
    def __init__(self, name: str, worker: _Worker) -> None:
        self.__name__, self._worker = name, worker

    def __call__(self, *args, **kwargs):
        return self._worker.call(self.__name__, args, kwargs)

    def __repr__(self) -> str:
        return f"<the student's function {self.__name__}>"


# --- the checker: the hidden tests, with no student code -------------------------------------------

def _checker(cfg: dict) -> dict:
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    namespace: dict = {"__name__": "__main__", "__builtins__": builtins}
    try:
        exec(compile(cfg["imports"], "<the instructor's imports>", "exec"), namespace)
    except Exception as exc:
        return _verdict(out, "error", f"the key's imports failed: {type(exc).__name__}: {exc}")
    worker = _Worker(cfg["support"], float(cfg["timeout"]))
    given = cfg.get("given", "")
    notes = []
    for name, d in cfg["provided"].items():
        kind = d.get("kind") if isinstance(d, dict) else None
        try:
            if kind == "value":
                namespace[name] = decode(d["value"])
            elif kind == "module":
                if not _allowed(d["name"]):
                    raise ValueError(f"module {d['name']!r} is not among the modules grading may import")
                namespace[name] = importlib.import_module(d["name"])
            elif kind == "import":
                namespace[name] = _resolve(d["module"], d["qualname"])
            elif kind == "function":
                namespace[name] = _StudentFunction(name, worker)
                worker.support[name] = d
            elif kind == "missing":
                notes.append(f"the submission does not define {name}")
                namespace.pop(name, None)
            else:
                notes.append(str(d.get("message", f"{name} cannot be graded"))[:200])
                namespace.pop(name, None)
        except (ValueError, KeyError, TypeError) as exc:
            notes.append(f"{name}: {exc}"[:200])
            namespace.pop(name, None)
    try:
        # The instructor's own helpers and given values (from the key), after the student's names they may use.
        exec(compile(given, "<the instructor's given cells>", "exec"), namespace)
        exec(compile(cfg["tests"], "<hidden tests>", "exec"), namespace)
        status, message = ("failed", worker.failure) if worker.failure else ("passed", "")
    except BaseException as exc:   # the tests are the instructor's; SystemExit from them is a failure too
        status = "failed" if isinstance(exc, (AssertionError, ProxyFailure)) else "error"
        message = worker.failure or f"{type(exc).__name__}: {exc}".strip().rstrip(":")
    finally:
        worker.close()
    if status != "passed" and notes:
        message = "; ".join(notes + [message])
    return _verdict(out, status, message)


def _verdict(out, status: str, message: str) -> dict:
    verdict = {"status": status, "message": " ".join(str(message).split())[:300]}
    out.write(json.dumps(verdict) + "\n")
    out.flush()
    return verdict


def main(cfg: dict) -> None:
    """Entry point of the checker and worker processes (see :data:`BOOT`)."""
    if cfg.get("mode") == "worker":
        _worker(cfg)
    else:
        _checker(cfg)


def check(tests: str, imports: str, provided: dict, support: dict, *, timeout: float, given: str = "") -> dict:
    """Run ``tests`` in a fresh checker process; return ``{"status", "message"}``."""
    proc = spawn({"path": trusted_path(), "mode": "checker", "tests": tests, "imports": imports, "given": given,
                  "provided": provided, "support": support, "timeout": timeout})
    try:
        line = read_line(proc, time.monotonic() + 3 * timeout + 30)
    finally:
        kill(proc)
    if line is None:
        return {"status": "timeout", "message": f"the hidden tests did not finish within {3 * timeout + 30:g} s"}
    try:
        verdict = json.loads(line)
        return {"status": str(verdict["status"]), "message": str(verdict["message"])}
    except (ValueError, KeyError, TypeError):
        return {"status": "error", "message": f"the checker ended without a verdict (exit status {proc.returncode})"}


def free_names(source: str) -> list[str]:
    """Names ``source`` reads but never binds (nor are builtins): what a test needs from outside."""
    tree = ast.parse(source)
    bound, loaded = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (bound.add(node.id) if isinstance(node.ctx, (ast.Store, ast.Del)) else loaded.append(node.id))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return sorted({n for n in loaded if n not in bound and not hasattr(builtins, n)})


def top_level_names(source: str) -> tuple[list[str], list[str]]:
    """(names bound by top-level statements other than imports, the import statements as source)."""
    tree = ast.parse(source)
    names, imports = [], []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.append(ast.unparse(node))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        else:
            names += [n.id for t in getattr(node, "targets", [getattr(node, "target", None)]) if t is not None
                      for n in ast.walk(t) if isinstance(n, ast.Name)]
    return names, imports


def top_level_statements(source: str) -> list[tuple[list[str], str]]:
    """(names bound, source) of each top-level statement of ``source`` that binds names, imports aside."""
    tree = ast.parse(source)
    out = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        names, _ = top_level_names(ast.unparse(node))
        if names:
            out.append((names, ast.unparse(node)))
    return out


__all__ = ["encode", "decode", "extract", "parse_extract", "check", "free_names", "top_level_names",
           "top_level_statements"]
