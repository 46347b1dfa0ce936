"""bench.micro.gc_census: its census keys tell a pod's subtrees and entries apart, and the census
counts what a workload leaves behind."""

from __future__ import annotations

import gc

from bench.micro.gc_census import census, kind_of


class Holder:
    pass


def test_kinds_tell_containers_apart_by_first_keys_and_items() -> None:
    assert kind_of({"apiVersion": "v1", "kind": "Pod", "metadata": {}, "spec": {}, "status": {}}) == (
        "dict['apiVersion', 'kind', 'metadata', 'spec']"
    )
    assert kind_of([{"a": 1}]) == "list[dict]"
    assert kind_of((Holder(),)) == "tuple[Holder]"
    assert kind_of(set()) == "set[]"
    assert kind_of({"n1"}) == "set[str]"
    assert kind_of(Holder()).endswith("test_gc_census.Holder")


def test_the_census_counts_tracked_objects_left_behind() -> None:
    before = census()
    kept = [Holder() for _ in range(50)]
    after = census()
    assert after[kind_of(kept[0])] - before[kind_of(kept[0])] == 50
    assert gc.is_tracked(kept[0])
