"""controllers package."""
