"""Compile CEL expressions against a declared environment; evaluate them with an activation.

An :class:`Environment` names the variables an expression may reference and the extension
functions it may call. :func:`compile_expression` parses the expression once (cached per
environment and text) and checks every reference against the environment, so a typo is an
admission error, not a surprise at allocation time. :meth:`Program.evaluate` binds the
activation and runs the compiled program; every failure is an :class:`EvalError`.

Error kinds mirror ``k8s.io/apiserver/pkg/cel.Error``: ``Required`` (empty expression) and
``Invalid`` (anything else), so a caller can turn a :class:`CompileError` into
``field.required`` / ``field.invalid`` on the expression's path.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import cel as _cel

#: Functions the Rust runtime implements natively (macros are expanded by its parser).
_NATIVE_FUNCTIONS = frozenset(
    {
        "size", "contains", "startsWith", "endsWith", "matches",
        "string", "bytes", "double", "int", "uint", "bool", "dyn", "type",
        "timestamp", "duration",
        "getFullYear", "getMonth", "getDayOfYear", "getDayOfMonth", "getDate", "getDayOfWeek",
        "getHours", "getMinutes", "getSeconds", "getMilliseconds",
        "optional.of", "optional.none", "optional.ofNonZeroValue", "hasValue", "value", "or", "orValue",
    }
)  # fmt: skip

#: ``x.all(v, …)``-style macros bind ``v``; the runtime reports it as a variable reference.
_MACRO_VAR_RE = re.compile(r"\.\s*(?:all|exists|exists_one|map|filter)\s*\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*,")


@lru_cache(maxsize=1)
def runtime() -> ModuleType:
    """The ``cel`` runtime, imported on first use, without the library's command-line REPL.

    The package's ``__init__`` imports its interactive CLI (prompt_toolkit, rich, typer,
    pygments: about 190 ms) beside the bindings. The API server compiles an expression as soon
    as the fleet's DeviceClass is created at start-up, so that import would be a third of the
    cold-start budget. The bindings are the native submodule ``cel.cel`` and the pure-Python
    ``cel.stdlib``, which import only each other: they are loaded under the package without
    running its ``__init__``, and the package gets the names its ``__init__`` would export.
    A process that imported ``cel`` itself first keeps that module. The native half must be
    initialised only once per process, so the result is cached and never re-imported.
    """
    loaded = sys.modules.get("cel")
    if loaded is not None and hasattr(loaded, "compile"):
        return loaded
    spec = importlib.util.find_spec("cel")
    if spec is None or spec.submodule_search_locations is None:
        raise ImportError("the common-expression-language package (module cel) is not installed")
    package = importlib.util.module_from_spec(spec)
    sys.modules["cel"] = package
    try:
        native = importlib.import_module("cel.cel")
        stdlib = importlib.import_module("cel.stdlib")
    except BaseException:
        del sys.modules["cel"]
        raise
    package.__dict__.update(
        {k: v for k, v in vars(native).items() if not k.startswith("_")}, stdlib=stdlib, cel=native
    )
    return package


def _stdlib() -> ModuleType:
    return runtime().stdlib  # type: ignore[no-any-return]


REQUIRED = "Required"
INVALID = "Invalid"


class CompileError(Exception):
    """An expression that cannot be compiled; ``detail`` is the text for the field error."""

    def __init__(self, kind: str, detail: str):
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


class EvalError(Exception):
    """An expression failed at run time (no such key, no matching overload, division by zero …)."""


@dataclass(frozen=True)
class Environment:
    """The declarations an expression is compiled against.

    ``variables``: names the activation will bind. ``functions``: extension functions by CEL
    name (callables receive the receiver first for method calls). ``max_length``: expressions
    longer than this are refused before parsing (the API's DoS bound).
    """

    name: str
    variables: frozenset[str]
    functions: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    max_length: int = 10 * 1024
    with_stdlib: bool = True

    def known_functions(self) -> frozenset[str]:
        names = set(_NATIVE_FUNCTIONS) | set(self.functions)
        if self.with_stdlib:
            names |= set(_stdlib().STDLIB_FUNCTIONS)
        return frozenset(names)

    def new_context(self) -> _cel.Context:
        ctx = runtime().Context()
        if self.with_stdlib:
            _stdlib().add_stdlib_to_context(ctx)
        for fname, fn in self.functions.items():
            ctx.add_function(fname, fn)
        return ctx

    def __hash__(self) -> int:
        return hash(self.name)


class Program:
    """A compiled expression bound to its environment; reusable across activations."""

    __slots__ = ("expression", "environment", "_program", "_context", "_references")

    def __init__(self, expression: str, environment: Environment, program: _cel.Program):
        self.expression = expression
        self.environment = environment
        self._program = program
        self._context: _cel.Context | None = None
        self._references: frozenset[str] | None = None

    def references(self) -> frozenset[str]:
        """The environment's variables the expression mentions (a caller may leave the others
        unbound, or bound to null: binding a large value it never reads costs its conversion)."""
        if self._references is None:
            self._references = frozenset(self._program.variables()) & self.environment.variables
        return self._references

    def evaluate(self, activation: Mapping[str, Any]) -> Any:
        """Run with ``activation`` (plain JSON-like values); raise :class:`EvalError` on failure."""
        if self.environment.variables <= activation.keys():
            # every declared variable is bound, so nothing of an earlier activation can leak
            ctx = self._context
            if ctx is None:
                ctx = self._context = self.environment.new_context()
        else:
            ctx = self.environment.new_context()  # e.g. no oldSelf on create: it must stay unbound
        ctx.update(dict(activation))
        try:
            return self._program.execute(ctx)
        except Exception as e:  # the runtime raises KeyError/TypeError/ValueError/RuntimeError/...
            raise EvalError(_runtime_message(e)) from e

    def evaluate_bool(self, activation: Mapping[str, Any]) -> bool:
        """Evaluate a predicate; a non-bool result is an error, as a DRA selector requires."""
        result = self.evaluate(activation)
        if not isinstance(result, bool):
            raise EvalError(f"must evaluate to bool, got {_cel_type_name(result)}")
        return result


def _cel_type_name(v: Any) -> str:
    if v is None:
        return "null_type"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "double"
    if isinstance(v, str):
        return "string"
    if isinstance(v, bytes):
        return "bytes"
    if isinstance(v, list):
        return "list"
    if isinstance(v, dict):
        return "map"
    return type(v).__name__


def _runtime_message(e: Exception) -> str:
    if isinstance(e, KeyError):
        return f"no such key: {e.args[0] if e.args else ''}"
    msg = str(e)
    return msg.splitlines()[0] if msg else type(e).__name__


def _syntax_message(e: Exception) -> str:
    """The runtime prefixes ``Failed to parse expression '<expr>': ``; keep cel-go's ``ERROR: …``."""
    msg = str(e)
    idx = msg.find("ERROR:")
    return msg[idx:] if idx >= 0 else msg


def compile_expression(environment: Environment, expression: str) -> Program:
    """Compile (cached) or raise :class:`CompileError` with a message for a 422 field error."""
    return _compile(environment, expression)


@lru_cache(maxsize=4096)
def _compile(environment: Environment, expression: str) -> Program:
    if not expression or not expression.strip():
        raise CompileError(REQUIRED, "")
    if len(expression) > environment.max_length:
        raise CompileError(INVALID, f"must be at most {environment.max_length} bytes long")
    try:
        program = runtime().compile(expression)
    except Exception as e:
        raise CompileError(INVALID, "compilation failed: " + _syntax_message(e)) from e
    bound = set(_MACRO_VAR_RE.findall(expression))
    for var in program.variables():
        if var not in environment.variables and var not in bound:
            raise CompileError(
                INVALID, f"compilation failed: ERROR: undeclared reference to '{var}' (in container '')"
            )
    known = environment.known_functions()
    for fn in program.functions():
        if fn[0] in "_!@" or fn in known:
            continue
        raise CompileError(
            INVALID, f"compilation failed: ERROR: undeclared reference to '{fn}' (in container '')"
        )
    return Program(expression, environment, program)
