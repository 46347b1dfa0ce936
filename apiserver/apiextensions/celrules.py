"""``x-kubernetes-validations``: CEL rules on a custom resource schema (kube's ``schema/cel``).

Each rule is compiled when the CRD is written (a rule that does not compile makes the CRD
invalid: ``…x-kubernetes-validations[0].rule: Invalid value: "…": compilation failed: ERROR: …``)
and evaluated on every write of a custom resource, at every place its node's value is present,
with ``self`` bound to that value. A rule that mentions ``oldSelf`` is a *transition rule*: it is
evaluated only on updates, where an old value correlates (same object property or map key, same
``x-kubernetes-list-type: map`` item by its keys) and ``oldSelf`` is bound to it. Other rules are
not evaluated again on a value an update leaves unchanged (kube's validation ratcheting). With
``optionalOldSelf: true`` a transition rule also runs where no old value correlates (creates, new
items), ``oldSelf`` being a CEL optional (``oldSelf.hasValue()``, ``oldSelf.orValue(x)``).

A rule that evaluates to false gives ``<path>: Invalid value: "<type>": <message>`` where the
message is, in kube's order of preference, the result of ``messageExpression``, ``message`` or
``failed rule: <rule>``; ``reason`` picks ``FieldValueForbidden``/``Required``/``Duplicate``
instead of ``Invalid`` and ``fieldPath`` moves the error below the node. An evaluation error gives
``<error> evaluating rule: <message or failed rule: …>``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from apiserver import field as fe
from apiserver.apiextensions.values import MISSING, correlate_items
from apiserver.cel import CompileError, Environment, EvalError, compile_expression
from apiserver.cel.compiler import runtime
from apiserver.field import ErrorList, Path

Node = dict[str, Any]

ENV = Environment("crd-validation", frozenset({"self", "oldSelf"}))


# CEL optional values for ``optionalOldSelf`` come from the runtime the wrapper drives (the wrapper's
# reference check does not know the ``optional.of``/``optional.none`` constructors by the name the
# runtime reports them under, so they are built directly rather than compiled).
def _optional(value: Any) -> Any:
    """``value`` as a CEL optional (``optional.none()`` where no old value correlates)."""
    optional = runtime().OptionalValue
    return optional.none() if value is MISSING else optional.of(value)


_OLDSELF = re.compile(r"\boldSelf\b")
REASONS = ("FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate")
_FIELD_PATH = re.compile(r"^(\.[A-Za-z_][A-Za-z0-9_]*|\['[^']*'\])+$")


def is_transition(rule: str) -> bool:
    return bool(_OLDSELF.search(rule))


# ------------------------------------------------------------------------------- CRD time
def compile_errors(root: Node, path: Path) -> ErrorList:
    """Errors of every rule in ``root`` (a version's schema) that does not compile or is malformed."""
    errs: ErrorList = []
    for node, npath in _nodes(root, path):
        rules = node.get("x-kubernetes-validations")
        if rules is None:
            continue
        rp = npath.child("x-kubernetes-validations")
        if not isinstance(rules, list):
            errs.append(fe.invalid(rp, rules, "must be a list"))
            continue
        for i, rule in enumerate(rules):
            errs.extend(_rule_errors(rule, rp.index(i)))
    return errs


def _rule_errors(rule: Any, path: Path) -> ErrorList:
    if not isinstance(rule, dict):
        return [fe.invalid(path, rule, "must be an object")]
    errs: ErrorList = []
    for key in ("rule", "message", "messageExpression", "reason", "fieldPath"):
        if rule.get(key) is not None and not isinstance(rule[key], str):
            errs.append(fe.invalid(path.child(key), rule[key], "must be a string"))
    if rule.get("optionalOldSelf") is not None and not isinstance(rule["optionalOldSelf"], bool):
        errs.append(fe.invalid(path.child("optionalOldSelf"), rule["optionalOldSelf"], "must be a boolean"))
    if errs:
        return errs
    text = rule.get("rule") or ""
    try:
        compile_expression(ENV, text)
    except CompileError as e:
        if e.kind == "Required":
            errs.append(fe.required(path.child("rule"), ""))
        else:
            errs.append(fe.invalid(path.child("rule"), text, e.detail))
    message = rule.get("message")
    if message is not None:
        if not str(message).strip():
            errs.append(fe.invalid(path.child("message"), message, "message must be non-empty if specified"))
        elif "\n" in str(message):
            errs.append(fe.invalid(path.child("message"), message, "message must not contain line breaks"))
    elif "\n" in text:
        errs.append(
            fe.required(path.child("message"), "message must be specified if rule contains line breaks")
        )
    expr = rule.get("messageExpression")
    if expr is not None:
        try:
            compile_expression(ENV, expr)
        except CompileError as e:
            if e.kind == "Required":
                errs.append(
                    fe.required(
                        path.child("messageExpression"), "messageExpression must be non-empty if specified"
                    )
                )
            else:
                errs.append(
                    fe.invalid(path.child("messageExpression"), expr, "messageExpression " + e.detail)
                )
    reason = rule.get("reason")
    if reason is not None and reason not in REASONS:
        errs.append(fe.not_supported(path.child("reason"), reason, list(REASONS)))
    fpath = rule.get("fieldPath")
    if fpath is not None and not _FIELD_PATH.match(str(fpath)):
        errs.append(fe.invalid(path.child("fieldPath"), fpath, "must be a valid relative JSON path"))
    return errs


def _nodes(node: Node, path: Path) -> Iterator[tuple[Node, Path]]:
    yield node, path
    props = node.get("properties")
    for name, sub in (props if isinstance(props, dict) else {}).items():
        if isinstance(sub, dict):
            yield from _nodes(sub, path.child("properties").key(name))
    if isinstance(node.get("additionalProperties"), dict):
        yield from _nodes(node["additionalProperties"], path.child("additionalProperties"))
    if isinstance(node.get("items"), dict):
        yield from _nodes(node["items"], path.child("items"))


def has_rules(root: Node) -> bool:
    return any("x-kubernetes-validations" in n for n, _ in _nodes(root, Path()))


# ------------------------------------------------------------------------------- write time
_MISSING = MISSING


def validate(root: Node, value: Any, old: Any = _MISSING, path: Path | None = None) -> ErrorList:
    """Evaluate every rule of ``root`` against ``value`` (and the correlated ``old`` on updates)."""
    errs: ErrorList = []
    _eval(root, value, old, path or Path(), errs)
    return errs


def validate_object(root: Node, obj: Any, old: Any = None) -> ErrorList:
    """:func:`validate` of a whole custom resource; ``self.metadata`` holds only name and generateName."""

    def view(o: Any) -> Any:
        if not isinstance(o, dict):
            return o
        md = o.get("metadata") or {}
        out = dict(o)
        out["metadata"] = {k: md[k] for k in ("name", "generateName") if k in md}
        return out

    return validate(root, view(obj), view(old) if old is not None else _MISSING)


def _type_name(node: Node) -> str:
    return node.get("type") or ""


def _eval(node: Node, value: Any, old: Any, path: Path, errs: ErrorList) -> None:
    if value is None:
        return
    rules = node.get("x-kubernetes-validations")
    if isinstance(rules, list):
        for rule in rules:
            if isinstance(rule, dict):
                _eval_rule(node, rule, value, old, path, errs)
    if isinstance(value, dict):
        props: dict[str, Node] = node.get("properties") or {}
        extra = node.get("additionalProperties")
        old_map = old if isinstance(old, dict) else {}
        for key, child in value.items():
            sub = props.get(key)
            if sub is None and isinstance(extra, dict):
                sub = extra
            if sub is not None:
                _eval(sub, child, old_map.get(key, _MISSING), path.child(key), errs)
    elif isinstance(value, list):
        items = node.get("items")
        if not isinstance(items, dict):
            return
        old_items = correlate_items(node, old, value)
        for i, child in enumerate(value):
            _eval(items, child, old_items[i], path.index(i), errs)


def _message(rule: dict[str, Any]) -> str:
    message = rule.get("message")
    if message and str(message).strip():
        return str(message).strip()
    return "failed rule: " + " ".join(str(rule.get("rule") or "").split())


def _eval_rule(node: Node, rule: dict[str, Any], value: Any, old: Any, path: Path, errs: ErrorList) -> None:
    text = rule.get("rule") or ""
    transition = is_transition(text)
    optional = transition and rule.get("optionalOldSelf") is True
    if transition and old is _MISSING and not optional:
        return
    if not transition and old is not _MISSING and old == value:
        return  # ratcheting: an unchanged value is not held to a rule again
    try:
        program = compile_expression(ENV, text)
    except CompileError:
        return  # refused when the CRD was written; a stored one predating a library change is skipped
    activation = {"self": value}
    if optional:
        # optionalOldSelf: the rule also runs without an old value; oldSelf is a CEL optional
        activation["oldSelf"] = _optional(old)
    elif transition:
        activation["oldSelf"] = old
    where = path
    if rule.get("fieldPath"):
        where = _child_path(path, str(rule["fieldPath"]))
    try:
        ok = program.evaluate(activation)
    except EvalError as e:
        errs.append(fe.invalid(where, _type_name(node), f"{e} evaluating rule: {_message(rule)}"))
        return
    if ok is True:
        return
    if not isinstance(ok, bool):
        errs.append(fe.invalid(where, _type_name(node), f"rule did not evaluate to a bool: {_message(rule)}"))
        return
    detail = _message(rule)
    expr = rule.get("messageExpression")
    if expr:
        try:
            got = compile_expression(ENV, expr).evaluate(activation)
            if isinstance(got, str) and got.strip() and "\n" not in got:
                detail = got.strip()
        except (CompileError, EvalError):
            pass
    reason = rule.get("reason") or "FieldValueInvalid"
    if reason == "FieldValueForbidden":
        errs.append(fe.forbidden(where, detail))
    elif reason == "FieldValueRequired":
        errs.append(fe.required(where, detail))
    elif reason == "FieldValueDuplicate":
        errs.append(fe.duplicate(where, detail))
    else:
        errs.append(fe.invalid(where, _type_name(node), detail))


def _child_path(path: Path, rel: str) -> Path:
    for m in re.finditer(r"\.([A-Za-z_][A-Za-z0-9_]*)|\['([^']*)'\]", rel):
        path = path.child(m.group(1) if m.group(1) is not None else m.group(2))
    return path
