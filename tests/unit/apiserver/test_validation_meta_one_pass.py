"""ObjectMeta validation's one-pass answer for the usual valid metadata of a create gives what
the full validation gives, on random metadata both valid and invalid (every rule it covers
broken in turn, values of odd types, the collections it leaves to the full validation)."""

from __future__ import annotations

import random
from typing import Any

import pytest

import apiserver.validation.meta as vm
from apiserver.field import Path
from apiserver.validation.meta import validate_object_meta, validate_object_meta_full
from apiserver.validation.names import name_is_dns_label, name_is_dns_subdomain

MD = Path("metadata")
# Values of the types typed decoding lets through (strings, null where the schema has a string;
# label values of other types only from in-process callers that skip nothing else)
NAMES = ["web-0", "a", "A", "-x", "a.b", "x" * 254, "ok.example.com", "", "é"]
NAMESPACES = ["default", "kube-system", "", "Bad", "a.b", None]
LABEL_KEYS = ["app", "apps.kubernetes.io/pod-index", "-bad", "a/b/c", "/x", "x" * 64, "example.com/"]
LABEL_VALUES = ["w", "", "0", "-bad", "x" * 64, "a_b.c-d", None, 7, True]
API_VERSIONS = ["apps/v1", "v1", "", "a/b/c", "/", None]
KINDS = ["StatefulSet", "Event", "", None]
# keys are checked lower-cased; values of any size, 256 KiB in all (kube's limit)
ANNOTATION_KEYS = ["a", "Example.com/X", "-x", "a/b/c", "/x", "x" * 64, "é"]
ANNOTATION_VALUES = ["", "x" * (128 * 1024), "x" * (256 * 1024), "é" * (100 * 1024), None, 3]
# fully qualified (the one pass takes them), standard, unqualified, bad, odd types
FINALIZERS = [
    "example.com/f",
    "kubernetes",
    "x",
    "orphan",
    "foregroundDeletion",
    "a/b/c",
    "/x",
    "-a/b",
    "a/",
    "x" * 64 + "/y",
    7,
    None,
]
GENERATE_NAMES = ["web-", "Bad-", "", None, "-x-", "a.b-", "x" * 260, "web-0-", "é-"]


def _ref(rnd: random.Random) -> Any:
    if rnd.random() < 0.03:
        return rnd.choice(["x", None, ["a"]])
    ref: dict[str, Any] = {
        "apiVersion": rnd.choice(API_VERSIONS) if rnd.random() < 0.3 else "apps/v1",
        "kind": rnd.choice(KINDS) if rnd.random() < 0.3 else "StatefulSet",
        "name": rnd.choice(["w", "", None]) if rnd.random() < 0.2 else "w",
        "uid": rnd.choice(["u-1", "", None]) if rnd.random() < 0.2 else "u-1",
    }
    if rnd.random() < 0.6:
        ref["controller"] = rnd.choice([True, True, False, 1, None])
    for k in list(ref):
        if rnd.random() < 0.05:
            del ref[k]
    return ref


def _meta(rnd: random.Random, namespaced: bool) -> dict[str, Any]:
    md: dict[str, Any] = {"name": rnd.choice(NAMES) if rnd.random() < 0.3 else "web-0"}
    if rnd.random() < (0.9 if namespaced else 0.1):
        md["namespace"] = rnd.choice(NAMESPACES) if rnd.random() < 0.2 else "default"
    if rnd.random() < 0.3:  # a StatefulSet's pods carry a prefix beside their name
        md["generateName"] = rnd.choice(GENERATE_NAMES) if rnd.random() < 0.4 else "web-"
    if rnd.random() < 0.1:
        md["generation"] = rnd.choice([1, 0, -1, True, "2", 1.5, None])
    if rnd.random() < 0.7:
        labels: Any = {}
        for _ in range(rnd.randint(0, 4)):
            key = rnd.choice(LABEL_KEYS) if rnd.random() < 0.15 else f"k{rnd.randint(0, 9)}"
            labels[key] = rnd.choice(LABEL_VALUES) if rnd.random() < 0.15 else "v"
        if rnd.random() < 0.03:
            labels = rnd.choice([["a"], "x"])
        md["labels"] = labels
    if rnd.random() < 0.5:
        refs: Any = [_ref(rnd) for _ in range(rnd.choice([1, 1, 1, 2, 3]))]
        if rnd.random() < 0.03:
            refs = rnd.choice([{"a": 1}, "x", tuple(refs)])
        md["ownerReferences"] = refs
    if rnd.random() < 0.3:  # the StatefulSet controller's managed-by mark on its Workloads
        ann: Any = {}
        for _ in range(rnd.randint(0, 3)):
            key = rnd.choice(ANNOTATION_KEYS) if rnd.random() < 0.3 else "scheduling.k8s.io/managed-by"
            ann[key] = rnd.choice(ANNOTATION_VALUES) if rnd.random() < 0.2 else "statefulset-controller"
        if rnd.random() < 0.03:
            ann = rnd.choice([["a"], "x"])
        md["annotations"] = ann
    if rnd.random() < 0.25:  # a PodGroup gets its protection finalizer on create
        fins: Any = [
            rnd.choice(FINALIZERS) if rnd.random() < 0.4 else "scheduling.k8s.io/podgroup-protection"
            for _ in range(rnd.choice([1, 1, 2, 3]))
        ]
        if rnd.random() < 0.03:
            fins = rnd.choice([("a/b",), "a/b", {"a/b": 1}])
        md["finalizers"] = fins
    if rnd.random() < 0.03:
        md["managedFields"] = [{"manager": "m", "operation": rnd.choice(["Update", "Bad"])}]
    for k in ("uid", "creationTimestamp"):
        md[k] = "x"
    return md


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("namespaced", [True, False])
def test_one_pass_answer_equals_the_full_validation(seed: int, namespaced: bool) -> None:
    rnd = random.Random(seed)
    fast = fast_generated = fast_finalized = fast_annotated = 0
    for _ in range(1500):
        md = _meta(rnd, namespaced)
        name_fn = rnd.choice([name_is_dns_subdomain, name_is_dns_label])
        kube_finalizers = rnd.random() < 0.8
        full = validate_object_meta_full(md, namespaced, name_fn, MD, kube_finalizers=kube_finalizers)
        got = validate_object_meta(md, namespaced, name_fn, MD, kube_finalizers=kube_finalizers)
        assert [str(e) for e in got] == [str(e) for e in full], md
        assert got == full
        if vm._plainly_valid(md, namespaced, name_fn):
            fast += 1
            fast_generated += bool(md.get("generateName"))
            fast_finalized += bool(md.get("finalizers"))
            fast_annotated += bool(md.get("annotations"))
            assert full == []
    assert fast > 150  # the one pass answered a good share (valid ones)
    assert fast_generated > 30  # names with their prefix among them
    assert fast_finalized > 30  # and qualified finalizers
    assert fast_annotated > 30  # and annotations


def test_not_a_dict_takes_the_full_validation() -> None:
    assert [str(e) for e in validate_object_meta(["x"], True, name_is_dns_subdomain, MD)] == [  # type: ignore[arg-type]
        str(e)
        for e in validate_object_meta_full(["x"], True, name_is_dns_subdomain, MD)  # type: ignore[arg-type]
    ]


@pytest.mark.parametrize(
    "annotations",
    [
        {"a": "é" * (100 * 1024), "b": "x" * (100 * 1024)},  # under 256 Ki characters, over 256 KiB
        {"a": "x" * (256 * 1024 - 1)},  # one byte over with its key
        {"a": "x" * (256 * 1024 - 2)},  # exactly at the limit
    ],
)
def test_annotations_are_limited_in_bytes(annotations: dict[str, str]) -> None:
    md = {"name": "w", "namespace": "default", "annotations": annotations}
    full = validate_object_meta_full(md, True, name_is_dns_subdomain, MD)
    assert [str(e) for e in validate_object_meta(md, True, name_is_dns_subdomain, MD)] == [
        str(e) for e in full
    ]
    assert vm._plainly_valid(md, True, name_is_dns_subdomain) is (full == [])
