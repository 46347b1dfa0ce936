"""resourceclaims package."""
