"""The replica-status checks' shortcut (``apps._replica_status_clean``) answers "no error" only
where the field-by-field checks find none: random statuses of the apps workloads' fields
(negative, too large, non-integer, missing values) give the same errors, path for path, with
the shortcut as without it."""

from __future__ import annotations

import random
from typing import Any

import pytest

from apiserver.field import Path
from apiserver.registry.strategies import apps

_FIELDS = (
    ("replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"),
    ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas"),
    ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas"),
)
_VALUES = (0, 1, 2, 3, 3, 3, 4, -1, None, "2", True, False, 2.0, 2**40)


def _status(rnd: random.Random, fields: tuple[str, ...]) -> dict[str, Any]:
    status: dict[str, Any] = {}
    for key in (*fields, "observedGeneration", "collisionCount"):
        r = rnd.random()
        if r < 0.1:
            continue
        # mostly the valid shape a controller writes: replicas first, the others at most that
        status[key] = rnd.choice(_VALUES) if r < 0.3 else rnd.choice([0, 1, 2, 3])
    if rnd.random() < 0.7:
        status["replicas"] = 3
    return status


def _errors(status: dict[str, Any], fields: tuple[str, ...], message: str | None) -> list[tuple[str, str]]:
    errs = apps._replica_status_errors(status, Path("status"), fields, message)
    return [(str(e.field), e.error_body()) for e in errs]


@pytest.mark.parametrize("seed", range(3))
def test_the_shortcut_finds_what_the_checks_find(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rnd = random.Random(seed)
    clean = 0
    for _ in range(3000):
        fields = rnd.choice(_FIELDS)
        message = rnd.choice([None, "cannot be greater than readyReplicas", ""])
        status = _status(rnd, fields)
        fast = _errors(status, fields, message)
        with monkeypatch.context() as m:
            m.setattr(apps, "_replica_status_clean", lambda *_: False)
            general = _errors(status, fields, message)
        assert fast == general, status
        clean += not general
    assert 300 < clean < 2700  # both outcomes drawn often
