"""CEL environments of admission: policies (ValidatingAdmissionPolicy, MutatingAdmissionPolicy) and
webhook ``matchConditions``, as kube's ``k8s.io/apiserver/pkg/admission/plugin/cel`` declares them.

Variables bound at evaluation: ``object``, ``oldObject`` (null on CREATE / DELETE), ``request``
(the AdmissionRequest), ``authorizer`` (kube's authorizer library, :mod:`apiserver.cel.authz`),
``params`` (the binding's parameter object, null without ``paramKind``), ``namespaceObject``
(null for cluster-scoped objects) and ``variables`` (the policy's composited variables,
evaluated lazily in kube, eagerly here). Webhook match conditions see ``object``,
``oldObject``, ``request`` and ``authorizer``.

What kube has and gangplane's runtime does not: typed object construction. A MutatingAdmissionPolicy writes ``Object{spec: Object.spec{…}}``
and ``JSONPatch{op: …}``; :func:`rewrite_struct_literals` turns those typed literals into the
equivalent CEL maps (``{"spec": {…}}``) before compiling, which is what the apply configuration
or patch is built from anyway.
"""

from __future__ import annotations

from functools import lru_cache

from apiserver.cel.authz import AUTHZ_FUNCTIONS
from apiserver.cel.compiler import Environment
from apiserver.cel.library import KUBERNETES_FUNCTIONS

_BASE = frozenset({"object", "oldObject", "request", "authorizer"})
_POLICY = _BASE | {"params", "namespaceObject", "variables"}
_FUNCTIONS = {**KUBERNETES_FUNCTIONS, **AUTHZ_FUNCTIONS}


@lru_cache(maxsize=4)
def match_condition_env(*, params: bool) -> Environment:
    """Webhooks' match conditions (``params`` for a policy's, which has the policy's variables)."""
    if params:
        return Environment("admission-policy", _POLICY, _FUNCTIONS)
    return Environment("admission-match-condition", _BASE, _FUNCTIONS)


@lru_cache(maxsize=4)
def policy_env(*, params: bool) -> Environment:
    """Validations, variables and audit annotations of a policy (``params`` null without paramKind)."""
    return Environment("admission-policy", _POLICY, _FUNCTIONS)


def message_env(*, params: bool) -> Environment:
    return policy_env(params=params)


def mutation_env(*, params: bool) -> Environment:
    return policy_env(params=params)


# ------------------------------------------------------------------------ typed literals -> maps


def _skip_string(src: str, i: int) -> int:
    """Index just past the string literal starting at ``src[i]`` (``r``/``b`` prefixes handled by
    the caller); triple-quoted and escaped quotes included."""
    q = src[i]
    if src.startswith(q * 3, i):
        end = src.find(q * 3, i + 3)
        return len(src) if end < 0 else end + 3
    j = i + 1
    while j < len(src):
        if src[j] == "\\":
            j += 2
            continue
        if src[j] == q:
            return j + 1
        j += 1
    return j


def _is_ident_start(c: str) -> bool:
    return c.isalpha() or c == "_"


def _is_ident(c: str) -> bool:
    return c.isalnum() or c == "_"


@lru_cache(maxsize=4096)
def rewrite_struct_literals(src: str) -> str:
    """``Object{metadata: Object.metadata{labels: {"a": "b"}}}`` -> ``{"metadata": {"labels": {"a": "b"}}}``.

    A typed literal is a dotted name starting with ``Object`` or ``JSONPatch`` directly followed
    by ``{``; inside it, ``field: value`` initializers get their field names quoted. Strings and
    ordinary map literals are left as they are.
    """
    if "{" not in src:
        return src
    out: list[str] = []
    stack: list[bool] = []  # per open brace: is it a typed (struct) literal?
    expect_field = False
    i = 0
    n = len(src)
    while i < n:
        c = src[i]
        if c in "\"'":
            j = _skip_string(src, i)
            out.append(src[i:j])
            i = j
            expect_field = False
            continue
        if _is_ident_start(c):
            j = i
            while j < n and (
                _is_ident(src[j]) or (src[j] == "." and j + 1 < n and _is_ident_start(src[j + 1]))
            ):
                j += 1
            word = src[i:j]
            if word in ("r", "R", "b", "B", "rb", "br") and j < n and src[j] in "\"'":
                k = _skip_string(src, j)
                out.append(src[i:k])
                i = k
                continue
            k = j
            while k < n and src[k].isspace():
                k += 1
            preceded_by_dot = bool(out) and out[-1].rstrip().endswith(".")
            if (
                not preceded_by_dot
                and k < n
                and src[k] == "{"
                and (word == "JSONPatch" or word == "Object" or word.startswith("Object."))
            ):
                out.append("{")
                stack.append(True)
                expect_field = True
                i = k + 1
                continue
            if expect_field and stack and stack[-1] and k < n and src[k] == ":" and "." not in word:
                out.append(f'"{word}"')
                i = j
                expect_field = False
                continue
            out.append(word)
            i = j
            expect_field = False
            continue
        if c == "{":
            stack.append(False)
            expect_field = False
        elif c == "}":
            if stack:
                stack.pop()
            expect_field = False
        elif c == ",":
            expect_field = bool(stack) and stack[-1]
        elif c in "([":
            stack.append(False)
            expect_field = False
        elif c in ")]":
            if stack:
                stack.pop()
        elif not c.isspace():
            expect_field = False
        out.append(c)
        i += 1
    return "".join(out)
