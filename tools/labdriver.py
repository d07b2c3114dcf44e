"""Drive the book in a real browser: JupyterLab on loopback + headless Debian Chromium via playwright.

Used by tests/browser (behaviour) and benchmarks/bench_widget_latency.py (latency). The server
and the browser are always shut down by the context managers, also when a test fails.
"""
from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path(os.environ.get("HETLAB_CHROMIUM", "/usr/bin/chromium"))
#: Process ids of every JupyterLab server started here (tests check none outlives its context).
STARTED_PIDS: list[int] = []
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]


def chromium_missing_reason() -> str | None:
    """Why browser tests cannot run here, or None."""
    if not CHROMIUM.exists():
        return f"Chromium not found at {CHROMIUM} (Debian package 'chromium'; `make test` installs it as root)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "python package playwright not installed (test extra)"
    if shutil.which("fc-list"):
        listed = subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True, text=True).stdout
        if not listed.strip():
            return "no Chinese font for Chromium (Debian package fonts-noto-cjk; `make test` installs it as root)"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_setting(root: Path, plugin: str, values: dict) -> None:
    import json

    package, name = plugin.split("/")
    path = root / "@jupyterlab" / package / f"{name}.jupyterlab-settings"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(values))


@contextlib.contextmanager
def jupyterlab(notebooks: list[Path] | None = None, locale: str | None = "en"):
    """Start JupyterLab on 127.0.0.1 with a random token on a free port, serving a temporary
    copy of the chapters (so runs never touch the committed notebooks). Yields (base_url, token, dir).

    ``locale`` is the interface language the tests click through ("en": menu labels in English);
    None keeps the environment's default (zh_CN from binder/overrides.json, as `make lab` and Binder show it)."""
    workdir = Path(tempfile.mkdtemp(prefix="hetlab-lab-"))
    for nb in notebooks or sorted((ROOT / "chapters").glob("*.ipynb")):
        shutil.copy(nb, workdir / nb.name)
    port, token = _free_port(), secrets.token_hex(16)
    settings = workdir / ".settings"
    # Render every cell (no windowing), so all widgets exist in the DOM; no news pop-up.
    _write_setting(settings, "notebook-extension/tracker", {"windowingMode": "none"})
    _write_setting(settings, "apputils-extension/notification", {"fetchNews": "false", "checkForUpdates": False})
    if locale is not None:
        _write_setting(settings, "translation-extension/plugin", {"locale": locale})
    env = dict(os.environ, HETLAB_PROGRESS=str(workdir / "progress.json"), JUPYTER_CONFIG_DIR=str(workdir / ".jupyter"),
               JUPYTER_RUNTIME_DIR=str(workdir / ".runtime"), JUPYTERLAB_SETTINGS_DIR=str(settings),
               JUPYTERLAB_WORKSPACES_DIR=str(workdir / ".workspaces"))
    env.pop("MPLBACKEND", None)
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
           f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={workdir}", "--ServerApp.port_retries=0",
           "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
           "--ContentsManager.allow_hidden=True"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    log = open(workdir / "server.log", "w")
    server = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    STARTED_PIDS.append(server.pid)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("JupyterLab did not start:\n" + (workdir / "server.log").read_text()[-3000:])
            time.sleep(0.3)
        yield base, token, workdir
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        log.close()
        shutil.rmtree(workdir, ignore_errors=True)


@contextlib.contextmanager
def static_server(directory: Path):
    """Serve ``directory`` over HTTP on 127.0.0.1 (a free port) from a thread; yields the base URL."""
    import functools
    import http.server
    import threading

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):  # the tests report what matters; keep pytest's output readable
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@contextlib.contextmanager
def browser():
    """A headless Debian Chromium driven by playwright; yields a playwright Browser."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


PROMPTS = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputPrompt"


def open_notebook(page, base: str, token: str, name: str, timeout: float = 300_000) -> None:
    """Open one notebook in a fresh workspace (no tabs left over from earlier pages).

    On a busy machine a kernel takes far longer to start than on an idle one, so the limit is generous;
    every wait returns as soon as its condition holds."""
    workspace = name.split(".")[0]
    page.goto(f"{base}/lab/workspaces/{workspace}/tree/{name}?reset&token={token}", wait_until="domcontentloaded",
              timeout=timeout)
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=timeout)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=timeout)


#: The execution numbers in the visible notebook's code-cell prompts (null where none) and whether the kernel is idle.
_RUN_STATE = f"""() => {{
    const prompts = [...document.querySelectorAll('{PROMPTS}')];
    const ind = document.querySelector('.jp-Notebook-ExecutionIndicator');
    return {{numbers: prompts.map(p => {{ const m = /\\[(\\d+)\\]/.exec(p.textContent); return m ? +m[1] : null; }}),
             idle: !!ind && ind.dataset.status === 'idle'}};
}}"""
#: Run All has finished: every code cell shows a number, the numbers count up by one from the first cell (so none
#: is a stale count left from before), and the kernel is idle. Progress: the highest number shown so far.
_RUN_DONE = """(s) => s.numbers.length > 0 && s.idle
    && s.numbers.every((n, i) => n !== null && n === s.numbers[0] + i)"""
_PROGRESS = "(s) => Math.max(-1, ...s.numbers.filter(n => n !== null))"


def _menu_until(page, menu: str, item: str, done: str, arg=None, attempt_timeout: float = 30_000,
                timeout: float = 300_000) -> None:
    """Choose ``menu`` > ``item`` until the JavaScript predicate ``done(arg)`` holds.

    A menu click can be lost on a busy machine (the menu closes before the item takes the click, or the
    notebook is not yet the current widget, which disables the command): CI once waited 300 s for
    outputs that Clear Outputs never cleared. So each attempt waits ``attempt_timeout`` ms for its effect
    and, if none shows, closes any open menu and chooses again, until ``timeout`` ms have passed."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    deadline = time.monotonic() + timeout / 1000
    while True:
        page.keyboard.press("Escape")  # close a menu left open by a lost click
        page.click(f".lm-MenuBar-itemLabel:text-is('{menu}')")
        page.click(f".lm-Menu-itemLabel:text-is('{item}')")
        left = (deadline - time.monotonic()) * 1000
        try:
            page.wait_for_function(done, arg=arg, timeout=max(1.0, min(attempt_timeout, left)))
            return
        except PlaywrightTimeout:
            if time.monotonic() >= deadline:
                raise


def run_all(page, stall_timeout: float = 300_000, limit: float = 1_200_000, menu_timeout: float = 30_000) -> None:
    """Clear the stored outputs (Edit menu), run all cells from the Run menu, and wait until
    every code cell has a fresh execution count and the kernel is idle.

    The wait is on progress, not on a fixed total: it fails only when no further cell has finished for
    ``stall_timeout`` ms (a hung kernel) or the whole run took longer than ``limit`` ms. A fixed 120 s
    once ran out on a busy machine while the chapter was still making progress (issue 11, item 14).
    Both menu choices are repeated every ``menu_timeout`` ms until they show an effect (see ``_menu_until``), for
    up to four attempts or ``stall_timeout``, whichever is longer, within ``limit``: a stall limit sized for cells
    (a test's 8 s) once ran out while a busy machine was still opening the Run menu."""
    panel = ".jp-NotebookPanel:not(.lm-mod-hidden)"
    menus = min(limit, max(stall_timeout, 4 * menu_timeout))
    _menu_until(page, "Edit", "Clear Outputs of All Cells",
                f"() => document.querySelectorAll('{panel} .jp-OutputArea-output').length === 0",
                attempt_timeout=menu_timeout, timeout=menus)
    # Run All has taken effect once a prompt is queued ([*]) or any prompt text has changed.
    prompt_texts = f"() => [...document.querySelectorAll('{PROMPTS}')].map(p => p.textContent)"
    _menu_until(page, "Run", "Run All Cells",
                f"(before) => {{ const now = ({prompt_texts})(); "
                "return now.some((t, i) => t.includes('*') || t !== before[i]); }",
                arg=page.evaluate(prompt_texts), attempt_timeout=menu_timeout, timeout=menus)
    deadline = time.monotonic() + limit / 1000
    while True:
        state = page.evaluate(_RUN_STATE)
        if page.evaluate(_RUN_DONE, state):
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"Run All not finished in {limit / 1000:.0f} s: prompts {state['numbers']}")
        # Returns as soon as one more cell has finished (a higher number shows) or the run is complete.
        page.wait_for_function(f"""(before) => {{
            const s = ({_RUN_STATE})();
            return ({_PROGRESS})(s) > before || ({_RUN_DONE})(s);
        }}""", arg=page.evaluate(_PROGRESS, state), timeout=stall_timeout, polling=250)


def shutdown_kernels(base: str, token: str) -> None:
    """Stop every running session and its kernel, so chapters do not pile up on two cores."""
    import json

    with urllib.request.urlopen(f"{base}/api/sessions?token={token}", timeout=10) as r:
        sessions = json.load(r)
    for session in sessions:
        request = urllib.request.Request(f"{base}/api/sessions/{session['id']}?token={token}", method="DELETE")
        with contextlib.suppress(OSError):
            urllib.request.urlopen(request, timeout=10).close()


def error_outputs(page) -> list[str]:
    """Texts of error outputs (tracebacks) and widget failures in the visible notebook."""
    return page.evaluate("""() => {
        const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
        const stderr = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]';
        const errs = [...panel.querySelectorAll(stderr)].map(e => e.textContent).filter(t => /Error|Traceback/.test(t));
        const text = panel.innerText;
        for (const bad of ['Error displaying widget', 'Loading widget...', 'Model not found']) {
            if (text.includes(bad)) errs.push(bad);
        }
        return errs;
    }""")


def image_bytes(page, selector: str) -> bytes:
    """The bytes behind an <img> (a blob: or data: URL), fetched inside the page."""
    import base64

    data = page.evaluate("""async (sel) => {
        const img = document.querySelector(sel);
        const buf = await (await fetch(img.src)).arrayBuffer();
        let s = ''; const b = new Uint8Array(buf);
        for (let i = 0; i < b.length; i++) s += String.fromCharCode(b[i]);
        return btoa(s);
    }""", selector)
    return base64.b64decode(data)
