"""Per-resource REST strategies, in the shape of kube's ``pkg/registry/<group>/<resource>/strategy.go``.

The generic registry calls the hooks in a fixed order:

* create: ``default`` -> ``prepare_for_create`` -> ``validate`` (+ metadata validation) -> ``warnings_on_create``
* update: ``default`` -> ``prepare_for_update`` -> ``validate_update`` -> ``warnings_on_update``
* status update: ``default`` -> ``prepare_for_status_update`` -> ``validate_status_update``
* other subresource update: ``default`` -> the ``subresource_strategy(name)``'s
  ``prepare_for_update`` -> ``validate_update``

Objects are plain JSON-compatible dicts. Hooks may mutate ``obj``/``new`` in place and must not
touch ``old``. Validation returns an :data:`~apiserver.field.ErrorList`; the registry turns a
non-empty list into a 422 ``Invalid`` Status. Hooks are pure: no I/O, no clock (``ctx.now``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from apiserver.api.types import Obj
from apiserver.field import ErrorList
from featuregates import FeatureGate


@dataclass
class StrategyContext:
    """What a strategy may know about the request: gates, namespace, dry-run, the wall time."""

    gates: FeatureGate
    namespace: str = ""
    dry_run: bool = False
    now: str = ""  # RFC 3339 ``...Z`` time of the request
    warnings: list[str] = field(default_factory=list)
    #: who asks (``UserInfo``); ``None`` for in-process callers, which act as the loopback admin
    user: Any = None
    #: the server's token authenticator (``token -> UserInfo | None``), for TokenReview
    authenticate_token: Any = None
    #: the server's ``apiserver.auth.authorizer.Authorization`` (access reviews, RBAC escalation)
    authorization: Any = None
    #: the bound service-account token authenticator, for TokenReview's audiences
    service_account_tokens: Any = None


class Strategy:
    """Default strategy: no defaulting, no extra validation; status kept/dropped per ``has_status``.

    Subclasses override what their resource needs. ``has_status`` says whether the resource
    serves a ``/status`` subresource: then the main resource ignores status changes and the
    status subresource ignores everything but status (kube's ``PrepareForUpdate`` pair).
    """

    has_status: bool = False
    #: Objects carry ``metadata.generation``, bumped when :meth:`generation_relevant` changes. kube
    #: sets none for kinds without spec-like content to track (ConfigMaps, Namespaces, Leases, …).
    tracks_generation: bool = True
    #: metadata a ``/status`` write cannot change (``ResetObjectMetaForStatus``); a kind whose status
    #: strategy keeps less (Deployments: only labels) narrows it
    status_reset_metadata: tuple[str, ...] = ("labels", "annotations", "finalizers", "ownerReferences")
    #: Objects of the resource may be created without a name only via generateName (all of kube's).
    allow_create_on_update: bool = False
    #: kube's ``AllowUnconditionalUpdate``: an update whose body carries no ``resourceVersion`` is
    #: applied to the current object (true for most kinds; helm's release Secrets rely on it).
    allow_unconditional_update: bool = True
    #: :meth:`default` sets nothing but what a ``/status`` write replaces with the stored object's
    #: (see :meth:`prepare_for_status_update`), so a status write skips it: the result is the same
    #: (Pods: their defaults are all in ``spec``).
    defaults_only_replaced_by_status: bool = False
    #: A create-only kind answered in place instead of stored (kube's access reviews): create
    #: validates, then returns the object with ``status = answer(ctx, obj)``.
    answers_create: bool = False

    def default(self, obj: Obj) -> None:
        """SetDefaults: the API defaults kube applies when decoding a request body."""

    def prepare_for_create(self, ctx: StrategyContext, obj: Obj) -> None:
        if self.has_status:
            obj.pop("status", None)

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return []

    def warnings_on_create(self, ctx: StrategyContext, obj: Obj) -> list[str]:
        return []

    def prepare_for_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> None:
        if self.has_status:
            if "status" in old:
                new["status"] = old["status"]
            else:
                new.pop("status", None)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return []

    def warnings_on_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> list[str]:
        return []

    def prepare_for_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> None:
        """Keep everything of ``old`` but ``status`` (metadata is reconciled by the registry)."""
        for k in list(new.keys()):
            if k not in ("status", "metadata", "apiVersion", "kind"):
                del new[k]
        for k, v in old.items():
            if k not in ("status", "metadata", "apiVersion", "kind"):
                new[k] = v

    def validate_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return []

    def subresource_strategy(self, name: str) -> Strategy | None:
        """The update strategy of a writable subresource other than ``status`` (kube registers
        one per subresource REST: ``pods/ephemeralcontainers``), or None when there is none."""
        return None

    def answer(self, ctx: StrategyContext, obj: Obj) -> Obj:
        """The ``status`` of an ``answers_create`` kind's reply."""
        return {}

    # -- deletion (kube's RESTDeleteStrategy / RESTGracefulDeleteStrategy) ---------------------

    #: Deletion waits out a grace period the strategy computes (kube's graceful delete: pods).
    graceful_delete: bool = False

    def check_graceful_delete(self, obj: Obj, requested: int | None) -> int:
        """The grace period in seconds for deleting ``obj`` (``requested``: DeleteOptions'
        ``gracePeriodSeconds``); 0 deletes at once. Only called when :attr:`graceful_delete`."""
        return 0

    def holds_deletion(self, obj: Obj) -> bool:
        """Whether ``obj``'s own content keeps it stored after deletion is requested, beyond
        ``metadata.finalizers`` (a Namespace's ``spec.finalizers``)."""
        return False

    def prepare_for_delete(self, obj: Obj) -> None:
        """Change ``obj`` as it is first marked for deletion (a Namespace becomes Terminating).

        Finalizers it adds are kept (kube's CRD storage adds its cleanup finalizer here).
        """

    def scale_of(self, obj: Obj) -> tuple[int, int, str] | None:
        """``(spec replicas, status replicas, selector)`` of a Scale; None: the built-in paths.

        Custom resources read them from their CRD's ``scale`` subresource paths.
        """
        return None

    def set_scale_replicas(self, obj: Obj, replicas: int) -> bool:
        """Write a Scale's ``spec.replicas`` into ``obj``; False: at the built-in ``spec.replicas``."""
        return False

    def generation_relevant(self, obj: Obj) -> Any:
        """The part of the object whose change bumps ``metadata.generation`` (spec-like content)."""
        return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}
