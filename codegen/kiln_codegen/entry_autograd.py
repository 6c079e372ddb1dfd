"""An entry's autograd keys: derivatives (single or joint formulas, or not_implemented),
non_differentiable, output_differentiability, jvp, gradgrad and differentiable."""
from .errors import RegistryError
from .model import NOT_IMPLEMENTED, as_list, formula_inputs, replace


def parse_derivatives(op, raw, ctx, errors):
    """derivatives (single or joint formulas, or not_implemented) and non_differentiable."""
    sig, kind = op.sig, op.kind
    derivs = raw.get("derivatives") or {}
    if derivs == NOT_IMPLEMENTED:
        if kind == "composite":
            errors.append(
                RegistryError(
                    raw.line_of("derivatives"),
                    f"{sig.full_name}: 'derivatives: {NOT_IMPLEMENTED}' " "applies to kernel and pointwise ops",
                    "a composite gets autograd from its parts",
                )
            )
        op = replace(op, derivative_not_implemented=True)
        derivs = {}
    if derivs and not isinstance(derivs, dict):
        errors.append(RegistryError(raw.line_of("derivatives"), "derivatives must map input name -> formula"))
        derivs = {}
    if derivs and kind == "composite" and not op.is_function:
        errors.append(
            RegistryError(
                raw.line_of("derivatives"),
                f"{sig.full_name}: a composite body gets autograd from its parts; remove 'derivatives'",
                "or write composite: <function>, which derivatives record as one node",
            )
        )
    seen_inputs = set()
    for k, v in derivs.items():
        dline = derivs.line_of(k) if hasattr(derivs, "line_of") else raw.line_of("derivatives")
        names = formula_inputs(str(k))
        key = ", ".join(names)
        for name in names:
            a = op.arg(name)
            if a is None:
                errors.append(
                    RegistryError(
                        dline,
                        f"derivative for unknown input '{name}' of {sig.full_name}",
                        f"inputs: {', '.join(x.name for x in sig.arguments if x.type.base == 'Tensor')}",
                    )
                )
            elif a.type.base != "Tensor":
                errors.append(
                    RegistryError(dline, f"derivative for '{name}', which is {a.type.schema()}, not a Tensor")
                )
            elif len(names) > 1 and a.type.is_list:
                errors.append(
                    RegistryError(
                        dline,
                        f"joint derivative '{key}' names the list '{name}'",
                        "give a list input a formula of its own (it returns one gradient per element)",
                    )
                )
            if name in seen_inputs:
                errors.append(RegistryError(dline, f"{sig.full_name}: input '{name}' has two derivative formulas"))
            seen_inputs.add(name)
        if not isinstance(v, str) or not v.strip():
            errors.append(RegistryError(dline, f"derivative of '{key}' must be a formula string"))
        else:
            op = replace(op, derivatives={**op.derivatives, key: v.strip()})
            ctx.formula_lines[(op.full_name, key)] = dline
    op = replace(op, non_differentiable=as_list(raw.get("non_differentiable", [])))
    for k in op.non_differentiable:
        if op.arg(k) is None or op.arg(k).type.base != "Tensor":
            errors.append(
                RegistryError(raw.line_of("non_differentiable"), f"non_differentiable: '{k}' is not a Tensor argument")
            )
    if op.derivative_not_implemented:
        op = replace(
            op,
            derivatives={
                a.name: NOT_IMPLEMENTED
                for a in op.tensor_args
                if a.name not in op.non_differentiable and a.name not in op.bool_inputs
            },
        )
    if op.derivatives:
        for a in op.tensor_args + [x for x in sig.arguments if x.type.is_tensor_list]:
            if (
                a.name not in op.differentiable_inputs
                and a.name not in op.non_differentiable
                and a.name not in op.bool_inputs
            ):
                errors.append(
                    RegistryError(
                        raw.line_of("derivatives"),
                        f"{sig.full_name}: no derivative for input '{a.name}'",
                        "add a formula, or list it under non_differentiable",
                    )
                )
    return op


def parse_differentiability(op, raw, ctx, errors):
    """output_differentiability, jvp, gradgrad, differentiable."""
    sig, kind = op.sig, op.kind
    if "output_differentiability" in raw:
        flags = raw["output_differentiability"]
        oline = raw.line_of("output_differentiability")
        if not isinstance(flags, list) or len(flags) != len(sig.returns) or not all(isinstance(f, bool) for f in flags):
            errors.append(
                RegistryError(
                    oline,
                    f"{sig.full_name}: output_differentiability must list true/false for each of "
                    f"its {len(sig.returns)} outputs",
                )
            )
        elif not op.derivatives and op.kind != "composite":
            # (a composite without formulas records its parts: the flags tell the tests which of
            # its outputs carry no gradient, as its C++ returns them)
            errors.append(
                RegistryError(oline, f"{sig.full_name}: output_differentiability applies to ops with derivatives")
            )
        else:
            op = replace(op, output_differentiability=flags)
    if "jvp" in raw:
        jline = raw.line_of("jvp")
        value = raw["jvp"]
        if not isinstance(value, str) or not value.strip():
            errors.append(RegistryError(jline, f"{sig.full_name}: jvp must be 'linear' or a formula string"))
        elif not op.derivatives or op.derivative_not_implemented:
            errors.append(
                RegistryError(
                    jline,
                    f"{sig.full_name}: jvp applies to ops with derivatives",
                    "an op without them has no tangent (or, a composite body, its parts' tangents)",
                )
            )
        elif value.strip() != "linear" and len(sig.returns) > 1:
            errors.append(
                RegistryError(
                    jline,
                    f"{sig.full_name}: a jvp formula for an op with several outputs is not " "supported",
                    "leave jvp out: the derivative formulas are transposed",
                )
            )
        else:
            op = replace(op, jvp=value.strip())
            ctx.formula_lines[(op.full_name, "jvp")] = jline
    op = replace(op, gradgrad=bool(raw.get("gradgrad", True)))
    if "differentiable" in raw:
        op = replace(op, composes_gradients=bool(raw["differentiable"]))
        if kind != "composite" or op.derivatives:
            errors.append(
                RegistryError(
                    raw.line_of("differentiable"),
                    f"{sig.full_name}: 'differentiable' applies to composite "
                    "ops without derivatives (others are differentiable exactly when they have them)",
                )
            )
    return op
