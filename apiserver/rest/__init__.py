"""The REST contract every resource is served through (kube's ``k8s.io/apiserver/pkg/registry/rest``).

:mod:`apiserver.rest.resources` declares what a served resource is (:class:`ResourceDef`, the
:class:`Registry` table) and :mod:`apiserver.rest.strategy` the per-resource hooks the generic
store calls (:class:`Strategy`). Both are pure declarations, so the machinery that reads them
(``registry``, ``server``, ``admission``, ``patch``, ``openapi``, ``apiextensions``) imports them
from below, and nothing here imports any of it back (contract ``rest-is-the-ground-floor``).
"""
