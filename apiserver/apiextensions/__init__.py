"""apiextensions.k8s.io/v1: CustomResourceDefinitions and the custom resources they define.

The shape follows kube's ``apiextensions-apiserver``:

* :mod:`.crd_validation` and :mod:`.strategy` — the CRD's own REST strategy (defaults,
  ``ValidateCustomResourceDefinition``/``…Update``, status writers);
* :mod:`.structural` — the structural-schema rules a CRD's ``openAPIV3Schema`` must follow;
* :mod:`.values`, :mod:`.pruning`, :mod:`.defaulting`, :mod:`.celrules` — what a custom
  resource write goes through: pruning of unknown fields, defaults, schema validation with
  kube's messages and field paths, ``x-kubernetes-validations`` CEL rules;
* :mod:`.serving` — one :class:`~apiserver.rest.resources.ResourceDef` per served version
  (converter for ``conversion: None``, Table printer, status/scale subresources, schema);
* :mod:`.controller` — the controllers kube runs inside the API server (naming, establishing,
  finalizing), which install and remove the served resources as CRDs change.
"""

from __future__ import annotations

GROUP = "apiextensions.k8s.io"
VERSION = "v1"
CRD_PLURAL = "customresourcedefinitions"
CRD_KIND = "CustomResourceDefinition"
#: kube's finalizer on every CRD: its custom resources are deleted before the CRD goes.
CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
