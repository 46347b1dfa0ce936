"""Storage flags of ``gangplane serve`` (kube-apiserver's ``--etcd-*`` / watch-cache flags) and
the backend they select. Pure parsing lives here; the composition root builds the backend."""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass, field

from apiserver.storage.cache import DEFAULT_HISTORY_BYTES, DEFAULT_HISTORY_WINDOW
from apiserver.storage.interface import Storage
from apiserver.storage.memory import MemoryStorage

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(h|ms|m|s)")
_UNIT = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def parse_duration(text: str) -> float:
    """Seconds in a Go duration (``5m``, ``1h30m``, ``90s``, ``1m0s``) or a plain number of seconds."""
    text = text.strip()
    try:
        value = float(text)
    except ValueError:
        pos, value = 0, 0.0
        for m in _DURATION_PART.finditer(text):
            if m.start() != pos:
                break
            value += float(m.group(1)) * _UNIT[m.group(2)]
            pos = m.end()
        if pos != len(text) or not text:
            raise ValueError(f"invalid duration {text!r} (want e.g. 300s, 5m, 1h)") from None
    if value <= 0:
        raise ValueError(f"invalid duration {text!r}: must be positive")
    return value


@dataclass
class StorageOptions:
    """Which backend holds the cluster and how long the watch history reaches back."""

    #: seconds of watch history kept for resuming watches (kube's 5-minute etcd compaction)
    watch_history: float = DEFAULT_HISTORY_WINDOW
    #: bytes of serialized objects the watch history may hold
    watch_history_bytes: int = DEFAULT_HISTORY_BYTES
    #: ``--etcd-servers`` (``http://host:port`` URLs): the cluster lives in etcd when given
    etcd_servers: list[str] = field(default_factory=list)
    #: ``--etcd-prefix``: the key prefix every object is stored under (kube's ``/registry``)
    etcd_prefix: str = "/registry"
    #: ``--etcd-compaction-interval`` seconds (kube's 5m); 0 leaves etcd's history alone
    etcd_compaction_interval: float = 300.0
    #: ``--data-dir``: keep the cluster in ``DIR/gangplane.db`` (SQLite) across restarts; "" keeps it in memory
    data_dir: str = ""

    def cache_options(self) -> dict[str, float | int]:
        return {"history_window": self.watch_history, "history_bytes": self.watch_history_bytes}


def open_storage(options: StorageOptions) -> Storage:
    """The backend ``options`` select, ready for the registry (state loaded where there is one).

    Raises ValueError on bad options or unusable data (``DataDirError`` for the data dir, foreign
    data under the etcd prefix), and ``ConnectionError`` when etcd is unreachable.
    """
    if options.etcd_servers and options.data_dir:
        raise ValueError("--etcd-servers and --data-dir both name where the cluster lives: give one")
    if options.etcd_servers:
        if importlib.util.find_spec("aetcd") is None:
            raise ValueError("--etcd-servers needs the etcd extra: pip install 'gangplane[etcd]'")
        # imported here: the gRPC client is loaded only by servers that use etcd
        from apiserver.storage.etcd import EtcdStorage, parse_servers

        return EtcdStorage(
            parse_servers(",".join(options.etcd_servers)),
            prefix=options.etcd_prefix,
            compaction_interval=options.etcd_compaction_interval,
            **options.cache_options(),
        )
    if options.data_dir:
        from apiserver.storage.sqlite import SQLiteStorage

        return SQLiteStorage(options.data_dir, **options.cache_options())
    return MemoryStorage(**options.cache_options())
