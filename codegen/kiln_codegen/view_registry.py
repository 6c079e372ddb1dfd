"""Call-by-name facts of an op (templates/registry.j2, registry_part.cpp.j2): how each schema
argument is read from a Value, and the op's row of the registry. A frozen part of views.OpView."""
import re
from dataclasses import dataclass
from typing import Optional

from . import cpp
from .facts import Frozen


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


class CallByName(Frozen):
    def __init__(self, op):
        sig = op.sig
        start = cpp.options_start(sig)
        args = []
        for i, a in enumerate(sig.arguments):
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
        self.registry_call = f"kiln::{op.name}({', '.join(r.name for r in args)})"
        self.signature_literal = cpp.cpp_string(f"{op.full_name}{sig.arguments_text()}")
        self.doc_literal = cpp.cpp_string(op.doc)

        def spec(a):
            optional = a.has_default  # a Tensor? without a default must be passed (None is a value)
            type_text = re.sub(r"\(\w+!?\)", "", a.type.schema())  # Tensor(b!) -> Tensor
            return f'{{"{a.name}", "{type_text}", {str(a.kwarg_only).lower()}, {str(optional).lower()}}}'

        self.arg_specs = ", ".join(spec(a) for a in sig.arguments)
        self._freeze()
