"""Strategies of the core/v1 resources, one module per resource after ``pkg/registry/core/<resource>/strategy.go``.

Each applies kube's v1 defaults (``pkg/apis/core/v1/defaults.go``), the create/update preparation
of its registry strategy (status reset, gated-field dropping, server-set status) and the
validation of ``pkg/apis/core/validation`` with the same field paths and messages. Object
metadata is validated by the generic registry, not here. What several share is in ``_common``.
"""

from __future__ import annotations

from apiserver.registry.strategies.core.configmap import ConfigMapStrategy
from apiserver.registry.strategies.core.endpoints import EndpointsStrategy
from apiserver.registry.strategies.core.event import EventStrategy
from apiserver.registry.strategies.core.limitrange import LimitRangeStrategy
from apiserver.registry.strategies.core.namespace import NamespaceStrategy
from apiserver.registry.strategies.core.node import NodeStrategy
from apiserver.registry.strategies.core.persistentvolume import PersistentVolumeStrategy
from apiserver.registry.strategies.core.persistentvolumeclaim import PersistentVolumeClaimStrategy
from apiserver.registry.strategies.core.pod import PodStrategy
from apiserver.registry.strategies.core.resourcequota import ResourceQuotaStrategy
from apiserver.registry.strategies.core.secret import SecretStrategy
from apiserver.registry.strategies.core.service import ServiceStrategy
from apiserver.registry.strategies.core.serviceaccount import ServiceAccountStrategy
from apiserver.rest.strategy import Strategy

STRATEGIES: dict[tuple[str, str], Strategy] = {
    ("", "pods"): PodStrategy(),
    ("", "nodes"): NodeStrategy(),
    ("", "namespaces"): NamespaceStrategy(),
    ("", "services"): ServiceStrategy(),
    ("", "endpoints"): EndpointsStrategy(),
    ("", "configmaps"): ConfigMapStrategy(),
    ("", "secrets"): SecretStrategy(),
    ("", "serviceaccounts"): ServiceAccountStrategy(),
    ("", "events"): EventStrategy(),
    ("", "persistentvolumeclaims"): PersistentVolumeClaimStrategy(),
    ("", "persistentvolumes"): PersistentVolumeStrategy(),
    ("", "limitranges"): LimitRangeStrategy(),
    ("", "resourcequotas"): ResourceQuotaStrategy(),
}
