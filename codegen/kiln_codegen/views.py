"""Per-op facts the templates need, computed once from the model."""
from . import cpp, formulas
from .model import COMPLEX, DTYPES, FLOATING, INTEGRAL, META_FAMILIES, normalized_samples

PROMOTION_ENUM = {"default": "Default", "int_to_float": "IntToFloat", "bool_result": "BoolResult",
                  "complex_to_real": "ComplexToReal", "self": "SelfDType"}


def dtype_mask(dtypes):
    return sum(1 << DTYPES.index(d) for d in dtypes)


def camel(name):
    return "".join(p[:1].upper() + p[1:] for p in name.replace(".", "_").split("_") if p)


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


class OpView:
    def __init__(self, op, registry, missing):
        self.op = op
        self.sig = op.sig
        self.cname = op.cname
        self.full = op.full_name
        self.name = op.name
        self.node = camel(op.full_name) + "Backward"
        self.ret = cpp.return_type(op.sig)
        self.params_decl = cpp.params(op.sig)
        self.params_def = cpp.params(op.sig, with_defaults=False)
        self.args = cpp.arg_names(op.sig)
        self.mask = dtype_mask(op.dtypes)
        self.dtype_list = ", ".join(op.dtypes)
        self.missing = op in missing
        self.tensors = op.tensor_args
        self.tensor_lists = [a for a in op.sig.arguments if a.type.is_tensor_list]
        first = op.sig.arguments[0] if op.sig.arguments else None
        self.first = first
        self.has_method = op.has_method
        self.method_params_decl = cpp.params(op.sig, skip_first=True)
        self.method_params_def = cpp.params(op.sig, with_defaults=False, skip_first=True)
        self.method_args = cpp.arg_names(op.sig, skip_first=True)
        self._derivatives(registry)
        self._pointwise()
        self._structured()
        self.out_names = [r["name"] for r in self.results] if op.structured else ["out"]
        # a mutating op (uniform_: Tensor(a!) self -> Tensor(a!)) is a non-const method
        self.method_const = "" if (first is not None and first.type.mutable) else " const"

    @property
    def options_group(self):
        """The op takes PyTorch's factory keywords, folded into `TensorOptions options`."""
        return cpp.options_start(self.sig) is not None

    # ---- dispatch facts ----
    @property
    def device_expr(self):
        if self.options_group:
            return "options.device"
        for a in self.sig.arguments:
            if a.type.is_tensor and not a.type.optional:
                return f"{a.name}.device()"
            if a.type.is_tensor_list:
                return f"support::list_device(\"{self.full}\", \"{a.name}\", {a.name})"
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
    def dtype_checks(self):
        """Statements checking the declared dtypes of the dispatching inputs."""
        out = []
        if self.op.kind == "pointwise":
            for a in self.tensors:
                if a.name not in self.op.bool_inputs:
                    out.append(f'support::check_dtype("{self.full}", "{a.name}", {a.name}, kDTypes);')
                if a.name in self.op.zero_dim:
                    out.append(f'support::check_zero_dim("{self.name}", "{a.name}", {a.name});')
            return out
        if self.options_group and not self.op.structured:  # a structured factory checks the dtype it resolves
            return [f'support::check_options_dtype("{self.full}", options, kDTypes);']
        for a in self.sig.arguments:
            if a.type.is_tensor and not a.type.optional:
                out.append(f'support::check_dtype("{self.full}", "{a.name}", {a.name}, kDTypes);')
                break
            if a.type.is_tensor_list:
                out.append(f'for (const Tensor& t : {a.name}) support::check_dtype("{self.full}", "{a.name}", t, kDTypes);')
                break
        return out

    @property
    def device_check(self):
        names = [a.name for a in self.tensors]
        if len(names) < 2:
            return ""
        pairs = ", ".join("{&%s, \"%s\"}" % (n, n) for n in names)
        return f'support::check_same_device("{self.full}", {{{pairs}}});'

    # ---- autograd ----
    def _derivatives(self, registry):
        op = self.op
        self.differentiable = bool(op.derivatives)
        self.diff_inputs = [a for a in op.sig.arguments if a.name in op.derivatives]
        used = set()
        for f in op.derivatives.values():
            used |= formulas.used_locals(op, f)
        self.used = used
        returns = op.sig.returns
        self.multi_output = len(returns) > 1
        if self.multi_output:
            self.grad_names = [f"grad_{r.name}" for r in returns]
            self.output_names = [r.name for r in returns]
        else:
            self.grad_names = ["grad"]
            self.output_names = ["result"]
        # saved members: (decl, init-from-forward, release, unpack-local)
        saved = []
        for a in op.sig.arguments:
            if a.name in used:
                if a.type.is_tensor:
                    saved.append(dict(decl=f"SavedVariable {a.name}_;", init=f"node->{a.name}_ = SavedVariable({a.name}, false);",
                                      init_inplace=(f"node->{a.name}_ = SavedVariable({a.name}.clone(), false);" if a.name == "self" else None),
                                      release=f"{a.name}_.reset();",
                                      local=f"const Tensor {a.name} = {a.name}_.unpack(self_ref, name());"))
                elif a.type.is_tensor_list:
                    saved.append(dict(decl=f"std::vector<SavedVariable> {a.name}_;",
                                      init=f"for (const Tensor& t : {a.name}) node->{a.name}_.emplace_back(t, false);",
                                      release=f"{a.name}_.clear();",
                                      local=f"TensorList {a.name}; for (const SavedVariable& v : {a.name}_) {a.name}.push_back(v.unpack(self_ref, name()));"))
                else:
                    saved.append(dict(decl=f"{cpp.stored_type(a.type)} {a.name}_;", init=f"node->{a.name}_ = {cpp.store_expr(a)};",
                                      release=None, local=f"const auto& {a.name} = {a.name}_;"))
        for i, r in enumerate(self.output_names):
            if r in used:
                saved.append(dict(decl=f"SavedVariable {r}_;", init=None, output_index=i, release=f"{r}_.reset();",
                                  local=f"const Tensor {r} = {r}_.unpack(self_ref, name());"))
        for s in saved:
            s.setdefault("init_inplace", None)
            s.setdefault("output_index", None)
        self.saved = saved
        # sizes/dtypes of inputs: needed by formulas and to finish each input's gradient
        meta = []
        for a in op.sig.arguments:
            if a.type.base != "Tensor":
                continue
            need = a.name in op.derivatives or f"{a.name}_sizes" in used or f"{a.name}_dtype" in used
            if not need:
                continue
            if a.type.is_list:
                meta.append(dict(decl=f"std::vector<DimVector> {a.name}_sizes_; std::vector<DType> {a.name}_dtypes_;",
                                 init=f"for (const Tensor& t : {a.name}) {{ node->{a.name}_sizes_.push_back(t.sizes()); node->{a.name}_dtypes_.push_back(t.dtype()); }}",
                                 local=f"const auto& {a.name}_sizes = {a.name}_sizes_;"))
            else:
                meta.append(dict(decl=f"DimVector {a.name}_sizes_; DType {a.name}_dtype_ = DType::Float32;",
                                 init=f"if ({a.name}.defined()) {{ node->{a.name}_sizes_ = {a.name}.sizes(); node->{a.name}_dtype_ = {a.name}.dtype(); }}",
                                 local=f"const auto& {a.name}_sizes = {a.name}_sizes_; const DType {a.name}_dtype = {a.name}_dtype_;"))
        self.meta = meta
        # gradient slots: one edge per differentiable Tensor, one per element of a differentiable list
        self.edge_inits = []
        self.grad_blocks = []
        slot = "0"
        for a in self.diff_inputs:
            formula = op.derivatives[a.name]
            if a.type.is_list:
                self.edge_inits.append(f"for (const Tensor& t : {a.name}) node->next_edges.push_back(autograd::gradient_edge(t));")
                self.grad_blocks.append(
                    f"{{\n      const size_t base = {slot};\n      bool any = false;\n"
                    f"      for (size_t i = 0; i < {a.name}_sizes_.size(); ++i) any = any || next_edges[base + i].valid();\n"
                    f"      if (any) {{\n        TensorList g = {formula};\n"
                    f"        for (size_t i = 0; i < {a.name}_sizes_.size(); ++i)\n"
                    f"          if (next_edges[base + i].valid()) grad_inputs[base + i] = support::finish_grad(g[i], {a.name}_sizes_[i], {a.name}_dtypes_[i]);\n"
                    f"      }}\n    }}")
                slot = f"{slot} + {a.name}_sizes_.size()"
            else:
                self.edge_inits.append(f"node->next_edges.push_back(autograd::gradient_edge({a.name}));")
                self.grad_blocks.append(
                    f"if (next_edges[{slot}].valid())\n"
                    f"      grad_inputs[{slot}] = support::finish_grad({formula}, {a.name}_sizes_, {a.name}_dtype_);")
                slot = f"{slot} + 1"
        # one allocation for the edge list when its length is known up front
        if self.diff_inputs and not any(a.type.is_list for a in self.diff_inputs) and len(self.diff_inputs) > 1:
            self.edge_inits.insert(0, f"node->next_edges.reserve({len(self.diff_inputs)});")
        self.record_inputs = ", ".join(f"&{a.name}" for a in self.diff_inputs if not a.type.is_list)
        self.record_lists = [a.name for a in self.diff_inputs if a.type.is_list]

    @property
    def record_condition(self):
        parts = []
        if self.record_inputs:
            parts.append(f"autograd::any_requires_grad({{{self.record_inputs}}})")
        for l in self.record_lists:
            parts.append(f"autograd::any_requires_grad({l})")
        return " || ".join(parts) if parts else "false"

    # ---- pointwise ----
    def _pointwise(self):
        op = self.op
        if op.kind != "pointwise":
            return
        self.spec_args = ", ".join(f'"{a.name}"' for a in self.tensors)
        self.promotion = PROMOTION_ENUM[op.promotion]
        self.bool_mask = sum(1 << i for i, a in enumerate(self.tensors) if a.name in op.bool_inputs)
        self.inputs = ", ".join(f"&{a.name}" for a in self.tensors)
        self.promoting = ", ".join(f"{'&' if not op.arg(s).type.optional else ''}{s}{'' if not op.arg(s).type.optional else ' ? &*' + s + ' : nullptr'}"
                                   for s in op.promote_scalars)
        fills, fields, inits = [], [], []
        si = 0
        ci = 0
        for a in op.sig.arguments:
            if a.type.base == "Tensor":
                continue
            b, opt = a.type.base, a.type.optional
            if b == "str":
                choices = ", ".join(f'"{c}"' for c in op.choices[a.name])
                fills.append(f'call.choices[{ci}] = pointwise::choice_index("{self.full}", "{a.name}", {a.name}, {{{choices}}});')
                fields.append(f"int64_t {a.name};")
                inits.append(f"call.choices[{ci}]")
                ci += 1
                continue
            if opt:
                fills.append(f"if ({a.name}) {{ call.scalars[{si}] = Scalar(*{a.name}); call.scalar_given[{si}] = true; }}")
                fields.append(f"math::Opt<T> {a.name};")
                inits.append(f"math::Opt<op_t>{{call.scalars[{si}].template to<op_t>(), call.scalar_given[{si}]}}")
            else:
                fills.append(f"call.scalars[{si}] = Scalar({a.name}); call.scalar_given[{si}] = true;")
                if a.name == "alpha":  # PyTorch refuses a fractional alpha for integers
                    fills.append(f'support::check_alpha("{self.full}", call.compute_dtype, {a.name});')
                if b in ("Scalar", "float"):
                    fields.append(f"T {a.name};")
                    inits.append(f"call.scalars[{si}].template to<op_t>()")
                elif b == "int":
                    fields.append(f"int64_t {a.name};")
                    inits.append(f"call.scalars[{si}].template to<int64_t>()")
                else:
                    fields.append(f"bool {a.name};")
                    inits.append(f"call.scalars[{si}].template to<bool>()")
            si += 1
        self.scalar_fills = fills
        self.functor_fields = fields
        self.functor_inits = ", ".join(inits)
        self.functor_params = ", ".join(("bool " if a.name in op.bool_inputs else "T ") + a.name for a in self.tensors)
        cases = []
        for d in compute_dtypes(op):
            store, opmath = cpp.DTYPE_CPP[d]
            out_store = cpp.DTYPE_CPP[out_dtype(op, d)][0]
            ins = ", ".join("bool" if a.name in op.bool_inputs else store for a in self.tensors)
            cases.append(dict(enum=cpp.dtype_enum(d), store=store, opmath=opmath, out=out_store, ins=ins))
        self.cases = cases
        self.case_list = ", ".join(cpp.dtype_enum(d) for d in compute_dtypes(op))
        self.scalar_overload = (len(self.tensors) == 2 and self.tensors[1].name not in op.bool_inputs
                                and self.tensors[0] is op.sig.arguments[0] and self.tensors[1] is op.sig.arguments[1])

    # ---- structured kernel ops ----
    def _structured(self):
        op = self.op
        if not op.structured:
            return
        fam = self.family = META_FAMILIES[op.meta]
        self.plan_type = "meta::" + fam["plan"]
        # results in return order: (name in the out= signature, dtype expression)
        if self.multi_output:
            self.results = [dict(name=r.name, dtype="DType::Int64" if r.name == "indices" else "plan.dtype")
                            for r in op.sig.returns]
        else:
            self.results = [dict(name="out", dtype="plan.dtype")]
        self.kernel_inputs = [a.name for a in op.sig.arguments if a.type.is_tensor]
        # arguments the meta step does not consume go to the kernel as they are (var's correction)
        consumed = {} if fam.get("custom") else fam["args"]
        extra = [a for a in op.sig.arguments if a.name not in consumed and not a.type.is_tensor]
        if fam.get("factory"):
            extra = []  # the plan carries every argument a factory kernel needs
        self.kernel_extra = [a.name for a in extra]
        n = len(self.results)
        self.kernel_param_types = ", ".join([f"const {self.plan_type}&"] + ["const Tensor&"] * (n + len(self.kernel_inputs))
                                            + [cpp.param_type(a.type) for a in extra])
        self.kernel_params = ", ".join([f"const {self.plan_type}& plan"] + [f"const Tensor& {r['name']}" for r in self.results]
                                       + [f"const Tensor& {t}" for t in self.kernel_inputs]
                                       + [f"{cpp.param_type(a.type)} {a.name}" for a in extra])
        self.out_ret = "Tensor&" if n == 1 else "std::tuple<" + ", ".join(["Tensor&"] * n) + ">"
        self.out_params_prefix = ", ".join(f"Tensor& {r['name']}" for r in self.results)

    # ---- registry ----
    def registry_conversions(self):
        lines = []
        names = []
        start = cpp.options_start(self.sig)
        for i, a in enumerate(self.sig.arguments):
            t = a.type
            if start is not None and start <= i < start + len(cpp.OPTIONS_GROUP):
                if i == start:
                    d, l, dev, rg = (f"a[{start + k}]" for k in range(4))
                    op = self.full
                    lines.append("TensorOptions options;")
                    lines.append(f'if ({d} && !{d}->is_none()) options = options.with_dtype({d}->to_dtype("{op}", "dtype"));')
                    lines.append(f'if ({l} && !{l}->is_none()) options.layout = {l}->to_layout("{op}", "layout");')
                    lines.append(f'if ({dev} && !{dev}->is_none()) options = options.with_device({dev}->to_device("{op}", "device"));')
                    lines.append(f'if ({rg}) options.requires_grad = {rg}->to_bool("{op}", "requires_grad");')
                    names.append("options")
                continue
            if t.base == "Generator":
                lines.append(f'Generator* {a.name} = (a[{i}] && !a[{i}]->is_none()) ? a[{i}]->to_generator("{self.full}", "{a.name}") : nullptr;')
                names.append(a.name)
                continue
            src = f"a[{i}]"
            dv = cpp.default_value(a)
            op, an = self.full, a.name
            def get(expr, default=dv, t=t):
                if default is None:
                    return expr
                return f"({src} ? {expr} : {default if not default.startswith('{') else cpp.param_type(t).replace('const ', '').replace('&', '') + default})"
            if t.base == "Tensor":
                if t.is_list:
                    lines.append(f'const TensorList& {an} = {src}->to_tensor_list("{op}", "{an}");')
                elif t.optional:
                    lines.append(f'const Tensor {an} = ({src} && !{src}->is_none()) ? {src}->to_tensor("{op}", "{an}") : Tensor();')
                elif t.mutable:  # the op writes into it: a handle to the same tensor
                    lines.append(f'Tensor {an} = {src}->to_tensor("{op}", "{an}");')
                else:
                    lines.append(f'const Tensor& {an} = {src}->to_tensor("{op}", "{an}");')
            elif t.base == "int" and t.is_list:
                if t.optional:
                    lines.append(f'OptIntList {an}; if ({src} && !{src}->is_none()) {an} = OptIntList({src}->to_int_list("{op}", "{an}"));')
                    if dv and dv != "std::nullopt":
                        lines.append(f"if (!{src}) {an} = OptIntList({dv});")
                else:
                    init = f'{src}->to_int_list("{op}", "{an}")'
                    default = dv if dv else "{}"
                    lines.append(f"const std::vector<int64_t> {an}_v = {src} ? {init} : std::vector<int64_t>{default};")
                    lines.append(f"IntArrayRef {an}({an}_v);")
            elif t.optional:
                inner = {"int": "to_int", "float": "to_double", "bool": "to_bool", "Scalar": "to_scalar",
                         "ScalarType": "to_dtype", "str": "to_string", "Device": "to_device", "Layout": "to_layout",
                         "MemoryFormat": "to_memory_format"}[t.base]
                vt = {"int": "int64_t", "float": "double", "bool": "bool", "Scalar": "Scalar", "ScalarType": "DType",
                      "str": "std::string", "Device": "Device", "Layout": "Layout", "MemoryFormat": "MemoryFormat"}[t.base]
                lines.append(f"std::optional<{vt}> {an}_o;")
                lines.append(f'if ({src} && !{src}->is_none()) {an}_o = {src}->{inner}("{op}", "{an}");')
                if dv and dv != "std::nullopt":
                    lines.append(f"if (!{src}) {an}_o = {dv};")
                if t.base == "str":
                    lines.append(f"std::optional<std::string_view> {an}; if ({an}_o) {an} = *{an}_o;")
                else:
                    lines.append(f"const auto& {an} = {an}_o;")
            else:
                inner = {"int": "to_int", "float": "to_double", "bool": "to_bool", "Scalar": "to_scalar",
                         "ScalarType": "to_dtype", "str": "to_string"}[t.base]
                vt = {"int": "int64_t", "float": "double", "bool": "bool", "Scalar": "Scalar", "ScalarType": "DType",
                      "str": "std::string"}[t.base]
                if dv is None:
                    lines.append(f'const {vt} {an} = {src}->{inner}("{op}", "{an}");')
                else:
                    lines.append(f'const {vt} {an} = {src} ? {vt}({src}->{inner}("{op}", "{an}")) : {vt}({dv});')
            names.append(an)
        return lines, ", ".join(names)

    def registry_result(self, call):
        if self.sig.returns_tuple:
            n = len(self.sig.returns)
            items = ", ".join(f"Value(std::get<{i}>(r))" for i in range(n))
            return f"auto r = {call};\n  return Value::tuple({{{items}}});"
        return f"return Value({call});"

    @property
    def arg_specs(self):
        def spec(a):
            optional = a.has_default or (a.type.optional and a.type.base == "Tensor")
            type_text = a.type.schema().replace("(a)", "").replace("(a!)", "")
            return f'{{"{a.name}", "{type_text}", {str(a.kwarg_only).lower()}, {str(optional).lower()}}}'
        return ", ".join(spec(a) for a in self.sig.arguments)


def sample_json(op):
    return normalized_samples(op)
