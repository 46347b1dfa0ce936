"""apiserver/registry/strategies package."""
