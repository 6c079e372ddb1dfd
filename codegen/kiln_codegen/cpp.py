"""C++ spellings of schema types, defaults and declarations."""
import re
from typing import NamedTuple, Optional

from .signature import Type

DTYPE_ENUM = {
    "bool": "Bool",
    "uint8": "UInt8",
    "int8": "Int8",
    "int16": "Int16",
    "int32": "Int32",
    "int64": "Int64",
    "float16": "Float16",
    "bfloat16": "BFloat16",
    "float32": "Float32",
    "float64": "Float64",
    "complex64": "Complex64",
    "complex128": "Complex128",
}
# storage type, compute ("opmath") type
DTYPE_CPP = {
    "bool": ("bool", "bool"),
    "uint8": ("uint8_t", "uint8_t"),
    "int8": ("int8_t", "int8_t"),
    "int16": ("int16_t", "int16_t"),
    "int32": ("int32_t", "int32_t"),
    "int64": ("int64_t", "int64_t"),
    "float16": ("Half", "float"),
    "bfloat16": ("BFloat16", "float"),
    "float32": ("float", "float"),
    "float64": ("double", "double"),
    "complex64": ("complex<float>", "complex<float>"),
    "complex128": ("complex<double>", "complex<double>"),
}
REAL_OF = {"complex64": "float32", "complex128": "float64"}


def dtype_enum(name):
    return f"DType::{DTYPE_ENUM[name]}"


def param_type(t: Type, base=False):
    """base: the spelling of kiln::_ops::<op> entries, over TensorBase (kiln/gen/ops/<name>.h)."""
    b = t.base
    if b == "Tensor":
        if t.is_list:  # a mutable list too: the handles are const, the kernel writes their data
            return "const TensorBaseList&" if base else "const TensorList&"
        tensor = "TensorBase" if base else "Tensor"
        # a written Tensor? (batch_norm's running_mean) stays a const handle, as libtorch's
        # const optional<Tensor>&: None is Tensor(), and the op writes the data, not the handle
        return f"{tensor}&" if t.mutable and not t.optional else f"const {tensor}&"
    if b == "int":
        if t.is_list:
            return "OptIntList" if t.optional else "IntArrayRef"
        return "std::optional<int64_t>" if t.optional else "int64_t"
    if b == "float":
        if t.is_list:  # float[]?: histogram's range
            return "OptDoubleList" if t.optional else "ArrayRef<double>"
        return "std::optional<double>" if t.optional else "double"
    if b == "bool":
        return "std::optional<bool>" if t.optional else "bool"
    if b == "Scalar":
        return "const std::optional<Scalar>&" if t.optional else "const Scalar&"
    if b == "ScalarType":
        return "std::optional<DType>" if t.optional else "DType"
    if b == "str":
        return "std::optional<std::string_view>" if t.optional else "std::string_view"
    if b in ("Device", "Layout", "MemoryFormat"):
        return f"std::optional<{b}>" if t.optional else b
    if b == "Generator":
        return "Generator*"
    raise ValueError(b)


def stored_type(t: Type):
    """Type used to keep a non-Tensor argument inside a backward node."""
    b = t.base
    if b == "int" and t.is_list:
        return "OptIntList" if t.optional else "DimVector"
    if b == "float" and t.is_list:
        return "OptDoubleList" if t.optional else "std::vector<double>"
    if b == "str":
        return "std::optional<std::string>" if t.optional else "std::string"
    if b == "Scalar":
        return "std::optional<Scalar>" if t.optional else "Scalar"
    return param_type(t)


def store_expr(arg):
    t = arg.type
    if t.base == "str" and t.optional:
        return f"{arg.name} ? std::optional<std::string>(std::string(*{arg.name})) : std::nullopt"
    if t.base == "str":
        return f"std::string({arg.name})"
    if t.base == "float" and t.is_list and not t.optional:
        return f"{arg.name}.vec()"
    return arg.name


def return_type(sig, base=False):
    tensor = "TensorBase" if base else "Tensor"
    if not sig.returns:
        return "void"  # -> (): the op writes into its mutable arguments
    if sig.returns_tuple:
        return "std::tuple<" + ", ".join(tensor for _ in sig.returns) + ">"
    if sig.returns[0].type.is_list:
        return "TensorBaseList" if base else "TensorList"
    return f"{tensor}&" if sig.returns[0].type.mutable else tensor


def default_value(arg, base=False):
    d, t = arg.default, arg.type
    if d is None:
        return None
    if d == "None":
        return {"Tensor": "TensorBase()" if base else "Tensor()", "Generator": "nullptr"}.get(t.base, "std::nullopt")
    if t.base == "int" and t.is_list:
        if d.startswith("["):
            inner = d.strip("[] ")
            return "{" + inner + "}" if inner else "{}"
        return "{" + d + "}"
    if t.base == "float" and t.is_list:
        inner = ", ".join(
            x if any(c in x for c in ".e") else x + ".0" for x in re.split(r"\s*,\s*", d.strip("[] ")) if x
        )
        return "{" + inner + "}"
    if t.base == "bool":
        return "true" if d == "True" else "false"
    if t.base == "float":
        if d in ("inf", "-inf"):
            return d.replace("inf", "INFINITY")
        return d if any(c in d for c in ".e") else d + ".0"
    if t.base == "Scalar":
        if d in ("True", "False"):
            return "true" if d == "True" else "false"
        return d
    if t.base == "str":
        return '"' + d.strip("'") + '"'
    return d


# A factory's keyword arguments (PyTorch's dtype, layout, device plus requires_grad) are one
# `TensorOptions options` parameter in C++, as libtorch's at::zeros(size, options).
OPTIONS_GROUP = (
    ("dtype", "ScalarType?", "None"),
    ("layout", "Layout?", "None"),
    ("device", "Device?", "None"),
    ("requires_grad", "bool", "False"),
)


def options_start(sig):
    """Index of the first argument of the TensorOptions group, or None."""
    names = [a.name for a in sig.arguments]
    if "device" not in names:
        return None
    start = names.index("dtype") if "dtype" in names else -1
    got = [(a.name, a.type.schema(), a.default) for a in sig.arguments[start : start + len(OPTIONS_GROUP)]]
    return start if start >= 0 and got == list(OPTIONS_GROUP) else None


def cpp_arguments(sig, base=False):
    """(name, C++ type, C++ default or None) per C++ parameter: schema order, the options group folded."""
    start = options_start(sig)
    out = []
    for i, a in enumerate(sig.arguments):
        if start is not None and start < i < start + len(OPTIONS_GROUP):
            continue
        if i == start:
            out.append(("options", "TensorOptions", "{}"))
        else:
            out.append((a.name, param_type(a.type, base), default_value(a, base)))
    return out


def params(sig, with_defaults=True, skip_first=False, first_override=None, base=False, no_default=()):
    """The C++ parameter list; `no_default` names arguments whose default is left out, and C++
    then leaves out the defaults of every argument before them too."""
    out = []
    args = cpp_arguments(sig, base)
    last_required = max((i for i, (name, _, _) in enumerate(args) if name in no_default), default=-1)
    for i, (name, ty, dv) in enumerate(args):
        if i <= last_required:
            dv = None
        if skip_first and i == 0:
            continue
        if i == 0 and first_override:
            ty = first_override
        text = f"{ty} {name}"
        if with_defaults and dv is not None:
            text += f" = {dv}"
        out.append(text)
    return ", ".join(out)


def arg_names(sig, skip_first=False):
    return ", ".join(name for i, (name, _, _) in enumerate(cpp_arguments(sig)) if not (skip_first and i == 0))


def cpp_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def json_to_value(v):
    """C++ Value literal for a sample/default JSON value (used in generated tests)."""
    if v is None:
        return "Value()"
    if isinstance(v, bool):
        return "Value(true)" if v else "Value(false)"
    if isinstance(v, int):
        return f"Value(int64_t({v}))"
    if isinstance(v, float):
        return f"Value({v!r})"
    if isinstance(v, str):
        return f"Value({cpp_string(v)})"
    if isinstance(v, list) and any(isinstance(x, float) for x in v):
        return "Value(std::vector<double>{" + ", ".join(repr(float(x)) for x in v) + "})"
    if isinstance(v, list):
        return "Value(std::vector<int64_t>{" + ", ".join(str(int(x)) for x in v) + "})"
    raise ValueError(v)


class Param(NamedTuple):
    """One schema argument's C++ parameter, over Tensor and over TensorBase (default: None
    when it has none)."""

    name: str
    type: str
    default: Optional[str]
    base_type: str
    base_default: Optional[str]


def param_list(args):
    """A Param per schema argument (no options group: pointwise ops' scalar overloads)."""
    return [
        Param(a.name, param_type(a.type), default_value(a), param_type(a.type, True), default_value(a, True))
        for a in args
    ]
