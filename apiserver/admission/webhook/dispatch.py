"""The MutatingAdmissionWebhook and ValidatingAdmissionWebhook admission plugins.

Configurations are read from the store on every request; their webhooks run in kube's order
(configurations by name, webhooks in their listed order). A webhook applies when its ``rules``
match (``matchPolicy`` Exact or Equivalent), its ``namespaceSelector`` and ``objectSelector``
select the request and every ``matchCondition`` holds. Webhooks never see writes of
admissionregistration.k8s.io objects.

Mutating webhooks are called one after another, each on the object the previous one returned; a
``JSONPatch`` response is applied to it (a DELETE, which has no object, can only be denied). With ``reinvocationPolicy: IfNeeded`` a webhook is called a
second time when a later webhook changed the object. Validating webhooks are called concurrently; the
first denial (in order) refuses the request. Answers become kube's errors:
``admission webhook "NAME" denied the request: …`` with the webhook's status code (at least 400),
and, for a call that failed under ``failurePolicy: Fail``, a 500 ``Internal error occurred:
failed calling webhook "NAME": …``; under ``Ignore`` a failed call is skipped. ``warnings`` go to
the client as ``Warning`` headers, ``auditAnnotations`` to the request's audit annotations as
``<webhook name>/<key>``. A dry-run request reaching a webhook whose ``sideEffects`` is not
``None``/``NoneOnDryRun`` is refused (``admission webhook "NAME" does not support dry run``).

Where the webhook is: ``clientConfig.url``, or for ``clientConfig.service`` the address gangplane
maps the service to (:func:`service_address`), verified as ``<name>.<namespace>.svc``.
"""

from __future__ import annotations

import base64
import copy
import hashlib
from dataclasses import dataclass
from typing import Any

import orjson

from apiserver import errors
from apiserver.admission import CREATE, DELETE, UPDATE, Attributes, Plugin
from apiserver.admission.policy.authorizing import authorizer_for, authorizing
from apiserver.admission.policy.matching import (
    PolicyLookup,
    match_rules,
    namespace_selector_matches,
    object_selector_matches,
)
from apiserver.admission.policy.request import (
    admission_request,
    attrs_stored,
    keep_protected,
    object_digest,
    replace_in_place,
)
from apiserver.admission.webhook.run import Outcome, PendingCall, WebhookCallsNeeded, current_run
from apiserver.api.types import Obj
from apiserver.cel import CompileError, EvalError, compile_expression
from apiserver.cel.admission import match_condition_env
from apiserver.patch.jsonpatch_merge import json_patch
from apiserver.rest.resources import ResourceDef

GROUP = "admissionregistration.k8s.io"
#: the Service annotation naming where a webhook behind that Service listens (``host:port``)
WEBHOOK_ADDRESS_ANNOTATION = "webhook.gangplane.io/address"


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _name(obj: Obj) -> str:
    return str(_dict(obj.get("metadata")).get("name") or "")


@dataclass(frozen=True)
class Hook:
    """A webhook of a configuration that matched the request."""

    config: str
    index: int
    spec: dict[str, Any]
    matched: ResourceDef

    @property
    def name(self) -> str:
        return str(self.spec.get("name") or "")


def service_address(
    api: PolicyLookup, namespace: str, name: str, port: int, mapping: dict[str, str]
) -> str | None:
    """Where gangplane sends a call for ``service`` ``namespace/name:port``.

    gangplane runs no pods, so a Service's ClusterIP leads nowhere; a webhook server runs on the
    host. Its address comes from, in order: the server's ``webhook_service_addresses`` option
    (``"<namespace>/<name>:<port>"`` or ``"<namespace>/<name>"`` -> ``"host:port"``; ``gangplane
    serve --webhook-service``), then the Service's ``webhook.gangplane.io/address`` annotation.
    """
    for key in (f"{namespace}/{name}:{port}", f"{namespace}/{name}"):
        if key in mapping:
            return mapping[key]
    svc = api.peek("", "services", namespace, name)
    if svc is None:
        return None
    addr = _dict(_dict(svc.get("metadata")).get("annotations")).get(WEBHOOK_ADDRESS_ANNOTATION)
    return str(addr) if addr else None


def _matches(hook: dict[str, Any], attrs: Attributes, api: PolicyLookup) -> ResourceDef | None:
    matched = match_rules(
        _list(hook.get("rules")),
        attrs.operation,
        attrs.rd,
        attrs.subresource,
        str(hook.get("matchPolicy") or "Equivalent"),
        getattr(api, "registry", None),
    )
    if matched is None:
        return None
    if not namespace_selector_matches(hook.get("namespaceSelector"), attrs, api):
        return None
    if not object_selector_matches(hook.get("objectSelector"), attrs):
        return None
    return matched


def _digest(value: Any) -> str:
    return hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS)).hexdigest()


class _WebhookPlugin(Plugin):
    plural = ""

    def __init__(self, service_addresses: dict[str, str] | None = None) -> None:
        self.service_addresses = dict(service_addresses or {})

    def hooks(self, attrs: Attributes, api: PolicyLookup) -> list[Hook]:
        if attrs.rd.group == GROUP or not api.stored_count(GROUP, self.plural):
            return []
        configs = api.peek_all(GROUP, self.plural)
        if not configs:
            return []
        out: list[Hook] = []
        for cfg in sorted(configs, key=_name):
            for i, raw in enumerate(_list(cfg.get("webhooks"))):
                hook = _dict(raw)
                matched = _matches(hook, attrs, api)
                if matched is not None:
                    out.append(Hook(_name(cfg), i, hook, matched))
        return out

    # -- one call --------------------------------------------------------------------------
    def review(self, hook: Hook, attrs: Attributes, api: PolicyLookup, uid: str) -> Obj:
        return {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": admission_request(attrs, api, uid, hook.matched),
        }

    def conditions_hold(self, hook: Hook, review: Obj, attrs: Attributes, api: Any) -> tuple[bool, str]:
        """The webhook's matchConditions over the review's request (error text if one fails)."""
        if not _list(hook.spec.get("matchConditions")):
            return True, ""
        with authorizing(attrs, api):
            return self._conditions_hold(hook, review, attrs)

    def _conditions_hold(self, hook: Hook, review: Obj, attrs: Attributes) -> tuple[bool, str]:
        request = review["request"]
        activation = {
            "object": request.get("object"),
            "oldObject": request.get("oldObject"),
            "request": {k: v for k, v in request.items() if k not in ("object", "oldObject")},
            "authorizer": authorizer_for(attrs),
        }
        error = ""
        for mc in _list(hook.spec.get("matchConditions")):
            mc = _dict(mc)
            try:
                program = compile_expression(
                    match_condition_env(params=False), str(mc.get("expression") or "")
                )
                result = program.evaluate(activation)
            except (CompileError, EvalError) as e:
                error = error or f"failed to evaluate match condition '{mc.get('name')}': {e}"
                continue
            if result is False:
                return False, ""
            if not isinstance(result, bool):
                error = error or f"match condition '{mc.get('name')}' must evaluate to bool"
        return (not error), error

    def pending(
        self, hook: Hook, attrs: Attributes, api: PolicyLookup, review: Obj, key: tuple[Any, ...]
    ) -> PendingCall | Outcome:
        cc = _dict(hook.spec.get("clientConfig"))
        timeout = float(hook.spec.get("timeoutSeconds") or 10)
        ca = str(cc.get("caBundle") or "")
        if cc.get("url"):
            url = str(cc["url"])
            server_name = ""
        else:
            svc = _dict(cc.get("service"))
            ns, name = str(svc.get("namespace") or ""), str(svc.get("name") or "")
            port = int(svc.get("port") or 443)
            addr = service_address(api, ns, name, port, self.service_addresses)
            if addr is None:
                return Outcome(
                    error=f'failed to call webhook: service "{name}" in namespace "{ns}" has no address gangplane can reach '
                    f"(set the {WEBHOOK_ADDRESS_ANNOTATION} annotation on the Service or serve with --webhook-service)"
                )
            url = f"https://{addr}{svc.get('path') or ''}"
            server_name = f"{name}.{ns}.svc"
        return PendingCall(key, hook.name, url, server_name, ca, timeout, review)

    def failure(self, hook: Hook, attrs: Attributes, error: str) -> None:
        """A failed call: refuse (Fail) or skip (Ignore)."""
        if hook.spec.get("failurePolicy", "Fail") == "Ignore":
            return
        raise errors.internal_error(f'failed calling webhook "{hook.name}": {error}')

    def check_dry_run(self, hook: Hook, attrs: Attributes) -> None:
        if attrs.dry_run and hook.spec.get("sideEffects") not in ("None", "NoneOnDryRun"):
            raise errors.bad_request(f'admission webhook "{hook.name}" does not support dry run')

    def take_common(self, hook: Hook, attrs: Attributes, response: Obj) -> None:
        """Warnings and audit annotations of an answer; a denial becomes kube's error."""
        for w in _list(response.get("warnings")):
            if isinstance(w, str) and w:
                attrs.warnings.append(w)
        for k, v in _dict(response.get("auditAnnotations")).items():
            attrs.audit_annotations[f"{hook.name}/{k}"] = str(v)
        if response.get("allowed") is not True:
            raise denial(hook.name, _dict(response.get("status")))


def denial(name: str, status: Obj) -> errors.StatusError:
    """kube's ``webhookerrors.ToStatusErr``."""
    denied_by = f'admission webhook "{name}" denied the request'
    message = str(status.get("message") or "")
    reason = str(status.get("reason") or "")
    if message:
        text = f"{denied_by}: {message}"
    elif reason:
        text = f"{denied_by}: {reason}"
    else:
        text = f"{denied_by} without explanation"
    code = status.get("code")
    code = code if isinstance(code, int) and not isinstance(code, bool) and code >= 400 else 400
    details = status.get("details") if isinstance(status.get("details"), dict) else None
    return errors.StatusError(code, reason, text, details)


class MutatingWebhookPlugin(_WebhookPlugin):
    """``MutatingAdmissionWebhook``: JSONPatch answers applied in order, IfNeeded reinvocation."""

    name = "MutatingAdmissionWebhook"
    plural = "mutatingwebhookconfigurations"

    def admits_nothing(self, operation: str, rd: ResourceDef, api: Any) -> bool:
        """No configuration stored (``hooks``' first test), or an operation it never sees."""
        return (
            operation not in (CREATE, UPDATE, DELETE)
            or rd.group == GROUP
            or not api.stored_count(GROUP, self.plural)
        )

    def admit(self, attrs: Attributes, api: Any) -> None:
        run = current_run()
        if run is None or attrs.operation not in (CREATE, UPDATE, DELETE):
            return
        hooks = self.hooks(attrs, api)
        if not hooks:
            return
        for hook in hooks:
            self._call(hook, attrs, api, run, 0)
            if hook.spec.get("reinvocationPolicy") == "IfNeeded" and attrs.obj is not None:
                attrs.reinvocations.setdefault(self.name, []).append((hook, object_digest(attrs.obj)))

    def reinvoke(self, attrs: Attributes, api: Any) -> None:
        """kube's reinvocation: an IfNeeded webhook is called once more if the object changed after
        its call (by a later webhook, or a policy reinvoked before it)."""
        entries = attrs.reinvocations.pop(self.name, [])
        run = current_run()
        if not entries or run is None or attrs.obj is None:
            return
        final = object_digest(attrs.obj)
        for hook, digest in entries:
            if digest != final:
                self._call(hook, attrs, api, run, 1)

    def _call(self, hook: Hook, attrs: Attributes, api: PolicyLookup, run: Any, round_: int) -> bool:
        """Call (or take the answer of) one webhook; whether it changed the object."""
        review = self.review(hook, attrs, api, run.uid)
        ok, err = self.conditions_hold(hook, review, attrs, api)
        if err:
            self.failure(hook, attrs, err)
            return False
        if not ok:
            return False
        self.check_dry_run(hook, attrs)
        key = ("mutating", round_, hook.config, hook.index, _digest(review["request"]))
        outcome = run.answers.get(key)
        if outcome is None:
            pending = self.pending(hook, attrs, api, review, key)
            if isinstance(pending, Outcome):
                outcome = pending
            elif run.exhausted:
                outcome = Outcome(error="failed to call webhook: too many webhook calls for one request")
            else:
                raise WebhookCallsNeeded([pending])
        if outcome.error:
            self.failure(hook, attrs, outcome.error)
            return False
        response = outcome.response or {}
        self.take_common(hook, attrs, response)
        patch = response.get("patch")
        if not patch or attrs.obj is None:
            return False  # a DELETE has no object to patch
        if response.get("patchType") != "JSONPatch":
            self.failure(
                hook,
                attrs,
                f"received invalid webhook response: unsupported patch type {response.get('patchType')!r}",
            )
            return False
        try:
            ops = orjson.loads(base64.b64decode(str(patch)))
            current = review["request"]["object"]
            patched = json_patch(copy.deepcopy(current), ops)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError, errors.StatusError) as e:
            self.failure(hook, attrs, f"JSONPatch failed: {getattr(e, 'message', e)}")
            return False
        if not isinstance(patched, dict) or patched == current:
            return False
        before = attrs.obj or {}
        keep_protected(patched, before)
        stored = attrs_stored(api, attrs, patched, hook.matched)
        replace_in_place(before, stored)
        return True


class ValidatingWebhookPlugin(_WebhookPlugin):
    """``ValidatingAdmissionWebhook``: every matching webhook called concurrently; the first denial wins."""

    name = "ValidatingAdmissionWebhook"
    plural = "validatingwebhookconfigurations"

    def validate(self, attrs: Attributes, api: Any) -> None:
        run = current_run()
        if run is None:
            return
        hooks = self.hooks(attrs, api)
        if not hooks:
            return
        todo: list[tuple[Hook, tuple[Any, ...] | None]] = []
        needed: list[PendingCall] = []
        for hook in hooks:
            review = self.review(hook, attrs, api, run.uid)
            ok, err = self.conditions_hold(hook, review, attrs, api)
            if err:
                self.failure(hook, attrs, err)
                continue
            if not ok:
                continue
            self.check_dry_run(hook, attrs)
            key = ("validating", hook.config, hook.index, _digest(review["request"]))
            if key not in run.answers:
                pending = self.pending(hook, attrs, api, review, key)
                if isinstance(pending, Outcome):
                    run.answers[key] = pending
                elif run.exhausted:
                    run.answers[key] = Outcome(
                        error="failed to call webhook: too many webhook calls for one request"
                    )
                else:
                    needed.append(pending)
            todo.append((hook, key))
        if needed:
            raise WebhookCallsNeeded(needed)
        for hook, key in todo:
            outcome = run.answers[key] if key is not None else Outcome()
            if outcome.error:
                self.failure(hook, attrs, outcome.error)
                continue
            self.take_common(hook, attrs, outcome.response or {})
