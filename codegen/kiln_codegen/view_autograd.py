"""Autograd facts of an op: its backward node (templates/autograd.j2) and its forward-mode AD
block (templates/forward_ad.j2), each a frozen part of views.OpView."""
import re
from dataclasses import dataclass, replace
from typing import Tuple

from . import cpp, formulas
from .facts import Frozen
from .model import COMPLEX, formula_inputs


@dataclass(frozen=True)
class SavedInput:
    """An argument a backward formula reads, kept in the node."""

    name: str
    kind: str  # "tensor" (a SavedVariable), "tensor_list" or "value" (stored by value)
    stored_type: str  # value: the member's C++ type
    store_expr: str  # value: how the call's argument becomes the member
    needed_if: str = ""  # tensor: saved only when this holds (the edges of the formulas reading it)


@dataclass(frozen=True)
class SavedOutput:
    """An output a backward formula reads (saved without its history: no reference cycle)."""

    name: str
    index: int
    needed_if: str = ""  # saved only when this holds (the edges of the formulas reading it)


@dataclass(frozen=True)
class InputMeta:
    """The sizes and dtype of a Tensor input (a list's per element) the node keeps."""

    name: str
    is_list: bool
    sizes_local: bool  # a formula reads <name>_sizes
    dtype_local: bool  # a formula reads <name>_dtype


@dataclass(frozen=True)
class GradInput:
    """A differentiable input: its formula and its first slot among the node's edges."""

    name: str
    formula: str
    is_list: bool
    index: int  # slots of the single Tensors before it
    lists_before: Tuple[str, ...]  # lists before it, one slot per element each


@dataclass(frozen=True)
class JointGrad:
    """A formula that returns the gradients of several inputs at once (`self, other: f(...)`):
    the inputs in key order, each with its edge slot."""

    formula: str
    inputs: Tuple[GradInput, ...]


def substitute_grad(formula, replacement):
    """The formula with the identifier `grad` (not a member, not grad_<name>) replaced."""
    return re.sub(r"(?<![\w.>])grad(?!\w)", replacement, formula)


def jvp_mode(op):
    """How forward-mode AD passes an op: none (no derivatives, and not a composite of
    differentiable parts), parts (a composite body: its ops push the tangents), formula (`jvp:`),
    linear (the op applied to the tangents), derived (pointwise: conj(formula[grad := conj(t)])
    per input), vjp (the derivative formulas transposed by one backward pass) or unsupported (a
    list input without a `jvp:`)."""
    if not op.derivatives:
        return (
            "parts"
            if op.kind == "composite" and op.composes_gradients and not (op.is_factory or op.is_random)
            else "none"
        )
    if op.derivative_not_implemented:
        return "unsupported"
    if op.jvp:
        return "linear" if op.jvp == "linear" else "formula"
    if op.kind == "pointwise":
        return "derived"
    if any(a.type.is_tensor_list and a.name in op.differentiable_inputs for a in op.sig.arguments):
        return "unsupported"
    return "vjp"


class Autograd(Frozen):
    """Facts the backward node is rendered from (templates/autograd.j2)."""

    def __init__(self, op):
        self._derivatives(op)
        self._freeze()

    def _derivatives(self, op):
        self.differentiable = bool(op.derivatives)
        self.diff_inputs = [a for a in op.sig.arguments if a.name in op.differentiable_inputs]
        used = set()
        for f in op.derivatives.values():
            used |= formulas.used_locals(op, f)
        returns = op.sig.returns
        self.multi_output = len(returns) > 1
        if self.multi_output:
            self.grad_names = [f"grad_{r.name}" for r in returns]
            self.output_names = [r.name for r in returns]
            # result<N> reads output N under its own name
            self.result_aliases = [(f"result{i}", r) for i, r in enumerate(self.output_names) if f"result{i}" in used]
            used |= {name for _, name in self.result_aliases}
        else:
            self.grad_names = ["grad"]
            self.output_names = ["result"]
            self.result_aliases = []
        self.used = used
        self.output_differentiable = [op.output_differentiable(i) for i in range(len(returns))]
        # what the formulas read: arguments, then outputs (saved without history)
        self.saved_inputs = [
            SavedInput(
                name=a.name,
                kind="tensor" if a.type.is_tensor else "tensor_list" if a.type.is_tensor_list else "value",
                stored_type=cpp.stored_type(a.type) if a.type.base != "Tensor" else "",
                store_expr=cpp.store_expr(a),
            )
            for a in op.sig.arguments
            if a.name in used
        ]
        self.saved_outputs = [SavedOutput(name=r, index=i) for i, r in enumerate(self.output_names) if r in used]
        # sizes and dtypes of inputs: every differentiable input's gradient is finished with
        # them; formulas may read them as <input>_sizes / <input>_dtype
        self.input_meta = [
            InputMeta(
                name=a.name,
                is_list=a.type.is_list,
                sizes_local=f"{a.name}_sizes" in used,
                dtype_local=f"{a.name}_dtype" in used and not a.type.is_list,
            )
            for a in op.sig.arguments
            if a.type.base == "Tensor"
            and (a.name in op.differentiable_inputs or f"{a.name}_sizes" in used or f"{a.name}_dtype" in used)
        ]
        # one edge per differentiable Tensor, one per element of a differentiable list: an
        # input's first slot is its position among them, plus the lengths of the lists before it
        grads, index, lists_before = [], 0, []
        single = {key: f for key, f in op.derivatives.items() if "," not in key}
        if op.derivative_not_implemented:  # the node exists so that backward raises, as PyTorch's
            single = {key: f'derivative_not_implemented("{op.full_name}")' for key in single}
        for a in self.diff_inputs:
            grads.append(
                GradInput(
                    name=a.name,
                    formula=single.get(a.name, ""),
                    is_list=a.type.is_list,
                    index=index,
                    lists_before=tuple(lists_before),
                )
            )
            if a.type.is_list:
                lists_before.append(a.name)
            else:
                index += 1
        by_name = {g.name: g for g in grads}
        self.joint_grads = [
            JointGrad(formula=f, inputs=tuple(by_name[n] for n in formula_inputs(key)))
            for key, f in op.derivatives.items()
            if "," in key
        ]
        # A tensor is saved only when a formula reading it will run, as PyTorch's
        # should_compute_output: mul by a constant saves no copy of self, and an in-place change
        # of a tensor only a dead edge's formula read is no error.
        readers = {}
        for key, f in op.derivatives.items():
            for local in formulas.used_locals(op, f):
                readers.setdefault(local, set()).update(formula_inputs(key))
        for alias, output in self.result_aliases:
            readers.setdefault(output, set()).update(readers.get(alias, set()))

        def needed_if(local):
            gs = sorted((by_name[n] for n in readers.get(local, ())), key=lambda g: g.index)
            if not gs or len(gs) == len(grads) or any(g.is_list or g.lists_before for g in gs):
                return ""  # every edge's formula reads it, or list slots: always saved
            return " || ".join(f"node->next_edges[{g.index}].valid()" for g in gs)

        self.saved_inputs = [
            replace(s, needed_if=needed_if(s.name)) if s.kind == "tensor" else s for s in self.saved_inputs
        ]
        self.saved_outputs = [replace(o, needed_if=needed_if(o.name)) for o in self.saved_outputs]
        self.grad_inputs = grads
        # one allocation for the edge list when its length is known up front
        self.edge_reserve = len(grads) if len(grads) > 1 and not lists_before else 0


class ForwardAD(Frozen):
    """What the entry's forward-AD block is rendered from (templates/forward_ad.j2), by
    jvp_mode (see jvp_mode(); a composite of parts renders nothing, like an op without
    derivatives). Reads the op's Autograd facts (ag)."""

    def __init__(self, op, ag):
        self._forward(op, ag)
        self._freeze()

    def _forward(self, op, ag):
        self.jvp_terms, self.jvp_locals, self.jvp_reads_self, self.jvp_reads_result = [], [], False, False
        self.jvp_conj = False
        self.jvp_single = [g for g in ag.grad_inputs if not g.is_list]
        self.jvp_tangents = [a.name for a in ag.diff_inputs if not a.type.is_list]
        self.jvp_lists = [a.name for a in ag.diff_inputs if a.type.is_list]
        self.jvp_mode = jvp_mode(op)
        if self.jvp_mode in ("none", "parts", "unsupported"):
            self.jvp_mode = "none" if self.jvp_mode == "parts" else self.jvp_mode
            return
        if self.jvp_mode == "linear":
            tangent_args = []
            for a in op.sig.arguments:
                tangent_args.append(f"{a.name}_t" if a.name in op.differentiable_inputs else a.name)
            self.jvp_linear_call = ", ".join(tangent_args)
            return
        if self.jvp_mode == "formula":
            used = formulas.used_jvp_locals(op)
            self.jvp_expr = op.jvp
        elif self.jvp_mode == "derived":
            used = set()
            # conj(formula[grad := conj(t)]); an op without complex dtypes needs no conj
            self.jvp_conj = bool(COMPLEX & set(op.dtypes))
            wrap = (lambda e: f"conj({e})") if self.jvp_conj else (lambda e: e)
            for key, f in op.derivatives.items():
                names = formula_inputs(key)
                used |= formulas.used_locals(op, f)
                for k, name in enumerate(names):
                    body = substitute_grad(f, wrap(f"{name}_t"))
                    if len(names) > 1:
                        mask = ", ".join("true" if j == k else "false" for j in range(len(names)))
                        body = re.sub(
                            r"(?<![\w.>])grad_input_mask(?!\w)", f"std::array<bool, {len(names)}>{{{mask}}}", body
                        )
                        body = f"std::get<{k}>({body})"
                    self.jvp_terms.append((name, wrap(body)))
            self.jvp_terms.sort(key=lambda t: [a.name for a in ag.diff_inputs].index(t[0]))
        else:  # vjp
            used = set(ag.used)
        self.jvp_reads_self = "self" in used
        self.jvp_reads_result = "result" in used or self.jvp_mode == "vjp"
        # locals the formulas read that the entry spells differently from the node
        for a in op.sig.arguments:
            if a.type.base == "Tensor" and not a.type.is_list:
                if f"{a.name}_sizes" in used:
                    self.jvp_locals.append(f"const IntArrayRef {a.name}_sizes = {a.name}.sizes();")
                if f"{a.name}_dtype" in used:
                    self.jvp_locals.append(f"const DType {a.name}_dtype = {a.name}.dtype();")
        if ag.multi_output:
            for i, r in enumerate(ag.output_names):
                if r in used or self.jvp_mode == "vjp":
                    self.jvp_locals.append(f"const auto& {r} = std::get<{i}>(result);")
            for alias, output in ag.result_aliases:
                self.jvp_locals.append(f"const auto& {alias} = {output};")
