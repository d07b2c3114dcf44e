"""Repository-wide pytest hooks: report how long the nbval run over the chapters took."""
_nbval = {"seconds": 0.0, "cells": 0, "notebooks": set()}


def pytest_runtest_logreport(report):
    path = report.nodeid.split("::")[0]
    if path.endswith(".ipynb"):
        _nbval["seconds"] += report.duration
        _nbval["notebooks"].add(path)
        if report.when == "call":
            _nbval["cells"] += 1


def pytest_terminal_summary(terminalreporter):
    if _nbval["notebooks"]:
        terminalreporter.write_line(
            f"nbval: {len(_nbval['notebooks'])} notebooks, {_nbval['cells']} cells, "
            f"{_nbval['seconds']:.1f} s (budget 180 s)")
