"""An entry's `variants:` (function, method, inplace, out; PyTorch's defaults when not given)
and `operator:`."""
from .cpp import options_start
from .errors import RegistryError
from .model import OPERATORS, VARIANTS, as_list, replace


def _default_variants(kind, sig, family=None):
    """PyTorch's default: the function alone (kiln::name), with its out= form where kiln generates
    one. Methods and in-place forms (x.name(), x.name_()) are members of Tensor, which every user
    of Tensor recompiles when one is added: an entry asks for them with `variants:`."""
    if options_start(sig) is not None:
        return ["function"]  # factories, as torch.zeros / torch.zeros_like
    if family is not None and family.mutates:
        return ["function"]  # writes into its arguments: nothing to put into an out= or self
    if kind == "pointwise" or family is not None:
        return ["function", "out"]
    return ["function"]


def _composite_out_legal(op):
    """A composite's out= runs the function and copies its result into out (PyTorch's resize and
    cast rules): one Tensor result, not a view of an input, and no argument it writes."""
    returns = op.sig.returns
    return (
        len(returns) == 1
        and returns[0].type.schema() == "Tensor"
        and returns[0].type.alias is None
        and not any(a.type.mutable for a in op.sig.arguments)
    )


def _inplace_legal(family, sig):
    """A structured op writes into self when its one result has self's shape."""
    return family.inplace and len(sig.returns) == 1


def parse_variants(op, raw, family, errors):
    """variants (defaults as PyTorch's) and operator."""
    sig, kind = op.sig, op.kind
    op = replace(op, variants=as_list(raw.get("variants", _default_variants(kind, sig, family))))
    if "function" not in op.variants:
        op = replace(op, variants=["function"] + op.variants)  # methods and variants are built on the function
    for v in op.variants:
        if v not in VARIANTS:
            errors.append(
                RegistryError(raw.line_of("variants"), f"unknown variant '{v}'", f"variants: {', '.join(VARIANTS)}")
            )
        if v in ("inplace", "out") and op.is_factory:
            errors.append(RegistryError(raw.line_of("variants"), f"{sig.full_name}: a factory has no '{v}' variant"))
        elif v == "out" and kind == "composite" and not _composite_out_legal(op):
            errors.append(
                RegistryError(
                    raw.line_of("variants"),
                    f"{sig.full_name}: a composite's out= variant needs one "
                    "Tensor result that is no view, and no mutable argument",
                )
            )
        elif (
            v in ("inplace", "out")
            and kind != "pointwise"
            and not op.structured
            and not (v == "out" and kind == "composite")
        ):
            errors.append(
                RegistryError(
                    raw.line_of("variants"),
                    f"'{v}' variants are generated for pointwise and structured kernel ops only"
                    + (" (and out= for composites)" if v == "out" else ""),
                )
            )
        if v == "inplace" and op.structured and not _inplace_legal(family, sig):
            errors.append(
                RegistryError(
                    raw.line_of("variants"),
                    f"{sig.full_name}: no in-place variant: its result is not one tensor of self's shape",
                )
            )
        if v == "method" and not (
            sig.arguments and sig.arguments[0].name == "self" and sig.arguments[0].type.is_tensor
        ):
            errors.append(
                RegistryError(raw.line_of("variants"), f"{sig.full_name}: a method needs 'Tensor self' first")
            )
    op = replace(op, operators=as_list(raw.get("operator", [])))
    for o in op.operators:
        if o not in OPERATORS:
            errors.append(
                RegistryError(
                    raw.line_of("operator"), f"unknown operator '{o}'", f"operators: {' '.join(sorted(OPERATORS))}"
                )
            )
        n_tensors = len(op.tensor_args)
        if o == "~" and n_tensors != 1 or o not in ("-", "~") and n_tensors != 2:
            errors.append(
                RegistryError(
                    raw.line_of("operator"),
                    f"operator '{o}' does not fit {sig.full_name}'s {n_tensors} Tensor argument(s)",
                )
            )
    return op
