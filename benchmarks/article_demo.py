"""The source article's Python demo, as the benchmark baseline and the tests' reference.

One copy only: it lives in :mod:`hetlab.book._article_program` (chapter 11 prints and runs it); the algorithm,
including its preference branch (which can never fire, see ``hetlab.schedulers.article_demo``), is the
article's, unchanged.
"""
from hetlab.book._article_program import DEVICES, TASKS, main, parallel_time, serial_time

__all__ = ["TASKS", "DEVICES", "serial_time", "parallel_time", "main"]

if __name__ == "__main__":
    main()
