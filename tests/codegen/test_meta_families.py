"""Meta families of structured kernel ops are registry data (ops.yaml `meta_families`): a new one
needs no generator change, and each malformed entry is an `ops.yaml:LINE: message` error. Also
the root file's `files:` list."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
import test_registry_errors as base  # noqa: E402

VALID, FAMILIES = base.VALID, base.FAMILIES
GROUPS = VALID.split("ops:\n")[0]

# A family kiln does not have, declared only in the root file, and a kernel op of it in a family file.
PROBE_FAMILY = (
    "  probe_rows: {custom: true, plan: ProbeRowsPlan, header: probe_rows, dense_inputs: true, inplace: true}\n"
)
PROBE_OPS = """\
ops:
- signature: probe(Tensor self, int k) -> Tensor
  variants: [function, inplace, out]
  dtypes: [floating]
  dispatch: {cpu: probe_kernel}
  meta: probe_rows
  samples:
    - {self: [3, 5], k: 2}
  doc: A probe of a new meta family.
"""


class MetaFamilies(unittest.TestCase):
    setUp = base.RegistryErrors.setUp
    tearDown = base.RegistryErrors.tearDown
    run_gen = base.RegistryErrors.run_gen
    assertError = base.RegistryErrors.assertError
    write_folder = base.RegistryErrors.write_folder
    run_folder = base.RegistryErrors.run_folder

    def read(self, rel):
        with open(os.path.join(self.tmp.name, "generated", rel)) as f:
            return f.read()

    def probe_root(self, families=FAMILIES + PROBE_FAMILY):
        return GROUPS + families + "files:\n  - ops/probe.yaml\n"

    # ---- a new family is one ops.yaml entry ----
    def test_family_declared_in_the_root_file_is_used(self):
        r = self.run_folder({"probe.yaml": PROBE_OPS}, check=False, root=self.probe_root())
        self.assertEqual(r.returncode, 0, r.stderr)
        entry = self.read("src/ops/probe.cpp")
        self.assertIn('#include "kiln/meta/probe_rows.h"', entry)
        self.assertIn('const meta::ProbeRowsPlan plan = meta::probe_rows("probe", self, k);', entry)
        self.assertIn("meta::contiguous_input(self), k);", entry)  # dense_inputs; k is not consumed
        self.assertIn(
            "void probe_kernel(const meta::ProbeRowsPlan& plan, const TensorBase& out, "
            "const TensorBase& self, int64_t k);",
            self.read("include/kiln/gen/kernels/cpu/probe_kernel.h"),
        )
        self.assertIn("probe_(", self.read("include/kiln/gen/ops/probe.h"))  # inplace: true

    def test_dispatch_fills_the_kernel_table(self):
        # a CPU kernel, a CSR one beside it, a CUDA one of its own name for float64 only
        dispatch = "{cpu: probe_kernel, sparse_csr_cpu: probe_csr, cuda: {target: probe_cuda, dtypes: [float64]}}"
        ops = PROBE_OPS.replace("{cpu: probe_kernel}", dispatch)
        r = self.run_folder({"probe.yaml": ops}, check=False, root=self.probe_root())
        self.assertEqual(r.returncode, 0, r.stderr)
        entry = self.read("src/ops/probe.cpp")
        # columns strided, sparse_coo, sparse_csr; the CUDA row in a CUDA build only
        self.assertIn(
            "kKernels = { {&cpu::probe_kernel, nullptr, &cpu::probe_csr}, {&cuda::probe_cuda, nullptr, nullptr} };",
            entry,
        )
        self.assertIn("kKernels = { {&cpu::probe_kernel, nullptr, &cpu::probe_csr}, {nullptr} };", entry)
        self.assertIn('#include "kiln/gen/kernels/cuda/probe_cuda.h"', entry)
        self.assertIn("void probe_csr(", self.read("include/kiln/gen/kernels/cpu/probe_csr.h"))
        tests = self.read("tests/cuda_op_tests/probe.cpp")
        self.assertIn("{DType::Float64}", tests)
        self.assertNotIn("Float32", tests)

    def test_composite_serves_the_backends_dispatch_gives_it(self):
        ops = PROBE_OPS.replace("{cpu: probe_kernel}", "{cpu: probe_kernel, cuda: composite}\n  composite: probe_rows")
        ops = ops.replace("[function, inplace, out]", "[function]")
        r = self.run_folder({"probe.yaml": ops}, check=False, root=self.probe_root())
        self.assertEqual(r.returncode, 0, r.stderr)
        entry = self.read("src/ops/probe.cpp")
        self.assertIn(
            "  if (self.device().type == DeviceType::CUDA)  // dispatch: cuda: composite\n"
            "    return composite::probe_rows(self, k);",
            entry,
        )
        self.assertIn("kKernels = { {&cpu::probe_kernel}, {nullptr} };", entry)
        self.assertIn(
            "Tensor probe_rows(const Tensor& self, int64_t k);  // probe on cuda",
            self.read("include/kiln/gen/composite.h"),
        )
        # its out= and in-place forms would bypass the composite
        r = self.run_folder(
            {"probe.yaml": ops.replace("[function]", "[function, out]")}, check=False, root=self.probe_root()
        )
        self.assertIn("has the function variant only", r.stderr)

    def test_family_fields_change_what_is_generated(self):
        plan_only = PROBE_FAMILY.replace("inplace: true", "plan_only: true")
        r = self.run_folder(
            {"probe.yaml": PROBE_OPS.replace("[function, inplace, out]", "[function, out]")},
            check=False,
            root=self.probe_root(FAMILIES + plan_only),
        )
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(
            "void probe_kernel(const meta::ProbeRowsPlan& plan, const TensorBase& out, const TensorBase& self);",
            self.read("include/kiln/gen/kernels/cpu/probe_kernel.h"),
        )  # the plan carries k
        r = self.run_folder({"probe.yaml": PROBE_OPS}, root=self.probe_root(FAMILIES + plan_only))
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("ops/probe.yaml:3: probe: no in-place variant", r.stderr)

    def test_family_missing_from_the_root_file(self):
        r = self.run_folder({"probe.yaml": PROBE_OPS}, root=self.probe_root(FAMILIES))
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("ops/probe.yaml:6: probe: unknown meta family 'probe_rows'", r.stderr)

    # ---- an op's meta: names a declared family ----
    def test_unknown_meta_lists_the_families(self):
        r = self.run_gen(VALID.replace("  meta: reduction\n", "  meta: nope\n"))
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(
            "ops.yaml:22: sum: unknown meta family 'nope'\n  hint: meta families: along_dim, reduction, foreach\n",
            r.stderr,
        )

    def test_no_families_declared(self):
        r = self.run_gen(VALID + "meta_families: {}\n")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("unknown meta family 'reduction'\n  hint: no meta families are declared", r.stderr)

    # ---- malformed entries, each at its line ----
    BAD = [
        (
            "{custom: true, plan: P, header: h, inplce: true}",
            "meta family 'bad': unknown key 'inplce'",
            "known keys: plan, header",
        ),
        ("{custom: true, header: h}", "meta family 'bad': no 'plan'", "e.g. plan: FlipPlan"),
        ("{custom: true, plan: P}", "meta family 'bad': no 'header'", "kiln/meta/<header>.h"),
        ("{custom: true, plan: 3, header: h}", "'plan' must be a C++ name, got 3", None),
        (
            "{custom: true, plan: P, header: h, inplace: 'yes'}",
            "'inplace' must be true or false, got 'yes'",
            "inplace: true",
        ),
        (
            "{custom: true, plan: P, header: h, results: [self, accumulate]}",
            "unknown result rule 'accumulate'",
            "a custom step chooses the dtype itself",
        ),
        (
            "{plan: P, header: h, args: {self: [Tensor]}}",
            "the templates write only the generic steps' calls " "(along_dim, reduction)",
            "write custom: true",
        ),
        (
            "{custom: true, plan: P, header: h, args: {self: [Tensor]}}",
            "'args' applies to the generic steps",
            "drop 'args'",
        ),
        ("{custom: true, plan: P, header: h, required: self}", "'required' must list argument names", None),
        (
            "{custom: true, plan: P, header: h, result_sizes: [mean]}",
            "'result_sizes' must map a named result to a field",
            "e.g. result_sizes: {mean: stat_sizes}",
        ),
        (
            "{custom: true, foreach: true, plan: P, header: h}",
            "a foreach family writes its Tensor lists in place",
            "add mutates: true",
        ),
        ("3", "meta family 'bad': expected a mapping of its fields", None),
    ]

    def test_malformed_family_entries(self):
        line = len((VALID + FAMILIES).splitlines()) + 1
        for entry, message, hint in self.BAD:
            with self.subTest(entry=entry):
                r = self.run_gen(VALID + FAMILIES + f"  bad: {entry}\n")
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertNotIn("Traceback", r.stderr)
                self.assertIn(f"ops.yaml:{line}: ", r.stderr)
                self.assertIn(message, r.stderr)
                if hint:
                    self.assertIn(hint, r.stderr.split("\n  hint: ", 1)[1])
                self.assertIn("1 error(s)", r.stderr)

    def test_error_at_the_key_of_a_block_entry(self):
        block = "  bad:\n    custom: true\n    plan: P\n    header: h\n    results: [self, bogus]\n"
        line = len((VALID + FAMILIES).splitlines()) + 5
        self.assertError(VALID + FAMILIES + block, line, "meta family 'bad': unknown result rule 'bogus'")

    def test_generic_family_arguments_are_schema_types(self):
        families = FAMILIES.replace(
            'args: {self: [Tensor], dim: [int], dtype: ["ScalarType?"]}',
            'args: {self: [Tensr], dim: [int], dtype: ["ScalarType?"]}',
        )
        self.assertError(
            VALID + families,
            len(VALID.splitlines()) + 2,
            "meta family 'along_dim': args: 'Tensr' (of 'self') is not a schema type",
        )
        families = FAMILIES.replace("required: [self, dim]", "required: [self, axis]")
        self.assertError(
            VALID + families,
            len(VALID.splitlines()) + 3,
            "meta family 'along_dim': required argument 'axis' is not one of its args",
        )
        families = FAMILIES.replace("results: [self, accumulate, floating]", "results: [self, inexact]")
        self.assertError(
            VALID + families, len(VALID.splitlines()) + 3, "meta family 'along_dim': unknown result rule 'inexact'"
        )

    def test_family_name_is_an_identifier(self):
        self.assertError(
            VALID + FAMILIES + "  bad-name: {custom: true, plan: P, header: h}\n",
            len((VALID + FAMILIES).splitlines()) + 1,
            "meta family name 'bad-name' is not a C++ identifier",
        )

    # ---- the root file and its `files:` ----
    def test_ops_folder_means_the_root_file_beside_it(self):
        files = base.RegistryErrors.split_valid(self)
        r = self.run_folder(files, check=False, flag="--ops")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("meta::reduction(", self.read("src/ops/sum.cpp"))

    def test_every_family_file_is_listed(self):
        files = base.RegistryErrors.split_valid(self)
        root = GROUPS + FAMILIES + "files:\n  - ops/b_first.yaml\n"
        r = self.run_folder(files, root=root)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(
            f"ops.yaml:{len((GROUPS + FAMILIES).splitlines()) + 1}: 'ops/c_second.yaml' is not listed in 'files'",
            r.stderr,
        )

    def test_listed_files_exist_once(self):
        files = base.RegistryErrors.split_valid(self)
        listed = "files:\n  - ops/b_first.yaml\n  - ops/c_second.yaml\n"
        first = len((GROUPS + FAMILIES).splitlines()) + 2
        r = self.run_folder(files, root=GROUPS + FAMILIES + listed + "  - ops/nope.yaml\n")
        self.assertIn(f"ops.yaml:{first + 2}: cannot read 'ops/nope.yaml': no such file", r.stderr)
        r = self.run_folder(files, root=GROUPS + FAMILIES + listed + "  - ops/b_first.yaml\n")
        self.assertIn(
            f"ops.yaml:{first + 2}: 'ops/b_first.yaml' is listed twice\n  hint: first at ops.yaml:{first}", r.stderr
        )

    def test_families_belong_in_the_root_file(self):
        files = base.RegistryErrors.split_valid(self)
        files["c_second.yaml"] = FAMILIES + files["c_second.yaml"]
        r = self.run_folder(files)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("ops/c_second.yaml:1: 'meta_families' belongs in the root file ops.yaml", r.stderr)


if __name__ == "__main__":
    unittest.main()
