"""DRA logic shared by the ResourceClaim controller, the scheduler's DynamicResources plugin and the
node agent (the role of kube's ``k8s.io/dynamic-resource-allocation``): :mod:`.claims` (which claim a
pod entry stands for, names, reservations) and :mod:`.allocator` (structured device allocation).
Pure: no I/O, no client, no component imports."""
