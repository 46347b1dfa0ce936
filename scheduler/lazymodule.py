"""A module imported on its first use, then read from ``sys.modules`` (gangplane).

numpy stays off the start-up path of commands that never schedule a pod: the modules that
import it (the node table, the array scores and totals) are imported inside the functions of a
cycle that first need them. An ``import`` statement run inside a function is not free once the
module is loaded, though: CPython checks through the module's spec that it has finished
initialising (0.6 us for ``from scheduler.score_totals import bounds``), and a package's
``from scheduler import score_totals`` runs importlib's ``_handle_fromlist`` in Python (0.3 us).
A gang member's pod cycle ran about ten of them (each array Score column, each PodTopologySpread
table read, the totals and the pick). :func:`module` answers from ``sys.modules`` (a dictionary
read, 0.05 us) and imports only when the module is not there yet.

A module still initialising (``__spec__._initializing``, as the import statement checks it) is
asked of importlib, which waits for it as that statement would.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

__all__ = ["module"]


def module(name: str) -> ModuleType:
    """The module ``name`` (absolute), imported now if it is not loaded yet."""
    got = sys.modules.get(name)
    if got is None or getattr(got.__spec__, "_initializing", False):
        return importlib.import_module(name)
    return got
