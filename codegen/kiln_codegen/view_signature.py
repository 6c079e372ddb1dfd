"""How an op's C++ functions are spelled: the parameter and argument lists of its function,
method and kiln::_ops (TensorBase) variants, from cpp.py. A frozen part of views.OpView."""
from . import cpp
from .facts import Frozen


class Spelling(Frozen):
    def __init__(self, op):
        sig, no_default = op.sig, op.cpp_no_default_args
        self.ret = cpp.return_type(sig)
        self.params_decl = cpp.params(sig, no_default=no_default)
        self.params_def = cpp.params(sig, with_defaults=False)
        self.args = cpp.arg_names(sig)
        # (name, C++ type, C++ default) per C++ parameter, the options group folded (cpp_macros.j2)
        self.cpp_args = cpp.cpp_arguments(sig)
        self.method_params_decl = cpp.params(sig, skip_first=True, no_default=no_default)
        self.method_params_def = cpp.params(sig, with_defaults=False, skip_first=True)
        self.method_args = cpp.arg_names(sig, skip_first=True)
        # The spelling of its kiln::_ops entries, over TensorBase (kiln/gen/ops/<name>.h).
        self.base_ret = cpp.return_type(sig, base=True)
        self.base_params_decl = cpp.params(sig, base=True, no_default=no_default)
        self.base_params_def = cpp.params(sig, with_defaults=False, base=True)
        self.base_inplace_params_decl = cpp.params(sig, first_override="TensorBase&", base=True, no_default=no_default)
        self.base_inplace_params_def = cpp.params(sig, with_defaults=False, first_override="TensorBase&", base=True)
        # a mutating op (uniform_: Tensor(a!) self -> Tensor(a!)) is a non-const method
        first = sig.arguments[0] if sig.arguments else None
        self.method_const = "" if (first is not None and first.type.mutable) else " const"
        self._freeze()
