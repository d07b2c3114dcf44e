"""Run hidden tests where a student's code cannot reach them (used by :func:`hetlab.book.grading.grade`).

The student's notebook runs in a Jupyter kernel, and everything that kernel reports is treated as a
*claim*, never as code or as a verdict (:mod:`hetlab.book._codec`). After the kernel and every process
it started have ended, each exercise is checked like this:

1. A fresh ``python -I -S`` process, the *checker* (:func:`main`), makes itself non-dumpable before it
   reads anything, then runs the instructor's imports and the hidden tests. It binds only the names the
   test asked for (``asks``), never a builtin or a name of the instructor's, each rebuilt by
   :func:`~hetlab.book._codec.decode` (plain data and hetlab's dataclasses, built by their own
   constructors) or imported afresh from a short allow-list. No student code runs in it.
2. A student's function is called through a proxy: the arguments are encoded and sent to a second
   process, the *worker*, which rebuilds the function from its source under resource limits (in its own
   user and PID namespace where the system allows, :mod:`hetlab.book._isolation`) and sends back only
   the return value, encoded. A worker that hangs, exits or garbles its answer fails the exercise.
3. The verdict travels on a socket pair made for this one check (a socket cannot be opened through
   ``/proc/<pid>/fd``, unlike a pipe), and carries an HMAC with a secret that only the grader and the
   checker hold; a line without the right MAC is not a verdict.

The checker is a subreaper: whatever the worker detaches is ended with it. See book/instructors.md for
what this does not defend against.
"""
from __future__ import annotations

import builtins
import hashlib
import hmac
import importlib
import json
import os
import selectors
import socket
import subprocess
import sys
import time

from hetlab.book import _isolation
from hetlab.book._codec import MAX_BYTES, allowed, decode, encode, resolve

BOOT = ("import ctypes; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0); "      # PR_SET_DUMPABLE 0, before reading
        "import sys, json; cfg = json.loads(sys.stdin.readline()); sys.path[:] = cfg['path']; "
        "from hetlab.book._sandbox import main; main(cfg)")


def trusted_path() -> list[str]:
    """The grader's own import path (taken before any student code runs), for ``python -I -S``."""
    import hetlab

    here = os.path.dirname(os.path.dirname(os.path.abspath(hetlab.__file__)))
    path = [p for p in sys.path if p and os.path.isdir(p) and os.path.abspath(p) != os.getcwd()]
    return path + [here]


def _limits(cpu_s: int, memory: int) -> None:   # runs in the child, before the student's code
    import resource

    os.setsid()
    for limit, value in ((resource.RLIMIT_CPU, cpu_s), (resource.RLIMIT_AS, memory),
                         (resource.RLIMIT_FSIZE, 64 * 2**20), (resource.RLIMIT_CORE, 0)):
        try:
            resource.setrlimit(limit, (value, value))
        except (ValueError, OSError):
            pass


class Channel:
    """One end of a socket pair to a child process: lines of JSON out, bounded lines in."""

    def __init__(self, cfg: dict, *, limits: tuple[int, int] | None = None, prefix: list[str] | None = None) -> None:
        ours, theirs = socket.socketpair()
        preexec = None
        if limits and os.name == "posix":
            def preexec():
                _limits(*limits)
        command = [sys.executable, "-I", "-S", "-c", BOOT]
        try:
            self.proc = subprocess.Popen(
                _isolation.wrap(command, prefix or []), stdin=theirs, stdout=theirs,
                stderr=subprocess.DEVNULL, preexec_fn=preexec, start_new_session=preexec is None,
                env={"PATH": os.environ.get("PATH", ""), "OPENBLAS_NUM_THREADS": "1", "MPLBACKEND": "Agg",
                     "HOME": os.environ.get("HOME", "/")}, cwd="/")
        finally:
            theirs.close()
        self.sock, self.buffer = ours, b""
        self.send(cfg)

    def send(self, message: dict) -> None:
        try:
            self.sock.sendall((json.dumps(message) + "\n").encode())
        except OSError:
            pass                    # the process ended: the next read says so

    def read_line(self, deadline: float, limit: int = MAX_BYTES) -> bytes | None:
        """One line by ``deadline``; None on timeout or an over-long line, b"" when the process ended."""
        with selectors.DefaultSelector() as sel:
            sel.register(self.sock, selectors.EVENT_READ)
            while b"\n" not in self.buffer:
                left = deadline - time.monotonic()
                if left <= 0 or len(self.buffer) > limit:
                    return None
                if not sel.select(left):
                    continue
                try:
                    chunk = self.sock.recv(1 << 16)
                except OSError:
                    chunk = b""
                if not chunk:
                    return b""
                self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def close(self) -> None:
        """End the process, everything below it, and anything in its session."""
        _isolation.end_tree([self.proc.pid])
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, 9)
            except OSError:
                self.proc.kill()
        self.proc.wait()
        self.sock.close()


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
    def __init__(self, support: dict, timeout: float, prefix: list[str]) -> None:
        self.support, self.timeout, self.prefix, self.channel, self.failure = support, timeout, prefix, None, None

    def call(self, name: str, args: tuple, kwargs: dict):
        if self.failure:
            raise ProxyFailure(self.failure)
        try:
            payload = encode([list(args), kwargs])
        except (TypeError, ValueError, RecursionError) as exc:
            raise TypeError(f"the arguments for {name} cannot be sent to the student's function: {exc}") from None
        if self.channel is None:
            try:
                self.channel = Channel({"path": sys.path, "mode": "worker", "support": self.support},
                                       limits=(int(self.timeout * 4) + 30, 4 * 2**30), prefix=self.prefix)
            except OSError as exc:
                self.failure = f"the process for {name} did not start ({exc.strerror or exc})"
                raise ProxyFailure(self.failure) from None
            if self.channel.read_line(time.monotonic() + self.timeout + 30) != b"ready":
                self.fail(f"the process for {name} did not start")
        self.channel.send({"name": name, "payload": payload})
        line = self.channel.read_line(time.monotonic() + self.timeout)
        if line is None:
            self.fail(f"{name} did not return within {self.timeout:g} s")
        if line == b"":
            code = self.channel.proc.wait()
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
        if self.channel is not None:
            self.channel.close()


class _StudentFunction:
    def __init__(self, name: str, worker: _Worker) -> None:
        self.__name__, self._worker = name, worker

    def __call__(self, *args, **kwargs):
        return self._worker.call(self.__name__, args, kwargs)

    def __repr__(self) -> str:
        return f"<the student's function {self.__name__}>"


# --- the checker: the hidden tests, with no student code -------------------------------------------

def _bind(name: str, d, namespace: dict, worker: _Worker, instructors: set[str]) -> str | None:
    """Bind the student's ``name`` as described by ``d`` in ``namespace``; a note when it cannot be."""
    kind = d.get("kind") if isinstance(d, dict) else None
    if name in instructors or hasattr(builtins, name) or not name.isidentifier():
        return f"{name} is the instructor's name, not taken from the submission"
    try:
        if kind == "value":
            namespace[name] = decode(d["value"])
        elif kind == "module":
            if not allowed(d["name"]):
                raise ValueError(f"module {d['name']!r} is not among the modules grading may import")
            namespace[name] = importlib.import_module(d["name"])
        elif kind == "import":
            namespace[name] = resolve(d["module"], d["qualname"])
        elif kind == "function":
            namespace[name] = _StudentFunction(name, worker)
            worker.support[name] = d
        elif kind == "missing":
            return f"the submission does not define {name}"
        else:
            return str(d.get("message", f"{name} cannot be graded") if isinstance(d, dict) else d)[:200]
    except (ValueError, KeyError, TypeError, ImportError, AttributeError) as exc:
        return f"{name}: {exc}"[:200]
    return None


def _checker(cfg: dict) -> tuple[str, str]:
    from hetlab.book.edition import top_level_names

    namespace: dict = {"__name__": "__main__", "__builtins__": builtins}
    try:
        exec(compile(cfg["imports"], "<the instructor's imports>", "exec"), namespace)
        given = str(cfg.get("given", ""))
        instructors = set(namespace) | set(top_level_names(given)[0])
    except Exception as exc:
        return "error", f"the key's imports failed: {type(exc).__name__}: {exc}"
    worker = _Worker(dict(cfg["support"]), float(cfg["timeout"]), [str(p) for p in cfg.get("prefix", [])])
    notes = []
    for name in cfg["asks"]:              # only the names the tests asked for; nothing else the kernel offered
        note = _bind(name, cfg["provided"].get(name, {"kind": "missing"}), namespace, worker, instructors)
        if note:
            notes.append(note)
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
    return status, message


def _mac(secret: bytes, status: str, message: str) -> str:
    return hmac.new(secret, json.dumps([status, message]).encode(), hashlib.sha256).hexdigest()


def main(cfg: dict) -> None:
    """Entry point of the checker and worker processes (see :data:`BOOT`)."""
    if cfg.get("mode") == "worker":
        _worker(cfg)
        return
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    _isolation.subreaper(True)              # what the worker detaches comes back here, and is ended
    try:
        status, message = _checker(cfg)
    finally:
        _isolation.end_tree([os.getpid()])
    message = " ".join(str(message).split())[:300]
    out.write(json.dumps({"status": status, "message": message,
                          "mac": _mac(bytes.fromhex(cfg["secret"]), status, message)}) + "\n")
    out.flush()


def check(tests: str, imports: str, provided: dict, support: dict, *, asks: list[str], timeout: float,
          wait: float | None = None, given: str = "", prefix: list[str] = ()) -> dict:
    """Run ``tests`` in a fresh checker process on the names ``asks`` (described in ``provided``), the
    student's functions in workers started with ``prefix`` (:func:`~hetlab.book._isolation.namespace_prefix`),
    each call at most ``timeout`` s, the whole check at most ``wait`` s; return ``{"status", "message"}``."""
    wait = 3 * timeout + 30 if wait is None else min(wait, 3 * timeout + 30)
    secret = os.urandom(32)
    try:
        channel = Channel({"path": trusted_path(), "mode": "checker", "tests": tests, "imports": imports,
                           "given": given, "asks": list(asks), "provided": {n: provided[n] for n in asks
                                                                            if n in provided},
                           "support": support, "timeout": timeout, "secret": secret.hex(),
                           "prefix": list(prefix)})
    except OSError as exc:
        return {"status": "error", "message": f"the checker did not start ({exc.strerror or exc})"}
    try:
        line = channel.read_line(time.monotonic() + wait)
    finally:
        channel.close()
    if line is None:
        return {"status": "timeout", "message": f"the hidden tests did not finish within {wait:.3g} s"}
    try:
        verdict = json.loads(line)
        status, message = str(verdict["status"]), str(verdict["message"])
        if status in ("passed", "failed", "error") and hmac.compare_digest(str(verdict["mac"]),
                                                                             _mac(secret, status, message)):
            return {"status": status, "message": message}
    except (ValueError, KeyError, TypeError, RecursionError):
        pass
    return {"status": "error",
            "message": f"the checker ended without a verdict (exit status {channel.proc.returncode})"}


__all__ = ["check", "trusted_path", "ProxyFailure"]
