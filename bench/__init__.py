"""gangplane's benchmark harness: ``gangplane bench`` runs scenario files and reports on them.

A scenario (``bench/scenarios/*.yaml``, or a user's own file) names a workload kind, its
parameters and how often to repeat it. The runner measures each repetition, then the results
(machine, Python, git commit, median and spread per metric) are written as JSON beside a Markdown
report and PNG plots; ``gangplane bench compare A.json B.json`` prints the ratios of two runs.
"""
