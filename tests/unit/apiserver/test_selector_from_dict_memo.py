"""``label_selector_from_dict`` parses each distinct selector once: the remembered selector is the
one a fresh parse builds (same string, same matches, same required pairs), an invalid selector
raises the same error every time, and equal renderings are what the memo keys by."""

from __future__ import annotations

import random
from typing import Any

import pytest

from apiserver import selectors
from apiserver.selectors import _label_selector_from_dict, label_selector_from_dict, selector_dict_key

#: (one invalid entry each: a few selectors raise)
KEYS = ["app", "tier", "x/y", "k", "app", "tier", "bad key"]
VALUES = ["a", "b", "", "c-1", "a", "b", "bad value!"]
OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist", "In", "NotIn", "Bogus"]


def _random_selector(rng: random.Random) -> Any:
    if rng.random() < 0.05:
        return None
    sel: dict[str, Any] = {}
    if rng.random() < 0.8:
        sel["matchLabels"] = {rng.choice(KEYS): rng.choice(VALUES) for _ in range(rng.randint(0, 3))}
    if rng.random() < 0.5:
        exprs = []
        for _ in range(rng.randint(0, 3)):
            e: dict[str, Any] = {"key": rng.choice(KEYS), "operator": rng.choice(OPERATORS)}
            if e["operator"] not in ("Exists", "DoesNotExist"):
                e["values"] = rng.sample(VALUES, rng.randint(1, 3))
            exprs.append(e)
        sel["matchExpressions"] = exprs
    return sel


def _near(rng: random.Random, sel: Any) -> Any:
    """``sel`` with one key, value or operator changed (what a loose memo key would confuse)."""
    if not sel:
        return _random_selector(rng)
    out = {k: (dict(v) if isinstance(v, dict) else [dict(e) for e in v]) for k, v in sel.items()}
    exprs = out.get("matchExpressions")
    if exprs and rng.random() < 0.6:
        e = rng.choice(exprs)
        field = rng.choice(["key", "operator", "values"])
        if field == "values":
            e["values"] = [*(e.get("values") or []), rng.choice(VALUES)]
        else:
            e[field] = rng.choice(OPERATORS if field == "operator" else KEYS)
    elif out.get("matchLabels"):
        labels = out["matchLabels"]
        k = rng.choice(list(labels))
        if rng.random() < 0.5:
            labels[k] = rng.choice(VALUES)
        else:
            labels[rng.choice(KEYS)] = labels.pop(k)
    return out


def _copy(sel: dict[str, Any]) -> dict[str, Any]:
    return {k: (dict(v) if isinstance(v, dict) else [dict(e) for e in v]) for k, v in sel.items()}


def _outcome(parse: Any, sel: Any) -> tuple[str, Any]:
    try:
        got = parse(sel)
    except ValueError as e:
        return "error", str(e)
    labels = [{k: v for k, v in zip(KEYS, vs, strict=False)} for vs in (VALUES, VALUES[::-1], VALUES[1:])]
    return "ok", (repr(got), [got.matches(lb) for lb in labels], got.required_pairs())


@pytest.mark.parametrize("seed", range(8))
def test_remembered_selector_is_the_parsed_one(seed: int) -> None:
    rng = random.Random(seed)
    selectors._parsed.cache_clear()
    pool = [_random_selector(rng) for _ in range(30)]
    pool += [_near(rng, rng.choice(pool)) for _ in range(60)]
    outcomes = {"ok": 0, "error": 0}
    for _ in range(600):
        sel = rng.choice(pool)
        # a copy: equal content in new objects, as a second component's copy of the object
        copy = None if sel is None else _copy(sel)
        want = _outcome(_label_selector_from_dict, sel)
        outcomes[want[0]] += 1
        assert _outcome(label_selector_from_dict, copy) == want
    assert min(outcomes.values()) > 50  # both kinds seen


def test_equal_selectors_share_one_parse() -> None:
    selectors._parsed.cache_clear()
    a = label_selector_from_dict({"matchLabels": {"app": "gang-1"}})
    assert label_selector_from_dict({"matchLabels": {"app": "gang-1"}}) is a
    assert label_selector_from_dict({"matchLabels": {"app": "gang-2"}}) is not a
    with pytest.raises(ValueError):
        label_selector_from_dict({"matchLabels": {"bad key": "x"}})
    assert selectors._parsed.cache_info().currsize == 2  # an invalid selector is not remembered


def test_selector_dict_key_separates_what_the_parse_reads() -> None:
    base = {
        "matchLabels": {"a": "1"},
        "matchExpressions": [{"key": "k", "operator": "In", "values": ["x", "y"]}],
    }
    variants = [
        {"matchLabels": {"a": "2"}, "matchExpressions": base["matchExpressions"]},
        {"matchLabels": {"b": "1"}, "matchExpressions": base["matchExpressions"]},
        {
            "matchLabels": {"a": "1"},
            "matchExpressions": [{"key": "k", "operator": "NotIn", "values": ["x", "y"]}],
        },
        {"matchLabels": {"a": "1"}, "matchExpressions": [{"key": "k", "operator": "In", "values": ["x"]}]},
        {
            "matchLabels": {"a": "1"},
            "matchExpressions": [{"key": "j", "operator": "In", "values": ["x", "y"]}],
        },
        {"matchLabels": {"a": "1"}},
    ]
    keys = {selector_dict_key(v) for v in variants}
    assert len(keys) == len(variants) and selector_dict_key(base) not in keys
    assert selector_dict_key({"matchLabels": {"a": 1}}) is None  # not strings: parsed uncached
    assert selector_dict_key({"matchLabels": {}, "other": 1}) is None
