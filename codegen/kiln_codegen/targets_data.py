"""The data target: generated/op_samples.json, op_samples/<op>.json (the generated tests'
inputs and references, tools/make_references.py) and coverage_declared.json (tools/coverage.py)."""
import json
import re

from .outputs import Output
from .samples import normalized_samples
from .view_autograd import jvp_mode


def str_args(sig):
    return sig.arguments_text()


def is_grad_tested(op):
    """Ops whose gradients the generated tests check: those with formulas, and compositions
    (composite without formulas) of differentiable parts unless `differentiable: false`."""
    if not {"float64", "complex128"} & set(op.dtypes):
        return False  # gradcheck runs in those
    if op.is_factory or op.is_random:
        return False  # a factory's or a draw's values do not depend on its inputs' values
    if op.derivative_not_implemented:
        return False  # backward raises (tests/test_indexing.cpp checks scatter.reduce's)
    if op.derivatives:
        return True
    return op.kind == "composite" and bool(differentiable_inputs(op))


def grad_dtypes(op, backend):
    """The dtypes gradcheck runs in, where the backend declares them: float64, and complex128
    (PyTorch's conjugate-Wirtinger convention)."""
    return [d for d in ("float64", "complex128") if d in op.backend_dtypes(backend)]


def differentiable_inputs(op):
    if op.derivatives:
        return [a.name for a in op.sig.arguments if a.name in op.differentiable_inputs]
    if op.kind != "composite" or not op.composes_gradients:
        return []
    return [a.name for a in op.sig.arguments if a.type.base == "Tensor" and a.name not in op.non_differentiable]


def _arg_json(a):
    default = None
    if a.default is not None and a.default != "None":
        d = a.default
        t = a.type
        if t.base == "bool":
            default = d == "True"
        elif t.base in ("int",) and not t.is_list:
            default = int(d)
        elif t.base == "int" and t.is_list:
            inner = d.strip("[]").strip()
            default = [int(x) for x in inner.split(",")] if inner else []
        elif t.base == "float" and t.is_list:
            inner = d.strip("[]").strip()
            default = [float(x) for x in inner.split(",")] if inner else []
        elif t.base in ("float", "Scalar"):
            default = float(d) if any(c in d for c in ".e") else int(d)
        elif t.base == "str":
            default = d.strip("'")
    return {
        "name": a.name,
        "type": re.sub(r"\(\w+!?\)", "", a.type.schema()),
        "kwarg_only": a.kwarg_only,
        "has_default": a.default is not None,
        "default": default,
        "mutable": a.type.mutable,
    }


def samples_doc(registry):
    ops = []
    for op in registry.ops:
        torch_call = op.torch or f"torch.ops.aten.{op.name}.{op.sig.overload or 'default'}"
        ops.append(
            {
                "name": op.full_name,
                "signature": op.full_name + str_args(op.sig),
                "torch": torch_call,
                "dtypes": op.dtypes,
                "differentiable_inputs": differentiable_inputs(op) if is_grad_tested(op) else [],
                "gradgrad": op.gradgrad,
                "jvp": jvp_mode(op),
                "special_values": op.special_values,
                "variants": op.variants,
                "factory": op.is_factory,
                "random": op.is_random,
                "compare": op.compare,
                "reads_storage": op.reads_storage,
                # per output: false where it has no gradient (layer_norm's mean and rstd)
                "differentiable_outputs": op.output_differentiability,
                "args": [_arg_json(a) for a in op.sig.arguments],
                "samples": normalized_samples(op),
                # an op of an in-place family: the tests compare what it wrote into these
                # arguments (in schema order) rather than what it returned
                "writes": writes(op, registry),
            }
        )
    return {"ops": ops}


def writes(op, registry):
    """The mutable arguments an in-place kernel family (meta: foreach ...) writes, else []."""
    if not (op.structured and registry.meta_families[op.meta].mutates):
        return []
    return [a.name for a in op.sig.arguments if a.type.base == "Tensor" and a.type.mutable]


def declared_doc(registry):
    ops = []
    for op in registry.ops:
        backends = {}
        for b in ("cpu", "cuda"):
            declared = op.backend_dtypes(b)
            # Kernels codegen emits or ops/*.yaml names; whether the CUDA ones are in this build is
            # the build's business (tools/coverage.py reads build_info.json).
            compiled = declared
            t = op.target(b)
            # what dispatch: names for it: a kernel's name, pointwise or composite ("" when none)
            target = (t.kernel or t.kind) + (f" ({t.pending} pending)" if t.pending else "") if t else ""
            backends[b] = {"declared": declared, "compiled": compiled, "target": target}
        ops.append(
            {
                "name": op.full_name,
                "family": op.family,
                "doc": op.doc,
                "kind": op.kind,
                "differentiable": is_grad_tested(op),
                "jvp": jvp_mode(op),
                "backends": backends,
                "autocast": dict(op.autocast),
            }
        )
    return {"ops": ops}


def _samples(ctx):
    doc = samples_doc(ctx.registry)
    yield dict(path="op_samples.json", text=json.dumps(doc, indent=1) + "\n")
    # One file per op as well: each test process reads only its op's (tests/support/op_catalog.cpp),
    # not the whole registry's samples
    for entry in doc["ops"]:
        yield dict(path=f"op_samples/{entry['name']}.json", text=json.dumps(entry) + "\n")


OUTPUTS = [
    Output(None, "{path}", "once", items=_samples),
    Output(
        None,
        "coverage_declared.json",
        "once",
        args=lambda ctx: dict(text=json.dumps(declared_doc(ctx.registry), indent=1) + "\n"),
    ),
]
