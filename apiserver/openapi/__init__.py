"""OpenAPI schemas: the Kubernetes 1.37 definitions plus gangplane's own fields."""
