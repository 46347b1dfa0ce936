"""Fixtures the scheduler's unit tests share."""

from __future__ import annotations

import pytest

from scheduler import arraypolicy


@pytest.fixture
def arrays_on_small_clusters(monkeypatch: pytest.MonkeyPatch) -> None:
    """The array paths on clusters of tens of nodes (production: from 64 nodes / 1,024 mapped)."""
    monkeypatch.setattr(arraypolicy, "ARRAY_MIN_NODES", 8)
    monkeypatch.setattr(arraypolicy, "MAPPED_MIN_NODES", 8)
