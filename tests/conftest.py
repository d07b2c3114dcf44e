import os
import tempfile

import matplotlib
import pytest

matplotlib.use("Agg")

# Quiz widgets record answers; keep the learner's real progress file out of the tests.
os.environ.setdefault("HETLAB_PROGRESS", os.path.join(tempfile.mkdtemp(prefix="hetlab-test-"), "progress.json"))



@pytest.fixture(scope="session")
def built_site(tmp_path_factory):
    """The website, built once per test session into a temporary folder (scripts/build_site.py, offline from the
    chapters' stored outputs). HETLAB_SITE_HTML=path reuses an existing build (e.g. `make site`'s _build/html)."""
    import sys
    from pathlib import Path

    existing = os.environ.get("HETLAB_SITE_HTML")
    if existing:
        return Path(existing).resolve()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
    import build_site

    if build_site.npm_missing_reason():
        pytest.skip(build_site.npm_missing_reason())
    return build_site.build(tmp_path_factory.mktemp("site"))
