"""The book's interactive figures: one factory per widget, each returning an
:class:`~hetlab.widgets.Explorer` whose draw function only calls the library.

One module per chapter (``ch01`` ... ``ch13``, ``a1``), each listing its factories in ``__all__``
and ``VIEWS``; this package re-exports them all, loading a chapter's module on first use.
A chapter shows one with ``views.granularity_explorer().widget``; a test drives it with
``explorer.update(W=..., Os=...)`` at every control's ends and middle. :data:`ALL`
lists every factory with the chapter that uses it.
"""
from __future__ import annotations

import importlib
import pkgutil

#: The chapter modules, in book order (every ``chNN``/``aN`` module of this package).
MODULES = tuple(sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")))


def _modules():
    return [importlib.import_module(f"{__name__}.{name}") for name in MODULES]


def __getattr__(name: str):
    # Dunder lookups (``__wrapped__``, ``__path__`` probes by doctest, inspect, pickle) must not import
    # every chapter module: importing one adds submodules to ``hetlab`` while doctest iterates its dict.
    if name.startswith("__"):
        raise AttributeError(f"module 'hetlab.book.views' has no attribute {name!r}")
    if name == "ALL":
        return [entry for module in _modules() for entry in module.VIEWS]
    for module in _modules():
        if name in module.__all__:
            return getattr(module, name)
    raise AttributeError(f"module 'hetlab.book.views' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({"ALL", "MODULES", *(n for module in _modules() for n in module.__all__)})
