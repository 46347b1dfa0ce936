"""apiserver/server package."""
