"""The default-spreading selector of a pod (kube's ``helper.DefaultSelector``), kept per set.

PodTopologySpread asks for a pod's default selector (its matching Services' selectors ANDed with
its controlling ReplicaSet's/StatefulSet's) in the run signature, PreFilter and PreScore of
every cycle; kube reads the listers each time. Deriving it lists the namespace's Services and
matches each against the pod, for every pod, although all pods of one set get the same answer.

:class:`DefaultSelectors` answers from the same listers, and keeps each answer per namespace
under what the answer can depend on:

* the pod's controller reference when it names an ``apps/v1`` ReplicaSet or StatefulSet (kind
  and name: the owner is looked up by name, as kube's lister does);
* the pod's values of the label keys that any Service of the namespace selects on (a Service
  matches or not by those values alone; labels no Service reads, such as a StatefulSet pod's
  ``apps.kubernetes.io/pod-index``, do not split a set);

and forgets a namespace's answers whenever a Service of it is added or deleted, or updated
with a different ``spec.selector`` (the only field the answer reads: status writes keep the
answers), and one owner's answers when that ReplicaSet or StatefulSet is (an owner is looked up
by kind and name, so the answers of pods with another owner do not read it: a new set's
arrival leaves the other sets' answers, and the namespace's Service keys, as they were). The
listers' event handlers run synchronously as the cache changes, so an answer is never read
past a change of what it was computed from: the answers are those of the uncached derivation
at every call.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from apiserver.api.types import Obj
from apiserver.client.informer import Informer
from scheduler.plugins.pod_topology_spread import build_default_selector

#: answers an owner (and owners a namespace) keeps before they are dropped (a Service selecting
#: on a per-pod label gives one answer per pod)
MAX_ANSWERS_PER_NAMESPACE = 4096
_OWNER_KINDS = ("ReplicaSet", "StatefulSet")


def _namespace(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "")


def _spec_selector(obj: Obj) -> Any:
    return (obj.get("spec") or {}).get("selector")


def owner_ref(meta: Obj) -> tuple[str, str] | None:
    """(kind, name) of the pod's controller when it is an apps/v1 ReplicaSet or StatefulSet.

    Only the first controller reference counts, as in kube's ``DefaultSelector``."""
    for ref in meta.get("ownerReferences") or []:
        if not ref.get("controller"):
            continue
        if ref.get("apiVersion") == "apps/v1" and ref.get("kind") in _OWNER_KINDS:
            return ref["kind"], ref.get("name", "")
        return None
    return None


class _Namespace:
    """One namespace's answers, valid for one generation of its Services."""

    __slots__ = ("answers", "generation", "service_keys")

    def __init__(self, generation: int, service_keys: tuple[str, ...]) -> None:
        self.generation = generation
        #: the label keys any Service of the namespace selects on (sorted)
        self.service_keys = service_keys
        #: per :func:`owner_ref` (None: no apps/v1 owner), per values of :attr:`service_keys`
        self.answers: dict[tuple[str, str] | None, dict[tuple[Any, ...], Any]] = {}


class DefaultSelectors:
    """``helper.DefaultSelector`` over the scheduler's Service/ReplicaSet/StatefulSet listers,
    each answer kept for the pods that share it (see the module docstring)."""

    def __init__(self, services: Informer, replicasets: Informer, statefulsets: Informer) -> None:
        self.services = services
        self.replicasets = replicasets
        self.statefulsets = statefulsets
        #: per namespace: bumped on every Service change an answer can depend on
        self._generations: dict[str, int] = {}
        self._namespaces: dict[str, _Namespace] = {}
        #: answers computed (misses), for tests and profiles
        self.derived = 0
        services.add_event_handler(self._on_add, self._on_update, self._on_delete)
        for kind, inf in (("ReplicaSet", replicasets), ("StatefulSet", statefulsets)):
            inf.add_event_handler(
                partial(self._on_owner, kind),
                partial(self._on_owner_update, kind),
                partial(self._on_owner, kind),
            )

    # -- invalidation -----------------------------------------------------------------------

    def _bump(self, namespace: str) -> None:
        self._generations[namespace] = self._generations.get(namespace, 0) + 1

    def _on_add(self, obj: Obj) -> None:
        self._bump(_namespace(obj))

    def _on_update(self, old: Obj, new: Obj) -> None:
        if _spec_selector(old) != _spec_selector(new) or _namespace(old) != _namespace(new):
            self._bump(_namespace(old))
            self._bump(_namespace(new))

    def _on_delete(self, obj: Obj) -> None:
        self._bump(_namespace(obj))

    def _on_owner(self, kind: str, obj: Obj) -> None:
        """A ReplicaSet or StatefulSet added or deleted: the answers of its pods dropped."""
        entry = self._namespaces.get(_namespace(obj))
        if entry is not None:
            entry.answers.pop((kind, str((obj.get("metadata") or {}).get("name", ""))), None)

    def _on_owner_update(self, kind: str, old: Obj, new: Obj) -> None:
        if _spec_selector(old) != _spec_selector(new) or _namespace(old) != _namespace(new):
            self._on_owner(kind, old)
            self._on_owner(kind, new)

    # -- answers ----------------------------------------------------------------------------

    def derive(self, pod: Obj) -> Any:
        """kube's ``helper.DefaultSelector`` read from the listers now (no memory)."""
        meta = pod.get("metadata") or {}
        ns = meta.get("namespace", "")
        return self._derive(pod, ns, owner_ref(meta), self.services.list(ns))

    def _derive(self, pod: Obj, ns: str, ref: tuple[str, str] | None, services: list[Obj]) -> Any:
        owner_selector = None
        if ref is not None:
            inf = self.replicasets if ref[0] == "ReplicaSet" else self.statefulsets
            owner = inf.get_by_name(ns, ref[1])
            if owner is not None:
                owner_selector = _spec_selector(owner)
        return build_default_selector(pod, services, owner_selector)

    def __call__(self, pod: Obj) -> Any:
        """:meth:`derive`, answered from memory for a pod that shares its key with an earlier one."""
        meta = pod.get("metadata") or {}
        ns = meta.get("namespace", "")
        generation = self._generations.get(ns, 0)
        entry = self._namespaces.get(ns)
        services = None
        if entry is None or entry.generation != generation:
            keys: set[str] = set()
            services = self.services.list(ns)
            for svc in services:
                keys.update(_spec_selector(svc) or ())
            entry = self._namespaces[ns] = _Namespace(generation, tuple(sorted(keys)))
        ref = owner_ref(meta)
        service_keys = entry.service_keys
        if service_keys:
            labels = meta.get("labels") or {}
            key: tuple[Any, ...] = tuple([labels.get(k) for k in service_keys])
        else:
            key = ()
        answers = entry.answers.get(ref)
        if answers is None:
            if len(entry.answers) >= MAX_ANSWERS_PER_NAMESPACE:
                entry.answers.clear()
            answers = entry.answers[ref] = {}
        elif key in answers:
            return answers[key]
        self.derived += 1
        got = self._derive(pod, ns, ref, self.services.list(ns) if services is None else services)
        if len(answers) >= MAX_ANSWERS_PER_NAMESPACE:
            answers.clear()
        answers[key] = got
        return got
