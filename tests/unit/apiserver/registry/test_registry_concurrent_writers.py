"""kube's GuaranteedUpdate loop: a write refused by the storage because another API server changed
the object between this request's read and its write is re-run on the newest object."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from apiserver import errors
from apiserver.registry.generic import MERGE_PATCH, WriteOptions
from apiserver.server.instance import build_api
from apiserver.storage.interface import Key, Record, StorageKey, StoreError
from apiserver.storage.memory import MemoryStorage

CM = ("", "configmaps")


class RacingStorage(MemoryStorage):
    """Memory whose next write first lets a 'concurrent writer' change the object, so the compare
    on the revision this request read fails, as etcd's does."""

    def __init__(self) -> None:
        super().__init__()
        self.race: Callable[[], None] | None = None
        self.refused = 0

    def _race(self, expected_rv: int | None) -> None:
        if self.race is not None and expected_rv is not None:
            race, self.race = self.race, None
            race()
            self.refused += 1

    def update(self, skey: StorageKey, key: Key, obj: dict, expected_rv: int | None = None) -> Record:
        self._race(expected_rv)
        return super().update(skey, key, obj, expected_rv)

    def delete(self, skey: StorageKey, key: Key, expected_rv: int | None = None) -> Record:
        # etcd's delete compares the revision the registry read, precondition or not
        read = self.get(skey, key)
        expected = expected_rv if expected_rv is not None else (read.rv if read is not None else None)
        self._race(expected)
        if expected is not None and self.get(skey, key) is None:
            raise StoreError("NotFound")
        return super().delete(skey, key, expected)


@pytest.fixture
def api():  # noqa: ANN201
    store = RacingStorage()
    api = build_api(store=store)
    rd = api.registry.get("", "v1", "configmaps")
    api.create(
        rd,
        "default",
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "0"}},
    )
    return api, store, rd


def _other_server_writes(store: RacingStorage, data: dict) -> Callable[[], None]:
    def write() -> None:
        cur = store.get(CM, ("default", "a")).copy()
        cur["data"] = {**cur.get("data", {}), **data}
        MemoryStorage.update(store, CM, ("default", "a"), cur, None)

    return write


def test_an_unconditional_patch_is_rerun_on_the_newest_object(api) -> None:  # noqa: ANN001
    api, store, rd = api
    store.race = _other_server_writes(store, {"other": "1"})
    res = api.patch(rd, "default", "a", {"data": {"mine": "1"}}, MERGE_PATCH, WriteOptions(field_manager="t"))
    assert store.refused == 1
    assert res.obj["data"] == {"k": "0", "other": "1", "mine": "1"}


def test_an_unconditional_update_lands_on_the_newest_revision(api) -> None:  # noqa: ANN001
    api, store, rd = api
    store.race = _other_server_writes(store, {"other": "1"})
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"mine": "1"}}
    res = api.update(rd, "default", "a", body, WriteOptions(field_manager="t"))
    assert store.refused == 1 and res.obj["data"] == {"mine": "1"}


def test_an_update_with_the_read_revision_is_a_conflict_after_a_concurrent_write(api) -> None:  # noqa: ANN001
    api, store, rd = api
    current = store.get(CM, ("default", "a")).copy()
    store.race = _other_server_writes(store, {"other": "1"})
    with pytest.raises(errors.StatusError) as e:
        api.update(rd, "default", "a", {**current, "data": {"mine": "1"}}, WriteOptions(field_manager="t"))
    assert e.value.code == 409 and e.value.reason == "Conflict"
    assert store.get(CM, ("default", "a")).obj["data"] == {"k": "0", "other": "1"}


def test_a_delete_without_preconditions_survives_a_concurrent_write(api) -> None:  # noqa: ANN001
    api, store, rd = api
    store.race = _other_server_writes(store, {"other": "1"})
    api.delete(rd, "default", "a")
    assert store.refused == 1 and store.get(CM, ("default", "a")) is None


def test_a_delete_racing_another_servers_delete_is_not_found(api) -> None:  # noqa: ANN001
    api, store, rd = api

    def other_deletes() -> None:
        MemoryStorage.delete(store, CM, ("default", "a"), None)

    store.race = other_deletes
    with pytest.raises(errors.StatusError) as e:
        api.delete(rd, "default", "a")
    assert e.value.code == 404
