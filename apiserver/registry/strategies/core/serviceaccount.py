"""ServiceAccounts (``pkg/registry/core/serviceaccount``)."""

from __future__ import annotations

from apiserver.registry.strategies.core.common import UntrackedGenerationStrategy


class ServiceAccountStrategy(UntrackedGenerationStrategy):
    """ServiceAccounts carry nothing beyond metadata that kube validates."""
