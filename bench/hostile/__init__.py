"""Hostile requests against an API server: what an attacker or a careless client sends.

One request grammar drives two runners: the property-based test in the suite
(``tests/e2e/test_fuzz.py``, hypothesis chooses, shrinks and replays) and the long run of
``gangplane bench fuzz`` (a seeded :class:`random.Random` chooses, 10,000+ requests, no test
dependency at run time). Both send the bytes over a real socket with :mod:`bench.hostile.rawhttp`,
because some failures only exist there (a header the server cannot encode drops the
connection instead of answering), and both judge answers with :mod:`bench.hostile.verdict`.

* :mod:`bench.hostile.choices`: the :class:`~bench.hostile.choices.Chooser` a grammar draws from.
* :mod:`bench.hostile.values`: hostile scalars, keys, nesting, and JSON/YAML/protobuf encoders
  that can write what a well-behaved encoder never would (NaN, lone surrogates, duplicate keys).
* :mod:`bench.hostile.seeds`: one valid object per kind, the starting point of every mutation.
* :mod:`bench.hostile.requests`: bodies, query strings, headers and paths across verbs and kinds.
"""
