"""The typed model of ops/*.yaml: the registry's vocabulary (dtypes, families, keys, policies)
and the frozen dataclasses its entries are validated into (Op, MetaFamily, ArgCheck, Registry).

build.py validates a loaded document into them: registry_root.py reads the root's sections,
entry_parse.py and entry_*.py an entry's key groups, samples.py what the generated tests read.
"""
import copy
import re
from dataclasses import dataclass, field, fields
from typing import Dict, List, Optional, Tuple

from . import dispatch_keys
from . import engines as engines_mod
from .cpp import options_start
from .signature import Signature


def replace(obj, **changes):
    """dataclasses.replace for this module's frozen dataclasses (none has __post_init__ or
    init=False fields): a copy with the given fields set. parse_op sets an Op's fields one by
    one, about 20 times per op, and dataclasses.replace re-runs the 50-field __init__ each time
    (a third of a --check run)."""
    names = {f.name for f in fields(obj)}
    unknown = [k for k in changes if k not in names]
    if unknown:
        raise TypeError(f"{type(obj).__name__} has no field {unknown[0]!r}")
    new = copy.copy(obj)
    for k, v in changes.items():
        object.__setattr__(new, k, v)
    return new


DTYPES = [
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]
INTEGRAL = {"uint8", "int8", "int16", "int32", "int64"}
FLOATING = {"float16", "bfloat16", "float32", "float64"}
COMPLEX = {"complex64", "complex128"}
BACKENDS = dispatch_keys.BACKENDS
FAMILIES = [
    "pointwise",
    "activation",
    "comparison",
    "logical",
    "bitwise",
    "reduction",
    "linalg",
    "view",
    "shape",
    "nn",
    "loss",
    "factory",
    "random",
    "amp",
    "sorting",
    "optim",
]
PROMOTIONS = ["default", "int_to_float", "bool_result", "complex_to_real", "self"]
NOT_IMPLEMENTED = "not_implemented"  # `derivatives: not_implemented` (see Op.derivative_not_implemented)
VARIANTS = ["function", "method", "inplace", "out"]
OP_KEYS = {
    "signature",
    "family",
    "dtypes",
    "dispatch",
    "engine",
    "pointwise",
    "native",
    # retired: named in an error that says what replaced them
    "kernel",
    "backends",
    "cuda_dtypes",
    "composite",
    "promotion",
    "promote_scalars",
    "bool_inputs",
    "choices",
    "derivatives",
    "non_differentiable",
    "gradgrad",
    "variants",
    "operator",
    "samples",
    "domain",
    "torch",
    "doc",
    "special_values",
    "meta",
    "result_dtype",
    "identity",
    "zero_dim",
    "differentiable",
    "compare",
    "integer_divisor",
    "integer_exponent",
    "output_differentiability",
    "jvp",
    "autocast",
    "reads_storage",
    "checks",
    "cpp_no_default_args",
    "foreach_lists",
}
# `checks:` raise one of these when an argument's value is out of its domain (softshrink's lambd)
CHECK_ERRORS = ["ValueError", "IndexError", "ShapeError"]
# Autocast cast policies (PyTorch's autocast lists): the op's floating inputs are cast to the
# region's lower-precision dtype, to float32, or to the widest floating dtype among them.
AUTOCAST_POLICIES = ["lower_precision", "float32", "promote"]
# What each device's autocast may cast to: CPU runs bfloat16 only, CUDA float16 or bfloat16.
AUTOCAST_LOWER = {"cpu": ["bfloat16"], "cuda": ["float16", "bfloat16"]}
# What the generated forward test compares with PyTorch's result: the values, or only sizes,
# dtype and device (uninitialized results such as empty's, and draws from kiln's generator).
COMPARES = ["values", "metadata"]
TOP_KEYS = {"dtype_groups", "meta_families", "engines", "helpers", "files", "ops"}
# Meta families of structured kernel ops live in ops.yaml (`meta_families`, read into MetaFamily).
# Two are generic steps whose calls templates/structured.j2 writes itself, each taking the result
# rules of its C++ enum (meta::AlongDimResult, meta::ReduceResult); every other family is custom:
# its step is meta::<family>(<op name>, <every argument>), which chooses the dtype itself.
GENERIC_META = {
    "along_dim": ["self", "accumulate", "floating"],
    "reduction": ["self", "inexact", "accumulate", "real", "logical", "int64"],
}
OPERATORS = {"+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&", "|", "^", "<<", ">>", "~"}
DEFAULT_DOMAIN = [-2.0, 2.0]


@dataclass(frozen=True)
class MetaFamily:
    """A meta family of structured kernel ops (ops.yaml `meta_families`): the device-independent
    step in runtime/include/kiln/meta/<header>.h that checks an op's arguments and returns the
    kiln::meta::<plan> every backend's kernel computes from."""

    name: str
    line: int
    plan: str
    header: str
    custom: bool = False  # an op's own step, meta::<name>, gets every argument (else GENERIC_META)
    args: Dict[str, List[str]] = field(default_factory=dict)  # generic: argument -> schema types accepted
    required: List[str] = field(default_factory=list)  # arguments an op of the family must have
    more_tensors: bool = False  # generic: further Tensors (of self's shape) may follow
    results: List[str] = field(default_factory=lambda: ["self"])  # the result_dtype rules an op may name
    inplace: bool = False  # the result has self's shape: an in-place variant is legal
    dense_inputs: bool = False  # custom: the kernel gets its tensors contiguous (else in any layout)
    plan_only: bool = False  # the kernel gets the plan and the tensors, no other argument
    factory: bool = False  # the step takes the op's TensorOptions and sizes a new tensor
    mutates: bool = False  # writes into the op's mutable arguments; nothing is allocated
    foreach: bool = False  # mutates Tensor lists (the kernel gets them as TensorBaseLists)
    result_sizes: Dict[str, str] = field(default_factory=dict)  # named result -> plan field with its sizes
    result_dtypes: Dict[str, str] = field(default_factory=dict)  # named result -> plan field with its dtype


META_FIELDS = [f.name for f in fields(MetaFamily) if f.name not in ("name", "line")]
META_FLAGS = [f.name for f in fields(MetaFamily) if f.type is bool]


@dataclass(frozen=True)
class ArgCheck:
    """`checks:` entry: `require` (C++ over the arguments) must hold, else `error` is raised naming
    the op and `argument`, with `message`, whose `{name}` placeholders print argument values."""

    argument: str
    require: str
    message: str
    error: str = "ValueError"


@dataclass(frozen=True)
class Op:
    line: int
    sig: Signature
    family: str
    dtypes: List[str]
    # what serves the op on each (backend, layout): dispatch_keys.Target, in key order
    dispatch: Tuple["dispatch_keys.Target", ...]
    kind: str
    body: str  # expression / first kernel's name / composite function name or one-line C++ body
    body_line: int = 0  # composite: the ops/*.yaml line of the body
    # a kernel op whose dispatch: serves some backends by `composite`: the kiln::composite
    # function that does (the entry's `composite:`)
    composite_route: str = ""
    # `engine:` (engines.EngineUse): its kernels are generated calls of that engine's front
    engine: Optional["engines_mod.EngineUse"] = None
    promotion: str = "default"
    promote_scalars: List[str] = field(default_factory=list)
    bool_inputs: List[str] = field(default_factory=list)
    # PyTorch's CPU errors for integer arithmetic (checked before the kernel runs): the Tensor
    # argument that must hold no zero, the promoting Scalar that must not be negative.
    integer_divisor: Optional[str] = None
    integer_exponent: Optional[str] = None
    zero_dim: List[str] = field(default_factory=list)  # Tensor arguments that must be 0-d (a "value tensor")
    choices: Dict[str, List[str]] = field(default_factory=dict)
    # formula per key: one input name ("self"), or several ("self, other") for a joint formula
    # that returns their gradients together and may read `grad_input_mask`
    derivatives: Dict[str, str] = field(default_factory=dict)
    non_differentiable: List[str] = field(default_factory=list)
    # arguments whose schema default the C++ functions leave out, with every argument before them
    # (PyTorch's key: conv2d.padding's str padding would make conv2d(x, w) ambiguous)
    cpp_no_default_args: List[str] = field(default_factory=list)
    # meta: foreach: the Tensor[] arguments that are not "one tensor per tensor of the first
    # list, of its size and dtype": `optional` (that, or empty: state an option leaves unused,
    # as _fused_adam_'s max_exp_avg_sqs without amsgrad) or `scalars` (a 1-element float32
    # tensor per tensor of the first list, as state_steps)
    foreach_lists: Dict[str, str] = field(default_factory=dict)
    # `derivatives: not_implemented`: as PyTorch's ops without a formula, the result records a
    # node whose backward raises NotImplementedError (derivatives holds NOT_IMPLEMENTED per input)
    derivative_not_implemented: bool = False
    output_differentiability: List[bool] = field(default_factory=list)  # per output; empty: all
    # forward-mode AD: "" (derived from the derivatives: pointwise ops; else by transposing them),
    # "linear" (the op applied to the tangents) or a formula over <input>_t, the inputs and result
    jvp: str = ""
    gradgrad: bool = True
    variants: List[str] = field(default_factory=list)
    operators: List[str] = field(default_factory=list)
    samples: List[dict] = field(default_factory=list)
    domain: object = None
    torch: Optional[str] = None
    doc: str = ""
    special_values: bool = False
    composes_gradients: bool = True  # composite without formulas: autograd through its parts
    meta: Optional[str] = None  # kernel ops: the meta family of a structured kernel
    result_dtype: str = "self"  # structured ops: how the result dtype follows from self's
    identity: bool = True  # reductions: false when reducing nothing is an error (max, argmax)
    compare: str = "values"  # what the forward test compares with PyTorch (COMPARES)
    # as_strided: the op reads self's storage, not its values, so a non-contiguous self gives
    # other values than its contiguous copy; the tests' layout check leaves it out
    reads_storage: bool = False
    # argument checks run at the entry point before anything is computed (ArgCheck)
    checks: List["ArgCheck"] = field(default_factory=list)
    # autocast policy per device ("cpu"/"cuda" -> AUTOCAST_POLICIES); empty: autocast leaves it alone
    autocast: Dict[str, str] = field(default_factory=dict)

    @property
    def is_function(self):
        """A composite that names a C++ function (runtime/src/composite/) rather than giving a body."""
        return self.kind == "composite" and re.match(r"^[A-Za-z_]\w*$", self.body) is not None

    @property
    def composite_function(self):
        """The kiln::composite function the entry calls on some backend, or None."""
        if self.is_function:
            return self.body
        return self.composite_route or None

    @property
    def composite_backends(self):
        """A kernel op's backends that its composite serves."""
        return [t.backend for t in self.dispatch if t.kind == "composite"] if self.kind == "kernel" else []

    @property
    def structured(self):
        return self.kind == "kernel" and self.meta is not None

    @property
    def is_factory(self):
        """Takes PyTorch's factory keywords (dtype, layout, device, requires_grad)."""
        return options_start(self.sig) is not None

    @property
    def is_random(self):
        """Draws from a generator: the tests reseed before each call."""
        return self.family == "random" or any(a.type.base == "Generator" for a in self.sig.arguments)

    def target(self, backend, layout="strided"):
        """What serves the op on (backend, layout), or None."""
        for t in self.dispatch:
            if t.backend == backend and t.layout == layout:
                return t
        return None

    @property
    def backends(self):
        """The backends that serve strided tensors, in BACKENDS order."""
        return [b for b in BACKENDS if self.target(b) is not None]

    def backend_dtypes(self, backend):
        """The dtypes `backend` serves strided tensors in: none when dispatch does not list it."""
        t = self.target(backend)
        return t.dtypes if t is not None else []

    def kernel_name(self, backend, layout="strided"):
        """kiln::<backend>::<name> serving (backend, layout), or None."""
        t = self.target(backend, layout)
        return t.kernel if t is not None and t.kind == "kernel" else None

    @property
    def kernel_targets(self):
        return [t for t in self.dispatch if t.kind == "kernel"]

    @property
    def written_kernels(self):
        """(backend, name) of every hand-written kernel: those dispatch serves with, and those
        pending (declared and compiled, not yet serving)."""
        return [(t.backend, t.kernel) for t in self.kernel_targets] + [
            (t.backend, t.pending) for t in self.dispatch if t.pending
        ]

    @property
    def name(self):
        return self.sig.name

    @property
    def full_name(self):
        return self.sig.full_name

    @property
    def cname(self):
        """Identifier for generated symbols: add.Tensor -> add_Tensor."""
        return self.full_name.replace(".", "_")

    @property
    def differentiable(self):
        return bool(self.derivatives)

    @property
    def differentiable_inputs(self):
        """The names that have a gradient formula, single or joint."""
        return {name for key in self.derivatives for name in formula_inputs(key)}

    def output_differentiable(self, index):
        return not self.output_differentiability or self.output_differentiability[index]

    @property
    def tensor_args(self):
        return [a for a in self.sig.arguments if a.type.is_tensor]

    def arg(self, name):
        for a in self.sig.arguments:
            if a.name == name:
                return a
        return None

    @property
    def has_method(self):
        return "method" in self.variants

    @property
    def is_view(self):
        return any(r.type.alias and not r.type.mutable for r in self.sig.returns)

    @property
    def returns_views(self):
        """Several views of its first argument in a list (split, chunk: `Tensor(a) self -> Tensor[]`)."""
        first = self.sig.arguments[0] if self.sig.arguments else None
        return (
            first is not None
            and first.type.alias
            and not first.type.mutable
            and len(self.sig.returns) == 1
            and self.sig.returns[0].type.is_list
        )


@dataclass(frozen=True)
class Registry:
    ops: List[Op]
    groups: Dict[str, List[str]]
    meta_families: Dict[str, MetaFamily] = field(default_factory=dict)  # ops.yaml's, by name
    engines: Dict[str, "engines_mod.Engine"] = field(default_factory=dict)  # ops.yaml's, by name
    # ops.yaml's `helpers:`: the hand-written functions expressions may call, by kind (registry_root.HELPER_KINDS)
    helpers: Dict[str, List[str]] = field(default_factory=dict)

    def by_name(self, name):
        return [o for o in self.ops if o.name == name]


def formula_inputs(key):
    """The inputs a derivatives key names: "self" or, for a joint formula, "self, other"."""
    return [name.strip() for name in key.split(",")]


def as_list(value):
    return value if isinstance(value, list) else [value]
