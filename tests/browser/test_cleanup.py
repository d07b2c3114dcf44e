"""JupyterLab and Chromium never outlive their context managers, even when the body fails.

A separate module, so the browser-test module's shared server has been shut down before this runs.
"""
from pathlib import Path

import labdriver  # on sys.path via conftest.py, which also skips these tests where Chromium is absent
import pytest


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_server_kernels_and_browser_are_gone_after_their_context_even_on_failure():
    import os

    with pytest.raises(RuntimeError, match="boom"):
        with labdriver.jupyterlab([]) as (base, token, workdir), labdriver.browser() as browser:
            page = browser.new_page()
            page.goto(f"{base}/api/status?token={token}")
            raise RuntimeError("boom")
    assert not _alive(labdriver.STARTED_PIDS[-1])
    assert not Path(workdir).exists()
    survivors = [pid for pid in map(int, filter(str.isdigit, os.listdir("/proc")))
                 if _cmdline(pid).startswith(("/usr/lib/chromium", "/usr/bin/chromium"))
                 or (f"--ServerApp.root_dir={workdir}" in _cmdline(pid))]
    assert survivors == []


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""
