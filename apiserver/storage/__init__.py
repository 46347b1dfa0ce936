"""apiserver/storage package."""
