import pytest


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    # Let the page fixture know the test failed, so it saves a screenshot.
    outcome = yield
    if outcome.get_result().failed:
        item.failed = True
