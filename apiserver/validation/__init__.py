"""apiserver/validation package."""
