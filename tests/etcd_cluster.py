"""Real etcd for the tests (:mod:`apiserver.storage.etcd_local`): a test that cannot have one skips, saying why."""

from __future__ import annotations

from pathlib import Path

import pytest

from apiserver.storage.etcd_local import EtcdCluster as _Cluster
from apiserver.storage.etcd_local import EtcdNotInstalled, free_port

__all__ = ["EtcdCluster", "free_port"]


class EtcdCluster(_Cluster):
    """:class:`apiserver.storage.etcd_local.EtcdCluster`, skipping the test where etcd cannot be installed."""

    def __init__(self, tmp: Path, size: int = 1) -> None:
        try:
            super().__init__(tmp, size)
        except EtcdNotInstalled as e:
            pytest.skip(str(e))
