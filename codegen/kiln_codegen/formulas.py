"""Check derivative formulas and pointwise expressions name only things that exist, and
find which saved values each formula needs."""
import re

from . import expr_syntax
from .errors import RegistryError

_IDENT = re.compile(r"[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*")
FORMULA_HINT = (
    "use a kiln op from ops/*.yaml or a helper listed in ops.yaml's helpers: formulas "
    "(declared in runtime/include/kiln/autograd/formulas.h)"
)
CONSTANTS = {"true", "false", "nullopt", "std::nullopt", "INT64_MAX", "INT64_MIN"}
# Tensor methods that are hand-written (tensor.h), not generated from ops.
CORE_METHODS = {
    "sizes",
    "strides",
    "size",
    "stride",
    "dim",
    "numel",
    "dtype",
    "device",
    "options",
    "detach",
    "to",
    "copy_",
    "fill_",
    "zero_",
    "is_contiguous",
    "defined",
    "item",
}


def tokens(text):
    """Yield (name, is_call, is_member) for every identifier in a C++ expression."""
    text = re.sub(r"/\*.*?\*/", " ", text)  # /*is_max=*/true names no local
    for m in _IDENT.finditer(text):
        start, end = m.span()
        before = text[:start].rstrip()
        if before and (before[-1].isdigit() and start > 0 and text[start - 1].isdigit()):
            continue  # exponent of a number literal (1e-5)
        if start > 0 and (text[start - 1].isdigit() or text[start - 1] == "."):
            # after "." a member, unless the "." ends a number literal (2.f); an identifier
            # that ends in a digit (mat2.transpose) is not a number
            word = re.search(r"\w*$", text[: start - 1]).group(0) if text[start - 1] == "." else ""
            if text[start - 1] == "." and not (word and word.isdigit()):
                yield m.group(0), text[end:].lstrip().startswith("("), True
            continue
        is_member = before.endswith(".") or before.endswith("->")
        yield m.group(0), text[end:].lstrip().startswith("("), is_member


def local_names(op):
    """What a formula of `op` may read: each output and its gradient (grad/result for one output;
    grad_<name>, <name> and result<N> for several), the arguments, a Tensor's sizes and dtype."""
    names = {"grad", "result"} if len(op.sig.returns) == 1 else set()
    for i, r in enumerate(op.sig.returns):
        if len(op.sig.returns) > 1:
            names.add(f"result{i}")
        if r.name:
            names.add(r.name)
            if op.output_differentiable(i):
                names.add(f"grad_{r.name}")
    for a in op.sig.arguments:
        names.add(a.name)
        if a.type.base == "Tensor":
            names.add(f"{a.name}_sizes")
            names.add(f"{a.name}_dtype")
    return names


def used_locals(op, formula):
    locals_ = local_names(op)
    return {name for name, is_call, is_member in tokens(formula) if not is_member and not is_call and name in locals_}


def check_registry(registry, formula_lines, errors):
    """Each call must name an op or a helper that ops.yaml's `helpers:` lists (which
    generated/src/helpers_check.cpp holds to the C++ declarations)."""
    op_names = {o.name for o in registry.ops}
    method_names = {o.name for o in registry.ops if o.has_method} | CORE_METHODS
    callable_names = op_names | set(registry.helpers.get("formulas", ()))
    math = set(registry.helpers.get("math", ()))
    for op in registry.ops:
        locals_ = local_names(op)
        for inp, formula in () if op.derivative_not_implemented else op.derivatives.items():
            # a joint formula learns which of its inputs need a gradient
            formula_locals = locals_ | ({"grad_input_mask"} if "," in inp else set())
            line = formula_lines.get((op.full_name, inp), op.line)
            bad = expr_syntax.problem(formula)
            if bad:
                errors.append(
                    RegistryError(line, f"derivative of '{inp}' in {op.full_name} is not a C++ expression: {bad}")
                )
                continue
            over_base = (op.kind == "pointwise" or op.structured) and not op.is_factory
            for name, is_call, is_member in tokens(formula):
                if is_member and is_call and over_base and name in op_names:
                    # the entry is compiled over TensorBase, which has no op methods
                    errors.append(
                        RegistryError(
                            line,
                            f"derivative of '{inp}' in {op.full_name} calls op '{name}' as a method",
                            f"write it as a function call: {name}(x, ...) instead of x.{name}(...)",
                        )
                    )
                    continue
                if is_member:
                    continue
                if is_call:
                    if name in callable_names:
                        continue
                    errors.append(
                        RegistryError(
                            line,
                            f"derivative of '{inp}' in {op.full_name} calls unknown function '{name}'",
                            FORMULA_HINT,
                        )
                    )
                elif name not in formula_locals and name not in CONSTANTS:
                    errors.append(
                        RegistryError(
                            line,
                            f"derivative of '{inp}' in {op.full_name} names unknown input '{name}'",
                            f"names in scope: {', '.join(sorted(formula_locals))}",
                        )
                    )
        if op.jvp and op.jvp != "linear":
            _check_jvp(op, formula_lines.get((op.full_name, "jvp"), op.line), callable_names, method_names, errors)
        if op.kind == "pointwise":
            bad = expr_syntax.problem(op.body)
            if bad:
                errors.append(
                    RegistryError(op.line, f"{op.full_name}: the pointwise expression is not a C++ expression: {bad}")
                )
                continue
            args = {a.name for a in op.sig.arguments}
            for name, is_call, is_member in tokens(op.body):
                if is_member:
                    continue
                if is_call:
                    if name not in math:
                        errors.append(
                            RegistryError(
                                op.line,
                                f"{op.full_name}: pointwise expression calls unknown function '{name}'",
                                "a scalar function of kiln/common/math.h (namespace kiln::math) "
                                "listed in ops.yaml's helpers: math",
                            )
                        )
                elif name not in args and name not in CONSTANTS:
                    errors.append(
                        RegistryError(
                            op.line,
                            f"{op.full_name}: pointwise expression names unknown argument '{name}'",
                            f"arguments: {', '.join(sorted(args))}",
                        )
                    )


def jvp_locals(op):
    """What a jvp formula may read: the inputs, the result(s), sizes and dtypes, and the tangent
    <input>_t of each differentiable input (zeros when it has none)."""
    names = {n for n in local_names(op) if n != "grad" and not n.startswith("grad_")}
    return names | {f"{name}_t" for name in op.differentiable_inputs}


def used_jvp_locals(op):
    locals_ = jvp_locals(op)
    return {name for name, is_call, is_member in tokens(op.jvp) if not is_member and not is_call and name in locals_}


def _check_jvp(op, line, callable_names, method_names, errors):
    bad = expr_syntax.problem(op.jvp)
    if bad:
        errors.append(RegistryError(line, f"jvp of {op.full_name} is not a C++ expression: {bad}"))
        return
    locals_ = jvp_locals(op)
    for name, is_call, is_member in tokens(op.jvp):
        if is_member:
            continue
        if is_call:
            if name not in callable_names:
                errors.append(
                    RegistryError(
                        line,
                        f"jvp of {op.full_name} calls unknown function '{name}'",
                        FORMULA_HINT,
                    )
                )
        elif name not in locals_ and name not in CONSTANTS:
            errors.append(
                RegistryError(
                    line,
                    f"jvp of {op.full_name} names unknown '{name}'",
                    f"names in scope: {', '.join(sorted(locals_))}",
                )
            )
