"""apiserver/registry package."""
