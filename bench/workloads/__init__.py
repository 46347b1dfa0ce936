"""Workload kinds of ``gangplane bench``: one module each, exporting ``METRICS`` and ``run``."""
