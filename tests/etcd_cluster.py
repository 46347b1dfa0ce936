"""Real etcd for the tests (:mod:`apiserver.testing.etcd`): a test that cannot have one skips, saying why."""

from __future__ import annotations

from pathlib import Path

import pytest

from apiserver.testing.etcd import EtcdCluster as _Cluster
from apiserver.testing.etcd import EtcdNotInstalled, free_port

__all__ = ["EtcdCluster", "free_port"]


class EtcdCluster(_Cluster):
    """:class:`apiserver.testing.etcd.EtcdCluster`, skipping the test where etcd cannot be installed."""

    def __init__(self, tmp: Path, size: int = 1) -> None:
        try:
            super().__init__(tmp, size)
        except EtcdNotInstalled as e:
            pytest.skip(str(e))
