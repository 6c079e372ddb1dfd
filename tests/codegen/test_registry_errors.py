"""Each way ops.yaml can be wrong gives `ops.yaml:LINE: message` and exit 1, never a traceback."""
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

GEN = os.path.join(os.path.dirname(__file__), "..", "..", "codegen", "gen.py")

VALID = """\
dtype_groups:
  floating: [float32, float64]
ops:
- signature: exp(Tensor self) -> Tensor
  dtypes: [floating]
  pointwise: exp(self)
  derivatives:
    self: grad * result
  doc: e to the x.
- signature: mul.Tensor(Tensor self, Tensor other) -> Tensor
  dtypes: [floating]
  pointwise: self * other
  derivatives:
    self: grad * other
    other: grad * self
  doc: Product.
- signature: sum(Tensor self) -> Tensor
  family: reduction
  dtypes: [floating]
  dispatch: {cpu: sum_all}  # kiln::cpu::sum_all only
  # (a CPU build of the probe registry)
  meta: reduction
  derivatives:
    self: expand(grad, self_sizes)
  doc: Sum.
- signature: expand(Tensor(a) self, int[] size) -> Tensor(a)
  family: view
  dtypes: [floating]
  composite: expand
  derivatives:
    self: sum(grad)
  samples:
    - {self: [1], size: [3]}
  doc: Broadcast.
"""
# The meta families VALID's kernel ops and the tests' use, as ops.yaml declares them. run_gen adds
# them after a text's op list, which leaves every line above where it was, unless the text declares
# its own.
FAMILIES = """\
meta_families:
  along_dim: {plan: AlongDimPlan, header: along_dim, args: {self: [Tensor], dim: [int], dtype: ["ScalarType?"]},
              required: [self, dim], inplace: true, results: [self, accumulate, floating], more_tensors: true}
  reduction:
    plan: ReducePlan
    header: reduction
    args: {self: [Tensor], dim: [int, "int?", "int[]", "int[1]", "int[]?", "int[1]?"], keepdim: [bool], dtype: ["ScalarType?"]}
    required: [self]
    results: [self, inexact, accumulate, real, logical, int64]
  foreach: {custom: true, mutates: true, foreach: true, plan: ForeachPlan, header: foreach}
"""
# The hand-written functions the tests' expressions call (ops.yaml `helpers:`). run_gen and
# write_folder add them at the end of the root file, unless it declares its own.
HELPERS = """\
helpers:
  formulas: [mul_backward]
  math: [exp]
"""


def with_helpers(text):
    return text if "\nhelpers:" in "\n" + text else text + ("" if text.endswith("\n") else "\n") + HELPERS


class RegistryErrors(unittest.TestCase):
    def setUp(self):
        # The generator reads the registry only: no hand-written source tree is needed.
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def run_gen(self, text, check=True):
        path = os.path.join(self.tmp.name, "ops.yaml")
        if "meta_families:" not in text:
            text += ("" if text.endswith("\n") else "\n") + FAMILIES
        text = with_helpers(text)
        with open(path, "w") as f:
            f.write(text)
        args = [
            sys.executable,
            GEN,
            "--registry",
            path,
            "--out",
            os.path.join(self.tmp.name, "generated"),
        ]
        if check:
            args.append("--check")
        return subprocess.run(args, capture_output=True, text=True)

    def assertError(self, text, line, fragment):
        r = self.run_gen(text)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        self.assertIn(f"ops.yaml:{line}: ", r.stderr)
        self.assertIn(fragment, r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp.name, "generated")), "nothing is written on error")

    def test_valid_registry_generates(self):
        r = self.run_gen(VALID, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        gen = os.path.join(self.tmp.name, "generated")
        for rel in (
            "include/kiln/gen/ops.h",
            "src/ops/exp.cpp",
            "src/cpu/mul_Tensor.cpp",
            "sources.cmake",
            "coverage_declared.json",
            "op_samples.json",
        ):
            self.assertTrue(os.path.exists(os.path.join(gen, rel)), rel)
        # A second run changes nothing.
        r2 = self.run_gen(VALID, check=False)
        self.assertIn("0 of", r2.stdout)

    FACTORY = """\
- signature: zeros(int[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool requires_grad=False) -> Tensor
  family: factory
  dtypes: [floating]
  composite: expand
  samples:
    - {size: [2]}
  doc: Zeros.
"""

    def test_factory_keywords_become_tensor_options(self):
        r = self.run_gen(VALID + self.FACTORY, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.tmp.name, "generated", "include", "kiln", "gen", "factories.h")) as f:
            self.assertIn("Tensor zeros(IntArrayRef size, TensorOptions options = {});", f.read())
        with open(os.path.join(self.tmp.name, "generated", "src", "registry", "ops.cpp")) as f:  # ops.yaml's part
            text = f.read()
        self.assertIn('options = options.with_device(a[3]->to_device("zeros", "device"));', text)

    def test_factory_keywords_come_together(self):
        broken = self.FACTORY.replace("Layout? layout=None, ", "")
        self.assertError(VALID + broken, 35, "'device' belongs to the factory keywords")

    HISTOGRAM = """\
- signature: histogram.bin_ct(Tensor self, int bins=100, *, float[]? range=None, Tensor? weight=None, bool density=False) -> (Tensor hist, Tensor bin_edges)
  family: reduction
  dtypes: [floating]
  composite: histogram_bin_ct
  differentiable: false
  samples:
    - {self: [5], bins: 3, range: [0.0, 1.5]}
  doc: Histogram.
- signature: clip_all(Tensor self, float[] bounds=[0., 1]) -> Tensor
  dtypes: [floating]
  composite: clip_all
  differentiable: false
  doc: A plain float list.
"""

    def test_float_list_arguments(self):
        r = self.run_gen(VALID + self.HISTOGRAM, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        gen = os.path.join(self.tmp.name, "generated")
        with open(os.path.join(gen, "include", "kiln", "gen", "api", "histogram.h")) as f:
            self.assertIn(
                "std::tuple<Tensor, Tensor> histogram(const Tensor& self, int64_t bins = 100, "
                "OptDoubleList range = std::nullopt, const Tensor& weight = Tensor(), bool density = false);",
                f.read(),
            )
        with open(os.path.join(gen, "include", "kiln", "gen", "api", "clip_all.h")) as f:
            self.assertIn("ArrayRef<double> bounds = {0., 1.0}", f.read())
        with open(os.path.join(gen, "src", "registry", "ops.cpp")) as f:
            text = f.read()
        self.assertIn('range = OptDoubleList(a[2]->to_double_list("histogram.bin_ct", "range"));', text)
        self.assertIn('a[1]->to_double_list("clip_all", "bounds") : std::vector<double>{0., 1.0};', text)
        with open(os.path.join(gen, "op_samples.json")) as f:
            import json

            ops = {op["name"]: op for op in json.load(f)["ops"]}
        args = {a["name"]: a for a in ops["histogram.bin_ct"]["args"]}
        self.assertEqual(args["range"]["type"], "float[]?")
        self.assertEqual(ops["clip_all"]["args"][1]["default"], [0.0, 1.0])
        self.assertEqual(ops["histogram.bin_ct"]["samples"][0]["range"], [0.0, 1.5])

    def test_float_list_default_and_other_lists(self):
        text = VALID + self.HISTOGRAM
        line = text.splitlines().index("- signature: clip_all(Tensor self, float[] bounds=[0., 1]) -> Tensor") + 1
        self.assertError(text.replace("bounds=[0., 1]", "bounds=[0, x]"), line, "default '[0, x]' does not fit")
        self.assertError(
            text.replace("float[] bounds=[0., 1]", "bool[] bounds"), line, "only Tensor[], int[] and float[] lists"
        )

    def test_generator_must_be_optional(self):
        self.assertError(
            VALID.replace("exp(Tensor self)", "exp(Tensor self, *, Generator generator)"),
            4,
            "a Generator argument is optional",
        )

    def test_random_op_compares_metadata(self):
        random = self.FACTORY.replace("family: factory", "family: random")
        self.assertError(VALID + random, 35, "a random op's values cannot match PyTorch's generator")

    def test_derivatives_not_implemented(self):
        # the node exists, its backward raises naming the op; forward mode raises; no gradcheck
        r = self.run_gen(
            VALID.replace("    self: grad * result\n", "").replace(
                "  derivatives:\n  doc: e to the x.", "  derivatives: not_implemented\n  doc: e to the x."
            ),
            check=False,
        )
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.tmp.name, "generated", "src", "ops", "exp.cpp")) as f:
            text = f.read()
        self.assertIn('derivative_not_implemented("exp")', text)
        self.assertIn('forward_ad::not_implemented("exp")', text)
        tests = os.path.join(self.tmp.name, "generated", "tests", "op_tests")
        text = "".join(open(os.path.join(tests, n)).read() for n in os.listdir(tests))
        self.assertIn('"op exp ', text)
        self.assertNotIn('"grad exp ', text)

    def test_not_implemented_is_not_for_composites(self):
        broken = VALID.replace("  derivatives:\n    self: sum(grad)\n", "  derivatives: not_implemented\n")
        self.assertError(broken, 30, "applies to kernel and pointwise ops")

    def test_checks_emit_a_typed_error_before_the_kernel(self):
        ok = VALID.replace(
            "- signature: exp(Tensor self) -> Tensor\n  dtypes: [floating]\n",
            "- signature: exp(Tensor self, Scalar lambd=0.5) -> Tensor\n  dtypes: [floating]\n"
            '  checks:\n    - {argument: lambd, require: "lambd.to_double() >= 0", '
            'message: "lambda must be >= 0, got {lambd}."}\n',
        )
        r = self.run_gen(ok, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.tmp.name, "generated", "src", "ops", "exp.cpp")) as f:
            text = f.read()
        self.assertIn(
            'KILN_CHECK(lambd.to_double() >= 0, ValueError, "exp", "lambd", "lambda must be >= 0, got ", '
            'lambd.to_double(), ".");',
            text,
        )

    def test_checks_are_validated(self):
        head = "- signature: exp(Tensor self, Scalar lambd=0.5) -> Tensor\n  dtypes: [floating]\n  checks:\n"
        base = "- signature: exp(Tensor self) -> Tensor\n  dtypes: [floating]\n"
        self.assertError(
            VALID.replace(base, head + "    - {argument: beta, require: x, message: m}\n"),
            6,
            "'beta' is not an argument of exp",
        )
        self.assertError(
            VALID.replace(base, head + '    - {argument: lambd, require: x, message: "{self}"}\n'),
            6,
            "placeholder '{self}' is not a non-Tensor argument",
        )
        self.assertError(
            VALID.replace(base, head + "    - {argument: lambd, require: x, message: m, error: Oops}\n"),
            6,
            "unknown error 'Oops'",
        )
        self.assertError(VALID.replace(base, head + "    - {argument: lambd}\n"), 6, "checks: expected")

    def test_composite_out_variant(self):
        # out= of a composite: the function's result copied into out, no history
        r = self.run_gen(
            VALID.replace(
                "  composite: expand\n  derivatives:\n    self: sum(grad)\n", "  composite: expand\n"
            ).replace(
                "expand(Tensor(a) self, int[] size) -> Tensor(a)\n  family: view",
                "expand(Tensor self, int[] size) -> Tensor\n  variants: [function, out]\n  family: view",
            ),
            check=False,
        )
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.tmp.name, "generated", "src", "ops", "expand.cpp")) as f:
            text = f.read()
        self.assertIn("Tensor& expand_out(Tensor& out, const Tensor& self, IntArrayRef size) try {", text)
        self.assertIn('support::prepare_destination("expand", "out", out,', text)
        # a view's result aliases its input: no out=
        shutil.rmtree(os.path.join(self.tmp.name, "generated"))
        self.assertError(
            VALID.replace(
                "  composite: expand\n  derivatives:\n    self: sum(grad)\n",
                "  variants: [function, out]\n  composite: expand\n",
            ),
            29,
            "a composite's out= variant needs one Tensor result that is no view",
        )

    def test_signature_round_trip(self):
        # what is parsed must print back as written: a misread or dropped piece shows up here
        self.assertError(
            VALID.replace("exp(Tensor self) -> Tensor", "exp(Tensor self)->Tensor"),
            4,
            "write it as 'exp(Tensor self) -> Tensor'",
        )
        self.assertError(
            VALID.replace("exp(Tensor self) -> Tensor", "exp(Tensor self,*) -> Tensor"), 4, "bad signature"
        )

    def test_node_slots_are_plain_numbers(self):
        r = self.run_gen(VALID, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.tmp.name, "generated", "src", "ops", "mul_Tensor.cpp")) as f:
            text = f.read()
        self.assertIn("grad_inputs[1] = support::finish_grad(grad * self, other_sizes_, other_dtype_);", text)
        self.assertNotIn("0 + 1", text)

    JOINT = VALID.replace(
        "    self: grad * other\n    other: grad * self",
        "    self, other: mul_backward(grad, self, other, grad_input_mask)",
    )
    TWO_OUTPUTS = """\
- signature: frexp(Tensor self) -> (Tensor mantissa, Tensor exponent)
  family: reduction
  dtypes: [floating]
  dispatch: {cpu: sum_all}  # kiln::cpu::sum_all only
  # (a CPU build of the probe registry)
  meta: reduction
  output_differentiability: [true, false]
  derivatives:
    self: grad_mantissa / result1
  doc: Mantissa and exponent.
"""

    def test_joint_formula_computes_what_the_mask_asks(self):
        r = self.run_gen(self.JOINT, check=False)  # HELPERS lists mul_backward in helpers: formulas
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.tmp.name, "generated", "src", "ops", "mul_Tensor.cpp")) as f:
            text = f.read()
        self.assertIn(
            "const std::array<bool, 2> grad_input_mask = {next_edges[0].valid(), next_edges[1].valid()};", text
        )
        self.assertIn("auto [self_grad, other_grad] = mul_backward(grad, self, other, grad_input_mask);", text)
        self.assertIn("grad_inputs[1] = support::finish_grad(other_grad, other_sizes_, other_dtype_);", text)

    def test_input_in_two_formulas(self):
        self.assertError(
            self.JOINT.replace("grad_input_mask)", "grad_input_mask)\n    other: grad"),
            15,
            "input 'other' has two derivative formulas",
        )

    def test_grad_input_mask_only_in_joint_formulas(self):
        self.assertError(
            VALID.replace("other: grad * self", "other: grad * self * grad_input_mask"),
            15,
            "names unknown input 'grad_input_mask'",
        )

    def test_output_differentiability(self):
        r = self.run_gen(VALID + self.TWO_OUTPUTS, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.tmp.name, "generated", "src", "ops", "frexp.cpp")) as f:
            text = f.read()
        self.assertIn("autograd::set_history(std::get<0>(result), node, 0);", text)
        self.assertNotIn("autograd::set_history(std::get<1>(result)", text)
        self.assertIn("const TensorBase& result1 = exponent;", text)  # result<N> reads output N

    def test_output_differentiability_errors(self):
        self.assertError(
            VALID + self.TWO_OUTPUTS.replace("/ result1", "/ grad_exponent"), 43, "names unknown input 'grad_exponent'"
        )  # the gradient of an output without one
        self.assertError(
            VALID + self.TWO_OUTPUTS.replace("[true, false]", "[true]"),
            41,
            "output_differentiability must list true/false for each of its 2 outputs",
        )

    def test_unknown_key(self):
        self.assertError(
            VALID.replace("  pointwise: exp(self)", "  pointwise: exp(self)\n  pointwize: 1"),
            7,
            "unknown key 'pointwize'",
        )

    def test_bad_signature(self):
        self.assertError(VALID.replace("exp(Tensor self) -> Tensor", "exp(Tensr self) -> Tensor"), 4, "bad signature")

    def test_unknown_dtype(self):
        self.assertError(
            VALID.replace("  dtypes: [floating]\n  pointwise: exp", "  dtypes: [flaot32]\n  pointwise: exp"),
            5,
            "unknown dtype or group 'flaot32'",
        )

    def test_unknown_group_in_group(self):
        self.assertError(
            VALID.replace("floating: [float32, float64]", "floating: [float32, reals]"),
            2,
            "unknown dtype or group 'reals'",
        )

    def test_derivative_for_unknown_input(self):
        self.assertError(
            VALID.replace("    other: grad * self", "    othr: grad * self"), 15, "derivative for unknown input 'othr'"
        )

    def test_derivative_calls_unknown_op(self):
        self.assertError(
            VALID.replace("self: grad * result", "self: grad * expp(self)"), 8, "calls unknown function 'expp'"
        )

    # ---- helpers: ----
    def test_derivative_calls_unlisted_helper(self):
        # a helper formulas.h may declare is callable only once ops.yaml's helpers: lists it
        text = VALID.replace("self: grad * result", "self: exp_backward(grad, result)")
        self.assertError(text, 8, "derivative of 'self' in exp calls unknown function 'exp_backward'")
        self.assertIn("a helper listed in ops.yaml's helpers: formulas", self.run_gen(text).stderr)
        r = self.run_gen(
            text + FAMILIES + HELPERS.replace("[mul_backward]", "[mul_backward, exp_backward]"), check=False
        )
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.tmp.name, "generated", "src", "helpers_check.cpp")) as f:
            check = f.read()
        for line in ("using kiln::exp_backward;", "using kiln::math::exp;"):
            self.assertIn(line, check)

    def test_helpers_malformed(self):
        at = len((VALID + FAMILIES).splitlines()) + 1  # the line of HELPERS' helpers:
        for old, new, line, message in (
            ("  math: [exp]\n", "  math: [exp]\n  macros: [KILN_FAIL]\n", at + 3, "helpers: unknown kind 'macros'"),
            ("math: [exp]", "math: [exp, exp]", at + 2, "helpers: math: 'exp' is listed twice"),
            ("math: [exp]", "math: [exp, std::exp]", at + 2, "helpers: math: 'std::exp' is not an identifier"),
            ("math: [exp]", "math: [exp, 3]", at + 2, "helpers: math: 3 is not an identifier"),
            ("math: [exp]", "math: exp", at + 2, "helpers: math must be a list of names"),
            ("[mul_backward]", "[mul_backward, 'a b']", at + 1, "helpers: formulas: 'a b' is not a C++ name"),
            ("  formulas: [mul_backward]\n  math: [exp]\n", " [exp]\n", at, "helpers must map a kind to a list"),
        ):
            with self.subTest(new=new):
                self.assertIn(old, HELPERS)
                self.assertError(VALID + FAMILIES + HELPERS.replace(old, new), line, message)

    def test_helpers_qualified_formula_names(self):
        # names are looked up from namespace kiln, as the generated entries call them
        helpers = HELPERS.replace("[mul_backward]", "[mul_backward, autograd::sum_to, std::max]")
        r = self.run_gen(VALID + FAMILIES + helpers, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.tmp.name, "generated", "src", "helpers_check.cpp")) as f:
            check = f.read()
        for line in ("using kiln::autograd::sum_to;", "using ::std::max;", "using kiln::mul_backward;"):
            self.assertIn(line, check)

    def test_derivative_calls_op_as_method(self):
        self.assertError(
            VALID.replace("self: grad * result", "self: grad.mul(result)"), 8, "calls op 'mul' as a method"
        )

    def test_derivative_names_unknown_value(self):
        self.assertError(VALID.replace("self: grad * result", "self: grad * reslt"), 8, "names unknown input 'reslt'")

    def test_undefined_kernel_is_the_linkers_business(self):
        # A kernel dispatch names is not looked for in kernels/: the generated table takes its
        # address, so one nobody defined fails to link (undefined reference to kiln::cpu::<name>).
        r = self.run_gen(VALID.replace("{cpu: sum_all}", "{cpu: no_such_kernel}"), check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.tmp.name, "generated", "src", "ops", "sum.cpp")) as f:
            self.assertIn("&cpu::no_such_kernel", f.read())

    def test_unknown_meta_family(self):
        self.assertError(VALID.replace("  meta: reduction\n", "  meta: nope\n"), 22, "unknown meta family 'nope'")

    def test_meta_family_needs_its_arguments(self):
        self.assertError(
            VALID.replace("  meta: reduction\n", "  meta: along_dim\n"), 22, "meta 'along_dim' needs an argument 'dim'"
        )

    def test_result_dtype_needs_meta(self):
        self.assertError(
            VALID.replace("  pointwise: exp(self)", "  pointwise: exp(self)\n  result_dtype: accumulate"),
            7,
            "'result_dtype' applies to structured kernel ops (meta:) only",
        )

    def test_native_is_retired(self):
        self.assertError(VALID.replace("  composite: expand", "  native: expand"), 29, "'native' is retired")

    def test_long_composite_body(self):
        body = "  composite: |\n    Tensor t = self;\n    return t;\n"
        self.assertError(
            VALID.replace("  pointwise: exp(self)\n  derivatives:\n    self: grad * result\n", body),
            7,
            "a composite body longer than one line belongs in a C++ file",
        )

    def test_kernel_needs_meta(self):
        self.assertError(VALID.replace("  meta: reduction\n", ""), 20, "a kernel op needs a meta step")

    def test_duplicate_op(self):
        dup = (
            VALID
            + "- signature: exp(Tensor self) -> Tensor\n  dtypes: [floating]\n  pointwise: exp(self)\n  doc: again.\n"
        )
        self.assertError(dup, 35, "duplicate op 'exp'")

    def test_yaml_syntax_error(self):
        self.assertError(VALID.replace("  doc: Product.", "  doc: [Product."), 17, "YAML syntax error")

    def test_duplicate_key(self):
        self.assertError(
            VALID.replace("  doc: e to the x.", "  doc: e to the x.\n  doc: again"), 10, "duplicate key 'doc'"
        )

    def test_missing_derivative(self):
        self.assertError(VALID.replace("    other: grad * self\n", ""), 13, "no derivative for input 'other'")

    # ---- dispatch: ----
    def test_retired_dispatch_keys(self):
        for old, hint in (
            ("  kernel: sum_all\n", "names the kernel of each backend"),
            ("  backends: [cpu]\n", "lists the backends"),
            ("  cuda_dtypes: [float32]\n", "narrows a backend's dtypes"),
        ):
            text = VALID.replace("  dispatch: {cpu: sum_all}", old.rstrip("\n") + "\n  dispatch: {cpu: sum_all}")
            self.assertError(text, 20, f"'{old.split(':')[0].strip()}' is retired")
            self.assertIn(hint, self.run_gen(text).stderr)

    def test_dispatch_unknown_backend(self):
        self.assertError(VALID.replace("{cpu: sum_all}", "{cpu: sum_all, tpu: sum_all}"), 20, "unknown backend 'tpu'")

    def test_dispatch_needs_a_mapping(self):
        self.assertError(VALID.replace("{cpu: sum_all}", "sum_all"), 20, "dispatch must be a non-empty mapping")

    def test_dispatch_dtypes_within_dtypes(self):
        text = VALID.replace("{cpu: sum_all}", "{cpu: {target: sum_all, dtypes: [float16]}}")
        self.assertError(text, 20, "dtypes ['float16'] are not in dtypes")

    def test_dispatch_target_form(self):
        self.assertError(VALID.replace("{cpu: sum_all}", "{cpu: {kernel: sum_all}}"), 20, "expected {target, dtypes}")
        self.assertError(VALID.replace("{cpu: sum_all}", "{cpu: 'sum all'}"), 20, "target must be a C++ name")

    def test_dispatch_kernel_beside_pointwise(self):
        text = VALID.replace("  pointwise: exp(self)\n", "  pointwise: exp(self)\n  dispatch: {cpu: exp_kernel}\n", 1)
        self.assertError(text, 7, "kernel 'exp_kernel' beside a pointwise entry")

    def test_dispatch_generated_target_needs_its_key(self):
        self.assertError(
            VALID.replace("{cpu: sum_all}", "{cpu: composite}"), 20, "but the entry has no 'composite:' key"
        )

    def test_dispatch_sparse_layout_needs_a_kernel(self):
        text = VALID.replace(
            "  pointwise: exp(self)\n", "  pointwise: exp(self)\n  dispatch: {sparse_csr_cpu: pointwise}\n", 1
        )
        self.assertError(text, 7, "a sparse_csr layout is served by a kernel only")

    def test_no_kind_at_all(self):
        text = VALID.replace("  dispatch: {cpu: sum_all}  # kiln::cpu::sum_all only\n", "")
        self.assertError(text, 17, "give exactly one of pointwise, composite, or a dispatch of kernels")

    def test_two_kinds(self):
        self.assertError(
            VALID.replace("  pointwise: exp(self)", "  pointwise: exp(self)\n  composite: exp"),
            4,
            "give one of pointwise, composite, or a dispatch of kernels",
        )

    def test_sample_unknown_argument(self):
        self.assertError(
            VALID.replace("  doc: e to the x.", "  doc: e to the x.\n  samples:\n    - {x: [3]}"),
            11,
            "sample names unknown argument 'x'",
        )

    def test_sample_values_must_be_rectangular(self):
        self.assertError(
            VALID.replace(
                "  doc: e to the x.", "  doc: e to the x.\n  samples:\n    - {self: {values: [[1, 2], [3]]}}"
            ),
            11,
            "sample values of 'self' must be a rectangular nested list of numbers",
        )

    def test_unknown_promotion(self):
        self.assertError(
            VALID.replace("  pointwise: exp(self)", "  pointwise: exp(self)\n  promotion: widen"),
            7,
            "unknown promotion 'widen'",
        )

    def test_integer_divisor_must_be_a_tensor(self):
        self.assertError(
            VALID.replace("  pointwise: self * other", "  pointwise: self * other\n  integer_divisor: alpha"),
            13,
            "integer_divisor: 'alpha' is not a Tensor argument",
        )

    def test_integer_exponent_must_promote(self):
        self.assertError(
            VALID.replace("  pointwise: self * other", "  pointwise: self * other\n  integer_exponent: other"),
            13,
            "integer_exponent: 'other' is not one of promote_scalars",
        )

    def test_formula_syntax(self):
        self.assertError(
            VALID.replace("other: grad * self", "other: grad * |self"),
            15,
            "derivative of 'other' in mul.Tensor is not a C++ expression: expected a value at column 8",
        )
        self.assertError(
            VALID.replace("  pointwise: self * other", "  pointwise: self * (other"),
            10,
            "the pointwise expression is not a C++ expression: the expression ends early",
        )

    def test_pointwise_unknown_math_function(self):
        self.assertError(
            VALID.replace("  pointwise: exp(self)", "  pointwise: expo(self)"),
            4,
            "pointwise expression calls unknown function 'expo'",
        )
        self.assertIn(
            "listed in ops.yaml's helpers: math", self.run_gen(VALID.replace("exp(self)", "expo(self)")).stderr
        )

    def test_composite_body_compiles_with_ops_yaml_lines(self):
        # A mistake only the C++ compiler can see is reported at its ops.yaml line (#line).
        text = (
            VALID
            + """\
- signature: double_exp(Tensor self) -> Tensor
  dtypes: [floating]
  composite: return exp(self).no_such_method(2);
  doc: Twice.
"""
        )
        r = self.run_gen(text, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        path = os.path.join(self.tmp.name, "generated", "src", "ops", "double_exp.cpp")
        with open(path) as f:
            generated = f.read().split("\n")
        ops_yaml = os.path.join(self.tmp.name, "ops.yaml")
        body_line = len(VALID.splitlines()) + 3  # the "composite:" line, after signature and dtypes
        begin = generated.index(f'#line {body_line} "{ops_yaml}"')
        self.assertEqual(generated[begin + 1].strip(), "return exp(self).no_such_method(2);")
        self.assertEqual(generated[begin + 2], f'#line {begin + 4} "{path}"')  # back to the file's own lines

    def write_folder(self, files, root=None):
        """The family files in ops/ and the root ops.yaml beside it: `root`, else VALID's dtype
        groups, FAMILIES and `files:` listing the family files in name order."""
        folder = os.path.join(self.tmp.name, "ops")
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        for name, text in files.items():
            with open(os.path.join(folder, name), "w") as f:
                f.write(text)
        if root is None:
            root = VALID.split("ops:\n")[0] + FAMILIES + "files:\n" + "".join(f"  - ops/{n}\n" for n in sorted(files))
        with open(os.path.join(self.tmp.name, "ops.yaml"), "w") as f:
            f.write(with_helpers(root))
        return folder

    def run_folder(self, files, check=True, root=None, flag="--registry"):
        folder = self.write_folder(files, root)
        where = os.path.join(self.tmp.name, "ops.yaml") if flag == "--registry" else folder
        args = [
            sys.executable,
            GEN,
            flag,
            where,
            "--out",
            os.path.join(self.tmp.name, "generated"),
        ]
        return subprocess.run(args + (["--check"] if check else []), capture_output=True, text=True)

    def split_valid(self):
        """VALID's ops as two family files (its dtype groups go to the root file)."""
        entries = VALID.split("ops:\n")[1].split("- signature:")
        first = "ops:\n" + "- signature:".join(entries[:2])
        second = "ops:\n- signature:" + "- signature:".join(entries[2:])
        return {"b_first.yaml": first, "c_second.yaml": second}

    def test_folder_generates_like_one_file(self):
        # Every generated header (the op API, the entries, the functors, Tensor's methods) is the
        # same; the call-by-name and test files are named after the registry files.
        def headers():
            top = os.path.join(self.tmp.name, "generated", "include")
            found = {}
            for dirpath, _, names in os.walk(top):
                for name in names:
                    with open(os.path.join(dirpath, name)) as f:
                        found[os.path.relpath(os.path.join(dirpath, name), top)] = f.read()
            return found

        r = self.run_folder(self.split_valid(), check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        from_folder = headers()
        self.assertIn("kiln/gen/api/exp.h", from_folder)
        r = self.run_gen(VALID, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(headers(), from_folder)

    def test_folder_error_names_file_and_line(self):
        files = self.split_valid()
        files["c_second.yaml"] = files["c_second.yaml"].replace("pointwise: self * other", "pointwise: self * othr", 1)
        self.assertIn("pointwise: self * othr", files["c_second.yaml"])
        line = (
            files["c_second.yaml"].split("\n").index("- signature: mul.Tensor(Tensor self, Tensor other) -> Tensor") + 1
        )
        r = self.run_folder(files)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(
            f"ops/c_second.yaml:{line}: mul.Tensor: pointwise expression names unknown argument 'othr'", r.stderr
        )
        self.assertNotIn("Traceback", r.stderr)

    def test_folder_op_or_group_in_two_files(self):
        files = self.split_valid()
        files["d_again.yaml"] = files["b_first.yaml"]
        r = self.run_folder(files)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(
            "ops/d_again.yaml:2: overloads of 'exp' are split between ops/b_first.yaml and ops/d_again.yaml", r.stderr
        )
        self.assertIn("(first at ops/b_first.yaml:2)", r.stderr)
        files = self.split_valid()
        files["d_groups.yaml"] = VALID.split("ops:\n")[0]
        r = self.run_folder(files)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("ops/d_groups.yaml:1: 'dtype_groups' belongs in the root file ops.yaml", r.stderr)

    def test_folder_composite_body_line_names_its_file(self):
        files = self.split_valid()
        files["c_second.yaml"] += (
            "- signature: double_exp(Tensor self) -> Tensor\n  dtypes: [floating]\n"
            "  composite: return exp(self) * 2;\n  doc: Twice.\n"
        )
        r = self.run_folder(files, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.tmp.name, "generated", "src", "ops", "double_exp.cpp")) as f:
            generated = f.read()
        line = files["c_second.yaml"].split("\n").index("  composite: return exp(self) * 2;") + 1
        self.assertIn(f'#line {line} "{os.path.join(self.tmp.name, "ops", "c_second.yaml")}"', generated)

    # ---- autocast: (kiln/autocast.h) ----
    def test_autocast_policy_generates_the_wrapper(self):
        text = VALID.replace("  doc: Product.\n", "  doc: Product.\n  autocast: {cuda: promote}\n")
        text = text.replace("  floating: [float32, float64]", "  floating: [float16, bfloat16, float32, float64]")
        r = self.run_gen(text, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.tmp.name, "generated", "src", "ops", "mul_Tensor.cpp")) as f:
            generated = f.read()
        self.assertIn("CastPolicy::None, CastPolicy::Promote", generated)
        self.assertIn("return _ops::mul(autocast::cast(self, *to), autocast::cast(other, *to));", generated)
        with open(os.path.join(self.tmp.name, "generated", "src", "ops", "exp.cpp")) as f:
            self.assertNotIn("autocast", f.read())

    def test_autocast_unknown_policy(self):
        text = VALID.replace("  doc: e to the x.\n", "  doc: e to the x.\n  autocast: half\n")
        self.assertError(text, 10, "unknown autocast policy 'half'")

    def test_autocast_unknown_device(self):
        text = VALID.replace("  doc: e to the x.\n", "  doc: e to the x.\n  autocast: {tpu: float32}\n")
        self.assertError(text, 10, "autocast names unknown device 'tpu'")

    def test_autocast_needs_the_lower_precision_dtype(self):
        # CPU autocast hands the op bfloat16, which [float32, float64] lacks
        text = VALID.replace("  doc: e to the x.\n", "  doc: e to the x.\n  autocast: lower_precision\n")
        self.assertError(text, 10, "autocast lower_precision on cpu hands it bfloat16")

    def test_autocast_device_not_in_dispatch(self):
        text = VALID.replace("  doc: Sum.\n", "  doc: Sum.\n  autocast: {cuda: float32}\n")
        self.assertError(text, 26, "autocast for cuda, which dispatch does not list")

    def test_every_error_reported_at_once(self):
        text = VALID.replace("[flaot", "[flaot").replace("pointwise: exp(self)", "pointwise: exp(self)\n  pointwize: 1")
        text = text.replace("    othr", "    othr").replace("self: grad * result", "self: grad * nope(result)")
        r = self.run_gen(text)
        self.assertEqual(r.returncode, 1)
        self.assertIn("unknown key 'pointwize'", r.stderr)
        self.assertIn("calls unknown function 'nope'", r.stderr)
        self.assertIn("2 error(s)", r.stderr)


if __name__ == "__main__":
    unittest.main()
