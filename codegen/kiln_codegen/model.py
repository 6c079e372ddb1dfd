"""The typed model of ops/*.yaml, and its validation.

Every problem is collected as a RegistryError carrying the line it belongs to; nothing is
written unless the whole registry is valid.
"""
import copy
import re
from dataclasses import dataclass, field, fields
from typing import Dict, List, Optional, Tuple


from . import formulas
from . import composite_check
from . import dispatch_keys
from . import engines as engines_mod
from .cpp import OPTIONS_GROUP, options_start
from .errors import ErrorList, RegistryError
from .signature import Signature, SignatureError, parse_signature, parse_type


def replace(obj, **changes):
    """dataclasses.replace for this module's frozen dataclasses (none has __post_init__ or
    init=False fields): a copy with the given fields set. _parse_op sets an Op's fields one by
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
    # ops.yaml's `helpers:`: the hand-written functions expressions may call, by kind (HELPER_KINDS)
    helpers: Dict[str, List[str]] = field(default_factory=dict)

    def by_name(self, name):
        return [o for o in self.ops if o.name == name]


def formula_inputs(key):
    """The inputs a derivatives key names: "self" or, for a joint formula, "self, other"."""
    return [name.strip() for name in key.split(",")]


def _as_list(value):
    return value if isinstance(value, list) else [value]


def _expand_dtypes(items, groups, line, errors, where="dtypes"):
    out = []
    for item in _as_list(items):
        if not isinstance(item, str):
            errors.append(RegistryError(line, f"{where}: expected dtype names, got {item!r}"))
            continue
        if item in DTYPES:
            names = [item]
        elif item in groups:
            names = groups[item]
        else:
            errors.append(
                RegistryError(
                    line,
                    f"{where}: unknown dtype or group '{item}'",
                    f"dtypes: {', '.join(DTYPES)}; groups: {', '.join(groups)}",
                )
            )
            continue
        out.extend(n for n in names if n not in out)
    return [d for d in DTYPES if d in out]


def _load_groups(raw, errors):
    groups = {}
    if raw is None:
        return groups
    if not isinstance(raw, dict):
        errors.append(RegistryError(getattr(raw, "line", 1), "dtype_groups must be a mapping of name -> list"))
        return groups
    for name, members in raw.items():
        line = raw.line_of(name) if hasattr(raw, "line_of") else 1
        if name in DTYPES:
            errors.append(RegistryError(line, f"dtype group '{name}' shadows a dtype name"))
            continue
        groups[name] = _expand_dtypes(members, groups, line, errors, where=f"dtype group '{name}'")
    return groups


_IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")
_HEADER = re.compile(r"^[A-Za-z_]\w*(/[A-Za-z_]\w*)*$")
# ops.yaml's `helpers:`: kind -> (what its names may be, the form of a name). A formula's names are
# looked up from namespace kiln, so they may be qualified (autograd::sum_to, std::min); a pointwise
# expression's are unqualified kiln::math functions.
HELPER_KINDS = {
    "formulas": (re.compile(r"^[A-Za-z_]\w*(::[A-Za-z_]\w*)*$"), "a C++ name, maybe qualified (autograd::sum_to)"),
    "math": (_IDENTIFIER, "an identifier (a kiln::math function)"),
}


def _load_helpers(raw, line, errors):
    """ops.yaml's `helpers:` (kind -> list of names) as a dict of lists, one per HELPER_KINDS
    kind (empty when not given). Lists keep no item lines: an error is at its kind's line."""
    helpers = {kind: [] for kind in HELPER_KINDS}
    if raw is None:
        return helpers
    if not isinstance(raw, dict):
        errors.append(
            RegistryError(
                line,
                "helpers must map a kind to a list of names",
                f"kinds: {', '.join(HELPER_KINDS)}, e.g. helpers: {{math: [exp, log]}}",
            )
        )
        return helpers
    for kind, names in raw.items():
        at = raw.line_of(kind) if hasattr(raw, "line_of") else line
        if kind not in HELPER_KINDS:
            errors.append(RegistryError(at, f"helpers: unknown kind '{kind}'", f"known: {', '.join(HELPER_KINDS)}"))
            continue
        form, what = HELPER_KINDS[kind]
        if not isinstance(names, list):
            errors.append(RegistryError(at, f"helpers: {kind} must be a list of names", f"each {what}"))
            continue
        for name in names:
            if not isinstance(name, str) or not form.match(name):
                errors.append(RegistryError(at, f"helpers: {kind}: {name!r} is not {what}"))
            elif name in helpers[kind]:
                errors.append(RegistryError(at, f"helpers: {kind}: '{name}' is listed twice"))
            else:
                helpers[kind].append(name)
    return helpers


def _load_meta_families(raw, errors):
    """ops.yaml's `meta_families` (name -> fields) as MetaFamily by name. A malformed entry is
    reported at its line and kept with defaults for what was wrong, so that its ops are still
    checked against it."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        errors.append(
            RegistryError(
                getattr(raw, "line", 1),
                "meta_families must map a family name to its fields",
                "e.g. flip: {custom: true, plan: FlipPlan, header: shape_build}",
            )
        )
        return {}
    return {str(name): _parse_meta_family(str(name), value, raw.line_of(name), errors) for name, value in raw.items()}


def _parse_meta_family(name, value, line, errors):
    where = f"meta family '{name}'"

    def error(key, message, hint=None):
        at = value.line_of(key) if key is not None and hasattr(value, "line_of") else line
        errors.append(RegistryError(at, f"{where}: {message}", hint))

    if not _IDENTIFIER.match(name):
        errors.append(
            RegistryError(
                line,
                f"meta family name '{name}' is not a C++ identifier",
                "it names the meta step (meta::<name>) and ops' meta: keys",
            )
        )
    if not isinstance(value, dict):
        error(
            None, "expected a mapping of its fields", "e.g. flip: {custom: true, plan: FlipPlan, header: shape_build}"
        )
        return MetaFamily(name=name, line=line, plan="", header="", custom=True)
    for k in value:
        if k not in META_FIELDS:
            error(k, f"unknown key '{k}'", f"known keys: {', '.join(META_FIELDS)}")
    got = {}
    for key, pattern, example in (
        ("plan", _IDENTIFIER, "the kiln::meta struct its step returns, e.g. plan: FlipPlan"),
        ("header", _HEADER, "kiln/meta/<header>.h declares the step, e.g. header: shape_build"),
    ):
        v = value.get(key)
        if key not in value:
            error(None, f"no '{key}'", example)
        elif not isinstance(v, str) or not pattern.match(v):
            error(key, f"'{key}' must be a C++ name, got {v!r}", example)
        else:
            got[key] = v
    for key in META_FLAGS:
        if key in value:
            if isinstance(value[key], bool):
                got[key] = value[key]
            else:
                error(key, f"'{key}' must be true or false, got {value[key]!r}", f"{key}: true (unquoted)")
    custom = got.get("custom", False)
    if not custom and name not in GENERIC_META:
        error(
            "custom" if "custom" in value else None,
            f"the templates write only the generic steps' calls " f"({', '.join(GENERIC_META)})",
            f"write custom: true: the step is meta::{name}(<op name>, <every argument>)",
        )
    if custom:
        for key in ("args", "more_tensors"):
            if key in value:
                error(
                    key,
                    f"'{key}' applies to the generic steps ({', '.join(GENERIC_META)}); a custom one takes every argument",
                    f"drop '{key}' (required: still names the arguments an op must have)",
                )
    elif "args" not in value:
        error(None, "a generic step lists the arguments it consumes", "args: {<name>: [<schema type>, ...], ...}")
    if "args" in value and not custom:
        got["args"] = _meta_args(value["args"], lambda m, h=None: error("args", m, h))
    if "required" in value:
        req = value["required"]
        if not isinstance(req, list) or not all(isinstance(r, str) for r in req):
            error("required", f"'required' must list argument names, got {req!r}", "e.g. required: [self, dim]")
        else:
            got["required"] = list(req)
            for r in req if not custom and "args" in got else []:
                if r not in got["args"]:
                    error(
                        "required", f"required argument '{r}' is not one of its args", f"args: {', '.join(got['args'])}"
                    )
    if "results" in value:
        rules = value["results"]
        known = GENERIC_META.get(name, ["self"]) if not custom else ["self"]
        if not isinstance(rules, list) or not rules or not all(isinstance(r, str) for r in rules):
            error("results", f"'results' must list result_dtype rules, got {rules!r}", f"rules: {', '.join(known)}")
        else:
            unknown = [r for r in rules if r not in known]
            for r in unknown:
                error(
                    "results",
                    f"unknown result rule '{r}'",
                    f"rules: {', '.join(known)}" + ("" if not custom else " (a custom step chooses the dtype itself)"),
                )
            if not unknown:
                got["results"] = list(dict.fromkeys(rules))
    for key, example in (("result_sizes", "{mean: stat_sizes}"), ("result_dtypes", "{save_mean: stat_dtype}")):
        if key in value:
            m = value[key]
            if not isinstance(m, dict) or not all(
                isinstance(k, str) and isinstance(v, str) and _IDENTIFIER.match(v) for k, v in m.items()
            ):
                error(
                    key, f"'{key}' must map a named result to a field of the plan, got {m!r}", f"e.g. {key}: {example}"
                )
            else:
                got[key] = dict(m)
    if got.get("foreach") and not got.get("mutates"):
        error("foreach", "a foreach family writes its Tensor lists in place", "add mutates: true")
    return MetaFamily(
        name=name,
        line=line,
        plan=got.get("plan", ""),
        header=got.get("header", ""),
        **{k: v for k, v in got.items() if k not in ("plan", "header")},
    )


def _meta_args(raw, error):
    """A generic step's `args`: argument name -> the schema types it accepts."""
    hint = 'e.g. args: {self: [Tensor], dim: [int, "int?"]}'
    if not isinstance(raw, dict) or not raw:
        error(f"'args' must map argument names to lists of schema types, got {raw!r}", hint)
        return {}
    out = {}
    for arg, types in raw.items():
        if not isinstance(arg, str) or not isinstance(types, list) or not types:
            error(f"args: '{arg}' must list the schema types it accepts, got {types!r}", hint)
            continue
        for t in types:
            try:
                ok = isinstance(t, str) and parse_type(t).schema() == t
            except SignatureError:
                ok = False
            if not ok:
                error(
                    f"args: {t!r} (of '{arg}') is not a schema type",
                    "as a signature spells it: int, int[1]?, ScalarType?",
                )
        out[arg] = list(types)
    return out


def _default_variants(kind, sig, family=None):
    """PyTorch's default: the function alone (kiln::name), with its out= form where kiln generates
    one. Methods and in-place forms (x.name(), x.name_()) are members of Tensor, which every user
    of Tensor recompiles when one is added: an entry asks for them with `variants:`."""
    if options_start(sig) is not None:
        return ["function"]  # factories, as torch.zeros / torch.zeros_like
    if family is not None and family.mutates:
        return ["function"]  # writes into its arguments: nothing to put into an out= or self
    if kind == "pointwise" or family is not None:
        return ["function", "out"]
    return ["function"]


def _composite_out_legal(op):
    """A composite's out= runs the function and copies its result into out (PyTorch's resize and
    cast rules): one Tensor result, not a view of an input, and no argument it writes."""
    returns = op.sig.returns
    return (
        len(returns) == 1
        and returns[0].type.schema() == "Tensor"
        and returns[0].type.alias is None
        and not any(a.type.mutable for a in op.sig.arguments)
    )


def _inplace_legal(family, sig):
    """A structured op writes into self when its one result has self's shape."""
    return family.inplace and len(sig.returns) == 1


def _families_hint(families):
    return (
        f"meta families: {', '.join(families)}"
        if families
        else "no meta families are declared: ops.yaml's meta_families holds them"
    )


def _check_meta(op, raw, families, errors):
    """`meta: <family>` on a kernel op: the signature must be one the family's meta step takes.
    Returns the op with the family's result_dtype and identity settings."""
    where = raw.line_of("meta")
    if op.kind != "kernel":
        errors.append(
            RegistryError(
                where,
                f"{op.full_name}: 'meta' applies to kernel ops only",
                "a structured kernel op is `kernel: <name>` plus `meta: <family>`",
            )
        )
        return op
    fam = families.get(op.meta)
    if fam is None:
        errors.append(
            RegistryError(where, f"{op.full_name}: unknown meta family '{op.meta}'", _families_hint(families))
        )
        return op
    names = [a.name for a in op.sig.arguments]
    for a in op.sig.arguments if not fam.custom else []:
        wanted = fam.args.get(a.name)
        if wanted is None:
            if a.type.is_tensor_list:
                errors.append(
                    RegistryError(where, f"{op.full_name}: meta '{op.meta}' takes no Tensor list ('{a.name}')")
                )
            elif a.type.is_tensor and not fam.more_tensors:
                errors.append(
                    RegistryError(
                        where,
                        f"{op.full_name}: meta '{op.meta}' reads one Tensor, self; " f"it has no place for '{a.name}'",
                    )
                )
        elif a.type.schema().replace("(a)", "") not in wanted:
            errors.append(
                RegistryError(
                    where,
                    f"{op.full_name}: meta '{op.meta}' wants '{a.name}' as "
                    f"{' or '.join(wanted)}, got {a.type.schema()}",
                )
            )
    for r in fam.required:
        if r not in names:
            errors.append(RegistryError(where, f"{op.full_name}: meta '{op.meta}' needs an argument '{r}'"))
    op = replace(op, result_dtype=str(raw.get("result_dtype", "self")))
    if op.result_dtype not in fam.results:
        errors.append(
            RegistryError(
                raw.line_of("result_dtype") if "result_dtype" in raw else where,
                f"{op.full_name}: meta '{op.meta}' has no result_dtype '{op.result_dtype}'",
                f"result_dtype: {', '.join(fam.results)}",
            )
        )
    op = replace(op, identity=bool(raw.get("identity", True)))
    if "identity" in raw and op.meta != "reduction":
        errors.append(
            RegistryError(raw.line_of("identity"), f"{op.full_name}: 'identity' applies to meta: reduction only")
        )
    if fam.mutates:
        return _check_mutating(op, raw, fam, where, errors)
    returns = [r.type.schema() for r in op.sig.returns]
    # several named results: two (values, indices), or as many as a family sizes (layer_norm's three)
    most = 3 if fam.result_sizes else 2
    if returns != ["Tensor"] and not (
        2 <= len(returns) <= most and set(returns) == {"Tensor"} and all(r.name for r in op.sig.returns)
    ):
        errors.append(
            RegistryError(
                where,
                f"{op.full_name}: a structured op returns Tensor or {most} named Tensors at most "
                "(an int64 one when named indices: (Tensor values, Tensor indices))",
            )
        )
    return op


def _check_mutating(op, raw, fam, where, errors):
    """An in-place kernel family (`mutates`): the kernel writes into the mutable arguments, so the
    op returns () or one of them, has only its function variant and no derivatives."""
    mutable = [a for a in op.sig.arguments if a.type.base == "Tensor" and a.type.mutable]
    if not mutable:
        errors.append(
            RegistryError(
                where,
                f"{op.full_name}: meta '{op.meta}' writes into its arguments, but none is " "mutable",
                "mark what the kernel writes as Tensor(a!) or Tensor(a!)[]",
            )
        )
    returns = op.sig.returns
    if returns:
        alias = returns[0].type.alias
        target = next((a for a in mutable if a.type.alias == alias and not a.type.is_list), None)
        if len(returns) != 1 or returns[0].type.is_list or not returns[0].type.mutable or target is None:
            errors.append(
                RegistryError(
                    where,
                    f"{op.full_name}: meta '{op.meta}' returns () or a mutable Tensor argument "
                    "it writes (Tensor(a!) self -> Tensor(a!))",
                )
            )
    if fam.foreach and not any(a.type.is_tensor_list for a in op.sig.arguments):
        errors.append(RegistryError(where, f"{op.full_name}: meta 'foreach' needs a Tensor[] argument"))
    if not fam.foreach:
        for a in op.sig.arguments:
            if a.type.is_tensor_list:
                errors.append(
                    RegistryError(
                        where,
                        f"{op.full_name}: meta '{op.meta}' takes no Tensor list ('{a.name}')",
                        "Tensor lists go to meta: foreach",
                    )
                )
    for key in ("variants", "derivatives"):
        if key in raw and (key == "derivatives" or _as_list(raw[key]) != ["function"]):
            errors.append(
                RegistryError(
                    raw.line_of(key),
                    f"{op.full_name}: an op of meta '{op.meta}' writes into its "
                    f"arguments: it has no {'derivatives' if key == 'derivatives' else 'variants but function'}",
                )
            )
    return op


def _check_autocast(op, value, where, errors):
    """`autocast: <policy>` (both devices) or `autocast: {cpu: <policy>, cuda: <policy>}`: how the
    op's floating inputs are cast inside an autocast region of that device. Returns device -> policy."""
    hint = f"autocast: one of {', '.join(AUTOCAST_POLICIES)}, or a mapping {{cpu: <policy>, cuda: <policy>}}"
    if isinstance(value, str):
        policies = {b: value for b in BACKENDS if b in op.backends}
    elif isinstance(value, dict) and value:
        policies = {str(k): v for k, v in value.items()}
    else:
        errors.append(
            RegistryError(where, f"{op.full_name}: autocast must be a policy or a mapping of device -> policy", hint)
        )
        return {}
    for policy in sorted({p for p in policies.values() if p not in AUTOCAST_POLICIES}, key=str):
        errors.append(RegistryError(where, f"{op.full_name}: unknown autocast policy {policy!r}", hint))
    for device, policy in policies.items():
        if device not in BACKENDS:
            errors.append(RegistryError(where, f"{op.full_name}: autocast names unknown device '{device}'", hint))
        elif device not in op.backends:
            errors.append(RegistryError(where, f"{op.full_name}: autocast for {device}, which dispatch does not list"))
        if policy in AUTOCAST_POLICIES and device in AUTOCAST_LOWER:
            declared = op.backend_dtypes(device)
            # the dtypes the policy may hand the op on that device must be declared
            wanted = AUTOCAST_LOWER[device] if policy != "float32" else ["float32"]
            if policy == "promote":
                wanted = wanted + ["float32"]
            lacking = [d for d in wanted if d not in declared]
            if lacking:
                errors.append(
                    RegistryError(
                        where,
                        f"{op.full_name}: autocast {policy} on {device} hands it "
                        f"{', '.join(lacking)}, which its {device} dtypes lack",
                        f"declare {', '.join(lacking)} (with a kernel for it) or drop the policy",
                    )
                )
    inputs = [a for a in op.sig.arguments if a.type.base == "Tensor"]
    if op.is_factory or not inputs:
        errors.append(RegistryError(where, f"{op.full_name}: autocast casts Tensor inputs; this op has none"))
    elif any(a.type.mutable for a in inputs) or any(r.type.mutable for r in op.sig.returns):
        errors.append(
            RegistryError(
                where,
                f"{op.full_name}: autocast applies to functional ops, not to in-place ones",
                "PyTorch's autocast lists name the functional overloads only",
            )
        )
    return {d: p for d, p in policies.items() if d in BACKENDS}


def _parse_checks(sig, value, line, errors):
    names = {a.name: a for a in sig.arguments}
    if not isinstance(value, list):
        errors.append(RegistryError(line, "checks: expected a list of {argument, require, message}"))
        return []
    out = []
    for c in value:
        if (
            not isinstance(c, dict)
            or set(c) - {"argument", "require", "message", "error"}
            or not all(isinstance(c.get(k), str) and c.get(k) for k in ("argument", "require", "message"))
        ):
            errors.append(
                RegistryError(line, f"checks: expected {{argument, require, message[, error]}} strings, got {c!r}")
            )
            continue
        if c["argument"] not in names:
            errors.append(RegistryError(line, f"checks: '{c['argument']}' is not an argument of {sig.full_name}"))
            continue
        error = c.get("error", "ValueError")
        if error not in CHECK_ERRORS:
            errors.append(RegistryError(line, f"checks: unknown error '{error}'", f"error: {', '.join(CHECK_ERRORS)}"))
            continue
        for placeholder in re.findall(r"\{(\w+)\}", c["message"]):
            if placeholder not in names or names[placeholder].type.base == "Tensor":
                errors.append(
                    RegistryError(line, f"checks: message placeholder '{{{placeholder}}}' is not a non-Tensor argument")
                )
        out.append(ArgCheck(c["argument"], c["require"], c["message"], error))
    return out


def _check_options_group(sig, line, errors):
    """Device and Layout come only as PyTorch's factory keywords, which C++ folds into TensorOptions."""
    group = "*, " + ", ".join(f"{t} {n}={d}" for n, t, d in OPTIONS_GROUP)
    uses = [a.name for a in sig.arguments if a.type.base in ("Device", "Layout") or a.name in ("device", "layout")]
    if not uses:
        return
    start = options_start(sig)
    if start is None:
        errors.append(
            RegistryError(
                line,
                f"{sig.full_name}: '{uses[0]}' belongs to the factory keywords, which come together "
                "and in this order",
                f"write {group}",
            )
        )
    elif not sig.arguments[start].kwarg_only:
        errors.append(RegistryError(line, f"{sig.full_name}: the factory keywords are keyword-only", f"write {group}"))


def _default_samples(op):
    tensors = op.tensor_args
    if op.kind == "pointwise":
        if len(tensors) == 1:
            return [{tensors[0].name: [3, 5]}, {tensors[0].name: []}]
        first = {t.name: [3, 5] for t in tensors}
        second = {t.name: ([2, 3, 5] if i == 0 else [3, 1]) for i, t in enumerate(tensors)}
        return [first, second]
    return [{t.name: [3, 5] for t in tensors if not t.type.optional}]


def _validate_samples(op, raw, line, errors):
    samples = raw if raw is not None else _default_samples(op)
    if not isinstance(samples, list):
        errors.append(RegistryError(line, "samples must be a list of mappings"))
        return []
    out = []
    for s in samples:
        sline = getattr(s, "line", line)
        if not isinstance(s, dict):
            errors.append(RegistryError(sline, f"sample must be a mapping of argument -> value, got {s!r}"))
            continue
        for key in s:
            if op.arg(key) is None:
                errors.append(
                    RegistryError(
                        sline,
                        f"sample names unknown argument '{key}' of {op.full_name}",
                        f"arguments: {', '.join(a.name for a in op.sig.arguments)}",
                    )
                )
        for a in op.sig.arguments:
            if a.name not in s and not a.has_default and not a.type.optional:
                errors.append(RegistryError(sline, f"sample of {op.full_name} lacks required argument '{a.name}'"))
            v = s.get(a.name)
            if (
                a.type.optional_items
                and a.name in s
                and not (isinstance(v, list) and all(x is None or isinstance(x, (list, dict)) for x in v))
            ):
                errors.append(
                    RegistryError(
                        sline,
                        f"sample of '{a.name}' ({a.type.schema()}) must be a list of "
                        "null / shape / tensor mapping entries",
                        "e.g. [null, {values: [0, 2], dtype: int64}]",
                    )
                )
                continue
            for x in v if a.type.optional_items else [v]:
                if a.type.base == "Tensor" and isinstance(x, dict) and "values" in x and not _rectangular(x["values"]):
                    errors.append(
                        RegistryError(
                            sline,
                            f"sample values of '{a.name}' must be a rectangular nested list of numbers",
                            "e.g. {values: [[0, 2], [1, 0]], dtype: int64}",
                        )
                    )
        out.append(dict(s))
    return out


def _domain_for(op, arg_name):
    d = op.domain
    if isinstance(d, dict):
        d = d.get(arg_name)
    return [float(x) for x in d] if d else list(DEFAULT_DOMAIN)


def _rectangular(values):
    if not isinstance(values, list):
        return isinstance(values, (int, float)) and not isinstance(values, bool)
    if not all(_rectangular(v) for v in values):
        return False
    return len({tuple(_nested_shape(v)) for v in values}) <= 1  # [] is an empty tensor


def _nested_shape(values):
    shape = []
    while isinstance(values, list):
        shape.append(len(values))
        values = values[0] if values else None
    return shape


def normalized_samples(op):
    """Samples with every Tensor argument as {shape, dtype, domain, bool} (for tests and references)."""
    result = []
    for s in op.samples:
        ns = {}
        for a in op.sig.arguments:
            if a.name not in s:
                continue
            v = s[a.name]
            if a.type.optional_items:  # Tensor?[]: each entry null or a tensor of its own
                ns[a.name] = {"items": [None if x is None else _tensor_spec(op, a, x, False) for x in v]}
            elif a.type.base == "Tensor" and a.type.optional and not a.type.is_list and v is None:
                ns[a.name] = None  # a Tensor? passed as None (an argument without a default)
            elif a.type.base == "Tensor":
                ns[a.name] = _tensor_spec(op, a, v, a.type.is_list)
            else:
                ns[a.name] = v
        result.append(ns)
    return result


def _tensor_spec(op, a, v, is_list):
    spec = dict(v) if isinstance(v, dict) else {"shapes" if is_list else "shape": v}
    if "values" in spec:  # literal values (index samples without duplicates): their nesting is the shape
        spec["shape"] = _nested_shape(spec["values"])
    spec.setdefault("dtype", None)
    spec["domain"] = [float(x) for x in spec.get("domain") or _domain_for(op, a.name)]
    spec["bool"] = a.name in op.bool_inputs
    return spec


def _check_domain(op, raw, line, errors):
    if raw is None:
        return None

    def ok(d):
        return isinstance(d, list) and len(d) == 2 and all(isinstance(x, (int, float)) for x in d) and d[0] <= d[1]

    if isinstance(raw, dict):
        for k, v in raw.items():
            if op.arg(k) is None:
                errors.append(RegistryError(line, f"domain names unknown argument '{k}'"))
            elif not ok(v):
                errors.append(RegistryError(line, f"domain of '{k}' must be [lo, hi], got {v!r}"))
    elif not ok(raw):
        errors.append(RegistryError(line, f"domain must be [lo, hi] or a mapping of argument -> [lo, hi], got {raw!r}"))
    return raw


def _parse_op(raw, groups, ctx, errors):
    """One registry entry into an Op, key group by key group; None when it cannot be read (the
    problems are in errors). Past the signature, an entry with errors stops before its meta step
    and before its samples, whose checks assume the rest is sound."""
    sig = _parse_signature(raw, errors)
    if sig is None:
        return None
    n_before = len(errors)
    parsed = _parse_kind(raw, sig, errors)
    if parsed is None:
        return None
    kind, body = parsed
    engine = engines_mod.parse_engine(raw, sig, ctx.engines, errors)
    if engine is not None and kind != "kernel":
        errors.append(
            RegistryError(
                raw.line_of("engine"),
                f"{sig.full_name}: an engine op has no {kind}: key (its kernels are the engine's)",
            )
        )
    op = _parse_dtypes(raw, sig, kind, body, groups, errors, ctx.engines.get(engine.engine) if engine else None)
    op = replace(op, engine=engine)
    for t in op.kernel_targets if engine else []:
        if t.backend not in ctx.engines[engine.engine].headers:
            errors.append(
                RegistryError(
                    raw.line_of("dispatch"),
                    f"{sig.full_name}: dispatch: {t.key}: engine '{engine.engine}' has no {t.backend} front",
                    "write the engine's front for that backend and name its header in ops.yaml's engines:",
                )
            )
    op = _parse_body_and_doc(op, raw, errors)
    op = _parse_kind_keys(op, raw, ctx, errors)
    op = _parse_derivatives(op, raw, ctx, errors)
    op = _parse_differentiability(op, raw, ctx, errors)
    for key in ("result_dtype", "identity"):
        if key in raw and "meta" not in raw:
            errors.append(
                RegistryError(
                    raw.line_of(key), f"{sig.full_name}: '{key}' applies to structured kernel ops (meta:) only"
                )
            )
    if "meta" in raw:
        op = _check_meta(replace(op, meta=str(raw["meta"])), raw, ctx.meta_families, errors)
        if len(errors) > n_before:
            return None
    family = ctx.meta_families.get(op.meta) if op.meta is not None else None
    if not (family is not None and family.mutates):
        _check_writes(op, raw, errors)
        if len(errors) > n_before:
            return None
    op = _parse_variants(op, raw, family, errors)
    if op.composite_route and op.variants != ["function"]:
        errors.append(
            RegistryError(
                raw.line_of("variants") if "variants" in raw else op.line,
                f"{sig.full_name}: a kernel op served by its composite on some backend has the function variant only",
                "variants: [function] (its out= and in-place forms would bypass the composite)",
            )
        )
    op = _parse_test_keys(op, raw, errors)
    op = _parse_checks_and_autocast(op, raw, errors)
    if len(errors) > n_before:
        return None
    return replace(
        op,
        samples=_validate_samples(
            op, raw.get("samples"), raw.line_of("samples") if "samples" in raw else op.line, errors
        ),
    )


def _parse_signature(raw, errors):
    """Unknown keys, and the signature; None when there is none to read."""
    line = raw.line
    unknown = [k for k in raw if k not in OP_KEYS]
    for k in unknown:
        errors.append(RegistryError(raw.line_of(k), f"unknown key '{k}'", f"known keys: {', '.join(sorted(OP_KEYS))}"))
    if "signature" not in raw:
        errors.append(RegistryError(line, "op entry has no 'signature'", "e.g. signature: exp(Tensor self) -> Tensor"))
        return None
    try:
        sig = parse_signature(str(raw["signature"]))
    except SignatureError as e:
        errors.append(
            RegistryError(
                raw.line_of("signature"),
                f"bad signature: {e}",
                "ATen schema grammar, e.g. add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
            )
        )
        return None
    return sig


# Keys that `dispatch:` replaced, and how to write what they said.
RETIRED_DISPATCH_KEYS = {
    "kernel": "dispatch: {cpu: <kernel>, cuda: <kernel>} names the kernel of each backend",
    "backends": "dispatch: {cpu: <target>} lists the backends (default for pointwise and composite: every one)",
    "cuda_dtypes": "dispatch: {cuda: {target: <target>, dtypes: [...]}} narrows a backend's dtypes",
}


def _parse_kind(raw, sig, errors):
    """What serves the entry: (kind, body), kind one of pointwise, kernel (only `dispatch:`
    kernels), composite; None when it cannot tell."""
    line = raw.line
    _check_options_group(sig, raw.line_of("signature"), errors)
    if "native" in raw:
        errors.append(
            RegistryError(
                raw.line_of("native"),
                f"{sig.full_name}: 'native' is retired",
                "write composite: <function>, defined in runtime/src/composite/ (namespace kiln::composite)",
            )
        )
        return None
    retired = [k for k in RETIRED_DISPATCH_KEYS if k in raw]
    for k in retired:
        errors.append(RegistryError(raw.line_of(k), f"{sig.full_name}: '{k}' is retired", RETIRED_DISPATCH_KEYS[k]))
    if retired:
        return None
    kinds = [k for k in ("pointwise", "composite") if k in raw]
    if len(kinds) > 1:
        errors.append(
            RegistryError(
                line,
                f"{sig.full_name}: give one of pointwise, composite, or a dispatch of kernels; got {kinds}",
                "pointwise: <expression>; composite: <kiln::composite function, or a one-line C++ body>",
            )
        )
        return None
    if not kinds:
        return "kernel", ""
    kind = kinds[0]
    body = raw[kind]
    if not isinstance(body, str) or not body.strip():
        errors.append(RegistryError(raw.line_of(kind), f"{sig.full_name}: '{kind}' must be a non-empty string"))
        return None
    return kind, body


def _parse_dtypes(raw, sig, kind, body, groups, errors, engine=None):
    """family, dtypes and the dispatch targets: the Op the other key groups fill in."""
    line = raw.line
    family = raw.get("family", "pointwise" if kind == "pointwise" else "shape")
    if family not in FAMILIES:
        errors.append(
            RegistryError(raw.line_of("family"), f"unknown family '{family}'", f"families: {', '.join(FAMILIES)}")
        )
    if "dtypes" not in raw:
        errors.append(RegistryError(line, f"{sig.full_name}: no 'dtypes'", "e.g. dtypes: [floating, complex]"))
    dtypes = _expand_dtypes(raw.get("dtypes", []), groups, raw.line_of("dtypes"), errors)
    targets = dispatch_keys.parse_dispatch(
        raw,
        sig,
        None if kind == "kernel" else kind,
        dtypes,
        lambda items, where: _expand_dtypes(items, groups, where, errors, "dispatch dtypes"),
        errors,
        # an engine's op: a kernel named after it on each backend the engine has a front for
        engine_kernel=sig.full_name.replace(".", "_") if engine else None,
        engine_backends=list(engine.headers) if engine else [],
    )
    composite_route = ""
    if kind == "composite" and any(t.kind == "kernel" for t in targets):
        # kernels on some backends, the composite on the others
        kind, composite_route = "kernel", body.strip()
        if not re.match(r"^[A-Za-z_]\w*$", composite_route):
            errors.append(
                RegistryError(
                    raw.line_of("composite"),
                    f"{sig.full_name}: the composite beside dispatch: kernels must name a function",
                    "composite: <function> in runtime/src/composite/ (namespace kiln::composite)",
                )
            )
    if kind == "kernel":  # its body is its first kernel's name (the CPU one when it has one)
        body = next((t.kernel for t in targets if t.kind == "kernel"), "")
    return Op(
        line=line,
        sig=sig,
        family=family,
        dtypes=dtypes,
        dispatch=targets,
        kind=kind,
        body=body.rstrip() if kind == "composite" else body.strip(),
        composite_route=composite_route,
    )


def _parse_body_and_doc(op, raw, errors):
    """A composite body's lines, and the doc line."""
    sig, kind, line = op.sig, op.kind, op.line
    if kind == "composite":
        # a block scalar starts on the line after its key
        first = raw.line_of(kind) + (1 if "\n" in op.body else 0)
        op = replace(op, body_line=first)
        found = composite_check.problem(op.body, OP_KEYS)
        if found:
            errors.append(
                RegistryError(
                    first + found[0], f"{sig.full_name}: {found[1]}", "check the indentation of the keys after it"
                )
            )
        elif "\n" in op.body.strip():
            errors.append(
                RegistryError(
                    first,
                    f"{sig.full_name}: a composite body longer than one line belongs in a C++ file",
                    "write composite: <function> and define it in runtime/src/composite/ "
                    "(namespace kiln::composite), where clang-format and an IDE reach it",
                )
            )
    op = replace(op, doc=str(raw.get("doc", "")).strip())
    if not op.doc:
        errors.append(
            RegistryError(line, f"{sig.full_name}: no 'doc' line", "one sentence saying what the op computes")
        )
    return op


def _parse_kind_keys(op, raw, ctx, errors):
    """The keys of pointwise ops (promotion, scalars, choices ...) and what a kernel op needs;
    then the argument keys of every kind (cpp_no_default_args, foreach_lists)."""
    sig, kind, line = op.sig, op.kind, op.line
    for key in (
        "promotion",
        "promote_scalars",
        "bool_inputs",
        "choices",
        "zero_dim",
        "integer_divisor",
        "integer_exponent",
    ):
        if key in raw and kind != "pointwise":
            errors.append(RegistryError(raw.line_of(key), f"'{key}' applies to pointwise ops only"))
    op = replace(op, promotion=raw.get("promotion", "default"))
    if op.promotion not in PROMOTIONS:
        errors.append(
            RegistryError(
                raw.line_of("promotion"), f"unknown promotion '{op.promotion}'", f"promotions: {', '.join(PROMOTIONS)}"
            )
        )
    op = replace(op, promote_scalars=_as_list(raw.get("promote_scalars", [])))
    for s in op.promote_scalars:
        a = op.arg(s)
        if a is None or a.type.base != "Scalar":
            errors.append(
                RegistryError(raw.line_of("promote_scalars"), f"promote_scalars: '{s}' is not a Scalar argument")
            )
    op = replace(op, bool_inputs=_as_list(raw.get("bool_inputs", [])))
    for s in op.bool_inputs:
        a = op.arg(s)
        if a is None or not a.type.is_tensor:
            errors.append(RegistryError(raw.line_of("bool_inputs"), f"bool_inputs: '{s}' is not a Tensor argument"))
    op = replace(op, integer_divisor=raw.get("integer_divisor"), integer_exponent=raw.get("integer_exponent"))
    if op.integer_divisor is not None and not (
        op.arg(op.integer_divisor) and op.arg(op.integer_divisor).type.is_tensor
    ):
        errors.append(
            RegistryError(
                raw.line_of("integer_divisor"), f"integer_divisor: '{op.integer_divisor}' is not a Tensor argument"
            )
        )
    if op.integer_exponent is not None and op.integer_exponent not in op.promote_scalars:
        errors.append(
            RegistryError(
                raw.line_of("integer_exponent"),
                f"integer_exponent: '{op.integer_exponent}' is not one of promote_scalars",
                "the exponent's sign is checked among the scalars that join promotion",
            )
        )
    op = replace(op, zero_dim=_as_list(raw.get("zero_dim", [])))
    for s in op.zero_dim:
        a = op.arg(s)
        if a is None or not a.type.is_tensor:
            errors.append(RegistryError(raw.line_of("zero_dim"), f"zero_dim: '{s}' is not a Tensor argument"))
    op = replace(op, choices=dict(raw.get("choices", {}) or {}))
    for a in sig.arguments:
        if kind == "pointwise" and a.type.base == "str" and a.name not in op.choices:
            errors.append(
                RegistryError(line, f"{sig.full_name}: str argument '{a.name}' needs its allowed values in 'choices'")
            )
    for k, v in op.choices.items():
        a = op.arg(k)
        if a is None or a.type.base != "str":
            errors.append(RegistryError(raw.line_of("choices"), f"choices: '{k}' is not a str argument"))
        elif not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            errors.append(RegistryError(raw.line_of("choices"), f"choices of '{k}' must be a list of strings"))
    if kind == "pointwise":
        for a in sig.arguments:
            if a.type.is_list or a.type.base in ("ScalarType",) or (a.type.base == "Tensor" and a.type.optional):
                errors.append(
                    RegistryError(
                        raw.line_of("signature"),
                        f"{sig.full_name}: pointwise ops take Tensors, Scalars, floats, ints, bools and strs; '{a.name}' is {a.type.schema()}",
                    )
                )
        if not (1 <= len(op.tensor_args) <= 4):
            errors.append(
                RegistryError(raw.line_of("signature"), f"{sig.full_name}: pointwise ops take 1 to 4 Tensors")
            )
        if len([a for a in sig.arguments if a.type.base != "Tensor"]) > 4:
            errors.append(
                RegistryError(
                    raw.line_of("signature"), f"{sig.full_name}: pointwise ops take at most 4 non-Tensor arguments"
                )
            )
    if kind == "kernel" and "meta" not in raw:
        errors.append(
            RegistryError(
                raw.line_of("dispatch"),
                f"{sig.full_name}: a kernel op needs a meta step",
                f"meta: {', '.join(ctx.meta_families)} (runtime/include/kiln/meta/), which checks the "
                "arguments and sizes the result for every backend",
            )
        )
    op = replace(op, cpp_no_default_args=_as_list(raw.get("cpp_no_default_args", [])))
    for k in op.cpp_no_default_args:
        if op.arg(k) is None or op.arg(k).default is None:
            errors.append(
                RegistryError(
                    raw.line_of("cpp_no_default_args"), f"cpp_no_default_args: '{k}' is not an argument with a default"
                )
            )
    lists = raw.get("foreach_lists", {})
    if lists and raw.get("meta") != "foreach":
        errors.append(RegistryError(raw.line_of("foreach_lists"), "foreach_lists is a key of meta: foreach ops"))
    if not isinstance(lists, dict):
        errors.append(
            RegistryError(
                raw.line_of("foreach_lists"), "foreach_lists must map a Tensor[] argument to " "optional or scalars"
            )
        )
        lists = {}
    for k, v in lists.items():
        arg = op.arg(k)
        first_list = next((a.name for a in sig.arguments if a.type.is_tensor_list), None)
        if arg is None or not arg.type.is_tensor_list or k == first_list or v not in ("optional", "scalars"):
            errors.append(
                RegistryError(
                    raw.line_of("foreach_lists"),
                    f"foreach_lists: '{k}: {v}' must name a Tensor[] "
                    "argument after the first one as optional or scalars",
                )
            )
    op = replace(op, foreach_lists=dict(lists))
    return op


def _parse_derivatives(op, raw, ctx, errors):
    """derivatives (single or joint formulas, or not_implemented) and non_differentiable."""
    sig, kind = op.sig, op.kind
    derivs = raw.get("derivatives") or {}
    if derivs == NOT_IMPLEMENTED:
        if kind == "composite":
            errors.append(
                RegistryError(
                    raw.line_of("derivatives"),
                    f"{sig.full_name}: 'derivatives: {NOT_IMPLEMENTED}' " "applies to kernel and pointwise ops",
                    "a composite gets autograd from its parts",
                )
            )
        op = replace(op, derivative_not_implemented=True)
        derivs = {}
    if derivs and not isinstance(derivs, dict):
        errors.append(RegistryError(raw.line_of("derivatives"), "derivatives must map input name -> formula"))
        derivs = {}
    if derivs and kind == "composite" and not op.is_function:
        errors.append(
            RegistryError(
                raw.line_of("derivatives"),
                f"{sig.full_name}: a composite body gets autograd from its parts; remove 'derivatives'",
                "or write composite: <function>, which derivatives record as one node",
            )
        )
    seen_inputs = set()
    for k, v in derivs.items():
        dline = derivs.line_of(k) if hasattr(derivs, "line_of") else raw.line_of("derivatives")
        names = formula_inputs(str(k))
        key = ", ".join(names)
        for name in names:
            a = op.arg(name)
            if a is None:
                errors.append(
                    RegistryError(
                        dline,
                        f"derivative for unknown input '{name}' of {sig.full_name}",
                        f"inputs: {', '.join(x.name for x in sig.arguments if x.type.base == 'Tensor')}",
                    )
                )
            elif a.type.base != "Tensor":
                errors.append(
                    RegistryError(dline, f"derivative for '{name}', which is {a.type.schema()}, not a Tensor")
                )
            elif len(names) > 1 and a.type.is_list:
                errors.append(
                    RegistryError(
                        dline,
                        f"joint derivative '{key}' names the list '{name}'",
                        "give a list input a formula of its own (it returns one gradient per element)",
                    )
                )
            if name in seen_inputs:
                errors.append(RegistryError(dline, f"{sig.full_name}: input '{name}' has two derivative formulas"))
            seen_inputs.add(name)
        if not isinstance(v, str) or not v.strip():
            errors.append(RegistryError(dline, f"derivative of '{key}' must be a formula string"))
        else:
            op = replace(op, derivatives={**op.derivatives, key: v.strip()})
            ctx.formula_lines[(op.full_name, key)] = dline
    op = replace(op, non_differentiable=_as_list(raw.get("non_differentiable", [])))
    for k in op.non_differentiable:
        if op.arg(k) is None or op.arg(k).type.base != "Tensor":
            errors.append(
                RegistryError(raw.line_of("non_differentiable"), f"non_differentiable: '{k}' is not a Tensor argument")
            )
    if op.derivative_not_implemented:
        op = replace(
            op,
            derivatives={
                a.name: NOT_IMPLEMENTED
                for a in op.tensor_args
                if a.name not in op.non_differentiable and a.name not in op.bool_inputs
            },
        )
    if op.derivatives:
        for a in op.tensor_args + [x for x in sig.arguments if x.type.is_tensor_list]:
            if (
                a.name not in op.differentiable_inputs
                and a.name not in op.non_differentiable
                and a.name not in op.bool_inputs
            ):
                errors.append(
                    RegistryError(
                        raw.line_of("derivatives"),
                        f"{sig.full_name}: no derivative for input '{a.name}'",
                        "add a formula, or list it under non_differentiable",
                    )
                )
    return op


def _parse_differentiability(op, raw, ctx, errors):
    """output_differentiability, jvp, gradgrad, differentiable."""
    sig, kind = op.sig, op.kind
    if "output_differentiability" in raw:
        flags = raw["output_differentiability"]
        oline = raw.line_of("output_differentiability")
        if not isinstance(flags, list) or len(flags) != len(sig.returns) or not all(isinstance(f, bool) for f in flags):
            errors.append(
                RegistryError(
                    oline,
                    f"{sig.full_name}: output_differentiability must list true/false for each of "
                    f"its {len(sig.returns)} outputs",
                )
            )
        elif not op.derivatives and op.kind != "composite":
            # (a composite without formulas records its parts: the flags tell the tests which of
            # its outputs carry no gradient, as its C++ returns them)
            errors.append(
                RegistryError(oline, f"{sig.full_name}: output_differentiability applies to ops with derivatives")
            )
        else:
            op = replace(op, output_differentiability=flags)
    if "jvp" in raw:
        jline = raw.line_of("jvp")
        value = raw["jvp"]
        if not isinstance(value, str) or not value.strip():
            errors.append(RegistryError(jline, f"{sig.full_name}: jvp must be 'linear' or a formula string"))
        elif not op.derivatives or op.derivative_not_implemented:
            errors.append(
                RegistryError(
                    jline,
                    f"{sig.full_name}: jvp applies to ops with derivatives",
                    "an op without them has no tangent (or, a composite body, its parts' tangents)",
                )
            )
        elif value.strip() != "linear" and len(sig.returns) > 1:
            errors.append(
                RegistryError(
                    jline,
                    f"{sig.full_name}: a jvp formula for an op with several outputs is not " "supported",
                    "leave jvp out: the derivative formulas are transposed",
                )
            )
        else:
            op = replace(op, jvp=value.strip())
            ctx.formula_lines[(op.full_name, "jvp")] = jline
    op = replace(op, gradgrad=bool(raw.get("gradgrad", True)))
    if "differentiable" in raw:
        op = replace(op, composes_gradients=bool(raw["differentiable"]))
        if kind != "composite" or op.derivatives:
            errors.append(
                RegistryError(
                    raw.line_of("differentiable"),
                    f"{sig.full_name}: 'differentiable' applies to composite "
                    "ops without derivatives (others are differentiable exactly when they have them)",
                )
            )
    return op


def _check_writes(op, raw, errors):
    """Only an in-place meta family's ops return () or take a mutable Tensor list."""
    sig = op.sig
    sline = raw.line_of("signature")
    lists = [a.name for a in sig.arguments if a.type.is_tensor_list and a.type.mutable]
    if not sig.returns:
        errors.append(
            RegistryError(
                sline,
                f"{sig.full_name}: an op that returns () writes into its arguments: a "
                "kernel op with an in-place meta step",
                "meta: foreach (Tensor lists) or an op's own in-place step, with kernel: <name>",
            )
        )
    elif lists:
        errors.append(
            RegistryError(
                sline,
                f"{sig.full_name}: the mutable list '{lists[0]}' is written by a kernel " "op with meta: foreach only",
            )
        )


def _parse_variants(op, raw, family, errors):
    """variants (defaults as PyTorch's) and operator."""
    sig, kind = op.sig, op.kind
    op = replace(op, variants=_as_list(raw.get("variants", _default_variants(kind, sig, family))))
    if "function" not in op.variants:
        op = replace(op, variants=["function"] + op.variants)  # methods and variants are built on the function
    for v in op.variants:
        if v not in VARIANTS:
            errors.append(
                RegistryError(raw.line_of("variants"), f"unknown variant '{v}'", f"variants: {', '.join(VARIANTS)}")
            )
        if v in ("inplace", "out") and op.is_factory:
            errors.append(RegistryError(raw.line_of("variants"), f"{sig.full_name}: a factory has no '{v}' variant"))
        elif v == "out" and kind == "composite" and not _composite_out_legal(op):
            errors.append(
                RegistryError(
                    raw.line_of("variants"),
                    f"{sig.full_name}: a composite's out= variant needs one "
                    "Tensor result that is no view, and no mutable argument",
                )
            )
        elif (
            v in ("inplace", "out")
            and kind != "pointwise"
            and not op.structured
            and not (v == "out" and kind == "composite")
        ):
            errors.append(
                RegistryError(
                    raw.line_of("variants"),
                    f"'{v}' variants are generated for pointwise and structured kernel ops only"
                    + (" (and out= for composites)" if v == "out" else ""),
                )
            )
        if v == "inplace" and op.structured and not _inplace_legal(family, sig):
            errors.append(
                RegistryError(
                    raw.line_of("variants"),
                    f"{sig.full_name}: no in-place variant: its result is not one tensor of self's shape",
                )
            )
        if v == "method" and not (
            sig.arguments and sig.arguments[0].name == "self" and sig.arguments[0].type.is_tensor
        ):
            errors.append(
                RegistryError(raw.line_of("variants"), f"{sig.full_name}: a method needs 'Tensor self' first")
            )
    op = replace(op, operators=_as_list(raw.get("operator", [])))
    for o in op.operators:
        if o not in OPERATORS:
            errors.append(
                RegistryError(
                    raw.line_of("operator"), f"unknown operator '{o}'", f"operators: {' '.join(sorted(OPERATORS))}"
                )
            )
        n_tensors = len(op.tensor_args)
        if o == "~" and n_tensors != 1 or o not in ("-", "~") and n_tensors != 2:
            errors.append(
                RegistryError(
                    raw.line_of("operator"),
                    f"operator '{o}' does not fit {sig.full_name}'s {n_tensors} Tensor argument(s)",
                )
            )
    return op


def _parse_test_keys(op, raw, errors):
    """What the generated tests use: domain, torch, compare, special_values."""
    sig, line = op.sig, op.line
    op = replace(
        op, domain=_check_domain(op, raw.get("domain"), raw.line_of("domain") if "domain" in raw else line, errors)
    )
    op = replace(op, torch=raw.get("torch"))
    op = replace(op, compare=str(raw.get("compare", "values")), reads_storage=bool(raw.get("reads_storage", False)))
    if op.compare not in COMPARES:
        errors.append(
            RegistryError(raw.line_of("compare"), f"unknown compare '{op.compare}'", f"compare: {', '.join(COMPARES)}")
        )
    elif op.is_random and op.compare != "metadata":
        errors.append(
            RegistryError(
                raw.line_of("compare") if "compare" in raw else line,
                f"{sig.full_name}: a random op's values cannot match PyTorch's generator",
                "add compare: metadata (sizes, dtype and device are compared; reseeding makes the variants comparable)",
            )
        )
    op = replace(op, special_values=bool(raw.get("special_values", False)))
    return op


def _parse_checks_and_autocast(op, raw, errors):
    sig = op.sig
    if "checks" in raw:
        op = replace(op, checks=_parse_checks(sig, raw["checks"], raw.line_of("checks"), errors))
    if "autocast" in raw:
        op = replace(op, autocast=_check_autocast(op, raw["autocast"], raw.line_of("autocast"), errors))
    return op


class _Context:
    def __init__(self, meta_families, engines):
        self.formula_lines = {}
        self.meta_families = meta_families
        self.engines = engines


def build(doc):
    """Validate a loaded registry document into a Registry; raise ErrorList on any problem. Only
    the document is read: the hand-written C++ it names is checked by the compiler and linker
    (generated/src/helpers_check.cpp; kernel tables and composite calls name their functions)."""
    errors = []
    if not isinstance(doc, dict):
        raise ErrorList([RegistryError(1, "the registry must be a mapping with 'dtype_groups' and 'ops'")])
    for k in doc:
        if k not in TOP_KEYS:
            errors.append(
                RegistryError(doc.line_of(k), f"unknown top-level key '{k}'", f"known: {', '.join(sorted(TOP_KEYS))}")
            )
    groups = _load_groups(doc.get("dtype_groups"), errors)
    meta_families = _load_meta_families(doc.get("meta_families"), errors)
    engines = engines_mod.load_engines(doc.get("engines"), BACKENDS, errors)
    helpers = _load_helpers(doc.get("helpers"), doc.line_of("helpers") if "helpers" in doc else 1, errors)
    raw_ops = doc.get("ops")
    if not isinstance(raw_ops, list):
        errors.append(RegistryError(doc.line_of("ops") if "ops" in doc else 1, "'ops' must be a list of op entries"))
        raise ErrorList(errors)
    ctx = _Context(meta_families, engines)
    ops = []
    seen = {}
    for raw in raw_ops:
        if not isinstance(raw, dict):
            errors.append(RegistryError(doc.line_of("ops"), f"op entry must be a mapping, got {raw!r}"))
            continue
        op = _parse_op(raw, groups, ctx, errors)
        if op is None:
            continue
        if op.full_name in seen:
            errors.append(
                RegistryError(
                    op.line, f"duplicate op '{op.full_name}'", f"first defined at {{line:{seen[op.full_name]}}}"
                )
            )
            continue
        seen[op.full_name] = op.line
        ops.append(op)
    registry = Registry(ops=ops, groups=groups, meta_families=meta_families, engines=engines, helpers=helpers)
    formulas.check_registry(registry, ctx.formula_lines, errors)
    if errors:
        errors.sort(key=lambda e: e.line)
        raise ErrorList(errors)
    return registry
