"""An entry's `checks:` (argument checks run at the entry point: ArgCheck) and `autocast:`
(its cast policy per device)."""
import re

from .errors import RegistryError
from .model import AUTOCAST_LOWER, AUTOCAST_POLICIES, BACKENDS, CHECK_ERRORS, ArgCheck, replace


def parse_checks_and_autocast(op, raw, errors):
    sig = op.sig
    if "checks" in raw:
        op = replace(op, checks=_parse_checks(sig, raw["checks"], raw.line_of("checks"), errors))
    if "autocast" in raw:
        op = replace(op, autocast=_check_autocast(op, raw["autocast"], raw.line_of("autocast"), errors))
    return op


def _check_autocast(op, value, where, errors):
    """`autocast: <policy>` (both devices) or `autocast: {cpu: <policy>, cuda: <policy>}`: how the
    op's floating inputs are cast inside an autocast region of that device. Returns device -> policy."""
    hint = f"autocast: one of {', '.join(AUTOCAST_POLICIES)}, or a mapping {{cpu: <policy>, cuda: <policy>}}"
    if isinstance(value, str):
        policies = {b: value for b in BACKENDS if b in op.backends}
    elif isinstance(value, dict) and value:
        policies = {str(k): v for k, v in value.items()}
    else:
        errors.append(
            RegistryError(where, f"{op.full_name}: autocast must be a policy or a mapping of device -> policy", hint)
        )
        return {}
    for policy in sorted({p for p in policies.values() if p not in AUTOCAST_POLICIES}, key=str):
        errors.append(RegistryError(where, f"{op.full_name}: unknown autocast policy {policy!r}", hint))
    for device, policy in policies.items():
        if device not in BACKENDS:
            errors.append(RegistryError(where, f"{op.full_name}: autocast names unknown device '{device}'", hint))
        elif device not in op.backends:
            errors.append(RegistryError(where, f"{op.full_name}: autocast for {device}, which dispatch does not list"))
        if policy in AUTOCAST_POLICIES and device in AUTOCAST_LOWER:
            declared = op.backend_dtypes(device)
            # the dtypes the policy may hand the op on that device must be declared
            wanted = AUTOCAST_LOWER[device] if policy != "float32" else ["float32"]
            if policy == "promote":
                wanted = wanted + ["float32"]
            lacking = [d for d in wanted if d not in declared]
            if lacking:
                errors.append(
                    RegistryError(
                        where,
                        f"{op.full_name}: autocast {policy} on {device} hands it "
                        f"{', '.join(lacking)}, which its {device} dtypes lack",
                        f"declare {', '.join(lacking)} (with a kernel for it) or drop the policy",
                    )
                )
    inputs = [a for a in op.sig.arguments if a.type.base == "Tensor"]
    if op.is_factory or not inputs:
        errors.append(RegistryError(where, f"{op.full_name}: autocast casts Tensor inputs; this op has none"))
    elif any(a.type.mutable for a in inputs) or any(r.type.mutable for r in op.sig.returns):
        errors.append(
            RegistryError(
                where,
                f"{op.full_name}: autocast applies to functional ops, not to in-place ones",
                "PyTorch's autocast lists name the functional overloads only",
            )
        )
    return {d: p for d, p in policies.items() if d in BACKENDS}


def _parse_checks(sig, value, line, errors):
    names = {a.name: a for a in sig.arguments}
    if not isinstance(value, list):
        errors.append(RegistryError(line, "checks: expected a list of {argument, require, message}"))
        return []
    out = []
    for c in value:
        if (
            not isinstance(c, dict)
            or set(c) - {"argument", "require", "message", "error"}
            or not all(isinstance(c.get(k), str) and c.get(k) for k in ("argument", "require", "message"))
        ):
            errors.append(
                RegistryError(line, f"checks: expected {{argument, require, message[, error]}} strings, got {c!r}")
            )
            continue
        if c["argument"] not in names:
            errors.append(RegistryError(line, f"checks: '{c['argument']}' is not an argument of {sig.full_name}"))
            continue
        error = c.get("error", "ValueError")
        if error not in CHECK_ERRORS:
            errors.append(RegistryError(line, f"checks: unknown error '{error}'", f"error: {', '.join(CHECK_ERRORS)}"))
            continue
        for placeholder in re.findall(r"\{(\w+)\}", c["message"]):
            if placeholder not in names or names[placeholder].type.base == "Tensor":
                errors.append(
                    RegistryError(line, f"checks: message placeholder '{{{placeholder}}}' is not a non-Tensor argument")
                )
        out.append(ArgCheck(c["argument"], c["require"], c["message"], error))
    return out
