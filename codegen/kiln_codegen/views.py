"""Per-op facts the templates need, computed once from the model."""
import json
import re
from dataclasses import dataclass, replace
from typing import Optional, Tuple

from . import cpp, dispatch_keys, formulas
from .model import COMPLEX, DTYPES, FLOATING, INTEGRAL, formula_inputs, normalized_samples


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


@dataclass(frozen=True)
class ScalarSlot:
    """A non-Tensor argument of a pointwise op as the PointwiseCall carries it to the functor."""

    name: str
    kind: str  # choice (str, as its index), optional (math::Opt<T>), compute (T), int, bool
    index: int  # in call.choices for a choice, else in call.scalars
    choices: Tuple[str, ...] = ()
    checks_alpha: bool = False  # PyTorch refuses a fractional alpha for integers


@dataclass(frozen=True)
class RegistryArg:
    """One C++ parameter of an op as call-by-name reads it from the Value at a[index]."""

    index: int
    name: str
    kind: str  # options, generator, tensor(_list), optional_tensor, mutable_tensor,
    # (optional_)int_list, (optional_)value
    getter: str  # value kinds: Value's accessor (to_int, to_scalar ...)
    value_type: str  # value kinds: the C++ type it returns
    default: Optional[str]  # C++ default when the argument is left out (None: required or None)
    is_str: bool  # a str argument is passed as std::string_view


# Value accessor and its C++ type per schema base type.
VALUE_GETTERS = {
    "int": ("to_int", "int64_t"),
    "float": ("to_double", "double"),
    "bool": ("to_bool", "bool"),
    "Scalar": ("to_scalar", "Scalar"),
    "ScalarType": ("to_dtype", "DType"),
    "str": ("to_string", "std::string"),
    "Device": ("to_device", "Device"),
    "Layout": ("to_layout", "Layout"),
    "MemoryFormat": ("to_memory_format", "MemoryFormat"),
}


PROMOTION_ENUM = {
    "default": "Default",
    "int_to_float": "IntToFloat",
    "bool_result": "BoolResult",
    "complex_to_real": "ComplexToReal",
    "self": "SelfDType",
}


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


def dtype_mask(dtypes):
    return sum(1 << DTYPES.index(d) for d in dtypes)


def camel(name):
    return "".join(p[:1].upper() + p[1:] for p in name.replace(".", "_").split("_") if p)


def compute_dtypes(op):
    """dtypes the CPU dtype switch must cover for a pointwise op."""
    declared = set(op.dtypes)
    if op.promotion == "int_to_float":
        out = {d for d in declared if d in FLOATING or d in COMPLEX}
        if declared & (INTEGRAL | {"bool"}):
            out |= {"float32", "float64"}
    else:
        out = set(declared)
    return [d for d in DTYPES if d in out]


def out_dtype(op, compute):
    if op.promotion == "bool_result":
        return "bool"
    if op.promotion == "complex_to_real":
        return cpp.REAL_OF.get(compute, compute)
    return compute


class OpView:
    def __init__(self, op, registry):
        self.op = op
        self.sig = op.sig
        self.cname = op.cname
        self.full = op.full_name
        self.name = op.name
        self.node = camel(op.full_name) + "Backward"
        self.ret = cpp.return_type(op.sig)
        self.params_decl = cpp.params(op.sig, no_default=op.cpp_no_default_args)
        self.params_def = cpp.params(op.sig, with_defaults=False)
        self.args = cpp.arg_names(op.sig)
        self.mask = dtype_mask(op.dtypes)
        self.dtype_list = ", ".join(op.dtypes)
        # the table's layout columns: strided, and the sparse ones up to the last that dispatch names
        used = [dispatch_keys.LAYOUTS.index(t.layout) for t in op.dispatch]
        self.layouts = dispatch_keys.LAYOUTS[: max(used, default=0) + 1]
        headers = []
        for t in op.kernel_targets:
            if not any(h.backend == t.backend and h.kernel == t.kernel for h in headers):
                headers.append(t)
        self.kernel_headers = headers  # one per (backend, kernel name)
        self.dispatch_summary = ", ".join(
            f"{t.key}: {t.kernel or t.kind}"
            + ("" if t.dtypes == op.dtypes else f" ({', '.join(t.dtypes)})")
            + (f", kernel {t.pending} pending" if t.pending else "")
            for t in op.dispatch
        )
        self.tensors = op.tensor_args
        self.tensor_lists = [a for a in op.sig.arguments if a.type.is_tensor_list]
        first = op.sig.arguments[0] if op.sig.arguments else None
        self.first = first
        self.has_method = op.has_method
        self.method_params_decl = cpp.params(op.sig, skip_first=True, no_default=op.cpp_no_default_args)
        self.method_params_def = cpp.params(op.sig, with_defaults=False, skip_first=True)
        self.method_args = cpp.arg_names(op.sig, skip_first=True)
        # The spelling of its kiln::_ops entries, over TensorBase (kiln/gen/ops/<name>.h).
        self.base_ret = cpp.return_type(op.sig, base=True)
        self.base_params_decl = cpp.params(op.sig, base=True, no_default=op.cpp_no_default_args)
        self.base_params_def = cpp.params(op.sig, with_defaults=False, base=True)
        self.base_inplace_params_decl = cpp.params(
            op.sig, first_override="TensorBase&", base=True, no_default=op.cpp_no_default_args
        )
        self.base_inplace_params_def = cpp.params(op.sig, with_defaults=False, first_override="TensorBase&", base=True)
        self.has_list = any(a.type.is_list and a.type.base == "Tensor" for a in op.sig.arguments) or any(
            r.type.is_list for r in op.sig.returns
        )
        # Set by render: the entry is written over TensorBase (see over_base there), and the ops
        # its formulas call (their kiln/gen/ops/<name>.h headers).
        self.over_base = False
        self.formula_ops = []
        self.mutates, self.kernel_lists, self.written, self.returned_arg = False, [], [], None
        self._derivatives(registry)
        self._forward()
        self._pointwise()
        self._structured(registry)
        self._registry()
        self.out_names = [r["name"] for r in self.results] if op.structured else ["out"]
        # a composite's out=: the Tensor inputs out may not require grad with, nor share storage with
        self.out_inputs = ", ".join(f"&{a.name}" for a in op.tensor_args if not a.type.optional)
        # a mutating op (uniform_: Tensor(a!) self -> Tensor(a!)) is a non-const method
        self.method_const = "" if (first is not None and first.type.mutable) else " const"

    @property
    def options_group(self):
        """The op takes PyTorch's factory keywords, folded into `TensorOptions options`."""
        return cpp.options_start(self.sig) is not None

    # ---- autocast (kiln/autocast.h) ----
    @property
    def autocast(self):
        """The autocast wrapper's facts, or None when autocast leaves the op alone: the CastPolicy
        per device, the Tensor and Tensor[] arguments, the call that re-enters the op with its
        floating inputs cast, and the dtype argument that, when given, turns the cast off (as
        PyTorch's fp32_set_opt_dtype: sum(x, dtype=...) runs as asked)."""
        if not self.op.autocast:
            return None
        enum = {"lower_precision": "LowerPrecision", "float32": "Float32", "promote": "Promote"}
        tensors = [a.name for a in self.sig.arguments if a.type.is_tensor]
        lists = [a.name for a in self.sig.arguments if a.type.is_tensor_list]
        args = []
        for name, ty, _ in cpp.cpp_arguments(self.sig):
            if name in tensors:
                cast = f"autocast::cast({name}, *to)"
                args.append(cast if self.over_base else f"Tensor({cast})")
            elif name in lists:
                args.append(f"autocast::cast({name}, *to)")
            else:
                args.append(name)
        dtype_arg = self.op.arg("dtype")
        callee = f"_ops::{self.name}" if self.over_base else f"kiln::{self.name}"
        return dict(
            cpu=enum.get(self.op.autocast.get("cpu"), "None"),
            cuda=enum.get(self.op.autocast.get("cuda"), "None"),
            tensors=tensors,
            lists=lists,
            call=f"{callee}({', '.join(args)})",
            dtype_arg="dtype" if dtype_arg is not None and dtype_arg.type.schema() == "ScalarType?" else None,
        )

    # ---- dispatch facts ----
    @property
    def device_expr(self):
        if self.options_group:
            return "options.device"
        for a in self.sig.arguments:
            if a.type.is_tensor and not a.type.optional:
                return f"{a.name}.device()"
            if a.type.is_tensor_list:
                return f'support::list_device("{self.full}", "{a.name}", {a.name})'
        return "kCPU"

    @property
    def layout_expr(self):
        """The layout dispatch uses: the first Tensor's, a factory's options' (tensor lists are strided)."""
        if self.options_group:
            return "options.layout"
        for a in self.sig.arguments:
            if a.type.is_tensor and not a.type.optional:
                return f"{a.name}.layout()"
        return "Layout::Strided"

    @property
    def arg_checks(self):
        """(condition, error, argument, message parts) per `checks:` entry: the message's `{name}`
        placeholders become the argument's value (a Scalar's as a double) between C++ string literals."""
        types = {a.name: a.type for a in self.sig.arguments}
        out = []
        for c in self.op.checks:
            parts = []
            for i, piece in enumerate(re.split(r"\{(\w+)\}", c.message)):
                if i % 2 == 0:
                    if piece:
                        parts.append(json.dumps(piece))
                else:
                    parts.append(f"{piece}.to_double()" if types[piece].base == "Scalar" else piece)
            out.append((c.require, c.error, c.argument, ", ".join(parts)))
        return out

    @property
    def dtype_checked(self):
        """(argument, how) pairs the entry point checks against the declared dtypes, in order:
        how is tensor, list (each element), zero_dim (a 0-d "value tensor") or options (a
        factory's given dtype). A structured factory checks the dtype its meta step resolves."""
        op = self.op
        if op.kind == "pointwise":
            out = []
            for a in self.tensors:
                if a.name not in op.bool_inputs:
                    out.append((a.name, "tensor"))
                if a.name in op.zero_dim:
                    out.append((a.name, "zero_dim"))
            return out
        if self.options_group:
            return [] if op.structured else [("options", "options")]
        for a in self.sig.arguments:  # the first Tensor (or list) decides
            if a.type.is_tensor and not a.type.optional:
                return [(a.name, "tensor")]
            if a.type.is_tensor_list:
                return [(a.name, "list")]
        return []

    @property
    def same_device_inputs(self):
        """Tensor arguments that must share one device (checked when there are two or more)."""
        names = [a.name for a in self.tensors]
        return names if len(names) >= 2 else []

    # ---- autograd ----
    def _derivatives(self, registry):
        """Facts the autograd node is rendered from (templates/autograd.j2)."""
        op = self.op
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
        self.record_inputs = ", ".join(f"&{a.name}" for a in self.diff_inputs if not a.type.is_list)
        self.record_lists = [a.name for a in self.diff_inputs if a.type.is_list]

    # ---- forward-mode AD ----
    def _forward(self):
        """What the entry's forward-AD block is rendered from (templates/forward_ad.j2), by
        jvp_mode (see jvp_mode(); a composite of parts renders nothing, like an op without
        derivatives)."""
        op = self.op
        self.jvp_terms, self.jvp_locals, self.jvp_reads_self, self.jvp_reads_result = [], [], False, False
        self.jvp_conj = False
        self.jvp_single = [g for g in self.grad_inputs if not g.is_list]
        self.jvp_tangents = [a.name for a in self.diff_inputs if not a.type.is_list]
        self.jvp_lists = [a.name for a in self.diff_inputs if a.type.is_list]
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
            self.jvp_terms.sort(key=lambda t: [a.name for a in self.diff_inputs].index(t[0]))
        else:  # vjp
            used = set(self.used)
        self.jvp_reads_self = "self" in used
        self.jvp_reads_result = "result" in used or self.jvp_mode == "vjp"
        # locals the formulas read that the entry spells differently from the node
        for a in op.sig.arguments:
            if a.type.base == "Tensor" and not a.type.is_list:
                if f"{a.name}_sizes" in used:
                    self.jvp_locals.append(f"const IntArrayRef {a.name}_sizes = {a.name}.sizes();")
                if f"{a.name}_dtype" in used:
                    self.jvp_locals.append(f"const DType {a.name}_dtype = {a.name}.dtype();")
        if self.multi_output:
            for i, r in enumerate(self.output_names):
                if r in used or self.jvp_mode == "vjp":
                    self.jvp_locals.append(f"const auto& {r} = std::get<{i}>(result);")
            for alias, output in self.result_aliases:
                self.jvp_locals.append(f"const auto& {alias} = {output};")

    @property
    def jvp_condition(self):
        parts = []
        if self.jvp_tangents:
            parts.append("autograd::forward_ad::any_dual({" + ", ".join(f"&{n}" for n in self.jvp_tangents) + "})")
        parts += [f"autograd::forward_ad::any_dual({l})" for l in self.jvp_lists]
        return " || ".join(parts) if parts else "false"

    @property
    def record_condition(self):
        parts = []
        if self.record_inputs:
            parts.append(f"autograd::any_requires_grad({{{self.record_inputs}}})")
        for l in self.record_lists:
            parts.append(f"autograd::any_requires_grad({l})")
        return " || ".join(parts) if parts else "false"

    # ---- pointwise ----
    def _pointwise(self):
        op = self.op
        if op.kind != "pointwise":
            return
        self.spec_args = ", ".join(f'"{a.name}"' for a in self.tensors)
        self.promotion = PROMOTION_ENUM[op.promotion]
        self.bool_mask = sum(1 << i for i, a in enumerate(self.tensors) if a.name in op.bool_inputs)
        self.integer_divisor = next((i for i, a in enumerate(self.tensors) if a.name == op.integer_divisor), -1)
        self.integer_exponent = op.promote_scalars.index(op.integer_exponent) if op.integer_exponent else -1
        self.integer_checks = self.integer_divisor >= 0 or self.integer_exponent >= 0
        self.inputs = ", ".join(f"&{a.name}" for a in self.tensors)
        self.promoting = ", ".join(
            f"{'&' if not op.arg(s).type.optional else ''}{s}{'' if not op.arg(s).type.optional else ' ? &*' + s + ' : nullptr'}"
            for s in op.promote_scalars
        )
        # the non-Tensor arguments travel in the PointwiseCall: str choices as an index, the
        # others as Scalars (with a flag for an optional one's presence)
        slots, scalar, choice = [], 0, 0
        for a in op.sig.arguments:
            if a.type.base == "Tensor":
                continue
            if a.type.base == "str":
                slots.append(ScalarSlot(name=a.name, kind="choice", index=choice, choices=tuple(op.choices[a.name])))
                choice += 1
                continue
            kind = (
                "optional"
                if a.type.optional
                else {"Scalar": "compute", "float": "compute", "int": "int"}.get(a.type.base, "bool")
            )
            slots.append(
                ScalarSlot(name=a.name, kind=kind, index=scalar, checks_alpha=a.name == "alpha" and not a.type.optional)
            )
            scalar += 1
        self.scalar_slots = slots
        self.functor_params = ", ".join(("bool " if a.name in op.bool_inputs else "T ") + a.name for a in self.tensors)
        cases = []
        for d in compute_dtypes(op):
            store, opmath = cpp.DTYPE_CPP[d]
            out_store = cpp.DTYPE_CPP[out_dtype(op, d)][0]
            ins = ", ".join("bool" if a.name in op.bool_inputs else store for a in self.tensors)
            cases.append(dict(enum=cpp.dtype_enum(d), store=store, opmath=opmath, out=out_store, ins=ins))
        self.cases = cases
        self.case_list = ", ".join(cpp.dtype_enum(d) for d in compute_dtypes(op))
        self.scalar_overload = (
            len(self.tensors) == 2
            and self.tensors[1].name not in op.bool_inputs
            and self.tensors[0] is op.sig.arguments[0]
            and self.tensors[1] is op.sig.arguments[1]
        )

    # ---- structured kernel ops ----
    def _structured(self, registry):
        op = self.op
        if not op.structured:
            return
        fam = self.family = registry.meta_families[op.meta]
        self.plan_type = "meta::" + fam.plan
        self.meta_header = f"kiln/meta/{fam.header}.h"
        # results in return order: (name in the out= signature, dtype expression)
        if self.multi_output:
            # a family may size a result from a plan field of its own (layer_norm's mean, rstd)
            sizes, dtypes = fam.result_sizes, fam.result_dtypes
            self.results = [
                dict(
                    name=r.name,
                    sizes="plan." + sizes.get(r.name, "sizes"),
                    dtype="DType::Int64" if r.name == "indices" else "plan." + dtypes.get(r.name, "dtype"),
                )
                for r in op.sig.returns
            ]
        else:
            self.results = [dict(name="out", sizes="plan.sizes", dtype="plan.dtype")]
        # in-place families (`mutates`: foreach, amp_update_scale) write into the op's mutable
        # arguments: no result is allocated and the kernel gets every Tensor and Tensor[] argument
        self.mutates = fam.mutates
        self.kernel_lists = [a.name for a in op.sig.arguments if a.type.is_tensor_list] if self.mutates else []
        self.written = [
            (a.name, a.type.is_list) for a in op.sig.arguments if a.type.base == "Tensor" and a.type.mutable
        ]
        ret = op.sig.returns[0].type.alias if op.sig.returns else None
        self.returned_arg = next(
            (a.name for a in op.sig.arguments if ret and a.type.alias == ret and not a.type.is_list), None
        )
        if self.mutates:
            self.results = []
            self.kernel_inputs = [a.name for a in op.sig.arguments if a.type.base == "Tensor"]
            # the kernel's arguments: lists as their TensorBase handles (<name>_base)
            self.kernel_call_args = ", ".join(
                ["plan"]
                + [f"{n}_base" if n in self.kernel_lists else n for n in self.kernel_inputs]
                + [a.name for a in op.sig.arguments if a.type.base != "Tensor"]
            )
            kinds = {"optional": "kOptional", "scalars": "kScalars"}
            self.foreach_lists = [(n, kinds.get(op.foreach_lists.get(n, ""))) for n in self.kernel_lists]
            self.foreach_scalars = [a.name for a in op.sig.arguments if a.type.is_tensor]
        self.kernel_inputs = (
            self.kernel_inputs if self.mutates else [a.name for a in op.sig.arguments if a.type.is_tensor]
        )
        # arguments the meta step does not consume go to the kernel as they are (var's correction)
        consumed = {} if fam.custom else fam.args
        extra = [a for a in op.sig.arguments if a.name not in consumed and a.type.base != "Tensor"]
        if fam.factory or fam.plan_only:
            extra = []  # the plan carries every argument a factory kernel needs
        self.kernel_extra = [a.name for a in extra]
        n = len(self.results)

        def input_type(name):
            return "const TensorBaseList&" if name in self.kernel_lists else "const TensorBase&"

        self.kernel_param_types = ", ".join(
            [f"const {self.plan_type}&"]
            + ["const TensorBase&"] * n
            + [input_type(t) for t in self.kernel_inputs]
            + [cpp.param_type(a.type) for a in extra]
        )
        self.kernel_params = ", ".join(
            [f"const {self.plan_type}& plan"]
            + [f"const TensorBase& {r['name']}" for r in self.results]
            + [f"{input_type(t)} {t}" for t in self.kernel_inputs]
            + [f"{cpp.param_type(a.type)} {a.name}" for a in extra]
        )
        self.out_ret = "Tensor&" if n == 1 else "std::tuple<" + ", ".join(["Tensor&"] * n) + ">"
        self.out_params_prefix = ", ".join(f"Tensor& {r['name']}" for r in self.results)
        self.base_out_ret = "TensorBase&" if n == 1 else "std::tuple<" + ", ".join(["TensorBase&"] * n) + ">"
        self.base_out_params_prefix = ", ".join(f"TensorBase& {r['name']}" for r in self.results)

    # ---- registry ----
    def _registry(self):
        """How each schema argument is read from call-by-name's Values (templates/registry.j2)."""
        start = cpp.options_start(self.sig)
        args = []
        for i, a in enumerate(self.sig.arguments):
            t = a.type
            if start is not None and start < i < start + len(cpp.OPTIONS_GROUP):
                continue  # read together with the group's first argument
            if i == start:
                kind = "options"
            elif t.base == "Generator":
                kind = "generator"
            elif t.base == "Tensor":
                kind = (
                    "tensor_list"
                    if t.is_list
                    else "optional_tensor"
                    if t.optional
                    else ("mutable_tensor" if t.mutable else "tensor")
                )
            elif t.base == "int" and t.is_list:
                kind = "optional_int_list" if t.optional else "int_list"
            elif t.base == "float" and t.is_list:
                kind = "optional_float_list" if t.optional else "float_list"
            else:
                kind = "optional_value" if t.optional else "value"
            default = cpp.default_value(a)
            args.append(
                RegistryArg(
                    index=i,
                    name="options" if kind == "options" else a.name,
                    kind=kind,
                    getter=VALUE_GETTERS.get(t.base, ("", ""))[0],
                    value_type=VALUE_GETTERS.get(t.base, ("", ""))[1],
                    default=None if default in (None, "std::nullopt") else default,
                    is_str=t.base == "str",
                )
            )
        self.registry_args = args
        self.registry_call = f"kiln::{self.name}({', '.join(r.name for r in args)})"

    @property
    def arg_specs(self):
        def spec(a):
            optional = a.has_default  # a Tensor? without a default must be passed (None is a value)
            type_text = re.sub(r"\(\w+!?\)", "", a.type.schema())  # Tensor(b!) -> Tensor
            return f'{{"{a.name}", "{type_text}", {str(a.kwarg_only).lower()}, {str(optional).lower()}}}'

        return ", ".join(spec(a) for a in self.sig.arguments)


def sample_json(op):
    return normalized_samples(op)
