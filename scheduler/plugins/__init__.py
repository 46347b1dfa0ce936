"""scheduler/plugins package."""
