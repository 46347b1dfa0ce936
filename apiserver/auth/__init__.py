"""Authentication and authorization, shaped like kube-apiserver's ``pkg/authorization`` and RBAC.

Pure pieces, no store and no HTTP:

* :mod:`.attributes` — who asks to do what (kube's ``authorizer.Attributes``), and the
  ``RequestInfoFactory`` that derives them from a request's method, path and query;
* :mod:`.rbac` — RBAC rule matching, subject matching, rule resolution over a
  :class:`~apiserver.auth.rbac.PolicySource`, ``Covers`` and the escalation check;
* :mod:`.authorizer` — decisions, ``AlwaysAllow``, the ``system:masters`` short-cut, the union
  of authorizers and kube's ``Forbidden`` wording;
* :mod:`.impersonation` — ``Impersonate-*`` headers checked against the authorizer;
* :mod:`.serviceaccount` — bound service-account JWTs: issuing and authenticating them.

The API server wires them in (``apiserver.server.frontdoor``, the review strategies, the RBAC
strategies); nothing here imports the registry or the server.
"""
