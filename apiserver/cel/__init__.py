"""CEL for gangplane: compile once, evaluate many times, report errors as field errors.

Used by the DRA strategies and allocator (``device`` selectors, :mod:`apiserver.cel.dra`) and by
CRD ``x-kubernetes-validations`` (``self`` / ``oldSelf``). Pure: no I/O, no clock, no globals but
the compile caches.

Which implementation, and why
-----------------------------
Three CEL runtimes on PyPI were measured on the same DRA selector (``device.driver == "..." &&
device.attributes["gpu.example.com"].model == "a100"``), the same macro/string/uint/double mix
and the same bad inputs, on this project's 2-core machine:

=============================== ============ ============== ==================================
library                         compile      evaluate       notes
=============================== ============ ============== ==================================
``common-expression-language``  0.3-1.5 ms   2-4 µs         Rust ``cel`` crate; macros, has(),
(Rust bindings, chosen)                      (13 µs with a  int/uint/double, maps, optionals,
                                             fresh activa-  timestamps/durations; cel-go's
                                             tion)          strings/lists/math/sets extensions
                                                            as opt-in Python callbacks
``cel-python`` (pure Python)    4-6 ms       400-1700 µs    complete spec, but 100-500x slower
                                                            to evaluate — the allocator runs a
                                                            selector per device per pod
``cel-expr-python`` (cel-cpp)   0.1-1.4 ms   6-11 µs        has a type checker, but a 16 MB
                                                            wheel, proto-centric custom types
=============================== ============ ============== ==================================

The scheduler evaluates every selector against every candidate device in every cycle, so
evaluation speed decides; ``common-expression-language`` is also the most used and the only
one whose extension functions are plain Python callables, which is how Kubernetes' own CEL
libraries (``quantity()``, ``semver()``) are added here (:mod:`apiserver.cel.library`).

What it does not do, compared with cel-go as the API server embeds it:

* no static type checker. Compile still rejects syntax errors, references to undeclared
  variables and calls of unknown functions (the messages follow cel-go's ``undeclared
  reference to 'x' (in container '')``); a wrongly typed expression fails when evaluated.
* no cost estimator. Expressions are bounded by length (as the API does) and comprehensions
  only range over the bounded input objects, so evaluation time is bounded by object size.
* ``Quantity`` and ``Semver`` values are carried as their canonical strings; the library's
  methods (``compareTo``, ``isGreaterThan``, ``major`` …) parse them. So
  ``device.capacity["d"].memory.compareTo(quantity("1Gi")) >= 0`` behaves as upstream, but a
  string method on a quantity is not rejected.
"""

from apiserver.cel.compiler import (
    CompileError,
    Environment,
    EvalError,
    Program,
    compile_expression,
)

__all__ = ["CompileError", "Environment", "EvalError", "Program", "compile_expression"]
