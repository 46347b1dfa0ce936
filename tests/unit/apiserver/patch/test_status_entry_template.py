"""A status write's managedFields from its transition's template (:mod:`apiserver.patch.statusentry`).

The template is only sound if every write it answers gets exactly what the general path gives.
These tests drive random sequences of pod status writes — stored pods made by one controller
(so their entries repeat, as a StatefulSet's pods' do), random new statuses (conditions, IPv4 and
IPv6 pod and host IPs, container statuses, times equal or not to the stored ones), some whose
writer had an entry already, some whose stored pod has another manager owning status fields,
metadata changed, a spec that is not the stored one, strings with quotes, backslashes, ``~`` or
non-ASCII text, NaN, tuples, ``true`` where ``1`` was — through one :class:`StatusWriteTemplates`
and through the general path, and compare the bytes of every answer; they also check that the
templates are used (hits) and that the registry's tracker answers as before.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import orjson
import pytest

from apiserver.api.types import Obj
from apiserver.openapi import schema
from apiserver.patch.apply import updated_managed_fields
from apiserver.patch.fieldpath import EXACT_JSON
from apiserver.patch.statusentry import StatusWriteTemplates, _key, _same_rest, _split
from apiserver.patch.updateentry import UpdatedEntryTemplates

POD = schema.for_gvk("", "v1", "Pod")
TIMES = ["2026-12-05T08:00:00Z", "2026-12-05T08:00:01Z", "2026-12-05T08:00:02Z"]
ODD = ['a"b', "back\\slash", "til~de", "n\u00e9", "", "x,y", "}", ":"]


def _ip(rnd: random.Random) -> str:
    if rnd.random() < 0.2:
        return f"fd00::{rnd.randrange(65536):x}"
    return f"10.{rnd.randrange(4)}.{rnd.randrange(256)}.{rnd.randrange(256)}"


def _stored_pod(rnd: random.Random, i: int, owner: str, others: float = 0.15, before: float = 0.1) -> Obj:
    """A pod a controller created (its entry), bound, maybe with more managers; as stored.

    ``others``: how often another manager owns a status condition, ``before``: how often the
    writer has an entry already; what those entries name is the same for every pod, and the
    stored status then sometimes holds another value there (so only the strings tell them apart).
    """
    pod: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"web-{i}",
            "namespace": "default",
            "uid": f"uid-{i}-{rnd.randrange(10**6)}",
            "resourceVersion": str(100 + i),
            "creationTimestamp": TIMES[0],
            "labels": {"app": "web", "statefulset.kubernetes.io/pod-name": f"web-{i}"},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "StatefulSet",
                    "name": "web",
                    "uid": owner,
                    "controller": True,
                }
            ],
        },
        "spec": {
            "nodeName": f"node-{rnd.randrange(3)}",
            "containers": [{"name": "c", "image": "pause"}],
        },
        "status": {"phase": "Pending", "qosClass": "BestEffort"},
    }
    entries = updated_managed_fields(None, pod, "kube-controller-manager", POD, TIMES[0], "v1")
    assert entries
    pod["metadata"]["managedFields"] = entries
    scheduled = {
        "type": "PodScheduled",
        "status": "True",
        "lastProbeTime": None,
        "lastTransitionTime": TIMES[0],
    }
    if rnd.random() < others:  # another manager owns a status field
        new = copy.deepcopy(pod)
        new["status"]["conditions"] = [scheduled]
        pod["metadata"]["managedFields"] = updated_managed_fields(
            pod, new, "kube-scheduler", POD, TIMES[0], "v1", subresource="status"
        )
        scheduled = {**scheduled, "type": rnd.choice(["PodScheduled", "Other"])}
    pod["status"]["conditions"] = [scheduled]
    if rnd.random() < before:  # the writer wrote before
        new = copy.deepcopy(pod)
        new["status"]["hostIPs"] = [{"ip": "10.9.9.9"}]
        pod["metadata"]["managedFields"] = updated_managed_fields(
            pod, new, "kubelet", POD, TIMES[0], "v1", subresource="status"
        )
        pod["status"]["hostIPs"] = [{"ip": rnd.choice(["10.9.9.9", _ip(rnd)])}]
    return orjson.loads(orjson.dumps(pod))


def _status(rnd: random.Random, old: Obj) -> Obj:
    """A kubelet-like new status for ``old`` (random parts, random strings)."""
    t = rnd.choice(TIMES)
    conds = [dict(c) for c in old["status"].get("conditions", [])]
    usual = rnd.random() < 0.7  # the kubelet's start of a template's pod: one shape, new strings
    kinds = ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady"]
    for ctype in kinds if usual else rnd.sample(kinds, rnd.randrange(5)):
        conds.append({"type": ctype, "status": "True", "lastProbeTime": None, "lastTransitionTime": t})
    if conds and rnd.random() < 0.3:
        conds[0]["lastTransitionTime"] = rnd.choice(TIMES)
    st: Obj = {"phase": "Running" if usual else rnd.choice(["Running", "Pending"]), "qosClass": "BestEffort"}
    st["conditions"] = conds
    host = _ip(rnd)
    if usual or rnd.random() < 0.8:
        st["hostIP"] = host
        st["hostIPs"] = [{"ip": host}]
    if usual or rnd.random() < 0.8:
        ips = [_ip(rnd) for _ in range(1 if usual else rnd.choice([1, 2]))]
        st["podIP"] = ips[0]
        st["podIPs"] = [{"ip": ip} for ip in ips]
    if usual or rnd.random() < 0.8:
        st["startTime"] = t
        st["containerStatuses"] = [
            {
                "name": "c" if usual else rnd.choice(["c", "d"]),
                "image": "pause",
                "ready": True,
                "restartCount": 0 if usual else rnd.choice([0, 1]),
                "state": {"running": {"startedAt": t}},
            }
        ]
    if rnd.random() < 0.05:
        st["message"] = rnd.choice(ODD)
    if rnd.random() < 0.05:
        st["conditions"].append({"type": rnd.choice(ODD) or "X", "status": "True"})
    if rnd.random() < 0.03:
        st["observedGeneration"] = float("nan")
    if rnd.random() < 0.03 and st.get("podIPs"):
        st["podIPs"] = tuple(st["podIPs"])
    if rnd.random() < 0.03:
        st["containerStatuses"] = [{"name": "c", "ready": 1}]
    return st


def _write(rnd: random.Random, old: Obj) -> Obj:
    """The object a status write of ``old`` stores (before its managed fields are recorded)."""
    md = {k: v for k, v in old["metadata"].items() if k != "managedFields" or rnd.random() < 0.3}
    if rnd.random() < 0.05:
        md = {**md, "labels": {**md["labels"], "extra": "1"}}
    new = {**old, "metadata": md, "status": _status(rnd, old)}
    if rnd.random() < 0.05:
        new["spec"] = copy.deepcopy(old["spec"])
    return new


@pytest.mark.parametrize(
    ("seed", "others", "before"), [(s, 0.15, 0.1) for s in range(12)] + [(s, 0.5, 0.5) for s in range(12, 18)]
)
def test_every_answer_equals_the_general_paths(seed: int, others: float, before: float) -> None:
    rnd = random.Random(seed)
    templates = StatusWriteTemplates()
    owners = [f"owner-{seed}-{j}" for j in range(2)]
    hits = 0
    for i in range(300):
        old = _stored_pod(rnd, i, rnd.choice(owners), others, before)
        new = _write(rnd, old)
        now = rnd.choice(TIMES[1:])
        calls: list[int] = []

        def general(old: Obj = old, new: Obj = new, now: str = now, calls: list[int] = calls) -> Any:
            calls.append(1)
            return updated_managed_fields(
                old,
                new,
                "kubelet",
                POD,
                now,
                "v1",
                subresource="status",
                fields_v1=UpdatedEntryTemplates().fields_v1,
                old_is_stored=True,
            )

        got = templates.entries(old, new, "kubelet", "v1", POD, now, general)
        want = updated_managed_fields(
            old, new, "kubelet", POD, now, "v1", subresource="status", fields_v1=None, old_is_stored=True
        )
        assert orjson.dumps(got) == orjson.dumps(want), (seed, i)
        hits += not calls
    assert hits > (20 if others < 0.5 else 5), hits  # the templates were used


def test_the_pods_of_a_template_are_answered_from_it() -> None:
    """A set's pods started one after another (one shape, new IPs and names): all but the first
    two writes of a transition are answered by its template, and equal the general path's."""
    rnd = random.Random(11)
    templates = StatusWriteTemplates()
    general_calls = 0
    for i in range(100):
        old = orjson.loads(orjson.dumps(_stored_pod(random.Random(0), i, "owner")))
        old["metadata"]["name"] = f"web-{i}"
        st = {
            **old["status"],
            "phase": "Running",
            "hostIP": _ip(rnd),
            "podIP": f"10.1.{i // 256}.{i % 256}",
            "startTime": TIMES[1],
        }
        st["podIPs"] = [{"ip": st["podIP"]}]
        st["hostIPs"] = [{"ip": st["hostIP"]}]
        new = {**old, "metadata": dict(old["metadata"]), "status": st}

        def general(old: Obj = old, new: Obj = new) -> Any:
            nonlocal general_calls
            general_calls += 1
            return updated_managed_fields(old, new, "kubelet", POD, TIMES[1], "v1", subresource="status")

        got = templates.entries(old, new, "kubelet", "v1", POD, TIMES[1], general)
        assert orjson.dumps(got) == orjson.dumps(
            updated_managed_fields(old, new, "kubelet", POD, TIMES[1], "v1", subresource="status")
        )
    assert general_calls <= 4, general_calls


def _compare_sequence(pods: list[tuple[Obj, Obj]]) -> int:
    """Each (stored, new) write through one set of templates and through the general path;
    how many the templates answered."""
    templates = StatusWriteTemplates()
    hits = 0
    for old, new in pods:
        calls: list[int] = []

        def general(old: Obj = old, new: Obj = new, calls: list[int] = calls) -> Any:
            calls.append(1)
            return updated_managed_fields(old, new, "kubelet", POD, TIMES[1], "v1", subresource="status")

        got = templates.entries(old, new, "kubelet", "v1", POD, TIMES[1], general)
        want = updated_managed_fields(old, new, "kubelet", POD, TIMES[1], "v1", subresource="status")
        assert orjson.dumps(got) == orjson.dumps(want)
        hits += not calls
    return hits


def test_a_status_field_of_another_manager_is_left_to_the_general_path() -> None:
    """The scheduler owns the PodScheduled condition; the stored pods hold it or another
    condition in its place (same shape, another string), and the write moves its time: the
    scheduler loses its field in one case only, which the strings alone decide."""
    pods = []
    for i in range(30):
        old = _stored_pod(random.Random(i), i, "owner", others=1.0, before=0.0)
        old["status"]["conditions"][0]["type"] = "PodScheduled" if i % 3 else "Other"
        cond = {**old["status"]["conditions"][0], "lastTransitionTime": TIMES[1]}
        new = {**old, "metadata": dict(old["metadata"]), "status": {**old["status"], "conditions": [cond]}}
        new["status"]["podIP"] = f"10.1.0.{i}"
        pods.append((old, new))
    _compare_sequence(pods)


def test_the_writers_own_earlier_entry_is_left_to_the_general_path() -> None:
    """The writer's entry names a host IP; the stored status holds it or another one (same
    shape, another string): the new entry keeps the named one beside the write's."""
    pods = []
    for i in range(30):
        old = _stored_pod(random.Random(i), i, "owner", others=0.0, before=1.0)
        old["status"]["hostIPs"] = [{"ip": "10.9.9.9" if i % 3 else f"10.8.0.{i}"}]
        new = {
            **old,
            "metadata": dict(old["metadata"]),
            "status": {**old["status"], "hostIPs": [{"ip": f"10.7.0.{i}"}]},
        }
        pods.append((old, new))
    _compare_sequence(pods)


def _base(i: int, scheduler: bool = False) -> Obj:
    """The i-th pod of one controller, as stored; ``scheduler``: the scheduler owns the fields
    of the PodScheduled condition."""
    pod = _stored_pod(random.Random(0), i, "owner", others=0.0, before=0.0)
    pod["metadata"]["name"] = f"web-{i}"
    if scheduler:
        new = copy.deepcopy(pod)
        new["status"]["conditions"] = [{**pod["status"]["conditions"][0], "reason": "Bound"}]
        pod["metadata"]["managedFields"] = updated_managed_fields(
            pod, new, "kube-scheduler", POD, TIMES[0], "v1", subresource="status"
        )
        pod["status"] = new["status"]
    return orjson.loads(orjson.dumps(pod))


def _with_status(old: Obj, **status: Any) -> Obj:
    return {**old, "metadata": dict(old["metadata"]), "status": {**old["status"], **status}}


def test_a_string_the_template_holds_is_checked() -> None:
    """The first writes name the condition Ready (the template is learnt from the second and
    third: the first only marks the stored entries), the next ones another condition in its
    place: the template holds "Ready" as it is, so those go to the general path."""
    pods = []
    for i in range(8):
        old = _base(i)
        cond = {"type": "Ready" if i < 3 else f"Custom{i}", "status": "True", "lastTransitionTime": TIMES[1]}
        pods.append(
            (old, _with_status(old, conditions=[*old["status"]["conditions"], cond], podIP=f"10.1.0.{i}"))
        )
    assert _compare_sequence(pods) == 0


def test_the_order_of_the_named_strings_is_checked() -> None:
    """Two pod IPs, in the order of the template's first writes, then in the other order (their
    keys are siblings, written in the IPs' order)."""
    pods = []
    for i in range(8):
        old = _base(i)
        ips = [f"10.1.{i}.1", f"10.1.{i}.2"]
        if i % 2:
            ips.reverse()
        pods.append((old, _with_status(old, podIP=ips[0], podIPs=[{"ip": ip} for ip in ips])))
    assert _compare_sequence(pods) < 8


def test_a_status_field_another_manager_owns_keeps_the_general_path() -> None:
    """The scheduler owns the PodScheduled condition's fields; the stored pods hold a condition
    named otherwise in its place, but for one, and every write moves its time: the scheduler
    loses its fields in that one write only, which only the strings tell."""
    pods = []
    for i, ctype in enumerate(["Other0", "PodScheduled", "Other2", "Other3", "PodScheduled", "Other5"]):
        old = _base(i, scheduler=True)
        old["status"]["conditions"][0]["type"] = ctype
        cond = {**old["status"]["conditions"][0], "lastTransitionTime": TIMES[1]}
        pods.append((old, _with_status(old, conditions=[cond], podIP=f"10.1.0.{i}")))
    assert _compare_sequence(pods) == 0


def test_a_template_is_not_used_for_another_schema_node() -> None:
    rnd = random.Random(7)
    templates = StatusWriteTemplates()
    other = schema.for_gvk("apps", "v1", "StatefulSet")
    for i in range(6):
        old = _stored_pod(random.Random(1), i, "o")
        new = {
            **old,
            "metadata": dict(old["metadata"]),
            "status": {**old["status"], "phase": "Running", "podIP": _ip(rnd)},
        }
        node = POD if i < 4 else other
        calls: list[int] = []

        def general(old: Obj = old, new: Obj = new, node: Any = node, calls: list[int] = calls) -> Any:
            calls.append(1)
            return updated_managed_fields(old, new, "kubelet", node, TIMES[1], "v1", subresource="status")

        templates.entries(old, new, "kubelet", "v1", node, TIMES[1], general)
        if i >= 4:
            assert calls, "another schema node took the pod's template"


class Untemplated:
    """Every status write by the general path."""

    def entries(
        self, old: Obj, new: Obj, manager: str, api_version: str, node: Any, now: str, general: Any
    ) -> Any:
        return general()


def registry_answers_as_untemplated(rd: Any, manager: str, writes: Any) -> None:
    """Status writes through the tracker, ``writes(rnd, i) -> (stored, body)`` for 200 writes:
    the same stored managedFields with the templates as with them turned off."""
    from types import SimpleNamespace

    from apiserver.patch.tracker import FieldTracker

    opts = SimpleNamespace(field_manager=manager, dry_run=False)
    on, off = FieldTracker(), FieldTracker()
    off._status = Untemplated()  # type: ignore[assignment]
    rnd = random.Random(3)
    for i in range(200):
        old, body = writes(rnd, i)
        a, b = copy.copy(body), copy.copy(body)
        a["metadata"], b["metadata"] = dict(body["metadata"]), dict(body["metadata"])
        on.on_update(rd, old, a, opts, "Update", "status", TIMES[1])
        off.on_update(rd, old, b, opts, "Update", "status", TIMES[1])
        assert orjson.dumps(a["metadata"].get("managedFields")) == orjson.dumps(
            b["metadata"].get("managedFields")
        )


def test_the_registry_answers_as_without_the_templates() -> None:
    """Status writes of a set's pods through the tracker: same stored managedFields with the
    templates as with them turned off."""
    from types import SimpleNamespace

    def writes(rnd: random.Random, i: int) -> tuple[Obj, Obj]:
        old = _stored_pod(rnd, i, "owner")
        return old, _write(rnd, old)

    rd = SimpleNamespace(group="", version="v1", kind="Pod", api_version="v1", is_view=False)
    registry_answers_as_untemplated(rd, "kubelet", writes)


def _former_split(text: bytes) -> tuple[bytes, list[bytes]]:
    """The split ``_split`` replaced: keys and values told apart one string at a time."""
    parts = text.split(b'"')
    between = parts[0::2]
    keyed = [b[:1] == b":" for b in between[1:]]
    inside = parts[1::2]
    keys = [s for s, k in zip(inside, keyed, strict=True) if k]
    values = [s for s, k in zip(inside, keyed, strict=True) if not k]
    return b'"'.join(between) + b"\x01" + b"\x00".join(keys), values


def _json_value(rnd: random.Random, depth: int = 0) -> Any:
    r = rnd.random()
    if depth < 3 and r < 0.3:
        return {
            rnd.choice(["a", "", ":", ",", "k:v", "}"]) + str(i): _json_value(rnd, depth + 1)
            for i in range(rnd.randint(0, 3))
        }
    if depth < 3 and r < 0.5:
        return [_json_value(rnd, depth + 1) for _ in range(rnd.randint(0, 3))]
    return rnd.choice(["", ":", ":x", ",", "]", "}", "a b", "10.0.0.1", 1, 2.5, True, False, None])


@pytest.mark.parametrize("seed", range(4))
def test_the_split_equals_the_former_one_string_at_a_time(seed: int) -> None:
    """Random JSON texts (strings starting with ``:``, ``,``, ``}``, empty strings and keys, bare
    strings whose text after is empty) split as the former one-at-a-time split does."""
    rnd = random.Random(seed)
    for _ in range(500):
        text = orjson.dumps(_json_value(rnd), option=EXACT_JSON)
        assert _split(text) == _former_split(text)
    for text in (b'""', b'"a"', b'":"', b'[""]', b'{"":""}', b"{}", b"1"):
        assert _split(text) == _former_split(text)


def test_a_write_of_the_stored_values_is_keyed_as_one_of_equal_copies() -> None:
    # a status write's metadata is a new map of the stored values (registry.handoff); the key
    # is found without writing the two texts, and is the one equal copies give by their texts
    rnd = random.Random(7)
    old = _stored_pod(rnd, 1, "owner")
    etext = orjson.dumps(old["metadata"]["managedFields"], option=EXACT_JSON)
    status = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    shared = {**old, "metadata": {**old["metadata"], "name": "".join(["web-", "1"])}, "status": status}
    copied = {**copy.deepcopy(old), "spec": old["spec"], "status": status}
    assert _key(etext, old, shared, "kubelet", "v1", TIMES[1]) == _key(
        etext, old, copied, "kubelet", "v1", TIMES[1]
    )
    assert _key(etext, old, shared, "kubelet", "v1", TIMES[1]) is not None
    assert _same_rest(old, shared, old["metadata"], shared["metadata"])  # found without the texts
    assert not _same_rest(old, copied, old["metadata"], copied["metadata"])  # copies: the texts decide
    for other in (
        {**old["metadata"], "generation": True},  # ``true`` where nothing was
        {**old["metadata"], "resourceVersion": 101},  # a number where the string was
        dict(reversed(list(old["metadata"].items()))),  # the same values in another order
    ):
        assert (
            _key(etext, old, {**old, "metadata": other, "status": status}, "kubelet", "v1", TIMES[1]) is None
        )
    moved = {
        "metadata": old["metadata"],
        **{k: v for k, v in old.items() if k != "metadata"},
        "status": status,
    }
    assert list(moved)[0] == "metadata" and list(old)[0] != "metadata"
    assert _key(etext, old, moved, "kubelet", "v1", TIMES[1]) is None  # metadata elsewhere: another text


def test_pods_sharing_one_stored_entries_list_are_keyed_from_one_serialization(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The creates of one template, manager and second share their ``managedFields`` list (one
    object, never modified once stored): where it names no owner (a StatefulSet's), its key
    text is made once, by identity, and every answer still equals the general path's (random
    writes, stored pods alike but for that)."""
    from apiserver.patch import statusentry

    made: list[bytes] = []
    real = statusentry.without_owner_uids

    def counted(text: bytes) -> bytes | None:
        made.append(text)
        return real(text)

    monkeypatch.setattr(statusentry, "without_owner_uids", counted)
    rnd = random.Random(5)
    shared = _stored_pod(random.Random(0), 0, "owner")["metadata"]["managedFields"]
    for entry in shared:  # entries that name no owner's uid
        entry["fieldsV1"].get("f:metadata", {}).pop("f:ownerReferences", None)
    assert real(orjson.dumps(shared, option=EXACT_JSON)) is None
    writes = []
    for i in range(120):
        old = _stored_pod(rnd, i, "owner", others=0.0, before=0.0)
        old["metadata"]["managedFields"] = shared
        writes.append((old, _write(rnd, old)))
    hits = _compare_sequence(writes)  # every answer equal to the general path's
    assert len(made) == 1  # one serialization of the shared list for all 120 writes
    assert hits > 20, hits


def test_an_old_status_split_kept_by_its_text_keys_as_a_fresh_split() -> None:
    """Two writes whose stored statuses are equal (two objects, one text) get the key a fresh
    split gives, whether the split was kept from the first or not."""
    rnd = random.Random(3)
    old = _stored_pod(rnd, 0, "owner")
    twin = orjson.loads(orjson.dumps(old))
    splits: dict[bytes, tuple[bytes, list[bytes]]] = {}
    etext = orjson.dumps(old["metadata"]["managedFields"], option=EXACT_JSON)
    for stored in (old, twin, old):
        new = _write(random.Random(9), stored)
        kept = _key(etext, stored, new, "kubelet", "v1", TIMES[1], splits)
        fresh = _key(etext, stored, new, "kubelet", "v1", TIMES[1])
        assert kept == fresh
    assert len(splits) == 1
