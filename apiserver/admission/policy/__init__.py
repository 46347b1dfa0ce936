"""Admission policies (ValidatingAdmissionPolicy, MutatingAdmissionPolicy) and what they share."""
