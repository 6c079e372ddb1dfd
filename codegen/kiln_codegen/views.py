"""Per-op facts the templates read (`v` in templates/*.j2), computed once from the model.

build_views() computes the facts that depend on other ops first (cross_op.py), then builds one
OpView per op. An OpView is frozen once built (facts.Frozen): it holds the op's parts, one per
concern, each frozen too, and reads their attributes as its own (v.saved_inputs is
v.autograd.saved_inputs):

  spelling   view_signature.Spelling    parameter and argument lists of its C++ variants
  autograd   view_autograd.Autograd     the backward node
  forward    view_autograd.ForwardAD    the forward-AD block
  pointwise  view_kernels.Pointwise     a pointwise op's spec and functor (None otherwise)
  structured view_kernels.Structured    a structured kernel op's meta step and kernel
  call       view_registry.CallByName   call-by-name and the registry row
  cross      cross_op.CrossOp           over_base, adapter, formula_ops, scalar_clash
"""
import json
import re

from . import cpp, cross_op, dispatch_keys
from .facts import Frozen
from .model import DTYPES
from .view_autograd import Autograd, ForwardAD
from .view_kernels import Pointwise, Structured
from .view_registry import CallByName
from .view_signature import Spelling

PARTS = ("spelling", "autograd", "forward", "pointwise", "structured", "call", "cross")


def dtype_mask(dtypes):
    return sum(1 << DTYPES.index(d) for d in dtypes)


def camel(name):
    return "".join(p[:1].upper() + p[1:] for p in name.replace(".", "_").split("_") if p)


class Views(Frozen):
    """Every op's view, registry order, and the lookups render needs."""

    def __init__(self, views):
        self.all = views
        self.by_name = {}
        for v in views:
            self.by_name.setdefault(v.name, []).append(v)
        # the names with kiln::_ops entries (kiln/gen/ops/<name>.h)
        self.with_entries = {v.name for v in views if v.over_base or v.adapter}
        self._freeze()


def build_views(registry, sources=None):
    """sources (loader.Sources): the registry files that `#line` directives in composite bodies name."""
    parts = []
    for op in registry.ops:
        ag = Autograd(op)
        parts.append(
            dict(
                spelling=Spelling(op),
                autograd=ag,
                forward=ForwardAD(op, ag),
                pointwise=Pointwise(op) if op.kind == "pointwise" else None,
                structured=Structured(op, registry),
                call=CallByName(op),
            )
        )
    cross = cross_op.cross_op_facts(
        [
            (
                op,
                p["autograd"],
                p["forward"],
                p["pointwise"] is not None and p["pointwise"].scalar_overload,
                cpp.options_start(op.sig) is not None,
            )
            for op, p in zip(registry.ops, parts)
        ]
    )
    return Views([OpView(op, registry, sources, cross=c, **p) for op, p, c in zip(registry.ops, parts, cross)])


class OpView(Frozen):
    def __init__(self, op, registry, sources, **parts):
        assert set(parts) == set(PARTS), sorted(parts)
        for name in PARTS:
            setattr(self, name, parts[name])
        # which part holds each fact a template may read as v.<name> (attributes and properties)
        index = {}
        for p in (parts[n] for n in PARTS):
            if p is not None:
                names = [k for k in vars(p) if not k.startswith("_")]
                names += [k for k, a in vars(type(p)).items() if isinstance(a, property)]
                index.update((k, p) for k in names)
        self._index = index
        self.op = op
        self.sig = op.sig
        self.cname = op.cname
        self.full = op.full_name
        self.name = op.name
        self.node = camel(op.full_name) + "Backward"
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
        self.first = op.sig.arguments[0] if op.sig.arguments else None
        self.has_method = op.has_method
        self.has_list = cross_op.has_list(op)
        self.options_group = cpp.options_start(op.sig) is not None
        self.out_names = [r["name"] for r in self.results] if op.structured else ["out"]
        # a composite's out=: the Tensor inputs out may not require grad with, nor share storage with
        self.out_tensors = [a for a in op.tensor_args if not a.type.optional]
        self.autocast = self._autocast()
        # a view op's ViewReplay (cpp_macros.j2 view_replay): per argument after the first, the
        # type it is kept as by value where that differs from its parameter's (an int[] as a DimVector)
        self.view_captures = [
            (a.name, None if cpp.stored_type(a.type) == cpp.param_type(a.type) else cpp.stored_type(a.type))
            for a in op.sig.arguments[1:]
        ]
        # binary pointwise ops' Scalar-operand overloads (cpp_macros.j2): the parameters after the two operands
        self.scalar_rest = cpp.param_list(op.sig.arguments[2:]) if op.kind == "pointwise" else []
        # a one-line composite body, indented, and where it comes from in ops/*.yaml (its `#line`)
        self.composite_body, self.body_origin = None, None
        if op.kind == "composite" and not op.is_function:
            self.composite_body = "\n".join("  " + line if line.strip() else "" for line in op.body.splitlines())
            if sources:  # the compiler reports errors in the body at their registry lines
                _, path, line = sources.locate(op.body_line)
                self.body_origin = (line, path)
        self._freeze()

    def __getattr__(self, name):
        """An attribute of one of its parts (called only when the view has none of that name)."""
        part = self.__dict__.get("_index", {}).get(name)
        if part is None:
            raise AttributeError(f"OpView has no attribute {name!r}")
        return getattr(part, name)

    # ---- autocast (kiln/autocast.h) ----
    def _autocast(self):
        """The autocast wrapper's facts, or None when autocast leaves the op alone: the CastPolicy
        per device, the Tensor and Tensor[] arguments (cpp_macros.j2 autocast_call re-enters the op
        with its floating inputs cast), and the dtype argument that, when given, turns the cast off
        (as PyTorch's fp32_set_opt_dtype: sum(x, dtype=...) runs as asked)."""
        if not self.op.autocast:
            return None
        enum = {"lower_precision": "LowerPrecision", "float32": "Float32", "promote": "Promote"}
        dtype_arg = self.op.arg("dtype")
        return dict(
            cpu=enum.get(self.op.autocast.get("cpu"), "None"),
            cuda=enum.get(self.op.autocast.get("cuda"), "None"),
            tensors=[a.name for a in self.sig.arguments if a.type.is_tensor],
            lists=[a.name for a in self.sig.arguments if a.type.is_tensor_list],
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
