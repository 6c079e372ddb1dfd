"""An entry's keys that depend on its kind: a pointwise op's (promotion, promote_scalars,
bool_inputs, choices, zero_dim, integer_divisor, integer_exponent), a kernel op's meta step, and
the argument keys of every kind (cpp_no_default_args, foreach_lists)."""
from .errors import RegistryError
from .model import PROMOTIONS, as_list, replace


def parse_kind_keys(op, raw, ctx, errors):
    """The keys of pointwise ops (promotion, scalars, choices ...) and what a kernel op needs;
    then the argument keys of every kind (cpp_no_default_args, foreach_lists)."""
    sig, kind, line = op.sig, op.kind, op.line
    for key in (
        "promotion",
        "promote_scalars",
        "bool_inputs",
        "choices",
        "zero_dim",
        "integer_divisor",
        "integer_exponent",
    ):
        if key in raw and kind != "pointwise":
            errors.append(RegistryError(raw.line_of(key), f"'{key}' applies to pointwise ops only"))
    op = replace(op, promotion=raw.get("promotion", "default"))
    if op.promotion not in PROMOTIONS:
        errors.append(
            RegistryError(
                raw.line_of("promotion"), f"unknown promotion '{op.promotion}'", f"promotions: {', '.join(PROMOTIONS)}"
            )
        )
    op = replace(op, promote_scalars=as_list(raw.get("promote_scalars", [])))
    for s in op.promote_scalars:
        a = op.arg(s)
        if a is None or a.type.base != "Scalar":
            errors.append(
                RegistryError(raw.line_of("promote_scalars"), f"promote_scalars: '{s}' is not a Scalar argument")
            )
    op = replace(op, bool_inputs=as_list(raw.get("bool_inputs", [])))
    for s in op.bool_inputs:
        a = op.arg(s)
        if a is None or not a.type.is_tensor:
            errors.append(RegistryError(raw.line_of("bool_inputs"), f"bool_inputs: '{s}' is not a Tensor argument"))
    op = replace(op, integer_divisor=raw.get("integer_divisor"), integer_exponent=raw.get("integer_exponent"))
    if op.integer_divisor is not None and not (
        op.arg(op.integer_divisor) and op.arg(op.integer_divisor).type.is_tensor
    ):
        errors.append(
            RegistryError(
                raw.line_of("integer_divisor"), f"integer_divisor: '{op.integer_divisor}' is not a Tensor argument"
            )
        )
    if op.integer_exponent is not None and op.integer_exponent not in op.promote_scalars:
        errors.append(
            RegistryError(
                raw.line_of("integer_exponent"),
                f"integer_exponent: '{op.integer_exponent}' is not one of promote_scalars",
                "the exponent's sign is checked among the scalars that join promotion",
            )
        )
    op = replace(op, zero_dim=as_list(raw.get("zero_dim", [])))
    for s in op.zero_dim:
        a = op.arg(s)
        if a is None or not a.type.is_tensor:
            errors.append(RegistryError(raw.line_of("zero_dim"), f"zero_dim: '{s}' is not a Tensor argument"))
    op = replace(op, choices=dict(raw.get("choices", {}) or {}))
    for a in sig.arguments:
        if kind == "pointwise" and a.type.base == "str" and a.name not in op.choices:
            errors.append(
                RegistryError(line, f"{sig.full_name}: str argument '{a.name}' needs its allowed values in 'choices'")
            )
    for k, v in op.choices.items():
        a = op.arg(k)
        if a is None or a.type.base != "str":
            errors.append(RegistryError(raw.line_of("choices"), f"choices: '{k}' is not a str argument"))
        elif not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            errors.append(RegistryError(raw.line_of("choices"), f"choices of '{k}' must be a list of strings"))
    if kind == "pointwise":
        for a in sig.arguments:
            if a.type.is_list or a.type.base in ("ScalarType",) or (a.type.base == "Tensor" and a.type.optional):
                errors.append(
                    RegistryError(
                        raw.line_of("signature"),
                        f"{sig.full_name}: pointwise ops take Tensors, Scalars, floats, ints, bools and strs; '{a.name}' is {a.type.schema()}",
                    )
                )
        if not (1 <= len(op.tensor_args) <= 4):
            errors.append(
                RegistryError(raw.line_of("signature"), f"{sig.full_name}: pointwise ops take 1 to 4 Tensors")
            )
        if len([a for a in sig.arguments if a.type.base != "Tensor"]) > 4:
            errors.append(
                RegistryError(
                    raw.line_of("signature"), f"{sig.full_name}: pointwise ops take at most 4 non-Tensor arguments"
                )
            )
    if kind == "kernel" and "meta" not in raw:
        errors.append(
            RegistryError(
                raw.line_of("dispatch"),
                f"{sig.full_name}: a kernel op needs a meta step",
                f"meta: {', '.join(ctx.meta_families)} (runtime/include/kiln/meta/), which checks the "
                "arguments and sizes the result for every backend",
            )
        )
    op = replace(op, cpp_no_default_args=as_list(raw.get("cpp_no_default_args", [])))
    for k in op.cpp_no_default_args:
        if op.arg(k) is None or op.arg(k).default is None:
            errors.append(
                RegistryError(
                    raw.line_of("cpp_no_default_args"), f"cpp_no_default_args: '{k}' is not an argument with a default"
                )
            )
    lists = raw.get("foreach_lists", {})
    if lists and raw.get("meta") != "foreach":
        errors.append(RegistryError(raw.line_of("foreach_lists"), "foreach_lists is a key of meta: foreach ops"))
    if not isinstance(lists, dict):
        errors.append(
            RegistryError(
                raw.line_of("foreach_lists"), "foreach_lists must map a Tensor[] argument to " "optional or scalars"
            )
        )
        lists = {}
    for k, v in lists.items():
        arg = op.arg(k)
        first_list = next((a.name for a in sig.arguments if a.type.is_tensor_list), None)
        if arg is None or not arg.type.is_tensor_list or k == first_list or v not in ("optional", "scalars"):
            errors.append(
                RegistryError(
                    raw.line_of("foreach_lists"),
                    f"foreach_lists: '{k}: {v}' must name a Tensor[] "
                    "argument after the first one as optional or scalars",
                )
            )
    op = replace(op, foreach_lists=dict(lists))
    return op
