import os
import tempfile

import matplotlib

matplotlib.use("Agg")

# Quiz widgets record answers; keep the learner's real progress file out of the tests.
os.environ.setdefault("HETLAB_PROGRESS", os.path.join(tempfile.mkdtemp(prefix="hetlab-test-"), "progress.json"))
