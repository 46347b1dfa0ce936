"""apiserver/patch package."""
