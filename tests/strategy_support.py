"""Running one registry strategy the way the registry does, for the strategy unit tests.

The apps, batch and core strategy tests each drove their strategies through the same hook order
(default -> prepare_for_create -> validate; default -> prepare_for_update -> validate_update;
default -> prepare_for_status_update -> validate_status_update) with the same context; each test
module now binds its own strategy table to these.
"""

from __future__ import annotations

import copy

from apiserver.api.types import Obj
from apiserver.rest.strategy import Strategy, StrategyContext
from featuregates import FeatureGate

NOW = "2026-01-01T00:00:00Z"


def strategy_ctx(gates: dict[str, bool] | None = None, namespace: str = "default") -> StrategyContext:
    """A request context in ``namespace`` at :data:`NOW`, with ``gates`` overriding the defaults."""
    return StrategyContext(gates=FeatureGate(overrides=gates or {}), namespace=namespace, now=NOW)


def run_create(s: Strategy, obj: Obj, c: StrategyContext) -> tuple[Obj, list[str]]:
    """The object as it would be stored, and the validation messages (empty: accepted)."""
    obj = copy.deepcopy(obj)
    s.default(obj)
    s.prepare_for_create(c, obj)
    return obj, [str(e) for e in s.validate(c, obj)]


def run_update(s: Strategy, new: Obj, old: Obj, c: StrategyContext) -> tuple[Obj, list[str]]:
    """:func:`run_create` for an update of ``old`` to ``new``."""
    new = copy.deepcopy(new)
    s.default(new)
    s.prepare_for_update(c, new, old)
    return new, [str(e) for e in s.validate_update(c, new, old)]


def run_status_update(s: Strategy, new: Obj, old: Obj, c: StrategyContext) -> tuple[Obj, list[str]]:
    """:func:`run_create` for a write of ``new`` to ``old``'s status subresource."""
    new = copy.deepcopy(new)
    s.default(new)
    s.prepare_for_status_update(c, new, old)
    return new, [str(e) for e in s.validate_status_update(c, new, old)]
