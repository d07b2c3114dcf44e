"""Real runs on this machine, recorded in the same Schedule type the simulators return.

- ``execute``: run a TaskGraph (process or thread pool, Dask) or a simulated plan for real; the task bodies
  (``busy_loop``, ``Sleep``); the measures of a run (``effective_parallelism``, ``task_gaps``).
- ``measure``: calibration before any experiment: usable CPUs, loop rate, dispatch overhead, matmul rate.
- ``experiments``, ``split_timing``: chapter 12's and appendix A1's timed experiments, returning numbers.
- ``hybrid``, ``readings``: a plan run on CPU threads and a GPU, and the stored readings of such runs.
"""
