"""Facts of an op that depend on other ops, computed for every op at once before any view is
built (views.build_views), and handed to each OpView as its frozen CrossOp part."""
import re
from dataclasses import dataclass
from typing import Tuple

# A call in a derivative formula: an identifier and "(", not a method (.f) or qualified (x::f).
FORMULA_CALL = re.compile(r"(?<![\w.:])([A-Za-z_]\w*)\s*\(")


@dataclass(frozen=True)
class CrossOp:
    over_base: bool  # the entry is written over TensorBase (kiln/gen/ops/<name>.h declares it)
    adapter: bool  # a composite whose entry stays over Tensor gets a kiln::_ops adapter
    formula_ops: Tuple[str, ...]  # the ops its formulas call: their headers are included
    scalar_clash: bool  # another overload of its name takes a Scalar second: no Scalar overload


def has_list(op):
    """The op takes or returns a list of Tensors."""
    return any(a.type.is_list and a.type.base == "Tensor" for a in op.sig.arguments) or any(
        r.type.is_list for r in op.sig.returns
    )


def cross_op_facts(parts):
    """parts: (op, Autograd, ForwardAD, scalar_overload, options_group) per op, registry order.
    Returns a CrossOp per op, in the same order.

    Which ops get kiln::_ops entries over TensorBase (kiln/gen/ops/<name>.h), and which op
    entries are written over TensorBase, so that they include no op's declaration but those of
    the ops their formulas call and are not recompiled when another op is added.

    A composite's function variant gets an adapter (its entry stays over Tensor) when it takes
    no mutable or list arguments. A pointwise or (non-factory) structured kernel op is written
    over TensorBase unless it takes or returns lists, or a formula calls an op without entries."""
    names = {op.name for op, *_ in parts}
    by_name = {}
    for op, *_ in parts:
        by_name.setdefault(op.name, []).append(op)
    formula_ops, adapter, over_base, clash = [], [], [], []
    for op, ag, fwd, scalar_overload, options_group in parts:
        calls = set()
        for f in op.derivatives.values():
            calls |= {m for m in FORMULA_CALL.findall(f) if m in names}
        if (
            ag.differentiable
            and "inplace" in op.variants
            and any(s.kind == "tensor" and s.name == "self" for s in ag.saved_inputs)
        ):
            calls.add("clone")  # in place, self's old value is saved as _ops::clone(self)
        if op.jvp and op.jvp != "linear":
            calls |= {m for m in FORMULA_CALL.findall(op.jvp) if m in names}
        if fwd.jvp_conj:
            calls.add("conj")  # conj(formula[grad := conj(t)])
        if fwd.jvp_reads_self and "inplace" in op.variants:
            calls.add("clone")  # self's value before an in-place op, for its jvp
        formula_ops.append(tuple(sorted(calls)))
        lists = has_list(op)
        adapter.append(
            op.kind == "composite"
            and not lists
            and "function" in op.variants
            and not any(a.type.mutable for a in op.sig.arguments if a.type.base == "Tensor")
            and not (op.sig.returns and op.sig.returns[0].type.mutable)
        )
        # (a kernel op served by its composite on some backend calls it with Tensors)
        over_base.append(
            (op.kind == "pointwise" or op.structured) and not options_group and not lists and not op.composite_route
        )
        # Scalar-operand overloads of binary pointwise ops (add(t, 2.0), t.add(2.0), t.add_(2.0))
        # are left out where another overload of the name takes a Scalar second.
        clash.append(
            op.kind == "pointwise"
            and scalar_overload
            and any(
                len(other.sig.arguments) >= 2 and other.sig.arguments[1].type.base == "Scalar"
                for other in by_name[op.name]
                if other is not op
            )
        )
    while True:  # drop ops whose formulas call an op without entries, until nothing changes
        with_entries = {op.name for (op, *_), b, a in zip(parts, over_base, adapter) if b or a}
        dropped = [i for i, b in enumerate(over_base) if b and not set(formula_ops[i]) <= with_entries]
        if not dropped:
            break
        for i in dropped:
            over_base[i] = False
    return [CrossOp(*facts) for facts in zip(over_base, adapter, formula_ops, clash)]
