"""Render the validated registry into generated/ (only files whose content changed are written)."""
import json
import os
import re
import zlib

import jinja2

from . import cpp
from .model import FLOATING, normalized_samples
from . import views
from .views import OpView

TEMPLATES = os.path.join(os.path.dirname(__file__), "templates")
# Marks where a composite body copied from ops/*.yaml ends; Writer.write turns it into a `#line`
# back to the generated file's own numbering.
LINE_RESTORE = "// @kiln-line-restore"


def _env():
    # Compiled templates are cached (keyed by each template's text) in a per-user temporary
    # folder: compiling the 25 templates is half of a run that changes one expression. Without a
    # usable temporary folder they are compiled each run.
    try:
        cache = jinja2.FileSystemBytecodeCache()
    except (OSError, RuntimeError):
        cache = None
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        trim_blocks=True,
        lstrip_blocks=False,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        bytecode_cache=cache,
    )


def _enrich(v, views_by_name, sources):
    op, sig = v.op, v.sig
    v.input_ptrs = ", ".join(f"&{a.name}" for a in v.tensors)
    v.signature_literal = cpp.cpp_string(f"{op.full_name}{str_args(sig)}")
    v.doc_literal = cpp.cpp_string(op.doc)
    if op.is_function:
        v.forward_call = f"composite::{op.body}({v.args})"
    else:
        v.forward_call = ""
    v.view_replay = _view_replay(v) if op.is_view else ""
    if op.kind == "composite" and not op.is_function:
        body = "\n".join("  " + line if line.strip() else "" for line in op.body.splitlines())
        if sources:  # the compiler reports errors in the body at their registry lines
            _, path, line = sources.locate(op.body_line)
            body = f'#line {line} "{path}"\n{body}\n{LINE_RESTORE}'
        v.composite_body = body
    # Scalar-operand overloads of binary pointwise ops (add(t, 2.0), t.add(2.0), t.add_(2.0)).
    v.scalar_clash = False
    if op.kind == "pointwise" and v.scalar_overload:
        for other in views_by_name.get(op.name, []):
            if other is v:
                continue
            args = other.sig.arguments
            if len(args) >= 2 and args[1].type.base == "Scalar":
                v.scalar_clash = True
        rest = sig.arguments[2:]
        rest_decl = ", ".join(
            f"{cpp.param_type(a.type)} {a.name}" + (f" = {cpp.default_value(a)}" if a.default else "") for a in rest
        )
        rest_def = ", ".join(f"{cpp.param_type(a.type)} {a.name}" for a in rest)
        first, second = sig.arguments[0], sig.arguments[1]
        v.scalar_params_decl = f"const Tensor& {first.name}, const Scalar& {second.name}" + (
            f", {rest_decl}" if rest_decl else ""
        )
        v.scalar_call_args = f"{first.name}, wrapped_scalar({second.name})" + "".join(f", {a.name}" for a in rest)
        v.scalar_method_params_decl = f"const Scalar& {second.name}" + (f", {rest_decl}" if rest_decl else "")
        v.scalar_method_params_def = f"const Scalar& {second.name}" + (f", {rest_def}" if rest_def else "")
        v.scalar_rest_args = ", ".join(a.name for a in rest)
        rest_base = ", ".join(
            f"{cpp.param_type(a.type, True)} {a.name}" + (f" = {cpp.default_value(a, True)}" if a.default else "")
            for a in rest
        )
        v.base_scalar_params_decl = f"const TensorBase& {first.name}, const Scalar& {second.name}" + (
            f", {rest_base}" if rest_base else ""
        )
        v.base_scalar_call_args = f"{first.name}, scalar_operand({second.name})" + "".join(f", {a.name}" for a in rest)


# A call in a derivative formula: an identifier and "(", not a method (.f) or qualified (x::f).
FORMULA_CALL = re.compile(r"(?<![\w.:])([A-Za-z_]\w*)\s*\(")


def _view_replay(v):
    """A view op's ViewReplay: the op again on another tensor, its other arguments kept by value
    (an int[] as a DimVector), so autograd can make the view from its base after an in-place op."""
    captures, args = [], []
    for a in v.sig.arguments[1:]:
        stored, param = cpp.stored_type(a.type), cpp.param_type(a.type)
        captures.append(a.name if stored == param else f"{a.name} = {stored}({a.name})")
        args.append(a.name)
    call = ", ".join(["Tensor(b)"] + args)
    return f"[{', '.join(captures)}](const TensorBase& b) -> TensorBase {{ return kiln::{v.name}({call}); }}"


def _entries_over_base(views):
    """Which ops get kiln::_ops entries over TensorBase (kiln/gen/ops/<name>.h), and which op
    entries are written over TensorBase, so that they include no op's declaration but those of
    the ops their formulas call and are not recompiled when another op is added.

    A composite's function variant gets an adapter (its entry stays over Tensor) when it takes
    no mutable or list arguments. A pointwise or (non-factory) structured kernel op is written
    over TensorBase unless it takes or returns lists, or a formula calls an op without entries."""
    names = {v.name for v in views}
    for v in views:
        calls = set()
        for f in v.op.derivatives.values():
            calls |= {m for m in FORMULA_CALL.findall(f) if m in names}
        if (
            v.differentiable
            and "inplace" in v.op.variants
            and any(s.kind == "tensor" and s.name == "self" for s in v.saved_inputs)
        ):
            calls.add("clone")  # in place, self's old value is saved as _ops::clone(self)
        if v.op.jvp and v.op.jvp != "linear":
            calls |= {m for m in FORMULA_CALL.findall(v.op.jvp) if m in names}
        if v.jvp_conj:
            calls.add("conj")  # conj(formula[grad := conj(t)])
        if v.jvp_reads_self and "inplace" in v.op.variants:
            calls.add("clone")  # self's value before an in-place op, for its jvp
        v.formula_ops = sorted(calls)
        v.adapter = (
            v.op.kind == "composite"
            and not v.has_list
            and "function" in v.op.variants
            and not any(a.type.mutable for a in v.sig.arguments if a.type.base == "Tensor")
            and not (v.sig.returns and v.sig.returns[0].type.mutable)
        )
        # (a kernel op served by its composite on some backend calls it with Tensors)
        v.over_base = (
            (v.op.kind == "pointwise" or v.op.structured)
            and not v.options_group
            and not v.has_list
            and not v.op.composite_route
        )
        v.adapter_args = ", ".join(
            f"Tensor({name})" if ty == "const Tensor&" else name for name, ty, _ in cpp.cpp_arguments(v.sig)
        )
    while True:  # drop ops whose formulas call an op without entries, until nothing changes
        with_entries = {v.name for v in views if v.over_base or v.adapter}
        dropped = [v for v in views if v.over_base and not set(v.formula_ops) <= with_entries]
        if not dropped:
            return with_entries
        for v in dropped:
            v.over_base = False


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


def _operators(views):
    ops = []
    for v in views:
        for o in v.op.operators:
            unary = len(v.tensors) == 1
            ops.append(
                dict(
                    symbol=o,
                    fn=v.name,
                    unary=unary,
                    compound=(not unary and "inplace" in v.op.variants and o not in ("==", "!=", "<", "<=", ">", ">=")),
                )
            )
    return ops


def _kernel_signatures(views, backend):
    """Hand-written kernels of `backend` by name: (entries naming it, its distinct signatures,
    the meta headers declaring their plans)."""
    kernels = {}
    for v in views:
        for kernel_backend, kernel in v.op.written_kernels if v.op.structured else []:
            if kernel_backend != backend:
                continue
            entries, signatures, headers = kernels.setdefault(kernel, ([], [], []))
            if v.full not in entries:
                entries.append(v.full)
            if v.kernel_params not in signatures:
                signatures.append(v.kernel_params)
            if v.meta_header not in headers:
                headers.append(v.meta_header)
    return kernels


class Writer:
    def __init__(self, out_dir):
        self.out_dir = out_dir
        self.written = set()
        self.changed = 0

    def write(self, rel, content):
        path = os.path.join(self.out_dir, rel)
        if LINE_RESTORE in content:
            lines = content.split("\n")
            for i, line in enumerate(lines):
                if line == LINE_RESTORE:  # the next physical line is i + 2 (1-based)
                    lines[i] = f'#line {i + 2} "{os.path.abspath(path)}"'
            content = "\n".join(lines)
        self.written.add(os.path.normpath(path))
        if os.path.exists(path):
            with open(path, encoding="utf-8") as fh:
                if fh.read() == content:
                    return
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(content)
        os.replace(tmp, path)
        self.changed += 1

    def remove_stale(self):
        """Delete generated files no longer produced (a removed op leaves nothing behind)."""
        for dirpath, _, files in os.walk(self.out_dir):
            for f in files:
                p = os.path.normpath(os.path.join(dirpath, f))
                if p not in self.written:
                    os.remove(p)


def render(registry, out_dir, sources=None):
    """sources (loader.Sources): the registry files that `#line` directives in composite bodies name."""
    env = _env()
    views = [OpView(op, registry) for op in registry.ops]
    by_name = {}
    for v in views:
        by_name.setdefault(v.name, []).append(v)
    for v in views:
        _enrich(v, by_name, sources)
    with_entries = _entries_over_base(views)
    w = Writer(out_dir)
    inc = "include/kiln/gen"
    entry_tpl = env.get_template("op_entries.h.j2")
    for name in sorted(with_entries):
        w.write(
            f"{inc}/ops/{name}.h",
            entry_tpl.render(name=name, ops=[v for v in by_name[name] if v.over_base or v.adapter]),
        )
    w.write(
        f"{inc}/ops/operators.h",
        env.get_template("op_operators.h.j2").render(
            operators=[o for o in _operators(views) if o["fn"] in with_entries]
        ),
    )
    api_tpl = env.get_template("op_api.h.j2")
    api_names = sorted({v.name for v in views if not v.options_group})
    for name in api_names:
        w.write(
            f"{inc}/api/{name}.h",
            api_tpl.render(
                name=name, has_entries=name in with_entries, ops=[v for v in by_name[name] if not v.options_group]
            ),
        )
    w.write(f"{inc}/ops.h", env.get_template("ops.h.j2").render(api_headers=api_names))
    w.write(f"{inc}/factories.h", env.get_template("factories.h.j2").render(ops=views))
    w.write(f"{inc}/tensor_methods.h", env.get_template("tensor_methods.h.j2").render(ops=views))
    operators = _operators(views)
    method_headers = sorted(
        {v.name for v in views if v.has_method or "inplace" in v.op.variants} & set(api_names)
        | {o["fn"] for o in operators}
    )
    w.write(
        f"{inc}/tensor_methods_inl.h",
        env.get_template("tensor_methods_inl.h.j2").render(
            ops=views, operators=operators, method_headers=method_headers
        ),
    )
    decl_tpl = env.get_template("kernel_decl.h.j2")
    for backend, label in (("cpu", "CPU"), ("cuda", "CUDA")):
        kernels = _kernel_signatures(views, backend)
        for name, (entries, signatures, headers) in kernels.items():
            w.write(
                f"{inc}/kernels/{backend}/{name}.h",
                decl_tpl.render(
                    name=name,
                    entries=entries,
                    signatures=signatures,
                    headers=sorted(headers),
                    backend=backend,
                    label=label,
                ),
            )
    w.write(f"{inc}/composite.h", env.get_template("composite.h.j2").render(ops=views))
    tabled = [v for v in views if v.op.kind == "pointwise" or v.op.structured]  # the ops with a kernel table
    w.write(
        f"{inc}/op_kernels.h",
        env.get_template("op_kernels.h.j2").render(
            ops=tabled, meta_headers=sorted({v.meta_header for v in tabled if v.op.structured})
        ),
    )
    # One list per CMake target: the core (the entries of composite ops, the registry), the op
    # entries over TensorBase (each with its own kernel table), the CPU and the CUDA kernels.
    core_sources = []
    cpu_sources = []
    op_tpl = env.get_template("op.cpp.j2")
    cuda_sources = []
    functor_tpl = env.get_template("pointwise_functor.h.j2")
    pw_tpl = {"cpu": env.get_template("cpu_pointwise.cpp.j2"), "cuda": env.get_template("cuda_pointwise.cu.j2")}
    entry_sources = []
    entry_batches = {True: {}, False: {}}  # over TensorBase or not: batch -> op names
    for v in views:
        rel = f"src/ops/{v.cname}.cpp"
        w.write(rel, op_tpl.render(v=v))
        entry_batches[v.over_base].setdefault(entry_batch(v.cname), []).append(v.cname)
        if v.op.kind == "pointwise":
            w.write(f"{inc}/pointwise/{v.cname}.h", functor_tpl.render(v=v))
            if "cpu" in v.op.backends:
                rel = f"src/cpu/{v.cname}.cpp"
                w.write(rel, pw_tpl["cpu"].render(v=v))
                cpu_sources.append(rel)
    # The entries compile a few to a translation unit (src/ops/batches/), as the CUDA kernels below.
    batch_tpl = env.get_template("op_batch.cpp.j2")
    for over_base, kind, what, sources_list in (
        (True, "entries", "entries over TensorBase", entry_sources),
        (False, "composites", "entries of composite ops", core_sources),
    ):
        for batch in sorted(entry_batches[over_base]):
            rel = f"src/ops/batches/{kind}_{batch:02d}.cpp"
            w.write(rel, batch_tpl.render(what=what, names=sorted(entry_batches[over_base][batch])))
            sources_list.append(rel)
    cuda_pointwise = [v for v in views if v.op.kind == "pointwise" and "cuda" in v.op.backends]
    # The CUDA kernels of pointwise ops, a few per file: nvcc's fixed cost per file (the host
    # compile of the CUDA runtime headers, about half of a one-op file) is paid once per batch.
    # An op's batch follows from its name alone, so adding an op recompiles one batch.
    batches = {}
    for v in cuda_pointwise:
        batches.setdefault(cuda_batch(v.cname), []).append(v)
    for batch in sorted(batches):
        rel = f"src/cuda/pointwise_{batch:02d}.cu"
        w.write(rel, pw_tpl["cuda"].render(ops=sorted(batches[batch], key=lambda v: v.cname)))
        cuda_sources.append(rel)
    # The kernels of engine ops: per engine and backend, one file of calls of its front.
    for name, engine in registry.engines.items():
        for backend, header in engine.headers.items():
            ops = [v for v in views if v.op.engine and v.op.engine.engine == name and backend in v.op.backends]
            if not ops:
                continue
            rel = f"src/{backend}/engine_{name}.{'cu' if backend == 'cuda' else 'cpp'}"
            w.write(
                rel,
                env.get_template(f"engines/{name}.j2").render(
                    engine=engine, backend=backend, header=header, ops=sorted(ops, key=lambda v: v.cname)
                ),
            )
            (cuda_sources if backend == "cuda" else cpu_sources).append(rel)
    w.write("src/cuda/cuda_elementwise.h", env.get_template("cuda_elementwise.h.j2").render(ops=cuda_pointwise))
    w.write(
        "src/cuda/pointwise_entries.cpp", env.get_template("cuda_pointwise_entries.cpp.j2").render(ops=cuda_pointwise)
    )
    cuda_sources.append("src/cuda/pointwise_entries.cpp")
    # Call-by-name and the per-op tests come in one file per registry file: adding an op
    # recompiles its file's part alone.
    parts = {}
    for v in views:
        parts.setdefault(_registry_part(v.op, sources), []).append(v)
    part_tpl = env.get_template("registry_part.cpp.j2")
    for part, part_views in parts.items():
        rel = f"src/registry/{part}.cpp"
        w.write(
            rel,
            part_tpl.render(
                part=part, ops=part_views, api_headers=sorted({v.name for v in part_views if not v.options_group})
            ),
        )
        core_sources.append(rel)
    w.write("src/registry.cpp", env.get_template("registry.cpp.j2").render(parts=list(parts)))
    core_sources.append("src/registry.cpp")
    w.write("src/helpers_check.cpp", env.get_template("helpers_check.cpp.j2").render(helpers=registry.helpers))
    core_sources.append("src/helpers_check.cpp")
    test_tpl = env.get_template("op_tests.cpp.j2")
    test_sources = {"cpu": [], "cuda": []}
    for part, part_views in parts.items():
        tests = {"cpu": [], "cuda": []}
        for v in part_views:
            for backend in v.op.backends:
                tests[backend].append(
                    dict(
                        full=v.full,
                        backend=backend,
                        dtypes=", ".join(cpp.dtype_enum(d) for d in v.op.backend_dtypes(backend)),
                        grad=is_grad_tested(v.op),
                        gradgrad=str(v.op.gradgrad).lower(),
                        grad_dtypes=", ".join(cpp.dtype_enum(d) for d in grad_dtypes(v.op, backend)),
                    )
                )
        # The device suite (tests/cuda) runs the cuda ones only where a CUDA device is present.
        for backend, prefix in (("cpu", "op_tests"), ("cuda", "cuda_op_tests")):
            if tests[backend]:
                rel = f"tests/{prefix}/{part}.cpp"
                w.write(rel, test_tpl.render(tests=tests[backend], part=part))
                test_sources[backend].append(rel)
    samples = samples_doc(registry)
    w.write("op_samples.json", json.dumps(samples, indent=1) + "\n")
    # One file per op as well: each test process reads only its op's (tests/support/op_catalog.cpp),
    # not the whole registry's samples
    for entry in samples["ops"]:
        w.write(f"op_samples/{entry['name']}.json", json.dumps(entry) + "\n")
    w.write("coverage_declared.json", json.dumps(declared_doc(registry), indent=1) + "\n")
    cmake = ["# Generated by codegen/gen.py. Do not edit."]
    for var, files, why in (
        ("KILN_GENERATED_CORE_SOURCES", core_sources, "the core (target kiln_core)"),
        ("KILN_GENERATED_ENTRY_SOURCES", entry_sources, "the op entries over TensorBase (target kiln_op_entries)"),
        ("KILN_GENERATED_CPU_SOURCES", cpu_sources, "the CPU kernels (target kiln_cpu_kernels)"),
        (
            "KILN_GENERATED_CUDA_SOURCES",
            cuda_sources,
            "the CUDA kernels (target kiln_cuda_kernels), built only with KILN_WITH_CUDA",
        ),
    ):
        cmake += [f"# Part of {why}.", f"set({var}"] + [f'  "${{KILN_GEN_DIR}}/{f}"' for f in files] + [")"]
    for var, backend in (("KILN_GENERATED_TEST_SOURCES", "cpu"), ("KILN_GENERATED_CUDA_TEST_SOURCES", "cuda")):
        cmake += [f"set({var}"] + [f'  "${{KILN_GEN_DIR}}/{f}"' for f in test_sources[backend]] + [")"]
    w.write("sources.cmake", "\n".join(cmake) + "\n")
    w.remove_stale()
    return w.changed, len(w.written)


CUDA_BATCHES = 24
ENTRY_BATCHES = 16


def entry_batch(cname):
    """The translation unit (src/ops/batches/<kind>_<batch>.cpp) that compiles an op's entry: a
    stable hash of its name, so that no other op moves when one is added."""
    return zlib.crc32(cname.encode()) % ENTRY_BATCHES


def cuda_batch(cname):
    """The generated CUDA file (src/cuda/pointwise_<batch>.cu) that holds a pointwise op's kernels:
    a stable hash of its name, so that no other op moves when one is added."""
    return zlib.crc32(cname.encode()) % CUDA_BATCHES


def _registry_part(op, sources):
    """The registry file an op comes from, as a C++ identifier (ops/pointwise_unary.yaml ->
    pointwise_unary): the unit of the generated registry and test files."""
    shown = os.path.basename(sources.locate(op.line)[0]) if sources is not None and sources.files else "ops"
    return re.sub(r"\W", "_", os.path.splitext(shown)[0])


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
                "jvp": views.jvp_mode(op),
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
                "jvp": views.jvp_mode(op),
                "backends": backends,
                "autocast": dict(op.autocast),
            }
        )
    return {"ops": ops}
