"""Shared set-up of the browser tests: the lab driver on sys.path, one skip reason, screenshots."""
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tools"))
import labdriver  # noqa: E402

REASON = labdriver.chromium_missing_reason()


def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.browser)
            if REASON:
                item.add_marker(pytest.mark.skip(reason=REASON))


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    # Let the page fixture know the test failed, so it saves a screenshot.
    outcome = yield
    if outcome.get_result().failed:
        item.failed = True
