"""A field selector bound once (``FieldSelector.matcher``, the unrolled two-step getter) decides
every object as :meth:`FieldSelector.matches` with a walk of the dotted path does."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

from apiserver.registry.filters import build_filter
from apiserver.rest.resources import ResourceDef
from apiserver.selectors import (
    EQUALS,
    NOT_EQUALS,
    FieldSelector,
    field_value_getter,
    parse_field_selector,
    parse_label_selector,
)

PATHS = ("status.phase", "spec.nodeName", "spec.enabled", "metadata.name", "a.b.c", "x")
VALUES: tuple[Any, ...] = ("", "Running", "Failed", "n1", True, False, 0, 3, None, {"k": 1}, ["l"])


def walked(path: str) -> Callable[[Mapping[str, Any]], str]:
    """The general reading of a dotted path: step by step, ``""`` below a non-object."""

    def get(obj: Mapping[str, Any]) -> str:
        cur: Any = obj
        for p in path.split("."):
            if not isinstance(cur, dict):
                return ""
            cur = cur.get(p)
        if cur is None:
            return ""
        if isinstance(cur, bool):
            return "true" if cur else "false"
        return str(cur)

    return get


def random_object(rng: random.Random) -> Any:
    if rng.random() < 0.05:
        return rng.choice([None, "text", ["list"], 7])
    obj: dict[str, Any] = {}
    for path in PATHS:
        if rng.random() < 0.3:
            continue
        cur = obj
        parts = path.split(".")
        for p in parts[:-1]:
            nxt = cur.get(p)
            if not isinstance(nxt, dict):
                if rng.random() < 0.1:  # a step that is not an object
                    cur[p] = rng.choice(VALUES)
                    break
                nxt = cur[p] = {}
            cur = nxt
        else:
            cur[parts[-1]] = rng.choice(VALUES)
    return obj


def random_selector(rng: random.Random) -> FieldSelector:
    reqs = []
    for _ in range(rng.randrange(0, 5)):
        value = rng.choice(["", "Running", "Failed", "n1", "true", "false", "0", "3"])
        reqs.append((rng.choice(PATHS), rng.choice([EQUALS, NOT_EQUALS]), value))
    if rng.random() < 0.5:
        reqs.sort()  # as parse_field_selector orders them: one field's requirements in a row
    return FieldSelector(reqs)


def test_the_unrolled_getter_reads_as_the_walk() -> None:
    rng = random.Random(11)
    getters = {p: (field_value_getter(p), walked(p)) for p in PATHS}
    for _ in range(5000):
        obj = random_object(rng)
        for fast, general in getters.values():
            assert fast(obj) == general(obj)


def test_a_bound_selector_decides_as_matches() -> None:
    rng = random.Random(5)
    getters = {p: field_value_getter(p) for p in PATHS}
    for _ in range(400):
        sel = random_selector(rng)
        bound = sel.matcher(getters)
        for _ in range(25):
            obj = random_object(rng)
            want = sel.matches(lambda f, obj=obj: walked(f)(obj))
            assert bound(obj) is want, (sel, obj)


def test_a_field_read_once_for_its_requirements_in_a_row() -> None:
    calls: list[str] = []

    def counting(path: str) -> Callable[[Any], str]:
        get = field_value_getter(path)

        def counted(obj: Any) -> str:
            calls.append(path)
            return get(obj)

        return counted

    sel = parse_field_selector("status.phase!=Succeeded,status.phase!=Failed,spec.nodeName=n1")
    bound = sel.matcher({p: counting(p) for p in ("status.phase", "spec.nodeName")})
    assert bound({"status": {"phase": "Running"}, "spec": {"nodeName": "n1"}})
    assert sorted(calls) == ["spec.nodeName", "status.phase"]
    calls.clear()
    assert not bound({"status": {"phase": "Failed"}, "spec": {"nodeName": "n1"}})
    assert calls == ["spec.nodeName", "status.phase"]  # sorted terms: spec... before status...


def test_watch_filters_of_label_and_field_selectors_decide_as_before() -> None:
    rd = ResourceDef(
        group="",
        version="v1",
        kind="Pod",
        plural="pods",
        namespaced=True,
        field_selectors={p: field_value_getter(p) for p in ("status.phase", "spec.nodeName")},
    )
    rng = random.Random(3)
    for label_selector in ("", "app=web", "app!=web,tier"):
        for field_selector in ("", "status.phase!=Succeeded,status.phase!=Failed", "spec.nodeName=n1"):
            flt = build_filter(rd, label_selector, field_selector)
            if not label_selector and not field_selector:
                assert flt is None
                continue
            assert flt is not None
            fsel = parse_field_selector(field_selector)
            lsel = parse_label_selector(label_selector) if label_selector else None
            for _ in range(300):
                obj = random_object(rng)
                if not isinstance(obj, dict):
                    continue
                labels = rng.choice([{}, {"app": "web"}, {"app": "db", "tier": "1"}, {"tier": "x"}])
                obj["metadata"] = {"name": "p", "labels": labels}
                want = lsel is None or lsel.matches(labels)
                want = want and fsel.matches(lambda f, obj=obj: walked(f)(obj))
                assert flt(obj) is want, (label_selector, field_selector, obj)
