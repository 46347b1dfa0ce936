"""``conversion.strategy: Webhook``: custom resources converted between versions by a webhook
(kube's ``apiextensions-apiserver/pkg/apiserver/conversion/webhook_converter.go``).

An object stored in one version and read, listed or watched in another is sent to the webhook as a
``ConversionReview`` (``apiextensions.k8s.io/v1``) with ``desiredAPIVersion``; so is an object
written in a version other than the storage version. Conversions are remembered per object content
and target version, so a stored object is sent once per version however often it is read; the
objects of a list or of a batch of watch events that need converting go in one ConversionReview.

The webhook is called by the front doors' webhook driver (:mod:`apiserver.admission.webhook.run`):
the converter raises :class:`~apiserver.admission.webhook.run.WebhookCallsNeeded` for a conversion
it does not know yet, the driver calls the webhook without blocking the event loop and runs the
request again. The answer is checked as kube does: ``uid`` echoed, ``result.status`` Success, as
many ``convertedObjects`` as sent, each in the desired apiVersion, with the same kind, name,
namespace and uid; ``metadata`` other than labels and annotations is kept from the original.
Failures are kube's 500: ``conversion webhook for <group>/<version>, Kind=<Kind> failed: …``.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from apiserver import errors
from apiserver.admission.webhook.run import Outcome, PendingCall, WebhookCallsNeeded, current_run
from apiserver.api.types import Obj
from apiserver.meta import new_uid

REVIEW_API_VERSION = "apiextensions.k8s.io/v1"
#: remembered conversions per converter before the memo starts over
MEMO_LIMIT = 10_000

ServiceResolver = Callable[[str, str, int], "str | None"]


def _d(v: Any) -> Obj:
    return v if isinstance(v, dict) else {}


def _digest(obj: Obj) -> str:
    md = dict(_d(obj.get("metadata")))
    md.pop("resourceVersion", None)
    return hashlib.sha256(orjson.dumps({**obj, "metadata": md}, option=orjson.OPT_SORT_KEYS)).hexdigest()


@dataclass(frozen=True, eq=False)
class WebhookConverter:
    """Presents stored objects in ``version`` and stores requests in ``storage_version`` via the webhook."""

    group: str
    kind: str
    version: str
    storage_version: str
    webhook: Obj
    resolve_service: ServiceResolver | None = None
    #: (content digest, desired apiVersion) -> converted object
    _memo: dict[tuple[str, str], Obj] = field(default_factory=dict)

    calls_webhook = True

    def to_view(self, stored: Obj) -> Obj:
        return self._convert(stored, f"{self.group}/{self.version}")

    def from_view(self, obj: Obj) -> Obj:
        return self._convert(obj, f"{self.group}/{self.storage_version}")

    def prepare_views(self, stored: list[Obj]) -> None:
        """Ask for every conversion ``stored`` objects need in ``version`` as one ConversionReview
        (kube converts a list in one call); the answers fill the memo :meth:`to_view` reads."""
        desired = f"{self.group}/{self.version}"
        missing: list[tuple[str, Obj]] = []
        for obj in stored:
            if obj.get("apiVersion") == desired:
                continue
            digest = _digest(obj)
            if (digest, desired) not in self._memo and all(d != digest for d, _ in missing):
                missing.append((digest, obj))
        if len(missing) < 2:
            return  # one object: to_view asks for it alone
        run = current_run()
        if run is None:
            return
        call_key = ("conversion-batch", self.group, self.kind, desired, tuple(d for d, _ in missing))
        outcome = run.answers.get(call_key)
        if outcome is None:
            pending = self._pending(call_key, [o for _, o in missing], desired)
            if isinstance(pending, Outcome):
                outcome = pending
            elif run.exhausted:
                outcome = Outcome(error="too many webhook calls for one request")
            else:
                raise WebhookCallsNeeded([pending])
        converted = self._check(outcome, [o for _, o in missing], desired)
        if len(self._memo) + len(converted) >= MEMO_LIMIT:
            self._memo.clear()
        for (digest, _), out in zip(missing, converted, strict=True):
            self._memo[(digest, desired)] = out

    # ---------------------------------------------------------------------------------------
    def _gvk(self, api_version: str) -> str:
        return f"{api_version}, Kind={self.kind}"

    def _convert(self, obj: Obj, desired: str) -> Obj:
        if obj.get("apiVersion") == desired:
            return obj
        key = (_digest(obj), desired)
        hit = self._memo.get(key)
        if hit is not None:
            return _restore_metadata(copy.deepcopy(hit), obj)
        run = current_run()
        call_key = ("conversion", self.group, self.kind, desired, key[0])
        if run is None:
            raise errors.internal_error(
                f"conversion webhook for {self._gvk(desired)} failed: the request cannot wait for a webhook here"
            )
        outcome = run.answers.get(call_key)
        if outcome is None:
            pending = self._pending(call_key, [obj], desired)
            if isinstance(pending, Outcome):
                outcome = pending
            elif run.exhausted:
                outcome = Outcome(error="too many webhook calls for one request")
            else:
                raise WebhookCallsNeeded([pending])
        converted = self._check(outcome, [obj], desired)[0]
        if len(self._memo) >= MEMO_LIMIT:
            self._memo.clear()
        self._memo[key] = copy.deepcopy(converted)
        return _restore_metadata(converted, obj)

    def _pending(self, key: tuple[Any, ...], objs: list[Obj], desired: str) -> PendingCall | Outcome:
        cc = _d(self.webhook.get("clientConfig"))
        ca = str(cc.get("caBundle") or "")
        review = {
            "apiVersion": REVIEW_API_VERSION,
            "kind": "ConversionReview",
            "request": {"uid": new_uid(), "desiredAPIVersion": desired, "objects": objs},
        }
        if cc.get("url"):
            return PendingCall(key, self.kind, str(cc["url"]), "", ca, 30.0, review)
        svc = _d(cc.get("service"))
        ns, name, port = (
            str(svc.get("namespace") or ""),
            str(svc.get("name") or ""),
            int(svc.get("port") or 443),
        )
        addr = self.resolve_service(ns, name, port) if self.resolve_service is not None else None
        if addr is None:
            return Outcome(error=f'service "{name}" in namespace "{ns}" has no address gangplane can reach')
        return PendingCall(
            key, self.kind, f"https://{addr}{svc.get('path') or ''}", f"{name}.{ns}.svc", ca, 30.0, review
        )

    def _fail(self, desired: str, why: str) -> errors.StatusError:
        return errors.internal_error(f"conversion webhook for {self._gvk(desired)} failed: {why}")

    def _check(self, outcome: Outcome, objs: list[Obj], desired: str) -> list[Obj]:
        if outcome.error:
            raise self._fail(desired, outcome.error)
        response = outcome.response or {}
        result = _d(response.get("result"))
        if result.get("status") != "Success":
            raise self._fail(desired, f"conversion request failed: {result.get('message') or 'no message'}")
        converted = response.get("convertedObjects")
        if not isinstance(converted, list) or len(converted) != len(objs):
            got = len(converted) if isinstance(converted, list) else 0
            raise self._fail(desired, f"returned {got} objects, expected {len(objs)}")
        out: list[Obj] = []
        for i, (raw, obj) in enumerate(zip(converted, objs, strict=True)):
            conv = _d(raw)
            where = f"invalid converted object at index {i}"
            if conv.get("apiVersion") != desired:
                raise self._fail(
                    desired, f"{where}: invalid apiVersion {conv.get('apiVersion')!r}, expected {desired!r}"
                )
            if conv.get("kind") != obj.get("kind"):
                raise self._fail(desired, f"{where}: invalid kind {conv.get('kind')!r}")
            omd, cmd = _d(obj.get("metadata")), _d(conv.get("metadata"))
            for k in ("name", "namespace", "uid"):
                if cmd.get(k, omd.get(k)) != omd.get(k):
                    raise self._fail(desired, f"{where}: must not change metadata.{k}")
            out.append(copy.deepcopy(conv))
        return out


def _restore_metadata(converted: Obj, original: Obj) -> Obj:
    """kube's ``restoreObjectMeta``: only labels and annotations may come from the webhook."""
    md = copy.deepcopy(_d(original.get("metadata")))
    cmd = _d(converted.get("metadata"))
    for k in ("labels", "annotations"):
        if k in cmd:
            md[k] = cmd[k]
        else:
            md.pop(k, None)
    converted["metadata"] = md
    return converted
