"""An update whose metadata is the stored one this server validated skips validating it again,
and answers and stores exactly what the full validation gives (:mod:`apiserver.validation.metamemo`).

The same random sequences of writes run on two fresh API servers, one with the memo and one
without: creates with valid and invalid labels, annotations, finalizers, owner references and
generated names; status updates and merge patches of ``/status`` with the metadata left alone
or changed (labels and annotations the status strategy resets, invalid managed fields, another
generation, grace period, name, uid or resourceVersion); main-resource updates and label
patches, valid or not; bindings; deletions held by finalizers (no finalizer may be added then);
and objects whose stored metadata is invalid because it was put into the store directly, as
an object read from durable storage written by another version would be (at creation, or
replacing a validated revision). Now and then the stored revision's dict is dropped, so the
update reads a decoding of its bytes. Every answer and error (code and message with its field
paths) and every stored object must be the same; and the memo must have been used.
"""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest

from apiserver import errors
from apiserver.meta import FakeClock
from apiserver.registry import generic
from apiserver.registry.binding import bind
from apiserver.registry.generic import WriteOptions
from apiserver.server.instance import build_api
from apiserver.validation.metamemo import ValidatedMetadata

from .test_update_path_fastpaths import _attempt, _Log

MERGE = "application/merge-patch+json"

GOOD_LABELS = [{}, {"app": "a"}, {"app": "a", "tier": "db"}, {"example.com/x": "1"}]
BAD_LABELS = [{"bad key": "a"}, {"app": "x" * 64}, {"app": "-a"}]
GOOD_ANNOTATIONS = [{}, {"note": "anything at all"}]
BAD_ANNOTATIONS = [{"Bad Key": "x"}]
GOOD_FINALIZERS = [[], ["example.com/hold"], ["kubernetes"]]
BAD_FINALIZERS = [["bad"], ["example.com/hold", "example.com/hold/x/y"]]
BAD_MANAGED = [
    [{"manager": "m", "operation": "Bogus", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {}}],
    [{"manager": "m\x07", "operation": "Update", "apiVersion": "v1", "fieldsType": "X", "fieldsV1": {}}],
]


def _owner_refs(rnd: random.Random) -> list[dict[str, Any]]:
    refs = [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "s", "uid": f"u-{rnd.randint(0, 2)}"}]
    r = rnd.random()
    if r < 0.3:
        refs[0]["controller"] = True
    elif r < 0.4:
        del refs[0]["uid"]  # invalid
    elif r < 0.5:
        refs.append({**refs[0], "uid": "u-9", "controller": True})
        refs[0]["controller"] = True  # two controllers: invalid
    return refs


def _metadata(rnd: random.Random, name: str, bad: float) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name}
    md["labels"] = dict(rnd.choice(BAD_LABELS if rnd.random() < bad else GOOD_LABELS))
    if rnd.random() < 0.3:
        md["annotations"] = dict(rnd.choice(BAD_ANNOTATIONS if rnd.random() < bad else GOOD_ANNOTATIONS))
    if rnd.random() < 0.3:
        md["finalizers"] = list(rnd.choice(BAD_FINALIZERS if rnd.random() < bad else GOOD_FINALIZERS))
    if rnd.random() < 0.4:
        md["ownerReferences"] = _owner_refs(rnd)
    return md


def _pod(rnd: random.Random, name: str, bad: float) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": _metadata(rnd, name, bad),
        "spec": {"containers": [{"name": "c", "image": "img"}]},
    }


def _group(rnd: random.Random, name: str, bad: float) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": _metadata(rnd, name, bad),
        "spec": {
            "workloadRef": {"workloadName": "w", "templateName": "t"},
            "schedulingPolicy": {"gang": {"minCount": 2}},
        },
    }


def _status(rnd: random.Random, kind: str) -> dict[str, Any]:
    cond = {
        "type": rnd.choice(["Ready", "PodGroupScheduled"]),
        "status": rnd.choice(["True", "False"]),
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
    if kind == "Pod":
        return {"phase": rnd.choice(["Pending", "Running"]), "conditions": [cond]}
    return {"conditions": [{**cond, "reason": "R", "message": ""}]}


def _meta_change(rnd: random.Random, md: dict[str, Any]) -> None:
    """Leave the sent metadata alone (mostly), or change one field of it."""
    r = rnd.random()
    if r < 0.5:
        return
    choice = rnd.choice(
        [
            "labels",
            "bad-labels",
            "annotations",
            "managed",
            "no-managed",
            "generation",
            "grace",
            "name",
            "uid",
            "no-rv",
            "stale-rv",
            "finalizers",
            "creation",
        ]
    )
    if choice == "labels":
        md["labels"] = dict(rnd.choice(GOOD_LABELS))
    elif choice == "bad-labels":
        md["labels"] = dict(rnd.choice(BAD_LABELS))
    elif choice == "annotations":
        md["annotations"] = dict(rnd.choice(BAD_ANNOTATIONS + GOOD_ANNOTATIONS))
    elif choice == "managed":
        md["managedFields"] = rnd.choice(BAD_MANAGED)
    elif choice == "no-managed":
        md.pop("managedFields", None)
    elif choice == "generation":
        md["generation"] = rnd.choice([0, 5, -1])
    elif choice == "grace":
        md["deletionGracePeriodSeconds"] = 30
    elif choice == "name":
        md["name"] = "other"
    elif choice == "uid":
        md["uid"] = "not-the-uid"
    elif choice == "no-rv":
        md.pop("resourceVersion", None)
    elif choice == "stale-rv":
        md["resourceVersion"] = "1"
    elif choice == "finalizers":
        md["finalizers"] = list(rnd.choice(GOOD_FINALIZERS + BAD_FINALIZERS))
    else:
        md["creationTimestamp"] = "2020-01-01T00:00:00Z"


class _Answer:
    """A subresource handler's answer (a Status dict) as the registry's results look."""

    def __init__(self, obj: Any, code: Any = None, warnings: list[str] | None = None) -> None:
        self.code = obj.get("code") if code is None else code
        self.obj = obj
        self.warnings = warnings or []


def _deleted(res: Any) -> _Answer:
    """A deletion's answer without the uid its Status details name (each server draws its own)."""
    obj = res.obj
    if isinstance(obj, dict) and isinstance(obj.get("details"), dict):
        obj = {**obj, "details": {k: v for k, v in obj["details"].items() if k != "uid"}}
    return _Answer(obj, res.code, res.warnings)


def _put_directly(api: Any, rd: Any, name: str, obj: dict[str, Any], replace: bool) -> None:
    """Store ``obj`` without any validation, as an object read from durable storage written by
    another version would be there."""
    obj["metadata"]["namespace"] = "default"
    obj["metadata"].setdefault("uid", f"uid-{name}")
    obj["metadata"].setdefault("creationTimestamp", "2026-01-01T00:00:00Z")
    skey, k = api._skey(rd), api._key(rd, "default", name)
    if replace:
        rec = api.store.get(skey, k)
        obj["metadata"]["uid"] = rec.obj["metadata"]["uid"]
        api.store.update(skey, k, obj, rec.rv)
    else:
        api.store.create(skey, k, obj)


def _writes(api: Any, rnd: random.Random, i: int, log: _Log) -> None:
    kind = rnd.choice(["Pod", "PodGroup"])
    rd = (
        api.registry.get("", "v1", "pods")
        if kind == "Pod"
        else api.registry.get("scheduling.k8s.io", "v1beta1", "podgroups")
    )
    name = f"o{i}"
    make = _pod if kind == "Pod" else _group
    obj = make(rnd, name, 0.15)
    manager = WriteOptions(field_manager=rnd.choice(["ctl", "other"]))
    if rnd.random() < 0.1:
        _put_directly(api, rd, name, make(rnd, name, 0.9), replace=False)
    else:
        if rnd.random() < 0.15:
            # a generated name (drawn again where taken: then validated before the draw)
            obj["metadata"]["generateName"] = "gen-"
            del obj["metadata"]["name"]
            try:
                name = api.create(rd, "default", obj, manager).obj["metadata"]["name"]
            except errors.StatusError as e:
                log.append(("error", e.code, e.message))
                return
            log.append(("generated", name))
        else:
            _attempt(log, api, rd, name, lambda: api.create(rd, "default", obj, manager))
    bound = False
    for _ in range(6):
        rec = api.store.get(api._skey(rd), api._key(rd, "default", name))
        if rec is None:
            return
        if rnd.random() < 0.3:
            rec.release()  # the writer's dict dropped: the next write decodes the stored bytes
        op = rnd.choice(["status", "status", "status", "status-patch", "update", "label-patch", "other"])
        who = WriteOptions(field_manager=rnd.choice(["kubelet", "scheduler", "ctl"]))
        if op == "status":
            body = rec.copy()
            body["status"] = _status(rnd, kind)
            _meta_change(rnd, body["metadata"])
            _attempt(
                log, api, rd, name, lambda b=body, w=who: api.update(rd, "default", name, b, w, "status")
            )
        elif op == "status-patch":
            patch: dict[str, Any] = {"status": _status(rnd, kind)}
            if rnd.random() < 0.4:
                patch["metadata"] = {}
                _meta_change(rnd, patch["metadata"])
            _attempt(
                log,
                api,
                rd,
                name,
                lambda p=patch, w=who: api.patch(rd, "default", name, p, MERGE, w, "status"),
            )
        elif op == "update":
            body = rec.copy()
            _meta_change(rnd, body["metadata"])
            _attempt(log, api, rd, name, lambda b=body, w=who: api.update(rd, "default", name, b, w))
        elif op == "label-patch":
            labels = rnd.choice(GOOD_LABELS + BAD_LABELS)
            patch = {"metadata": {"labels": labels or None}}
            _attempt(log, api, rd, name, lambda p=patch, w=who: api.patch(rd, "default", name, p, MERGE, w))
        else:
            r = rnd.random()
            if kind == "Pod" and not bound and r < 0.4:
                bound = True
                b = {"apiVersion": "v1", "kind": "Binding", "target": {"name": "n1"}}
                _attempt(log, api, rd, name, lambda b=b: _Answer(bind(api, "default", name, b)))
            elif r < 0.7:
                _attempt(log, api, rd, name, lambda: _deleted(api.delete(rd, "default", name)))
            else:  # a revision from elsewhere replaces the validated one
                _put_directly(api, rd, name, make(rnd, name, 0.9), replace=True)


class _Counting(ValidatedMetadata):
    """The memo, counting the updates whose metadata validation it skipped."""

    __slots__ = ("skipped",)

    def __init__(self) -> None:
        super().__init__()
        self.skipped = 0

    def unchanged(self, md: Any, old_md: Any, rd: Any, key: Any, old_rv: int) -> bool:
        out = super().unchanged(md, old_md, rd, key, old_rv)
        self.skipped += out
        return out


def _run(seed: int, memo: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[_Log, int]:
    suffixes = random.Random(seed + 1000)
    # generated names the same on both servers, and now and then taken already
    monkeypatch.setattr(generic, "random_suffix", lambda: suffixes.choice(["aaaaa", "bbbbb", "ccccc"]))
    api = build_api(clock=FakeClock())
    uids = iter(range(10**6))
    api.new_uid = lambda: f"uid-{next(uids)}"  # the same on both servers (errors name them)
    assert isinstance(api.validated_metadata, ValidatedMetadata)
    counting = _Counting()
    api.validated_metadata = counting if memo else None
    rnd = random.Random(seed)
    log = _Log()
    for i in range(60):
        _writes(api, rnd, i, log)
    return log, counting.skipped


@pytest.mark.parametrize("seed", range(4))
def test_writes_answer_and_store_the_same_with_and_without_the_metadata_memo(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast, skipped = _run(seed, True, monkeypatch)
    general, none = _run(seed, False, monkeypatch)
    assert none == 0
    assert len(fast) == len(general)
    for a, b in zip(fast, general, strict=True):
        assert a == b
    # not vacuous: the memo answered, writes were refused, some for their metadata (422)
    assert skipped > 40
    assert any(e[0] == "error" and e[1] == 422 for e in fast)
    assert sum(1 for e in fast if e[0] == "stored") > 100


def test_a_stored_revision_with_invalid_metadata_is_validated_in_full() -> None:
    """An object put into the store without validation (read from durable storage written by
    another version) is not known to the memo: its status write is refused for its labels, as
    without the memo."""
    for memo in (True, False):
        api = build_api(clock=FakeClock())
        if not memo:
            api.validated_metadata = None
        rd = api.registry.get("", "v1", "pods")
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "labels": {"bad key": "a"}},
            "spec": {"containers": [{"name": "c", "image": "img"}]},
        }
        _put_directly(api, rd, "p", pod, replace=False)
        body = api.store.get(api._skey(rd), api._key(rd, "default", "p")).copy()
        body["status"] = {"phase": "Running"}
        with pytest.raises(errors.StatusError) as e:
            api.update(rd, "default", "p", body, WriteOptions(field_manager="kubelet"), "status")
        assert e.value.code == 422
        assert 'metadata.labels: Invalid value: "bad key"' in e.value.message


def _norm(v: Any) -> Any:
    """``v`` as a value whose equality is JSON's with types kept apart (``1``, ``1.0`` and
    ``True`` differ; map order does not matter)."""
    if isinstance(v, dict):
        return ("map", frozenset((k, _norm(x)) for k, x in v.items()))
    if isinstance(v, list):
        return ("list", tuple(_norm(x) for x in v))
    return (type(v).__name__, v)


def _value(rnd: random.Random, depth: int = 0) -> Any:
    r = rnd.random()
    if depth < 2 and r < 0.25:
        return {rnd.choice("abc"): _value(rnd, depth + 1) for _ in range(rnd.randint(0, 3))}
    if depth < 2 and r < 0.45:
        return [_value(rnd, depth + 1) for _ in range(rnd.randint(0, 3))]
    return rnd.choice(["a", "b", "", 0, 1, 1.0, 0.0, True, False, None])


def _twin(rnd: random.Random, v: Any) -> Any:
    """An equal copy of ``v``, or one with a value swapped for one ``==`` to it (or not)."""
    if isinstance(v, dict):
        return {k: _twin(rnd, x) for k, x in v.items()}
    if isinstance(v, list):
        return [_twin(rnd, x) for x in v]
    if rnd.random() < 0.2:
        swaps = {1: [True, 1.0], 0: [False, 0.0, -0.0], "a": ["b"]}
        for k, alts in swaps.items():
            if v == k and type(v) is type(k):
                return rnd.choice(alts)
        if v is True:
            return 1
        if isinstance(v, float):
            return int(v)
    return v


def test_metadata_values_are_the_same_only_with_the_same_types() -> None:
    """The comparison behind the skip: never equal where types differ (``1``/``True``/``1.0``),
    anywhere in a map or list; equal for equal copies."""
    from apiserver.validation.metamemo import _same

    rnd = random.Random(7)
    same = differ = 0
    for _ in range(5000):
        a = _value(rnd)
        b = _twin(rnd, a)
        if _same(a, b):
            same += 1
            assert _norm(a) == _norm(b)
        else:
            differ += 1
        assert _same(a, _copy(a))
    assert same > 1000 and differ > 200


def _copy(v: Any) -> Any:
    return orjson.loads(orjson.dumps(v))
