"""The DRA device-selector environment: what ``spec.selectors[].cel.expression`` can see.

As in ``k8s.io/dynamic-resource-allocation/cel``, an expression sees one variable, ``device``:

* ``device.driver`` — the driver name (string);
* ``device.attributes[domain][id]`` — attributes grouped by the domain of their qualified name;
  an unqualified name belongs to the driver's domain, so ``model`` published by
  ``gpu.example.com`` is ``device.attributes["gpu.example.com"].model``. Values keep their
  type: ``int`` → int, ``bool`` → bool, ``string`` → string, ``version`` → semver, and the
  list forms (``ints`` …) → lists;
* ``device.capacity[domain][id]`` — capacities grouped the same way, as quantities
  (``device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0``);
* ``device.allowMultipleAllocations`` — bool.

The driver's own domain is always present (possibly empty), so ``has(device.attributes[d].x)``
works for it. The result must be a bool.
"""

from __future__ import annotations

from typing import Any

from apiserver.cel.compiler import Environment, Program, compile_expression
from apiserver.cel.library import KUBERNETES_FUNCTIONS, quantity

#: ``resource.CELSelectorExpressionMaxLength``.
SELECTOR_MAX_LENGTH = 10 * 1024

DEVICE_ENVIRONMENT = Environment(
    name="dra-device-selector",
    variables=frozenset({"device"}),
    functions=KUBERNETES_FUNCTIONS,
    max_length=SELECTOR_MAX_LENGTH,
)

_SCALAR_KEYS = ("int", "bool", "string", "version")
_LIST_KEYS = ("ints", "bools", "strings", "versions")


def compile_selector(expression: str) -> Program:
    """Compile a device selector (cached); raises :class:`~apiserver.cel.CompileError`."""
    return compile_expression(DEVICE_ENVIRONMENT, expression)


def _split(name: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def attribute_value(attr: Any) -> Any:
    """The CEL value of one ``DeviceAttribute`` (exactly one member set), or ``None``."""
    if not isinstance(attr, dict):
        return None
    for key in _SCALAR_KEYS:
        if key in attr:
            return attr[key]
    for key in _LIST_KEYS:
        if key in attr:
            return list(attr[key] or [])
    return None


def device_activation(driver: str, device: dict[str, Any]) -> dict[str, Any]:
    """The ``device`` variable for one entry of ``ResourceSlice.spec.devices``."""
    attributes: dict[str, dict[str, Any]] = {driver: {}}
    for name, attr in (device.get("attributes") or {}).items():
        value = attribute_value(attr)
        if value is None:
            continue
        domain, ident = _split(name, driver)
        attributes.setdefault(domain, {})[ident] = value
    capacity: dict[str, dict[str, Any]] = {driver: {}}
    for name, cap in (device.get("capacity") or {}).items():
        raw = cap.get("value") if isinstance(cap, dict) else None
        if raw is None:
            continue
        domain, ident = _split(name, driver)
        capacity.setdefault(domain, {})[ident] = quantity(str(raw))
    return {
        "device": {
            "driver": driver,
            "attributes": attributes,
            "capacity": capacity,
            "allowMultipleAllocations": bool(device.get("allowMultipleAllocations", False)),
        }
    }
