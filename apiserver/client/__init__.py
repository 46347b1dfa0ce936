"""apiserver/client package."""
