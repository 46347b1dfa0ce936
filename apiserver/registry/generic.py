"""The generic registry: every verb of every resource, the way kube's ``genericregistry.Store`` does it.

HTTP handlers and the in-process client both call :class:`API`, so admission, defaulting,
validation, finalizers, graceful deletion and resourceVersion checks behave identically
whichever way a request arrives. All methods are synchronous and run on the event loop thread,
which makes each request atomic with respect to the store and to watch registration.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from apiserver import errors
from apiserver import field as fielderr
from apiserver.admission import CREATE, DELETE, UPDATE, Attributes, Plugin
from apiserver.admission.plan import AdmissionPlan, Steps
from apiserver.admission.webhook.run import CURRENT_RUN, WebhookCallsNeeded, stable
from apiserver.api.types import Obj
from apiserver.field import ErrorList
from apiserver.meta import Clock, UidPool, random_suffix, rfc3339
from apiserver.patch.jsonpatch_merge import json_patch, merge_patch
from apiserver.patch.limits import check_patch_result
from apiserver.patch.typecheck import check_apply_types, check_kind_types
from apiserver.registry import continuetoken
from apiserver.registry.handoff import private_patch_base
from apiserver.rest.resources import Registry, ResourceDef
from apiserver.rest.strategy import StrategyContext
from apiserver.storage.cache import Watcher
from apiserver.storage.interface import Key, Record, Storage, StoreError
from apiserver.storage.memory import MemoryStorage
from apiserver.storage.sharedsubtrees import SharedSubtrees
from apiserver.validation.metamemo import ValidatedMetadata
from featuregates import FeatureGate

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
APPLY_PATCH_CBOR = "application/apply-patch+cbor"

FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"

# Fields of metadata the server owns: a client's values are replaced on create/update.
_SERVER_META_ON_UPDATE = (
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
)


@dataclass
class WriteOptions:
    """A create/update/patch request's options (dry run, field manager, field validation, force,
    subresource)."""

    dry_run: bool = False
    field_manager: str = ""
    field_validation: str = ""
    force: bool = False
    subresource: str = ""
    #: the request body's bytes (HTTP JSON/YAML writes only) for duplicate-field detection
    raw_body: bytes | None = None
    #: who asks (``apiserver.api.users.UserInfo``); None for in-process callers
    user: Any = None
    #: the write is a PATCH (admission reports ``PatchOptions``)
    patch: bool = False


def _options(opts: WriteOptions, kind: str) -> Obj:
    """The request's ``CreateOptions``/``UpdateOptions``/``PatchOptions`` as admission reports them."""
    out: Obj = {"kind": f"{kind}Options", "apiVersion": "meta.k8s.io/v1"}
    if opts.dry_run:
        out["dryRun"] = ["All"]
    if opts.field_manager:
        out["fieldManager"] = opts.field_manager
    if opts.field_validation:
        out["fieldValidation"] = opts.field_validation
    if kind == "Patch" and opts.force:
        out["force"] = True
    return out


@dataclass
class DeleteOptions:
    """A delete request's ``DeleteOptions``: propagation, grace period, preconditions, dry run."""

    propagation_policy: str | None = None
    grace_period_seconds: int | None = None
    preconditions: dict[str, str] = field(default_factory=dict)
    dry_run: bool = False
    orphan_dependents: bool | None = None
    #: who asks (``apiserver.api.users.UserInfo``); None for in-process callers
    user: Any = None


def _patch_options(opts: WriteOptions | None) -> WriteOptions:
    """``dataclasses.replace(opts, patch=True)``: a patch's options. Made field by field for the
    class itself (``replace`` looks up the dataclass fields on every call, once per patch)."""
    if opts is None:
        return WriteOptions(patch=True)
    if type(opts) is not WriteOptions:
        return dataclasses.replace(opts, patch=True)
    return WriteOptions(
        opts.dry_run,
        opts.field_manager,
        opts.field_validation,
        opts.force,
        opts.subresource,
        opts.raw_body,
        opts.user,
        True,
    )


def _delete_options(opts: DeleteOptions) -> Obj:
    """The ``DeleteOptions`` admission reports."""
    out: Obj = {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1"}
    if opts.propagation_policy:
        out["propagationPolicy"] = opts.propagation_policy
    if opts.grace_period_seconds is not None:
        out["gracePeriodSeconds"] = opts.grace_period_seconds
    if opts.dry_run:
        out["dryRun"] = ["All"]
    if opts.preconditions:
        out["preconditions"] = dict(opts.preconditions)
    return out


@dataclass
class Result:
    """A write's outcome: the object (or Status), warnings for ``Warning`` headers, the HTTP code."""

    obj: Obj
    warnings: list[str]
    code: int = 200
    raw: bytes | None = None  # serialized object when it came straight from the store


class StoredResult(Result):
    """A :class:`Result` that is a stored revision, decoded only when its object is read.

    The HTTP server answers such a write with the record's bytes and never reads the object,
    so decoding the revision for the answer would be thrown away; an in-process caller reads
    it and gets its own decoding, as before. Only for a stored kind (a view kind's answer is a
    conversion of the object, and has no bytes to serve).
    """

    def __init__(self, rec: Record, warnings: list[str], code: int = 200) -> None:
        self._rec = rec
        self._obj: Obj | None = None
        self.warnings = warnings
        self.code = code
        self.raw = rec.raw

    @property  # type: ignore[override]
    def obj(self) -> Obj:
        if self._obj is None:
            self._obj = self._rec.copy()
        return self._obj

    @obj.setter
    def obj(self, value: Obj) -> None:
        self._obj = value

    @property
    def record(self) -> Record:
        """The stored record answered: an in-process caller that will not modify its answer
        gets its shared dict (:meth:`Record.shared`, what the informers receive) undecoded."""
        return self._rec


def _stored_result(rd: ResourceDef, store: GenericStore, rec: Record, warnings: list[str]) -> Result:
    """The answer of an update that stored (or kept) ``rec``."""
    if rd.is_view:
        return Result(store._to_view(rd, rec.copy()), warnings, 200)
    return StoredResult(rec, warnings, 200)


@dataclass
class ListResult:
    """One page of a list: the records, the list's resourceVersion and how to continue it."""

    records: list[Record]
    resource_version: int
    continue_token: str
    remaining: int | None = None


CONTINUE_EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new "
    "list without the continue parameter, or use the continue token in this response to retrieve the "
    "remainder of the results. Continuing with the provided token results in an inconsistent list - objects "
    "that were created, modified, or deleted between the time the first chunk was returned and now may show "
    "up in the list."
)


def _parse_rv(value: str, what: str = "resourceVersion") -> int:
    try:
        rv = int(value)
        if rv < 0:
            raise ValueError
        return rv
    except ValueError as e:
        raise errors.bad_request(f"invalid {what} value: {value!r}") from e


#: attempts of a write the storage refused as concurrent (kube's GuaranteedUpdate retries)
_STORAGE_ATTEMPTS = 5


class GenericStore:
    """The generic store: kube's ``genericregistry.Store`` for every resource of a :class:`Registry` at once.

    The verbs (get, list, watch, create, update, patch, delete …) over one :class:`Storage`, each
    resource's :class:`~apiserver.rest.strategy.Strategy` and the admission chain; what both front
    doors (the HTTP app and the in-process client) call.
    """

    def __init__(
        self,
        registry: Registry,
        store: Storage | None = None,
        gates: FeatureGate | None = None,
        admission: list[Plugin] | None = None,
        clock: Clock | None = None,
        meta_validator: Callable[[Obj, ResourceDef], ErrorList] | None = None,
        meta_update_validator: Callable[[Obj, Obj, ResourceDef, bool], ErrorList] | None = None,
        body_checker: Callable[[ResourceDef, Obj, Obj | None, WriteOptions, list[str]], None] | None = None,
        patchers: dict[str, Callable[..., Obj]] | None = None,
        field_tracker: Any = None,
        validated_metadata: ValidatedMetadata | None = None,
    ) -> None:
        self.registry = registry
        self.store: Storage = store or MemoryStorage()
        #: the storage's own record dicts of the resources asked about on every write (held read
        #: only, see :meth:`live_records`), and the storage they belong to
        self._live: dict[tuple[str, str], dict[Key, Record]] = {}
        self._live_store: Any = None
        self.gates = gates or FeatureGate()
        self.admission = admission if admission is not None else []
        #: which of ``admission``'s hooks act on each (resource, operation), found once
        self._admission_plan = AdmissionPlan()
        self.clock = clock or Clock()
        self.meta_validator = meta_validator
        self.meta_update_validator = meta_update_validator
        #: stored revisions whose metadata the two validators above passed, by identity: an
        #: update leaving it as it was skips them (:mod:`apiserver.validation.metamemo`)
        self.validated_metadata = (
            validated_metadata if meta_validator is not None and meta_update_validator is not None else None
        )
        self.body_checker = body_checker
        self.patchers = dict(patchers or {})
        self.field_tracker = field_tracker
        #: the lists equal across the revisions this server shares read-only, as one object each
        #: (:mod:`apiserver.storage.sharedsubtrees`)
        self.shared_subtrees = SharedSubtrees()
        share = getattr(field_tracker, "share_created_lists", None)
        if share is not None:
            # the create templates' lists are compact as made: known to the table by identity
            share(self.shared_subtrees.adopt)
        #: draws the uid of every object this server creates (a batch of random bytes at a time)
        self.new_uid = UidPool()
        #: ``token -> UserInfo | None`` of the server's front door (TokenReview); set when it serves HTTP
        self.authenticate_token: Callable[[str], Any] | None = None
        #: ``apiserver.auth.authorizer.Authorization`` (reviews, RBAC escalation checks); None: allow all
        self.authorization: Any = None
        #: ``apiserver.auth.serviceaccount.ServiceAccountTokens`` (TokenReview of bound tokens)
        self.service_account_tokens: Any = None
        self.write_hooks: list[Callable[[str, ResourceDef, Obj], None]] = []
        #: where admission and conversion webhooks behind a Service listen (``ns/name[:port]`` -> ``host:port``)
        self.webhook_service_addresses: dict[str, str] = {}
        #: the HTTPS clients admission and conversion webhooks are called with (made on first use)
        self.webhook_clients: Any = None

    # ------------------------------------------------------------------ helpers
    def _ctx(self, ns: str, dry_run: bool, user: Any = None, now: str | None = None) -> StrategyContext:
        return StrategyContext(
            gates=self.gates,
            namespace=ns,
            dry_run=dry_run,
            now=self._now() if now is None else now,
            user=user,
            authenticate_token=self.authenticate_token,
            authorization=self.authorization,
            service_account_tokens=self.service_account_tokens,
        )

    def _now(self) -> str:
        """The request's time (one value across the passes of a write that waits for webhooks)."""
        if CURRENT_RUN.get() is None:  # not waiting for webhooks: nothing to draw once
            return rfc3339(self.clock.now())
        return stable("now", lambda: rfc3339(self.clock.now()))

    def _skey(self, rd: ResourceDef) -> tuple[str, str]:
        return rd.storage_key

    def served(self, rd: ResourceDef) -> bool:
        return rd.gate is None or self.gates.enabled(rd.gate)

    def lookup(self, group: str, plural: str, namespace: str, name: str) -> Obj | None:
        rec = self.store.get((group, plural), (namespace, name))
        return rec.copy() if rec is not None else None

    def peek(self, group: str, plural: str, namespace: str, name: str) -> Obj | None:
        """:meth:`lookup` without the copy, for readers that never modify what they get (admission
        checking a namespace on every create).

        The record's shared dict (:meth:`Record.shared`), as the informers get it: an object read
        on every write (the namespace, the PriorityClasses) is decoded once per revision, where
        ``rec.obj`` decoded a record kept only as bytes again at every read.
        """
        live = self.live_records(group, plural)
        rec = (
            live.get((namespace, name))
            if live is not None
            else self.store.get((group, plural), (namespace, name))
        )
        return rec.shared(self.shared_subtrees) if rec is not None else None

    def held_shared(self, rd: ResourceDef, ns: str, name: str) -> Obj | None:
        """The object's current shared dict where the store holds one (never decodes): the
        in-process client passes a handed-off update body's sections that are this dict's own
        through uncopied (:func:`apiserver.registry.handoff.private_update_body`)."""
        rec = self.store.get(self._skey(rd), self._key(rd, ns, name))
        return rec.shared_if_held() if rec is not None else None

    def lookup_all(self, group: str, plural: str, namespace: str = "") -> list[Obj]:
        recs, _, _ = self.store.list((group, plural), namespace)
        return [r.copy() for r in recs]

    def peek_all(self, group: str, plural: str, namespace: str = "") -> list[Obj]:
        """:meth:`lookup_all` without the copies (read only, as :meth:`peek`)."""
        recs, _, _ = self.store.list((group, plural), namespace)
        return [r.shared(self.shared_subtrees) for r in recs]

    def stored_count(self, group: str, plural: str) -> int:
        """How many objects of ``(group, plural)`` are stored (cheap: admission asks on every write,
        several times: the policy plugins and the webhook front door each count two resources)."""
        if self.store is self._live_store:
            held = self._live.get((group, plural))
            if held is not None:
                return len(held)
        live = self.live_records(group, plural)
        return len(live) if live is not None else self.store.count((group, plural))

    def live_records(self, group: str, plural: str) -> Mapping[Key, Record] | None:
        """The current records of ``(group, plural)`` by key, read only (never modified, never
        kept past the call by the caller except as a memo key), or None where the storage has no
        such dict to give.

        Every backend is a :class:`~apiserver.storage.cache.WatchCache`, whose dict of a resource
        is one object for its whole life, changed in place: held here, a count or a lookup on
        every write is one dict operation instead of three calls into the storage; and a reader
        deriving something from a whole resource (Priority's global default) can tell by the
        records' identities (a record is immutable) that nothing changed since it last looked.
        """
        store = self.store
        if store is not self._live_store:  # first ask (or a storage swapped in since)
            self._live.clear()
            self._live_store = store
        got = self._live.get((group, plural))
        if got is None:
            items_of = getattr(store, "live_items", None)
            if items_of is None:
                return None
            got = self._live[(group, plural)] = items_of((group, plural))
        return got

    def _key(self, rd: ResourceDef, ns: str, name: str) -> tuple[str, str]:
        return (ns if rd.namespaced else "", name)

    def _get_record(self, rd: ResourceDef, ns: str, name: str) -> Record:
        rec = self.store.get(self._skey(rd), self._key(rd, ns, name))
        if rec is None:
            raise errors.not_found(rd.plural, name, rd.group)
        return rec

    def _to_view(self, rd: ResourceDef, obj: Obj) -> Obj:
        """Present a stored object as ``rd``'s kind (shared storage such as events.k8s.io)."""
        if not rd.is_view:
            return obj
        from apiserver.registry.views import view_as

        return view_as(rd, obj)

    def _from_view(self, rd: ResourceDef, obj: Obj) -> Obj:
        if not rd.is_view:
            return obj
        from apiserver.registry.views import store_as

        return store_as(rd, obj)

    def _check_type(self, rd: ResourceDef, body: Any) -> Obj:
        if not isinstance(body, dict):
            raise errors.bad_request(f"the body of the request must be a JSON object of kind {rd.kind}")
        # Like kube's decoder, a body without apiVersion/kind takes them from the endpoint.
        kind = body.setdefault("kind", rd.kind) or rd.kind
        api_version = body.setdefault("apiVersion", rd.api_version) or rd.api_version
        body["kind"], body["apiVersion"] = kind, api_version
        if kind != rd.kind:
            raise errors.bad_request(
                f"the kind in the data ({kind}) does not match the expected kind ({rd.kind}) for {rd.plural}"
            )
        if api_version != rd.api_version:
            raise errors.bad_request(
                f"the API version in the data ({api_version}) does not match the expected API version ({rd.api_version})"
            )
        md = body.get("metadata")
        if md is None:
            body["metadata"] = {}
        elif not isinstance(md, dict):
            raise errors.bad_request("metadata must be an object")
        return body

    def _validation_error(self, rd: ResourceDef, name: str, errs: ErrorList) -> errors.StatusError:
        return errors.invalid(rd.kind, name, rd.group, errs)

    def _admit(self, attrs: Attributes, steps: Steps | None = None) -> None:
        """Mutating admission, in the plugins' order (built-in plugins, then MutatingAdmissionPolicy and
        mutating webhooks): before the strategy validates the object, as kube runs it. Only the
        hooks that can act on the resource and operation are called (:mod:`apiserver.admission.plan`).
        ``steps``: the plan the request already looked up (a create asks once for both phases)."""
        if steps is None:
            steps = self._admission_plan.steps(self.admission, attrs.operation, attrs.rd)
        for admit in steps.admit:
            admit(attrs, self)
        if attrs.reinvocations:
            # kube's reinvocation: IfNeeded policies and webhooks run once more where the object
            # changed after them
            for reinvoke in steps.reinvoke:
                reinvoke(attrs, self)

    def _validate_admission(self, attrs: Attributes, steps: Steps | None = None) -> None:
        """Validating admission (built-in plugins, then ValidatingAdmissionPolicy and validating
        webhooks): after the object passed the strategy's validation, as kube's ``createValidation``."""
        if steps is None:
            steps = self._admission_plan.steps(self.admission, attrs.operation, attrs.rd)
        for validate in steps.validate:
            validate(attrs, self)

    def _run_admission(self, attrs: Attributes) -> None:
        self._admit(attrs)
        self._validate_admission(attrs)

    def to_view(self, rd: ResourceDef, obj: Obj) -> Obj:
        """A stored object as the request's resource version presents it (admission's request objects)."""
        return self._to_view(rd, obj)

    def from_view(self, rd: ResourceDef, obj: Obj) -> Obj:
        return self._from_view(rd, obj)

    def _prewarm_view(self, rd: ResourceDef, obj: Obj) -> None:
        """Before a write is stored: ask now for the webhook conversion its answer will need, so it
        is not needed after the write (a conversion's key ignores ``resourceVersion``)."""
        if getattr(rd.converter, "calls_webhook", False):
            self._to_view(rd, copy.deepcopy(obj))

    def view_records(self, rd: ResourceDef, recs: list[Record]) -> list[Record]:
        """:meth:`_view_records` for the front doors' watch streams."""
        return self._view_records(rd, recs)

    def _view_records(self, rd: ResourceDef, recs: list[Record]) -> list[Record]:
        """Records presented as ``rd``; the webhook conversions missing for any of them are asked for
        together (one pass of the webhook driver calls them concurrently)."""
        prepare = getattr(rd.converter, "prepare_views", None)
        if prepare is not None:
            prepare([r.obj for r in recs])  # read only: it digests and copies what it sends
        out: list[Record] = []
        needed: list[Any] = []
        for r in recs:
            try:
                v = self._to_view(rd, r.copy())
            except WebhookCallsNeeded as e:
                needed.extend(e.calls)
                continue
            out.append(Record(v, orjson.dumps(v), r.rv))
        if needed:
            raise WebhookCallsNeeded(needed)
        return out

    def _notify(self, verb: str, rd: ResourceDef, obj: Obj) -> None:
        for hook in self.write_hooks:
            hook(verb, rd, obj)

    # ------------------------------------------------------------------ reads
    def get(self, rd: ResourceDef, ns: str, name: str) -> Record:
        rec = self._get_record(rd, ns, name)
        if rd.is_view:
            obj = self._to_view(rd, rec.copy())
            return Record(obj, orjson.dumps(obj), rec.rv)
        return rec

    def make_filter(
        self, rd: ResourceDef, label_selector: str, field_selector: str
    ) -> Callable[[Obj], bool] | None:
        from apiserver.registry.filters import build_filter

        return build_filter(rd, label_selector, field_selector)

    def list(
        self,
        rd: ResourceDef,
        ns: str,
        *,
        label_selector: str = "",
        field_selector: str = "",
        limit: int = 0,
        continue_: str = "",
        resource_version: str = "",
        resource_version_match: str = "",
        present: bool = True,
    ) -> ListResult:
        """``present`` False leaves the records as stored for a view kind (shared storage, custom
        resource versions): the caller presents each with :meth:`present` as it writes it, so a
        big list is converted chunk by chunk instead of all at once."""
        flt = self.make_filter(rd, label_selector, field_selector)
        start = None
        at_rv: int | None = None
        if continue_:
            at_rv, start = continuetoken.decode(continue_)  # kube decodes before it checks the rest
            if resource_version and resource_version != "0":
                raise errors.bad_request("specifying resource version is not allowed when using continue")
            if at_rv is not None and at_rv > self.store.rv:
                raise errors.timeout(f"Too large resource version: {at_rv}, current: {self.store.rv}")
        elif resource_version_match:
            if resource_version_match not in ("NotOlderThan", "Exact"):
                raise errors.bad_request(
                    f'resourceVersionMatch: Unsupported value: "{resource_version_match}": supported values: "Exact", "NotOlderThan"'
                )
            if not resource_version:
                raise errors.bad_request(
                    "resourceVersionMatch is forbidden unless resourceVersion is provided"
                )
            rv = _parse_rv(resource_version)
            if resource_version_match == "Exact":
                if rv == 0:
                    raise errors.bad_request(
                        'resourceVersionMatch "Exact" is forbidden for resourceVersion "0"'
                    )
                if rv > self.store.rv:
                    raise errors.timeout(f"Too large resource version: {rv}, current: {self.store.rv}")
                at_rv = rv
            elif rv > self.store.rv:
                raise errors.timeout(f"Too large resource version: {rv}, current: {self.store.rv}")
        elif resource_version and resource_version != "0":
            rv = _parse_rv(resource_version)
            if rv > self.store.rv:
                raise errors.timeout(f"Too large resource version: {rv}, current: {self.store.rv}")
        try:
            recs, list_rv, last = self.store.list(
                self._skey(rd), ns if rd.namespaced else "", flt, limit, start, at_rv
            )
        except StoreError as e:
            if continue_:
                raise errors.expired(CONTINUE_EXPIRED) from e
            raise errors.expired(f"too old resource version: {at_rv} ({self.store.rv})") from e
        token = continuetoken.encode(list_rv, f"{last[0]}/{last[1]}") if last is not None else ""
        if rd.is_view and present:
            recs = self._view_records(rd, recs)
        return ListResult(recs, list_rv, token)

    def present(self, rd: ResourceDef, rec: Record) -> Record:
        """A stored record as ``rd``'s kind shows it (itself when ``rd`` is no view)."""
        if not rd.is_view:
            return rec
        v = self._to_view(rd, rec.copy())
        return Record(v, orjson.dumps(v), rec.rv)

    def watch(
        self,
        rd: ResourceDef,
        ns: str,
        *,
        label_selector: str = "",
        field_selector: str = "",
        resource_version: str = "",
        resource_version_match: str = "",
        send_initial_events: bool | None = None,
        allow_bookmarks: bool = False,
    ) -> tuple[Watcher, list[tuple[str, Record]], bool]:
        """Returns (watcher, initial events, whether an initial-events-end bookmark is due)."""
        flt = self.make_filter(rd, label_selector, field_selector)
        initial = False
        since: int | None = None
        end_bookmark = False
        if send_initial_events:
            if resource_version_match != "NotOlderThan":
                raise errors.invalid(
                    "ListOptions",
                    "",
                    "meta.k8s.io",
                    [
                        fielderr.forbidden(
                            "resourceVersionMatch",
                            "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                        )
                    ],
                )
            if not allow_bookmarks:
                raise errors.invalid(
                    "ListOptions",
                    "",
                    "meta.k8s.io",
                    [
                        fielderr.forbidden(
                            "allowWatchBookmarks",
                            "sendInitialEvents requires setting allowWatchBookmarks to true",
                        )
                    ],
                )
            if resource_version and resource_version != "0":
                rv = _parse_rv(resource_version)
                if rv > self.store.rv:
                    raise errors.timeout(f"Too large resource version: {rv}, current: {self.store.rv}")
            initial = True
            end_bookmark = True
        elif send_initial_events is False and resource_version_match:
            raise errors.bad_request(
                "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"
            )
        elif resource_version in ("", "0"):
            initial = True
        else:
            since = _parse_rv(resource_version)
            if since > self.store.rv:
                raise errors.timeout(f"Too large resource version: {since}, current: {self.store.rv}")
        try:
            w, events = self.store.watch(self._skey(rd), ns if rd.namespaced else "", flt, since, initial)
        except StoreError as e:
            raise errors.expired(f"too old resource version: {since} ({self.store.rv})") from e
        w.served_as = rd
        return w, events, end_bookmark

    # ------------------------------------------------------------------ retries
    def _guaranteed(self, rd: ResourceDef, name: str, attempt: Callable[[], Result]) -> Result:
        """kube's ``GuaranteedUpdate`` loop: a write the storage refused because the object changed
        between this request's read and its write (another API server on the same etcd) is run again
        on the newest object, so preconditions are checked afresh and an unconditional write lands.
        A backend with one writer never refuses one: the read and the write are one atomic step."""
        for _ in range(_STORAGE_ATTEMPTS - 1):
            try:
                return attempt()
            except StoreError:
                pass
            except errors.StatusError as e:
                if e.code != 409 or not isinstance(e.__cause__, StoreError):
                    raise
            self.store.fresh()
        try:
            return attempt()
        except StoreError as e:
            if e.reason == "NotFound":
                raise errors.not_found(rd.plural, name, rd.group) from e
            raise errors.conflict(rd.plural, name, rd.group, errors.STALE_RV) from e

    # ------------------------------------------------------------------ create
    def create(self, rd: ResourceDef, ns: str, body: Any, opts: WriteOptions | None = None) -> Result:
        opts = opts or WriteOptions()
        obj = self._check_type(rd, body)
        md = obj["metadata"]
        if rd.namespaced:
            body_ns = md.get("namespace") or ""
            if body_ns and ns and body_ns != ns:
                raise errors.bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            ns = ns or body_ns
            if not ns:
                raise errors.bad_request("the namespace of the object must be set")
            md["namespace"] = ns
        else:
            md.pop("namespace", None)
            ns = ""
        warnings: list[str] = []
        if self.body_checker is not None:
            # Field validation sees the body in its request version; storage shape comes after.
            self.body_checker(rd, obj, None, opts, warnings)
        obj = self._from_view(rd, obj)
        md = obj["metadata"]
        # the request's one time: the strategy's and the object's creationTimestamp. Outside a
        # write waiting for webhooks (``stable``'s run) each value is simply drawn: asked once here
        in_run = CURRENT_RUN.get() is not None
        now = self._now() if in_run else rfc3339(self.clock.now())
        ctx = self._ctx(ns, opts.dry_run, opts.user, now)
        strategy = rd.strategy
        if strategy.answers_create:
            return self._answer(rd, ctx, obj, warnings)
        generate = not md.get("name") and bool(md.get("generateName"))
        if generate:
            md["name"] = md["generateName"] + stable("generateName", random_suffix)
        name = md.get("name", "")
        # server-owned metadata
        md["uid"] = stable("uid", self.new_uid) if in_run else self.new_uid()
        md["creationTimestamp"] = now
        if not strategy.tracks_generation or rd.storage_of is not None:
            md.pop("generation", None)
        else:
            md["generation"] = 1
        for k in ("deletionTimestamp", "deletionGracePeriodSeconds", "resourceVersion", "selfLink"):
            md.pop(k, None)
        strategy.default(obj)
        strategy.prepare_for_create(ctx, obj)
        attrs = Attributes(
            CREATE,
            rd,
            ns,
            name,
            obj,
            None,
            "",
            opts.dry_run,
            self.gates,
            warnings,
            opts.user,
            _options(opts, "Create"),
        )
        # one request, one chain: the plan is looked up once for both phases
        steps = self._admission_plan.steps(self.admission, CREATE, rd)
        self._admit(attrs, steps)
        _drop_empty_meta(md)
        errs: ErrorList = []
        if self.meta_validator is not None:
            errs.extend(self.meta_validator(obj, rd))
        errs.extend(strategy.validate(ctx, obj))
        if errs:
            raise self._validation_error(rd, name or md.get("generateName", ""), errs)
        self._validate_admission(attrs, steps)
        warnings.extend(strategy.warnings_on_create(ctx, obj))
        warnings.extend(ctx.warnings)
        if self.field_tracker is not None:
            self.field_tracker.on_create(rd, obj, opts, md["creationTimestamp"])
        if opts.dry_run:
            if self.store.get(self._skey(rd), self._key(rd, ns, name)) is not None:
                raise errors.already_exists(rd.plural, name, rd.group)
            return Result(self._to_view(rd, obj), warnings, 201)
        renamed = False  # a generated name drawn again after validation
        for attempt in range(8):
            try:
                self._prewarm_view(rd, obj)
                key = self._key(rd, ns, name)
                rec = self.store.create(self._skey(rd), key, obj)
                break
            except StoreError as e:
                if not generate or attempt == 7:
                    raise errors.already_exists(rd.plural, name, rd.group) from e
                name = md["generateName"] + random_suffix()
                md["name"] = name
                renamed = True
        if self.validated_metadata is not None and not renamed:
            # the store's own key and revision: the memo holds nothing more per object
            self.validated_metadata.note(rd, key, rec.rv)
        self._notify("create", rd, rec.obj)
        if rd.is_view:
            return Result(self._to_view(rd, rec.copy()), warnings, 201)
        # decoded only if read: the HTTP server answers with the bytes, the Event recorder drops it
        return StoredResult(rec, warnings, 201)

    def _answer(self, rd: ResourceDef, ctx: StrategyContext, obj: Obj, warnings: list[str]) -> Result:
        """kube's review REST ``Create``: validate, fill in the decision, store nothing (201)."""
        rd.strategy.default(obj)
        errs = rd.strategy.validate(ctx, obj)
        if errs:
            raise self._validation_error(rd, "", errs)
        obj["status"] = rd.strategy.answer(ctx, obj)
        return Result(obj, warnings, 201)

    # ------------------------------------------------------------------ update
    def update(
        self,
        rd: ResourceDef,
        ns: str,
        name: str,
        body: Any,
        opts: WriteOptions | None = None,
        subresource: str = "",
    ) -> Result:
        md = body.get("metadata") if isinstance(body, dict) else None
        sent = dict(md) if isinstance(md, dict) else None

        def attempt() -> Result:
            if sent is not None:
                # an earlier attempt may have filled in the revision it read: start from what was sent
                md.clear()
                md.update(sent)
            return self._update_once(rd, ns, name, body, opts, subresource)

        return self._guaranteed(rd, name, attempt)

    def _update_once(
        self,
        rd: ResourceDef,
        ns: str,
        name: str,
        body: Any,
        opts: WriteOptions | None = None,
        subresource: str = "",
    ) -> Result:
        opts = opts or WriteOptions()
        obj = self._check_type(rd, body)
        md = obj["metadata"]
        if md.get("name") and md["name"] != name:
            raise errors.bad_request(
                f"the name of the object ({md['name']}) does not match the name on the URL ({name})"
            )
        if rd.namespaced and md.get("namespace") and md["namespace"] != ns:
            raise errors.bad_request(
                "the namespace of the provided object does not match the namespace sent on the request"
            )
        rec = self._get_record(rd, ns, name)
        old = rec.obj
        warnings: list[str] = []
        if self.body_checker is not None:
            # kube decodes (and type-checks) the body before storage compares resourceVersions
            self.body_checker(
                rd, obj, self._to_view(rd, rec.copy()) if rd.storage_of else old, opts, warnings
            )
        body_rv = md.get("resourceVersion") or ""
        if not body_rv:
            # kube's Store.Update: without a resourceVersion the update is unconditional where the
            # strategy allows it (it then applies to the latest object), else Invalid with the
            # resource standing in for the kind.
            if not rd.strategy.allow_unconditional_update:
                raise errors.invalid(
                    rd.plural,
                    name,
                    rd.group,
                    [fielderr.invalid("metadata.resourceVersion", 0, "must be specified for an update")],
                )
            md["resourceVersion"] = str(rec.rv)
        elif _parse_rv(body_rv, "metadata.resourceVersion") != rec.rv:
            raise errors.conflict(rd.plural, name, rd.group, errors.STALE_RV)
        return self._update_from(
            rd, ns, name, rec, self._from_view(rd, obj), opts, subresource, warnings, old=old
        )

    def _update_from(
        self,
        rd: ResourceDef,
        ns: str,
        name: str,
        rec: Record,
        obj: Obj,
        opts: WriteOptions,
        subresource: str,
        warnings: list[str],
        manager_op: str = "Update",
        scale_attrs: Attributes | None = None,
        old: Obj | None = None,
    ) -> Result:
        """Update ``rec`` to ``obj``. ``scale_attrs``: a write through ``/scale`` whose mutating admission
        already ran on its Scale; validating admission then sees the Scale of the updated object.
        ``old``: ``rec.obj`` where the caller has it already (a record kept only as bytes decodes
        on every access)."""
        if old is None:
            old = rec.obj
        md = obj.setdefault("metadata", {})
        old_md = old.get("metadata") or {}
        if md.get("uid") and md["uid"] != old_md.get("uid"):
            # A uid in the body is a precondition (kube's update/patch "UID in precondition" check).
            raise errors.conflict(
                rd.plural,
                name,
                rd.group,
                f"Precondition failed: UID in precondition: {md['uid']}, UID in object meta: {old_md.get('uid')}",
            )
        md["name"] = name
        if rd.namespaced:
            md["namespace"] = ns
        else:
            md.pop("namespace", None)
        for k in _SERVER_META_ON_UPDATE:
            if k in old_md:
                md[k] = old_md[k]
            else:
                md.pop(k, None)
        md.pop("selfLink", None)
        ctx = self._ctx(ns, opts.dry_run, opts.user)
        strategy = rd.strategy
        sub_strategy = strategy.subresource_strategy(subresource) if subresource else None
        # one request, one chain: the plan is looked up once for the reset and both phases
        steps = self._admission_plan.steps(self.admission, UPDATE, rd)
        if not (
            subresource == "status" and sub_strategy is None and strategy.defaults_only_replaced_by_status
        ):
            strategy.default(obj)
        if sub_strategy is not None:
            sub_strategy.prepare_for_update(ctx, obj, old)
        elif subresource == "status":
            strategy.prepare_for_status_update(ctx, obj, old)
            # ResetObjectMetaForStatus: status writes cannot change these. The copies are private
            # for mutating admission's sake; where no mutating hook can act on the write (the
            # admission plan knows) nothing modifies them before they are stored, so a stored
            # write keeps the live, read-only values themselves (the metadata memo's check and the
            # status templates' key then find them equal by identity). A dry run's answer is the
            # caller's: copied.
            shared = not opts.dry_run and steps.admits_nothing(self)
            for k in strategy.status_reset_metadata:
                if k in old_md:
                    md[k] = old_md[k] if shared else _json_copy(old_md[k])
                else:
                    md.pop(k, None)
            if not shared:
                # a body's values may be a stored revision's own (``managedFields``, what the kind
                # does not reset: registry.handoff passes them through; on a retry, those of the
                # revision read before): private here too
                reset = strategy.status_reset_metadata
                for k, v in list(md.items()):
                    if k not in reset and type(v) in (dict, list):
                        md[k] = _json_copy(v)
        else:
            strategy.prepare_for_update(ctx, obj, old)
            if "generation" in old_md and strategy.generation_relevant(obj) != strategy.generation_relevant(
                old
            ):
                md["generation"] = int(old_md.get("generation") or 1) + 1
        attrs = Attributes(
            UPDATE,
            rd,
            ns,
            name,
            obj,
            old,
            subresource,
            opts.dry_run,
            self.gates,
            warnings,
            opts.user,
            _options(opts, "Patch" if manager_op == "Apply" or opts.patch else "Update"),
        )
        if scale_attrs is None:
            self._admit(attrs, steps)
        _drop_empty_meta(md)
        errs: ErrorList = []
        clean = False
        memo = self.validated_metadata
        if memo is not None and memo.unchanged(md, old_md, rd, self._key(rd, ns, name), rec.rv):
            pass  # the stored metadata this server validated, unchanged: nothing to find
        else:
            if self.meta_validator is not None:
                errs.extend(self.meta_validator(obj, rd))
                clean = not errs
            if self.meta_update_validator is not None:
                # kube validates the labels, annotations, owner references and managed fields in
                # both passes (``ValidateObjectMetaAccessor`` and its ``Update``); where the first
                # found nothing at all, the second would find nothing in these same values either
                errs.extend(self.meta_update_validator(obj, old, rd, not clean))
        if sub_strategy is not None:
            errs.extend(sub_strategy.validate_update(ctx, obj, old))
        elif subresource == "status":
            errs.extend(strategy.validate_status_update(ctx, obj, old))
        else:
            errs.extend(strategy.validate_update(ctx, obj, old))
        if errs:
            raise self._validation_error(rd, name, errs)
        if scale_attrs is not None:
            scale_attrs.obj = self._scale_of(rd, obj)
            self._validate_admission(scale_attrs)
        else:
            self._validate_admission(attrs, steps)
        if not subresource:
            warnings.extend(strategy.warnings_on_update(ctx, obj, old))
        warnings.extend(ctx.warnings)
        if self.field_tracker is not None:
            self.field_tracker.on_update(rd, old, obj, opts, manager_op, subresource, self._now())
        # Finalizers emptied on an object being deleted: the update completes the deletion, unless a
        # grace period is still running or the object's own content holds it (the strategy says).
        if (
            old_md.get("deletionTimestamp")
            and not md.get("finalizers")
            and not (strategy.graceful_delete and int(md.get("deletionGracePeriodSeconds") or 0) != 0)
            and not strategy.holds_deletion(obj)
        ):
            if opts.dry_run:
                return Result(self._to_view(rd, obj), warnings, 200)
            self._prewarm_view(rd, obj)
            self.store.update(self._skey(rd), self._key(rd, ns, name), obj, rec.rv)
            gone = self.store.delete(self._skey(rd), self._key(rd, ns, name))
            self._notify("delete", rd, gone.obj)
            return Result(self._to_view(rd, gone.copy()), warnings, 200)
        if _same_ignoring_rv(obj, old):
            return _stored_result(rd, self, rec, warnings)
        if opts.dry_run:
            return Result(self._to_view(rd, obj), warnings, 200)
        try:
            self._prewarm_view(rd, obj)
            key = self._key(rd, ns, name)
            new_rec = self.store.update(self._skey(rd), key, obj, rec.rv)
        except StoreError as e:
            raise errors.conflict(rd.plural, name, rd.group, errors.STALE_RV) from e
        if memo is not None:
            memo.note(rd, key, new_rec.rv)  # validated above (or as it was)
        self._notify("update", rd, new_rec.obj)
        return _stored_result(rd, self, new_rec, warnings)

    # ------------------------------------------------------------------ patch
    def patch(
        self,
        rd: ResourceDef,
        ns: str,
        name: str,
        patch: Any,
        patch_type: str,
        opts: WriteOptions | None = None,
        subresource: str = "",
    ) -> Result:
        return self._guaranteed(
            rd, name, lambda: self._patch_once(rd, ns, name, patch, patch_type, opts, subresource)
        )

    def _patch_once(
        self,
        rd: ResourceDef,
        ns: str,
        name: str,
        patch: Any,
        patch_type: str,
        opts: WriteOptions | None = None,
        subresource: str = "",
    ) -> Result:
        opts = _patch_options(opts)
        rec = self.store.get(self._skey(rd), self._key(rd, ns, name))
        if patch_type in (APPLY_PATCH, APPLY_PATCH_CBOR):
            return self._apply(rd, ns, name, rec, patch, opts, subresource)
        if rec is None:
            raise errors.not_found(rd.plural, name, rd.group)
        live = rec.obj
        # a /status merge patch's object shares the live sections the write keeps as they are
        # (registry.handoff); anything else is merged into a private decoding of the stored object
        current = (
            private_patch_base(rd, live, patch, subresource)
            if patch_type in (MERGE_PATCH, STRATEGIC_PATCH)
            else None
        )
        if current is None:
            current = self._to_view(rd, rec.copy())
        if patch_type == JSON_PATCH:
            patched = json_patch(current, patch)
        elif patch_type == MERGE_PATCH:
            if not isinstance(patch, dict):
                raise errors.bad_request(
                    "json: cannot unmarshal array into Go value of type map[string]interface {}"
                )
            patched = merge_patch(current, patch)
        elif patch_type == STRATEGIC_PATCH:
            if not rd.strategic_merge:
                raise errors.unsupported_media_type(
                    "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
                )
            smp = self.patchers.get(STRATEGIC_PATCH)
            if smp is None:
                raise errors.unsupported_media_type(
                    "application/json-patch+json, application/merge-patch+json"
                )
            if not isinstance(patch, dict):
                raise errors.bad_request(
                    "json: cannot unmarshal array into Go value of type map[string]interface {}"
                )
            patched = smp(rd, current, patch)  # ``current`` is a private copy the patcher may reuse
        else:
            raise errors.unsupported_media_type(
                "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json"
            )
        if not isinstance(patched, dict):
            raise errors.bad_request("the patch did not produce an object")
        check_patch_result(patched)
        patched.setdefault("apiVersion", rd.api_version)
        patched.setdefault("kind", rd.kind)
        if patched.get("kind") != rd.kind or patched.get("apiVersion") != rd.api_version:
            raise errors.bad_request("the patch may not change apiVersion or kind")
        pmd = patched.get("metadata")
        if not isinstance(pmd, dict):
            raise errors.bad_request("metadata must be an object")
        if pmd.get("name", name) != name:
            raise errors.bad_request(
                f"the name of the object ({pmd.get('name')}) does not match the name on the URL ({name})"
            )
        # A resourceVersion in the patch is a precondition; otherwise the patch applies to the current object.
        req_rv = pmd.get("resourceVersion")
        if req_rv and req_rv != str(rec.rv):
            raise errors.conflict(rd.plural, name, rd.group, errors.STALE_RV)
        warnings: list[str] = []
        if self.body_checker is not None:
            self.body_checker(
                rd, patched, self._to_view(rd, rec.copy()) if rd.storage_of else live, opts, warnings
            )
        stored = self._from_view(rd, patched)
        return self._update_from(rd, ns, name, rec, stored, opts, subresource, warnings, old=live)

    def _apply(
        self,
        rd: ResourceDef,
        ns: str,
        name: str,
        rec: Record | None,
        patch: Any,
        opts: WriteOptions,
        subresource: str,
    ) -> Result:
        applier = self.patchers.get(APPLY_PATCH)
        if applier is None:
            raise errors.unsupported_media_type("application/json-patch+json, application/merge-patch+json")
        if not isinstance(patch, dict):
            raise errors.bad_request("apply patch must be a YAML or JSON object")
        if not opts.field_manager:
            raise errors.bad_request("PATCH requests with apply content type must specify a fieldManager")
        if patch.get("metadata") is None:
            patch["metadata"] = {}
        check_apply_types(rd, patch)
        if patch["metadata"].get("name", name) != name:
            raise errors.bad_request(
                f"the name of the object ({patch['metadata'].get('name')}) does not match the name on the URL ({name})"
            )
        if rec is None:
            if subresource:
                raise errors.not_found(rd.plural, name, rd.group)
            obj = applier(rd, None, patch, opts, self._now())
            obj.setdefault("metadata", {})["name"] = name
            return self.create(
                rd,
                ns,
                obj,
                WriteOptions(opts.dry_run, "", opts.field_validation, opts.force, raw_body=opts.raw_body),
            )
        current = self._to_view(rd, rec.copy())
        req_rv = patch["metadata"].get("resourceVersion")
        if req_rv and req_rv != str(rec.rv):
            raise errors.conflict(rd.plural, name, rd.group, errors.STALE_RV)
        opts.subresource = subresource
        merged = applier(rd, current, patch, opts, self._now())
        warnings: list[str] = []
        live = rec.obj
        if self.body_checker is not None:
            self.body_checker(
                rd, merged, self._to_view(rd, rec.copy()) if rd.storage_of else live, opts, warnings
            )
        merged = self._from_view(rd, merged)
        return self._update_from(
            rd, ns, name, rec, merged, opts, subresource, warnings, manager_op="Apply", old=live
        )

    # ------------------------------------------------------------------ delete
    def delete(self, rd: ResourceDef, ns: str, name: str, opts: DeleteOptions | None = None) -> Result:
        return self._guaranteed(rd, name, lambda: self._delete_once(rd, ns, name, opts))

    def _delete_once(self, rd: ResourceDef, ns: str, name: str, opts: DeleteOptions | None) -> Result:
        opts = opts or DeleteOptions()
        rec = self._get_record(rd, ns, name)
        obj = rec.copy()
        md = obj["metadata"]
        pre = opts.preconditions or {}
        if pre.get("uid") and pre["uid"] != md.get("uid"):
            raise errors.conflict(
                rd.plural,
                name,
                rd.group,
                f"Precondition failed: UID in precondition: {pre['uid']}, UID in object meta: {md.get('uid')}",
            )
        if pre.get("resourceVersion") and pre["resourceVersion"] != md.get("resourceVersion"):
            raise errors.conflict(
                rd.plural,
                name,
                rd.group,
                f"Precondition failed: ResourceVersion in precondition: {pre['resourceVersion']}, ResourceVersion in object meta: {md.get('resourceVersion')}",
            )
        policy = opts.propagation_policy
        if policy is None and opts.orphan_dependents is not None:
            policy = "Orphan" if opts.orphan_dependents else "Background"
        if policy not in (None, "Foreground", "Background", "Orphan"):
            raise errors.invalid(
                "DeleteOptions",
                "",
                "meta.k8s.io",
                [
                    fielderr.not_supported(
                        "propagationPolicy", policy, ["Foreground", "Background", "Orphan", "nil"]
                    )
                ],
            )
        if opts.grace_period_seconds is not None and opts.grace_period_seconds < 0:
            raise errors.invalid(
                "DeleteOptions",
                "",
                "meta.k8s.io",
                [
                    fielderr.invalid(
                        "gracePeriodSeconds", opts.grace_period_seconds, "must be greater than or equal to 0"
                    )
                ],
            )
        attrs = Attributes(
            DELETE,
            rd,
            ns,
            name,
            None,
            obj,
            "",
            opts.dry_run,
            self.gates,
            [],
            opts.user,
            _delete_options(opts),
        )
        self._run_admission(attrs)
        strategy = rd.strategy
        graceful = strategy.graceful_delete
        grace = strategy.check_graceful_delete(obj, opts.grace_period_seconds) if graceful else 0
        fins = list(md.get("finalizers") or [])
        changed = False
        if policy == "Orphan" and ORPHAN not in fins:
            fins = [f for f in fins if f != FOREGROUND] + [ORPHAN]
            changed = True
        elif policy == "Foreground" and FOREGROUND not in fins:
            fins = [f for f in fins if f != ORPHAN] + [FOREGROUND]
            changed = True
        elif policy == "Background" and (ORPHAN in fins or FOREGROUND in fins):
            fins = [f for f in fins if f not in (ORPHAN, FOREGROUND)]
            changed = True
        held = strategy.holds_deletion(obj)
        now = self.clock.now()
        already = bool(md.get("deletionTimestamp"))
        if fins or grace > 0 or held:
            # Graceful or finalizer-held deletion: mark, keep, let controllers finish it.
            if already:
                old_grace = md.get("deletionGracePeriodSeconds")
                if graceful and old_grace is not None and grace < int(old_grace):
                    md["deletionGracePeriodSeconds"] = grace
                    md["deletionTimestamp"] = rfc3339(now + grace)
                    changed = True
                if not changed:
                    if graceful and grace == 0 and not fins:
                        pass  # fall through to immediate removal
                    else:
                        return Result(self._to_view(rd, obj), [], 200)
            else:
                md["deletionTimestamp"] = rfc3339(now + grace)
                md["deletionGracePeriodSeconds"] = grace
                if md.get("generation") is not None:
                    md["generation"] = int(md["generation"]) + 1
                changed = True
            if not already:
                strategy.prepare_for_delete(obj)
                # finalizers the strategy added hold the deletion too (kube's CRD cleanup finalizer)
                fins += [f for f in md.get("finalizers") or [] if f not in fins]
            if fins or grace > 0 or held:
                md["finalizers"] = fins
                if not fins:
                    md.pop("finalizers", None)
                if opts.dry_run:
                    return Result(self._to_view(rd, obj), [], 200)
                self._prewarm_view(rd, obj)
                new_rec = self.store.update(self._skey(rd), self._key(rd, ns, name), obj, rec.rv)
                self._notify("update", rd, new_rec.obj)
                return Result(
                    self._to_view(rd, new_rec.copy()), [], 200, new_rec.raw if not rd.is_view else None
                )
        if opts.dry_run:
            return Result(self._deleted_response(rd, obj), [], 200)
        self._prewarm_view(rd, obj)
        gone = self.store.delete(self._skey(rd), self._key(rd, ns, name))
        self._notify("delete", rd, gone.obj)
        return Result(self._deleted_response(rd, self._to_view(rd, gone.copy())), [], 200)

    def _deleted_response(self, rd: ResourceDef, obj: Obj) -> Obj:
        """kube's ``finalizeDelete``: the object where the store sets ``ReturnDeletedObject``,
        else a Success Status naming the resource (``details.kind`` is the plural, as kube sets)."""
        if rd.return_deleted_object:
            return obj
        md = obj.get("metadata") or {}
        # StatusDetails in kube's field order: name, group, kind (the resource), uid.
        details: Obj = {"name": md.get("name", "")}
        if rd.group:
            details["group"] = rd.group
        details.update(kind=rd.plural, uid=md.get("uid", ""))
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}

    def delete_collection(
        self,
        rd: ResourceDef,
        ns: str,
        label_selector: str,
        field_selector: str,
        opts: DeleteOptions | None = None,
    ) -> Obj:
        if rd.namespaced and not ns:
            # kube routes no delete-collection across namespaces: one call never empties them all
            raise errors.not_routed()
        res = self.list(rd, ns, label_selector=label_selector, field_selector=field_selector)
        items = []
        for r in res.records:
            md = r.obj["metadata"]
            try:
                out = self.delete(rd, md.get("namespace", ""), md["name"], opts)
            except errors.StatusError as e:
                if e.code == 404:
                    continue
                raise
            if out.obj.get("kind") != "Status":
                items.append(out.obj)
        return {
            "kind": rd.list_kind,
            "apiVersion": rd.api_version,
            "metadata": {"resourceVersion": str(self.store.rv)},
            "items": items,
        }

    # ------------------------------------------------------------------ subresources
    # ``pods/binding`` and ``namespaces/finalize`` live in their own modules (binding.py,
    # namespace_finalize.py), like kube's per-resource storage; ``scale`` is generic.
    def write_record(self, rd: ResourceDef, ns: str, name: str, obj: Obj, rv: int) -> Record:
        """Store ``obj`` over the record at ``rv`` and notify, bypassing the strategy: for
        subresource handlers that own their validation (kube's ``GuaranteedUpdate`` in a
        subresource REST). Raises ``StoreError`` on a resourceVersion mismatch."""
        rec = self.store.update(self._skey(rd), self._key(rd, ns, name), obj, rv)
        self._notify("update", rd, rec.obj)
        return rec

    def remove_record(self, rd: ResourceDef, ns: str, name: str) -> Record:
        """Remove the stored object now and notify (a deletion whose last hold was just released)."""
        gone = self.store.delete(self._skey(rd), self._key(rd, ns, name))
        self._notify("delete", rd, gone.obj)
        return gone

    def get_record(self, rd: ResourceDef, ns: str, name: str) -> Record:
        """The stored record (404 ``NotFound`` when absent), for subresource handlers."""
        return self._get_record(rd, ns, name)

    def scale_get(self, rd: ResourceDef, ns: str, name: str) -> Obj:
        rec = self._get_record(rd, ns, name)
        return self._scale_of(rd, rec.obj)

    def _scale_of(self, rd: ResourceDef, obj: Obj) -> Obj:
        md = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        custom = rd.strategy.scale_of(obj)
        if custom is None:
            custom = (
                int(spec.get("replicas", 0) or 0),
                int(status.get("replicas", 0) or 0),
                # ReplicationControllers select with a plain label map, the apps kinds with a LabelSelector.
                _set_selector(spec.get("selector"))
                if rd.group == "" and rd.plural == "replicationcontrollers"
                else _scale_selector(spec.get("selector")),
            )
        return {
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": {
                "name": md.get("name"),
                "namespace": md.get("namespace"),
                "uid": md.get("uid"),
                "resourceVersion": md.get("resourceVersion"),
                "creationTimestamp": md.get("creationTimestamp"),
            },
            "spec": {"replicas": custom[0]},
            "status": {"replicas": custom[1], "selector": custom[2]},
        }

    def scale_update(
        self, rd: ResourceDef, ns: str, name: str, scale: Any, opts: WriteOptions | None = None
    ) -> Result:
        if not isinstance(scale, dict):
            raise errors.bad_request("the body of the request must be a Scale object")
        check_kind_types("autoscaling", "v1", "Scale", scale)
        if scale.get("kind") not in (None, "Scale"):
            raise errors.bad_request(
                f"the kind in the data ({scale.get('kind')}) does not match the expected kind (Scale)"
            )
        rec = self._get_record(rd, ns, name)
        opts = opts or WriteOptions()
        # kube admits a write through /scale as the parent resource's "scale" subresource, with the
        # Scale objects themselves (the request's and the current one): mutating admission may change
        # the Scale before it is applied; validating admission sees the Scale of the updated object.
        scale = copy.deepcopy(scale)
        scale_attrs = Attributes(
            UPDATE,
            rd,
            ns,
            name,
            scale,
            self._scale_of(rd, rec.obj),
            "scale",
            opts.dry_run,
            self.gates,
            [],
            opts.user,
            _options(opts, "Patch" if opts.patch else "Update"),
            subresource_kind=True,
        )
        self._admit(scale_attrs)
        smd = scale.get("metadata") or {}
        if smd.get("resourceVersion") and smd["resourceVersion"] != str(rec.rv):
            raise errors.conflict(rd.plural, name, rd.group, errors.STALE_RV)
        scale_spec = scale.get("spec") or {}
        if not isinstance(scale_spec, dict):
            kind = (
                "array"
                if isinstance(scale_spec, list)
                else {bool: "bool", str: "string"}.get(type(scale_spec), "number")
            )
            raise errors.bad_request(
                f"json: cannot unmarshal {kind} into Go struct field Scale.spec of type v1.ScaleSpec"
            )
        # Scale.spec.replicas is ``omitempty``: Go clients scaling to 0 send ``"spec": {}``.
        replicas = scale_spec.get("replicas", 0)
        if not isinstance(replicas, int) or isinstance(replicas, bool):
            raise errors.invalid(
                "Scale",
                name,
                "autoscaling",
                [fielderr.invalid("spec.replicas", replicas, "must be an integer")],
            )
        if replicas < 0:
            raise errors.invalid(
                "Scale",
                name,
                "autoscaling",
                [fielderr.invalid("spec.replicas", replicas, "must be greater than or equal to 0")],
            )
        obj = self._to_view(rd, rec.copy())
        if not rd.strategy.set_scale_replicas(obj, replicas):
            obj.setdefault("spec", {})["replicas"] = replicas
        obj = self._from_view(rd, obj)
        res = self._update_from(
            rd, ns, name, rec, obj, opts, "", scale_attrs.warnings, scale_attrs=scale_attrs
        )
        return Result(self._scale_of(rd, res.obj), res.warnings, 200)

    def scale_patch(
        self,
        rd: ResourceDef,
        ns: str,
        name: str,
        patch: Any,
        patch_type: str,
        opts: WriteOptions | None = None,
    ) -> Result:
        current = self.scale_get(rd, ns, name)
        if patch_type == JSON_PATCH:
            patched = json_patch(current, patch)
        elif patch_type in (MERGE_PATCH, STRATEGIC_PATCH):
            if not isinstance(patch, dict):
                raise errors.bad_request(
                    "json: cannot unmarshal array into Go value of type map[string]interface {}"
                )
            patched = merge_patch(current, patch)
        else:
            raise errors.unsupported_media_type("application/json-patch+json, application/merge-patch+json")
        check_patch_result(patched)
        pmd = patch.get("metadata") if isinstance(patch, dict) else None
        # a resourceVersion in the patch is a precondition; otherwise the patch applies to the latest
        keep_rv = isinstance(pmd, dict) and bool(pmd.get("resourceVersion"))
        if not keep_rv and isinstance(patched, dict) and isinstance(patched.get("metadata"), dict):
            patched["metadata"].pop("resourceVersion", None)
        return self.scale_update(
            rd, ns, name, patched, dataclasses.replace(opts or WriteOptions(), patch=True)
        )


def _same_ignoring_rv(a: Obj, b: Obj) -> bool:
    """No-op update detection (kube skips the write and keeps the resourceVersion).

    What lies outside ``metadata`` is compared first: nearly every write changes some of it
    (a status, a spec), which ``==`` tells in C before any key set or time-less copy of the
    managedFields is built for the metadata.
    """
    if a.keys() != b.keys():
        return False
    for k in a:
        if k != "metadata" and a[k] != b[k]:
            return False
    if "metadata" not in a:
        return True
    am, bm = a["metadata"], b["metadata"]
    ak = {x for x in am if x != "resourceVersion"}
    bk = {x for x in bm if x != "resourceVersion"}
    if ak != bk or any(am[x] != bm[x] for x in ak if x != "managedFields"):
        return False
    return _managed_without_time(am.get("managedFields")) == _managed_without_time(bm.get("managedFields"))


def _json_copy(v: Any) -> Any:
    """A private copy of a stored JSON value (``copy.deepcopy`` costs five times as much)."""
    if type(v) is dict or type(v) is list:
        try:
            return orjson.loads(orjson.dumps(v))
        except (TypeError, orjson.JSONDecodeError):
            pass  # not plain JSON after all (stored objects always are): the general copy
    return copy.deepcopy(v)


def _drop_empty_meta(md: Obj) -> None:
    """ObjectMeta's maps and lists are ``omitempty``: kube never stores (or returns) them empty."""
    for k in ("labels", "annotations", "finalizers", "ownerReferences"):
        if k in md and not md[k]:
            del md[k]


def _scale_selector(sel: Obj | None) -> str:
    """``status.selector`` of a Scale: the selector's plain string form (``""`` when empty)."""
    from apiserver.selectors import label_selector_string

    if not sel:
        return ""
    try:
        return label_selector_string(sel)
    except ValueError:
        return ""


def _set_selector(labels: Any) -> str:
    """``labels.SelectorFromSet(m).String()``: ``a=b,c=d`` sorted by key."""
    if not isinstance(labels, dict):
        return ""
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


def _managed_without_time(entries: Any) -> Any:
    """managedFields compared without timestamps: a write that only refreshes times is a no-op."""
    if not isinstance(entries, list):
        return entries
    return [{k: v for k, v in e.items() if k != "time"} if isinstance(e, dict) else e for e in entries]
