"""apiserver/admission package."""
