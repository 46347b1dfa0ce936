"""apiserver package."""
