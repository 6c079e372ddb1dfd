"""Kernel facts of an op, each a frozen part of views.OpView: a pointwise op's spec, functor and
dtype switch (Pointwise), a structured kernel op's meta step, results and kernel signature
(Structured)."""
from dataclasses import dataclass
from typing import Tuple

from . import cpp
from .facts import Frozen
from .model import COMPLEX, DTYPES, FLOATING, INTEGRAL


@dataclass(frozen=True)
class ScalarSlot:
    """A non-Tensor argument of a pointwise op as the PointwiseCall carries it to the functor."""

    name: str
    kind: str  # choice (str, as its index), optional (math::Opt<T>), compute (T), int, bool
    index: int  # in call.choices for a choice, else in call.scalars
    choices: Tuple[str, ...] = ()
    checks_alpha: bool = False  # PyTorch refuses a fractional alpha for integers


PROMOTION_ENUM = {
    "default": "Default",
    "int_to_float": "IntToFloat",
    "bool_result": "BoolResult",
    "complex_to_real": "ComplexToReal",
    "self": "SelfDType",
}


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


class Pointwise(Frozen):
    """A pointwise op's facts (templates/op.cpp.j2, pointwise_functor.h.j2, cpu_pointwise.cpp.j2)."""

    def __init__(self, op):
        tensors = op.tensor_args
        self.spec_args = ", ".join(f'"{a.name}"' for a in tensors)
        self.promotion = PROMOTION_ENUM[op.promotion]
        self.bool_mask = sum(1 << i for i, a in enumerate(tensors) if a.name in op.bool_inputs)
        self.integer_divisor = next((i for i, a in enumerate(tensors) if a.name == op.integer_divisor), -1)
        self.integer_exponent = op.promote_scalars.index(op.integer_exponent) if op.integer_exponent else -1
        self.integer_checks = self.integer_divisor >= 0 or self.integer_exponent >= 0
        self.inputs = ", ".join(f"&{a.name}" for a in tensors)
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
        self.functor_params = ", ".join(("bool " if a.name in op.bool_inputs else "T ") + a.name for a in tensors)
        cases = []
        for d in compute_dtypes(op):
            store, opmath = cpp.DTYPE_CPP[d]
            out_store = cpp.DTYPE_CPP[out_dtype(op, d)][0]
            ins = ", ".join("bool" if a.name in op.bool_inputs else store for a in tensors)
            cases.append(dict(enum=cpp.dtype_enum(d), store=store, opmath=opmath, out=out_store, ins=ins))
        self.cases = cases
        self.case_list = ", ".join(cpp.dtype_enum(d) for d in compute_dtypes(op))
        self.scalar_overload = (
            len(tensors) == 2
            and tensors[1].name not in op.bool_inputs
            and tensors[0] is op.sig.arguments[0]
            and tensors[1] is op.sig.arguments[1]
        )
        self._freeze()


class Structured(Frozen):
    """A structured kernel op's facts (templates/structured.j2); every op has mutates,
    kernel_lists, written and returned_arg (empty unless structured)."""

    def __init__(self, op, registry):
        # in-place families (`mutates`: foreach, amp_update_scale) write into the op's mutable
        # arguments: no result is allocated and the kernel gets every Tensor and Tensor[] argument
        self.mutates, self.kernel_lists, self.written, self.returned_arg = False, [], [], None
        if op.structured:
            self._structured(op, registry)
        self._freeze()

    def _structured(self, op, registry):
        multi_output = len(op.sig.returns) > 1
        fam = self.family = registry.meta_families[op.meta]
        self.plan_type = "meta::" + fam.plan
        self.meta_header = f"kiln/meta/{fam.header}.h"
        # results in return order: (name in the out= signature, dtype expression)
        if multi_output:
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
