"""The C++ target: every file of generated/ but the data (targets_data.py), as a manifest of
Outputs over the views, and the CMake source lists (sources.cmake) they make up."""
import os
import re
import zlib

from . import cpp
from .outputs import Output
from .targets_data import grad_dtypes, is_grad_tested

INC = "include/kiln/gen"
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


def _parts(ctx):
    """Call-by-name and the per-op tests come in one file per registry file: adding an op
    recompiles its file's part alone."""
    parts = {}
    for v in ctx.views.all:
        parts.setdefault(_registry_part(v.op, ctx.sources), []).append(v)
    return parts


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


def _api_names(ctx):
    return sorted({v.name for v in ctx.views.all if not v.options_group})


# ---- headers (include/kiln/gen) ----
def _op_entries(ctx):
    for name in sorted(ctx.views.with_entries):
        yield dict(name=name, ops=[v for v in ctx.views.by_name[name] if v.over_base or v.adapter])


def _api(ctx):
    with_entries = ctx.views.with_entries
    for name in _api_names(ctx):
        ops = [v for v in ctx.views.by_name[name] if not v.options_group]
        yield dict(name=name, has_entries=name in with_entries, ops=ops)


def _methods_inl(ctx):
    views = ctx.views.all
    operators = _operators(views)
    method_headers = sorted(
        {v.name for v in views if v.has_method or "inplace" in v.op.variants} & set(_api_names(ctx))
        | {o["fn"] for o in operators}
    )
    return dict(ops=views, operators=operators, method_headers=method_headers)


def _kernel_decls(ctx):
    """Hand-written kernels by backend and name: the entries naming one, its distinct
    signatures, the meta headers declaring their plans."""
    for backend, label in (("cpu", "CPU"), ("cuda", "CUDA")):
        kernels = {}
        for v in ctx.views.all:
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
        for name, (entries, signatures, headers) in kernels.items():
            yield dict(
                name=name, entries=entries, signatures=signatures, headers=sorted(headers), backend=backend, label=label
            )


def _has_kernel_table(v):
    return v.op.kind == "pointwise" or v.op.structured


def _op_kernels(ctx):
    return dict(ops=[v for v in ctx.views.all if _has_kernel_table(v)])


# ---- sources ----
def _entry_batches(ctx):
    """The entries compile a few to a translation unit (src/ops/batches/), as the CUDA kernels:
    those over TensorBase (target kiln_op_entries) and those of composite ops (kiln_core)."""
    batches = {True: {}, False: {}}
    for v in ctx.views.all:
        batches[v.over_base].setdefault(entry_batch(v.cname), []).append(v.cname)
    for over_base, kind, what, cmake in (
        (True, "entries", "entries over TensorBase", "entry"),
        (False, "composites", "entries of composite ops", "core"),
    ):
        for batch in sorted(batches[over_base]):
            yield dict(kind=kind, batch=batch, what=what, names=sorted(batches[over_base][batch]), cmake=cmake)


def _cuda_pointwise(ctx):
    return [v for v in ctx.views.all if v.op.kind == "pointwise" and "cuda" in v.op.backends]


def _cuda_batches(ctx):
    """The CUDA kernels of pointwise ops, a few per file: nvcc's fixed cost per file (the host
    compile of the CUDA runtime headers, about half of a one-op file) is paid once per batch.
    An op's batch follows from its name alone, so adding an op recompiles one batch."""
    batches = {}
    for v in _cuda_pointwise(ctx):
        batches.setdefault(cuda_batch(v.cname), []).append(v)
    for batch in sorted(batches):
        yield dict(batch=batch, ops=sorted(batches[batch], key=lambda v: v.cname))


def _engines(ctx):
    """The kernels of engine ops: per engine and backend, one file of calls of its front."""
    for name, engine in ctx.registry.engines.items():
        for backend, header in engine.headers.items():
            ops = [v for v in ctx.views.all if v.op.engine and v.op.engine.engine == name and backend in v.op.backends]
            if ops:
                yield dict(
                    name=name,
                    engine=engine,
                    backend=backend,
                    ext="cu" if backend == "cuda" else "cpp",
                    header=header,
                    ops=sorted(ops, key=lambda v: v.cname),
                )


def _registry_parts(ctx):
    for part, part_views in _parts(ctx).items():
        yield dict(part=part, ops=part_views, api_headers=sorted({v.name for v in part_views if not v.options_group}))


def _tests(ctx):
    """The per-op tests, a file per registry file and backend; the device suite (tests/cuda)
    runs the cuda ones only where a CUDA device is present."""
    for part, part_views in _parts(ctx).items():
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
        for backend, prefix in (("cpu", "op_tests"), ("cuda", "cuda_op_tests")):
            if tests[backend]:
                yield dict(tests=tests[backend], part=part, prefix=prefix, backend=backend)


# CMake variable, the list it is filled from, and the target it belongs to.
CMAKE_LISTS = (
    ("KILN_GENERATED_CORE_SOURCES", "core", "the core (target kiln_core)"),
    ("KILN_GENERATED_ENTRY_SOURCES", "entry", "the op entries over TensorBase (target kiln_op_entries)"),
    ("KILN_GENERATED_CPU_SOURCES", "cpu", "the CPU kernels (target kiln_cpu_kernels)"),
    (
        "KILN_GENERATED_CUDA_SOURCES",
        "cuda",
        "the CUDA kernels (target kiln_cuda_kernels), built only with KILN_WITH_CUDA",
    ),
    ("KILN_GENERATED_TEST_SOURCES", "test_cpu", None),
    ("KILN_GENERATED_CUDA_TEST_SOURCES", "test_cuda", None),
)


def _sources_cmake(ctx):
    """One list per CMake target: the core (the entries of composite ops, the registry), the op
    entries over TensorBase (each with its own kernel table), the CPU and the CUDA kernels, the tests."""
    return dict(lists=[(var, ctx.cmake_lists.get(key, []), why) for var, key, why in CMAKE_LISTS])


def _pointwise(v):
    return v.op.kind == "pointwise"


OUTPUTS = [
    Output("op_entries.h.j2", INC + "/ops/{name}.h", "name", items=_op_entries),
    Output(
        "op_operators.h.j2",
        INC + "/ops/operators.h",
        "once",
        args=lambda ctx: dict(operators=[o for o in _operators(ctx.views.all) if o["fn"] in ctx.views.with_entries]),
    ),
    Output("op_api.h.j2", INC + "/api/{name}.h", "name", items=_api),
    Output("ops.h.j2", INC + "/ops.h", "once", args=lambda ctx: dict(api_headers=_api_names(ctx))),
    Output("factories.h.j2", INC + "/factories.h", "once", args=lambda ctx: dict(ops=ctx.views.all)),
    Output("tensor_methods.h.j2", INC + "/tensor_methods.h", "once", args=lambda ctx: dict(ops=ctx.views.all)),
    Output("tensor_methods_inl.h.j2", INC + "/tensor_methods_inl.h", "once", args=_methods_inl),
    Output("kernel_decl.h.j2", INC + "/kernels/{backend}/{name}.h", "backend", items=_kernel_decls),
    Output("composite.h.j2", INC + "/composite.h", "once", args=lambda ctx: dict(ops=ctx.views.all)),
    Output("op_kernels.h.j2", INC + "/op_kernels.h", "once", args=_op_kernels),
    Output("op_kernel_tag.h.j2", INC + "/op_kernels/{v.cname}.h", "op", when=_has_kernel_table),
    Output("op.cpp.j2", "src/ops/{v.cname}.cpp", "op"),
    Output("pointwise_functor.h.j2", INC + "/pointwise/{v.cname}.h", "op", when=_pointwise),
    Output(
        "cpu_pointwise.cpp.j2",
        "src/cpu/{v.cname}.cpp",
        "op",
        when=lambda v: _pointwise(v) and "cpu" in v.op.backends,
        cmake="cpu",
    ),
    Output("op_batch.cpp.j2", "src/ops/batches/{kind}_{batch:02d}.cpp", "batch", items=_entry_batches, cmake="{cmake}"),
    Output("cuda_pointwise.cu.j2", "src/cuda/pointwise_{batch:02d}.cu", "batch", items=_cuda_batches, cmake="cuda"),
    Output("engines/{name}.j2", "src/{backend}/engine_{name}.{ext}", "backend", items=_engines, cmake="{backend}"),
    Output(
        "cuda_elementwise.h.j2", "src/cuda/cuda_elementwise.h", "once", args=lambda ctx: dict(ops=_cuda_pointwise(ctx))
    ),
    Output(
        "cuda_pointwise_entries.cpp.j2",
        "src/cuda/pointwise_entries.cpp",
        "once",
        args=lambda ctx: dict(ops=_cuda_pointwise(ctx)),
        cmake="cuda",
    ),
    Output("registry_part.cpp.j2", "src/registry/{part}.cpp", "part", items=_registry_parts, cmake="core"),
    Output("registry.cpp.j2", "src/registry.cpp", "once", args=lambda ctx: dict(parts=list(_parts(ctx))), cmake="core"),
    Output(
        "helpers_check.cpp.j2",
        "src/helpers_check.cpp",
        "once",
        args=lambda ctx: dict(helpers=ctx.registry.helpers),
        cmake="core",
    ),
    Output("op_tests.cpp.j2", "tests/{prefix}/{part}.cpp", "part", items=_tests, cmake="test_{backend}"),
]

# Last, once every C++ source is listed.
SOURCES_CMAKE = Output("sources.cmake.j2", "sources.cmake", "once", args=_sources_cmake)
