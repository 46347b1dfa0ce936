"""Admission webhooks: ValidatingWebhookConfiguration and MutatingWebhookConfiguration called with
AdmissionReview v1 over HTTPS (kube's ``admission/plugin/webhook``).

The generic registry is synchronous (each write is atomic on the event loop) while a webhook call
is network I/O that must not block other clients. :mod:`.run` reconciles the two: the write runs,
and when admission reaches a webhook whose answer it does not have yet, it stops before anything
is stored and names the calls it needs; the front door awaits them (concurrently, with the
webhook's timeout, on an async HTTP client) and runs the write again with the answers. See
:mod:`.run` for the details and :mod:`.dispatch` for matching and applying the answers.
"""
