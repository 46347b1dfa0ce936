"""The controllers kube-apiserver runs for CRDs, and the serving of the resources they define.

kube's apiextensions-apiserver runs, inside the API server, a *naming* controller (accepts the
names of a CRD unless another CRD of the group uses them: ``NamesAccepted``), an *establishing*
controller (``Established`` once the names are accepted), and a *finalizing* controller (deletes
every custom resource of a CRD being deleted, then removes the
``customresourcecleanup.apiextensions.k8s.io`` finalizer). Its handler serves a CRD's resources
as soon as it is Established.

Here one level-triggered ``sync(name)`` does the three, keyed by CRD name. It is driven by the
registry's write hook: every write of a CRD (and the deletion of a custom resource of a CRD
that is terminating) queues the CRD, and the queue is drained before the write returns. So a
CRD's kind is served, and its conditions set, by the time ``kubectl apply`` has its answer; the
conditions reach watchers as a separate MODIFIED event, as from kube's controllers. The syncs
run in the API server (like kube's) and so use the registry directly.
"""

from __future__ import annotations

import copy
import logging

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.apiextensions import CLEANUP_FINALIZER, CRD_KIND, CRD_PLURAL, GROUP, VERSION
from apiserver.apiextensions.strategy import (
    CRDStrategy,
    CustomResourceStrategy,
    ServingState,
    record_storage_version,
    set_condition,
)
from apiserver.meta import rfc3339
from apiserver.registry.generic import DeleteOptions, GenericStore, WriteOptions
from apiserver.rest.resources import ResourceDef, Subresource

log = logging.getLogger("gangplane.apiextensions")

MANAGER = "kube-apiserver"
AUTOMANAGED = "kube-aggregator.kubernetes.io/automanaged"
CRD_KEY = (GROUP, CRD_PLURAL)


def crd_resource() -> ResourceDef:
    """The ``customresourcedefinitions`` resource itself (``kubectl get crd``).

    Its Table columns (NAME, CREATED AT) come from the built-in printers of
    :mod:`apiserver.server.tables`, which the API server imports for the first Table request.
    """
    return ResourceDef(
        GROUP,
        VERSION,
        CRD_KIND,
        CRD_PLURAL,
        False,
        strategy=CRDStrategy(),
        short_names=("crd", "crds"),
        categories=("api-extensions",),
        subresources=(Subresource("status", CRD_KIND),),
    )


def _names(crd: Obj) -> Obj:
    return (crd.get("spec") or {}).get("names") or {}


def _accepted(crd: Obj) -> Obj:
    return (crd.get("status") or {}).get("acceptedNames") or {}


def _complete_status(crd: Obj) -> None:
    """Read a status the API accepted as kube's Go types read it: a missing or null ``status``,
    ``acceptedNames`` or ``conditions`` is the zero value, which the naming and establishing
    steps then rebuild (kube's controllers see the zero struct, never a missing key)."""
    status = crd.get("status")
    if not isinstance(status, dict):
        status = crd["status"] = {}
    if not isinstance(status.get("acceptedNames"), dict):
        status["acceptedNames"] = {"plural": "", "kind": ""}
    if not isinstance(status.get("conditions"), list):
        status.pop("conditions", None)
    if not status.get("storedVersions"):
        # only a store written before status writes kept them (the API now refuses their loss):
        # the storage version is where the objects are, as the CRD's create recorded it
        record_storage_version(crd)


def _condition(crd: Obj, ctype: str) -> str:
    for c in (crd.get("status") or {}).get("conditions") or ():
        if isinstance(c, dict) and c.get("type") == ctype:
            return str(c.get("status"))
    return ""


class CustomResourceServing:
    """Keeps the registry's custom resources in step with the stored CRDs (see module docstring)."""

    def __init__(self, api: GenericStore) -> None:
        self.api = api
        rd = api.registry.get(GROUP, VERSION, CRD_PLURAL)
        if rd is None:
            raise ValueError("customresourcedefinitions are not registered")
        self.crd_rd = rd
        self.served: dict[str, list[ResourceDef]] = {}
        self.states: dict[str, ServingState] = {}
        self._pending: dict[str, None] = {}
        self._busy = False
        api.write_hooks.append(self._on_write)
        for crd in api.lookup_all(GROUP, CRD_PLURAL):
            self._pending[crd["metadata"]["name"]] = None
        self._drain()

    # ------------------------------------------------------------------ triggers
    def _on_write(self, verb: str, rd: ResourceDef, obj: Obj) -> None:
        if rd.storage_key == CRD_KEY:
            self._pending[obj["metadata"]["name"]] = None
        elif verb == "delete" and isinstance(rd.strategy, CustomResourceStrategy):
            state = rd.strategy.state
            if state.terminating:
                self._pending[state.crd_name] = None  # one object fewer holds the CRD's deletion
        if self._pending and not self._busy:
            self._drain()

    def _drain(self) -> None:
        self._busy = True
        try:
            while self._pending:
                name = next(iter(self._pending))
                del self._pending[name]
                try:
                    self.sync(name)
                except errors.StatusError as e:
                    log.warning("customresourcedefinition %s: %s", name, e.message)
                except Exception:
                    # the write that queued the CRD is stored already: it must not fail because of us
                    log.exception("customresourcedefinition %s: sync failed", name)
        finally:
            self._busy = False

    def _resolve_service(self, namespace: str, name: str, port: int) -> str | None:
        """Where a conversion webhook's Service listens (as for admission webhooks)."""
        from apiserver.admission.webhook.dispatch import service_address

        mapping = getattr(self.api, "webhook_service_addresses", {})
        return service_address(self.api, namespace, name, port, mapping)

    # ------------------------------------------------------------------ sync
    def sync(self, name: str) -> None:
        crd = self.api.lookup(GROUP, CRD_PLURAL, "", name)
        if crd is None:
            self._unserve(name)
            self._requeue_group_conflicts(name)
            return
        state = self.states.setdefault(name, ServingState(name, resolve_service=self._resolve_service))
        status_before = copy.deepcopy(crd.get("status"))
        _complete_status(crd)
        now = rfc3339(self.api.clock.now())
        self._naming(crd, now)
        self._establishing(crd, now)
        if crd["metadata"].get("deletionTimestamp"):
            state.terminating = True
            self._serve(name, crd, state)
            self._finalize(crd, now)
            return
        state.terminating = False
        if crd.get("status") != status_before:
            crd = self._write_status(crd)
            if crd is None:
                return
        if _condition(crd, "Established") == "True":
            self._serve(name, crd, state)
        else:
            self._unserve(name)

    def _naming(self, crd: Obj, now: str) -> None:
        """NamesAccepted, as kube's naming controller decides it.

        Each requested name is accepted when it is already this CRD's accepted name or no other
        CRD of the group has accepted it (plural, singular and short names share one space, kind
        and listKind another); a conflicting name keeps its previously accepted value, so an
        Established CRD goes on being served under its old names. The last conflict found is the
        condition's reason.
        """
        group = (crd.get("spec") or {}).get("group")
        me = crd["metadata"]["name"]
        resources: set[str] = set()
        kinds: set[str] = set()
        for other in self.api.lookup_all(GROUP, CRD_PLURAL):
            if other["metadata"]["name"] == me or (other.get("spec") or {}).get("group") != group:
                continue
            acc = _accepted(other)
            resources.update(v for v in (acc.get("plural"), acc.get("singular")) if v)
            resources.update(acc.get("shortNames") or ())
            kinds.update(v for v in (acc.get("kind"), acc.get("listKind")) if v)
        wanted = _names(crd)
        accepted = dict(_accepted(crd))
        names = dict(accepted)
        problem: tuple[str, str] | None = None
        for key, used, reason in (
            ("plural", resources, "PluralConflict"),
            ("singular", resources, "SingularConflict"),
            ("kind", kinds, "KindConflict"),
            ("listKind", kinds, "ListKindConflict"),
        ):
            value = wanted.get(key) or ""
            if value and value != accepted.get(key) and value in used:
                problem = (reason, f'"{value}" is already in use')
            elif value:
                names[key] = value
        owned = set(accepted.get("shortNames") or ())
        clash = [s for s in wanted.get("shortNames") or () if s not in owned and s in resources]
        if clash:
            problem = ("ShortNamesConflict", f'"{clash[0]}" is already in use')
        elif wanted.get("shortNames"):
            names["shortNames"] = list(wanted["shortNames"])
        else:
            names.pop("shortNames", None)
        if wanted.get("categories"):
            names["categories"] = list(wanted["categories"])
        else:
            names.pop("categories", None)
        crd["status"]["acceptedNames"] = {"plural": "", "kind": "", **names}
        if problem is not None:
            set_condition(crd, "NamesAccepted", "False", problem[0], problem[1], now)
        else:
            set_condition(crd, "NamesAccepted", "True", "NoConflicts", "no conflicts found", now)

    def _requeue_group_conflicts(self, gone: str) -> None:
        """Names a deleted CRD held may now be free: look again at the CRDs that wanted them."""
        group = gone.split(".", 1)[1] if "." in gone else ""
        for other in self.api.lookup_all(GROUP, CRD_PLURAL):
            if (other.get("spec") or {}).get("group") == group and _condition(
                other, "NamesAccepted"
            ) == "False":
                self._pending[other["metadata"]["name"]] = None

    def _establishing(self, crd: Obj, now: str) -> None:
        if _condition(crd, "Established") == "True":
            return
        if _condition(crd, "NamesAccepted") == "True":
            set_condition(
                crd,
                "Established",
                "True",
                "InitialNamesAccepted",
                "the initial names have been accepted",
                now,
            )
        else:
            set_condition(crd, "Established", "False", "NotAccepted", "not all names are accepted", now)

    def _write_status(self, crd: Obj) -> Obj | None:
        name = crd["metadata"]["name"]
        try:
            res = self.api.update(self.crd_rd, "", name, crd, WriteOptions(field_manager=MANAGER), "status")
        except errors.StatusError as e:
            if e.code in (404, 409):
                self._pending[name] = None  # gone or changed meanwhile: look again
                return None
            raise
        return res.obj

    def _finalize(self, crd: Obj, now: str) -> None:
        """Delete every custom resource of ``crd``; once none is left, drop the cleanup finalizer."""
        name = crd["metadata"]["name"]
        defs = self.served.get(name) or []
        remaining = 0
        if defs:
            # the storage version when served: deleting through it converts nothing (a conversion
            # webhook is not needed, nor called from here)
            storage = next(
                (str(v.get("name")) for v in crd["spec"].get("versions") or () if v.get("storage")), ""
            )
            rd = next((d for d in defs if d.version == storage), defs[0])
            for obj in self.api.lookup_all(rd.group, rd.plural):
                md = obj["metadata"]
                if not md.get("deletionTimestamp"):
                    try:
                        self.api.delete(
                            rd,
                            md.get("namespace", ""),
                            md["name"],
                            DeleteOptions(propagation_policy="Background"),
                        )
                    except errors.StatusError as e:
                        if e.code != 404:
                            raise
            remaining = len(self.api.lookup_all(rd.group, rd.plural))
        fins = list(crd["metadata"].get("finalizers") or [])
        if remaining:
            set_condition(
                crd,
                "Terminating",
                "True",
                "InstanceDeletionInProgress",
                "CustomResource deletion is in progress",
                now,
            )
            self._write_status(crd)
            return
        if CLEANUP_FINALIZER not in fins:
            return
        set_condition(crd, "Terminating", "False", "InstanceDeletionCompleted", "removed all instances", now)
        written = self._write_status(crd)
        if written is None:
            return
        written["metadata"]["finalizers"] = [f for f in fins if f != CLEANUP_FINALIZER]
        try:
            self.api.update(self.crd_rd, "", name, written, WriteOptions(field_manager=MANAGER))
        except errors.StatusError as e:
            if e.code not in (404, 409):
                raise
            self._pending[name] = None

    # ------------------------------------------------------------------ serving
    def _serve(self, name: str, crd: Obj, state: ServingState) -> None:
        # imported by the first CRD to serve: the serving half (schemas, pruning, printer columns
        # and through them the Table printers) is not needed by a cluster without CRDs, and
        # every ``gangplane serve`` imports this module before it serves
        from apiserver.apiextensions.serving import resource_defs

        defs = resource_defs(crd, state)
        old = self.served.get(name) or []
        if [(d.group, d.version, d.plural, d.revision) for d in defs] == [
            (d.group, d.version, d.plural, d.revision) for d in old
        ]:
            return
        for d in old:
            self.api.registry.remove(d)
        kept = {(d.group, d.version, d.plural) for d in defs}
        gone = [d for d in old if (d.group, d.version, d.plural) not in kept]
        if gone:
            # kube ends the watches of a version that is no longer served
            for w in tuple(self.api.store.resource(gone[0].storage_key).watchers):
                if any(w.served_as is d for d in gone):
                    w.close()
        added: list[ResourceDef] = []
        for d in defs:
            if self.api.registry.get(d.group, d.version, d.plural) is not None:
                log.warning(
                    "customresourcedefinition %s: %s/%s %s is already served",
                    name,
                    d.group,
                    d.version,
                    d.plural,
                )
                continue
            self.api.registry.add(d)
            added.append(d)
        self.served[name] = added
        for group in {d.group for d in old} | {d.group for d in added}:
            self._sync_api_services(group)

    def _sync_api_services(self, group: str) -> None:
        """kube's crdRegistrationController: one local APIService per served custom group-version.

        They carry ``kube-aggregator.kubernetes.io/automanaged: "true"`` and go when no CRD serves
        their group-version any more.
        """
        rd = self.api.registry.get("apiregistration.k8s.io", "v1", "apiservices")
        if rd is None or not group:
            return
        served = {d.version for defs in self.served.values() for d in defs if d.group == group}
        existing = {
            o["spec"].get("version"): o
            for o in self.api.lookup_all(rd.group, rd.plural)
            if (o.get("spec") or {}).get("group") == group
            and ((o["metadata"].get("labels") or {}).get(AUTOMANAGED) == "true")
        }
        for version in sorted(served - set(existing)):
            name = f"{version}.{group}"
            if self.api.lookup(rd.group, rd.plural, "", name) is not None:
                continue  # registered by someone else: leave it
            body = {
                "apiVersion": "apiregistration.k8s.io/v1",
                "kind": "APIService",
                "metadata": {"name": name, "labels": {AUTOMANAGED: "true"}},
                "spec": {
                    "group": group,
                    "version": version,
                    "groupPriorityMinimum": 1000,
                    "versionPriority": 100,
                },
            }
            try:
                self.api.create(rd, "", body, WriteOptions(field_manager=MANAGER))
            except errors.StatusError as e:
                if e.code != 409:
                    raise
        for version in sorted(set(existing) - served):
            try:
                self.api.delete(rd, "", existing[version]["metadata"]["name"])
            except errors.StatusError as e:
                if e.code != 404:
                    raise

    def _unserve(self, name: str) -> None:
        defs = self.served.pop(name, [])
        for d in defs:
            self.api.registry.remove(d)
        self.states.pop(name, None)
        for group in {d.group for d in defs}:
            self._sync_api_services(group)
        if defs:
            # kube tears down the storage of a CRD that is gone: open watches end
            self.api.store.close_watchers(defs[0].storage_key)


def install(api: GenericStore) -> CustomResourceServing:
    """Serve ``customresourcedefinitions`` on ``api`` and start following them."""
    if api.registry.get(GROUP, VERSION, CRD_PLURAL) is None:
        api.registry.add(crd_resource())
    return CustomResourceServing(api)
