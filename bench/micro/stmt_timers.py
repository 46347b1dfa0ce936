"""Median time of each statement of named functions inside gangs-SETSx3's phase (a script):

    cd /tmp && PYTHONPATH=TREE python TREE/bench/micro/stmt_timers.py [--sets 1000] MODULE:QUALNAME[@KEY] ...

for instance ``apiserver.registry.generic:GenericStore._update_from@rd.plural``. Each named function
(synchronous, without free variables) is compiled again from its source with a clock read after
every statement of its body and before every ``return``; the copy replaces it on its module or
class for the phase of ``bench/micro/inplane_timers.py`` (the first StatefulSet create to the last
pod bound) and is put back afterwards. ``KEY`` is an expression over the function's arguments and
locals, evaluated when it returns, whose ``str`` splits its calls into groups (the kind written,
for one; ``?`` where it cannot be evaluated on the path taken). A call that raises is not counted.
The script prints the phase's figures, then per function and key its calls per set, the sum over
statements of their medians weighted by how often they ran, and per statement its
median µs, the share of calls that reached it and its source line.

Why: :mod:`bench.micro.inplane_timers` says how long a function takes in the plane, not which of
its steps take it. Inside the plane each step costs two to four times what a micro-benchmark of
it shows (cold caches: session 35), so a step's share is read where it runs. A compound statement
(``if``, ``for``, ``try``) is one step, its body included; a ``return`` ends the last step before
it and is its own (the expression it returns).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import linecache
import statistics
import textwrap
import time
from collections.abc import Callable
from typing import Any

from bench.micro.inplane_timers import Timers, arguments, run_phase

#: names the compiled copies call, put into their module while they are in place
_CLOCK = "_stmt_timers_clock"
_RECORD = "_stmt_timers_record"


class StatementTimers:
    """Per function (and key), the time between consecutive marks of its calls, by mark."""

    def __init__(self) -> None:
        #: counted while ``timers.active`` (the phase), as :class:`Timers` counts
        self.timers = Timers()
        #: (qualname, key) -> mark -> ns per call that reached it
        self.steps: dict[tuple[str, str], dict[str, list[int]]] = {}
        #: (qualname, key) -> calls
        self.calls: dict[tuple[str, str], int] = {}
        #: qualname -> its source file (for the lines the report quotes)
        self.files: dict[str, str] = {}
        self._replaced: list[tuple[Any, str, Any]] = []
        self._module_names: list[dict[str, Any]] = []

    def record(self, qualname: str, marks: list[tuple[str, int]], key: Any) -> None:
        """One call's marks: ``(label, ns)``, the first being its start."""
        if not self.timers.active:
            return
        group = (qualname, str(key))
        self.calls[group] = self.calls.get(group, 0) + 1
        steps = self.steps.setdefault(group, {})
        before = marks[0][1]
        for label, at in marks[1:]:
            steps.setdefault(label, []).append(at - before)
            before = at

    def instrument(self, spec: str) -> None:
        """Replace ``module:Qual.name[@key]`` by its marked copy (ValueError where it cannot be)."""
        target, _, key = spec.partition("@")
        module_name, _, qualname = target.partition(":")
        if not qualname:
            raise ValueError(f"{spec!r}: expected MODULE:QUALNAME[@KEY]")
        module = importlib.import_module(module_name)
        owner: Any = module
        *path, name = qualname.split(".")
        for part in path:
            owner = getattr(owner, part)
        raw = inspect.getattr_static(owner, name)
        fn = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
        if not inspect.isfunction(fn):
            raise ValueError(f"{spec}: not a function")
        if inspect.iscoroutinefunction(fn) or inspect.isgeneratorfunction(fn):
            raise ValueError(f"{spec}: a coroutine or generator (its time would include what it awaits)")
        if fn.__code__.co_freevars:
            raise ValueError(f"{spec}: it has free variables ({', '.join(fn.__code__.co_freevars)})")
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
        if any(
            isinstance(n, ast.Attribute) and n.attr.startswith("__") and not n.attr.endswith("__")
            for n in ast.walk(tree)
        ):
            raise ValueError(f"{spec}: it names a private attribute (mangled only inside its class)")
        copy = self._compiled(fn, tree, qualname, key or "''", module.__dict__)
        self.files[qualname] = inspect.getsourcefile(fn) or ""
        self._replaced.append((owner, name, raw))
        setattr(owner, name, type(raw)(copy) if isinstance(raw, (staticmethod, classmethod)) else copy)

    def _compiled(
        self, fn: Callable[..., Any], tree: ast.Module, qualname: str, key: str, namespace: dict[str, Any]
    ) -> Any:
        """``fn`` compiled again from ``tree`` (its source) with the marks, in ``namespace`` (its
        module's globals, so it reads them as they are when it runs)."""
        func = tree.body[0]
        assert isinstance(func, ast.FunctionDef)
        ast.increment_lineno(tree, fn.__code__.co_firstlineno - 1)
        func.decorator_list = []
        # annotations may name what only a type checker imports
        every = [
            *func.args.posonlyargs,
            *func.args.args,
            *func.args.kwonlyargs,
            func.args.vararg,
            func.args.kwarg,
        ]
        for arg in every:
            if arg is not None:
                arg.annotation = None
        func.returns = None
        body: list[ast.stmt] = [_parse(f"_stmt_marks = [('start', {_CLOCK}())]")]
        returns = _MarkReturns(qualname, key)
        for stmt in func.body:
            if _is_docstring(stmt):
                continue
            marked = returns.visit(stmt)
            body.extend(marked if isinstance(marked, list) else [marked])
            if not isinstance(stmt, ast.Return):
                body.append(_parse(f"_stmt_marks.append(('L{stmt.lineno}-{stmt.end_lineno}', {_CLOCK}()))"))
        body.extend(_recorded(qualname, key))
        func.body = body
        ast.fix_missing_locations(tree)
        namespace[_CLOCK] = time.perf_counter_ns
        namespace[_RECORD] = self.record
        self._module_names.append(namespace)
        local: dict[str, Any] = {}
        exec(compile(tree, inspect.getsourcefile(fn) or "<stmt_timers>", "exec"), namespace, local)  # noqa: S102
        copy = local[func.name]
        copy.__qualname__ = fn.__qualname__
        return copy

    def restore(self) -> None:
        """Put every function back as it was, and take the helpers out of the modules."""
        for owner, name, raw in reversed(self._replaced):
            setattr(owner, name, raw)
        self._replaced.clear()
        for namespace in self._module_names:
            namespace.pop(_CLOCK, None)
            namespace.pop(_RECORD, None)
        self._module_names.clear()

    def report(self, sets: int) -> list[str]:
        """The printed lines: per function and key, then per statement (see the module docs)."""
        out: list[str] = []
        for (qualname, key), steps in self.steps.items():
            calls = self.calls[(qualname, key)]
            total = sum(statistics.median(v) * len(v) / calls for v in steps.values()) / 1e3
            out.append(f"== {qualname} [{key}] calls/set {calls / sets:.2f}  ~{total:.1f} µs/call")
            for label, got in sorted(steps.items(), key=lambda kv: _first_line(kv[0])):
                line = linecache.getline(self.files[qualname], _first_line(label)).strip()[:70]
                share = len(got) / calls
                out.append(f"   {statistics.median(got) / 1e3:8.2f} µs  x{share:4.2f}  {label:14s} {line}")
        return out


class _MarkReturns(ast.NodeTransformer):
    """Each ``return`` of the body (not of a nested function) records the call before it returns."""

    def __init__(self, qualname: str, key: str) -> None:
        self.qualname = qualname
        self.key = key

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:  # noqa: N802 - ast's naming
        return node

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:  # noqa: N802
        return node

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:  # noqa: N802
        return node

    def visit_Return(self, node: ast.Return) -> list[ast.stmt]:  # noqa: N802
        value = node.value if node.value is not None else ast.Constant(None)
        return [
            ast.Assign([ast.Name("_stmt_result", ast.Store())], value, lineno=node.lineno),
            _parse(f"_stmt_marks.append(('L{node.lineno} return', {_CLOCK}()))"),
            *_recorded(self.qualname, self.key),
            ast.Return(ast.Name("_stmt_result", ast.Load())),
        ]


def _recorded(qualname: str, key: str) -> list[ast.stmt]:
    """The call's record: its key evaluated where it returns, and ``"?"`` should that fail (a
    local not assigned on this path), so that timing never changes what the function does."""
    return ast.parse(
        f"try:\n    _stmt_key = {key}\nexcept Exception:\n    _stmt_key = '?'\n"
        f"{_RECORD}({qualname!r}, _stmt_marks, _stmt_key)"
    ).body


def _parse(code: str) -> ast.stmt:
    return ast.parse(code).body[0]


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _first_line(label: str) -> int:
    return int(label[1:].split("-")[0].split(" ")[0])


def main() -> None:
    ap = arguments("MODULE:QUALNAME[@KEY]")
    ap.description = (__doc__ or "").split("\n\n")[0]
    args = ap.parse_args()
    timers = StatementTimers()
    try:
        for spec in args.functions:
            timers.instrument(spec)
    except (ValueError, ImportError, AttributeError, OSError) as e:
        timers.restore()
        ap.error(str(e))
    try:
        figures = run_phase(args.sets, timers.timers)
    finally:
        timers.restore()
    print(json.dumps(figures))
    print("\n".join(timers.report(args.sets)))


if __name__ == "__main__":
    main()
