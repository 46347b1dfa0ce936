"""The templates' recent-item tables (:func:`apiserver.patch.bounded.keep`)."""

from __future__ import annotations

from apiserver.patch.bounded import keep


def test_a_full_table_drops_its_oldest_entry_and_keeps_the_newest() -> None:
    table: dict[str, int] = {}
    for i in range(5):
        keep(table, f"k{i}", i, 3)
    assert list(table.items()) == [("k2", 2), ("k3", 3), ("k4", 4)]


def test_a_known_key_is_updated_without_dropping_another() -> None:
    table = {"a": 1, "b": 2}
    keep(table, "a", 10, 2)
    assert table == {"a": 10, "b": 2}
