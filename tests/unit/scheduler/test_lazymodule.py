"""``scheduler.lazymodule.module``: the loaded module from ``sys.modules``, an import otherwise
(numpy stays off the start-up path), and importlib's wait for a module still initialising."""

from __future__ import annotations

import importlib
import subprocess
import sys
import types
from typing import Any

from scheduler import lazymodule


def test_a_loaded_module_is_the_one_in_sys_modules() -> None:
    import scheduler.score_totals

    assert lazymodule.module("scheduler.score_totals") is scheduler.score_totals


def test_a_module_not_loaded_yet_is_imported_on_first_use() -> None:
    code = (
        "import sys\n"
        "from scheduler import lazymodule\n"
        "assert 'scheduler.plugins.spread_arrays' not in sys.modules\n"
        "m = lazymodule.module('scheduler.plugins.spread_arrays')\n"
        "assert sys.modules['scheduler.plugins.spread_arrays'] is m and 'numpy' in sys.modules\n"
        "assert callable(m.normalized_array)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_a_module_still_initialising_is_asked_of_importlib(monkeypatch: Any) -> None:
    half = types.ModuleType("gangplane_test_half")
    half.__spec__ = importlib.machinery.ModuleSpec("gangplane_test_half", None)
    half.__spec__._initializing = True  # type: ignore[attr-defined]
    done = types.ModuleType("gangplane_test_half")
    monkeypatch.setitem(sys.modules, "gangplane_test_half", half)
    asked: list[str] = []

    def import_module(name: str) -> types.ModuleType:
        asked.append(name)
        return done

    monkeypatch.setattr(importlib, "import_module", import_module)
    assert lazymodule.module("gangplane_test_half") is done
    assert asked == ["gangplane_test_half"]
    half.__spec__._initializing = False  # type: ignore[attr-defined]
    assert lazymodule.module("gangplane_test_half") is half
