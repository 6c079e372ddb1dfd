"""Engines are registry data (ops.yaml `engines:`): an op of an engine is an entry with
`engine: {<engine>: <rule>}` and no kernel file, its kernels generated for each backend; and a
composite target can name the kernel it waits for (`pending:`). Malformed ones are
`ops.yaml:LINE: message` errors."""
import os
import shutil
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
import test_registry_errors as base  # noqa: E402

ENGINES = (
    "engines:\n"
    "  scan: {meta: along_dim, headers: {cpu: scan_engine.h, cuda: scan_engine.cuh}, rules: scan_rules.h, "
    "options: [reverse]}\n"
)
SCANS = """\
- signature: cumsum(Tensor self, int dim) -> Tensor
  dtypes: [floating]
  engine: {scan: Sum}
  meta: along_dim
  samples:
    - {self: [3, 4], dim: 1}
  doc: Running sum.
- signature: _cumsum_reverse(Tensor self, int dim) -> Tensor
  dtypes: [floating]
  engine: {scan: Sum, reverse: true}
  dispatch: {cpu: _cumsum_reverse}
  meta: along_dim
  samples:
    - {self: [3, 4], dim: 1}
  doc: Running sum from the end.
- signature: cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)
  dtypes: [floating]
  engine: {scan: Max}
  meta: along_dim
  samples:
    - {self: [3, 4], dim: 1}
  doc: Running maximum and where it was.
"""


class Engines(unittest.TestCase):
    setUp = base.RegistryErrors.setUp
    tearDown = base.RegistryErrors.tearDown
    run_gen = base.RegistryErrors.run_gen
    assertError = base.RegistryErrors.assertError

    def read(self, rel):
        with open(os.path.join(self.tmp.name, "generated", rel)) as f:
            return f.read()

    def registry(self, scans=SCANS, engines=ENGINES):
        return base.VALID + scans + engines

    def test_an_engine_op_is_an_entry_and_a_rule(self):
        r = self.run_gen(self.registry(), check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        cpu = self.read("src/cpu/engine_scan.cpp")
        self.assertIn('#include "scan_engine.h"', cpu)
        self.assertIn(
            "void cumsum(const meta::AlongDimPlan& plan, const TensorBase& out, const TensorBase& self) {\n"
            '  scan_values<scan::Sum>(plan, out, self, "cumsum");\n}',
            cpu,
        )
        self.assertIn('scan_values<scan::Sum, /*kReverse=*/true>(plan, out, self, "_cumsum_reverse");', cpu)
        self.assertIn('scan_values_indices<scan::Max>(plan, values, indices, self, "cummax");', cpu)
        cuda = self.read("src/cuda/engine_scan.cu")
        self.assertIn('#include "scan_engine.cuh"', cuda)
        self.assertIn("namespace kiln::cuda {", cuda)
        self.assertNotIn("_cumsum_reverse", cuda)  # its dispatch lists the CPU only
        # the kernels are in the tables and the build's source lists
        self.assertIn("kKernels = { {&cpu::cumsum}, {&cuda::cumsum} };", self.read("src/ops/cumsum.cpp"))
        sources = self.read("sources.cmake")
        self.assertIn("src/cpu/engine_scan.cpp", sources)
        self.assertIn("src/cuda/engine_scan.cu", sources)

    def test_a_second_engine_is_a_template_and_data(self):
        engines = ENGINES + (
            "  along_dim: {meta: along_dim, headers: {cpu: along_dim_engine.h, cuda: along_dim_engine.cuh}, "
            "rules: along_dim_rules.h}\n"
        )
        gather = """\
- signature: _gather_lines(Tensor self, Tensor indices, int dim) -> Tensor
  dtypes: [floating]
  engine: {along_dim: Gather}
  meta: along_dim
  samples:
    - {self: [3, 4], indices: {shape: [3, 4], dtype: int64, domain: [0, 3]}, dim: 1}
  doc: self[indices[j]] at j along dim.
"""
        r = self.run_gen(self.registry(SCANS + gather, engines), check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        for rel, header in (
            ("src/cpu/engine_along_dim.cpp", "along_dim_engine.h"),
            ("src/cuda/engine_along_dim.cu", "along_dim_engine.cuh"),
        ):
            text = self.read(rel)
            self.assertIn(f'#include "{header}"', text)
            self.assertIn('along_lines<along_dim::Gather>(plan, out, self, indices, "_gather_lines");', text)
            self.assertNotIn("cumsum", text)  # each engine's file holds its own ops only
        self.assertIn("src/cpu/engine_along_dim.cpp", self.read("sources.cmake"))

    def test_unknown_engine(self):
        text = self.registry(SCANS.replace("engine: {scan: Sum}", "engine: {fold: Sum}"))
        self.assertError(text, 37, "engine must name one engine, got ['fold']")

    def test_rule_must_be_a_name(self):
        self.assertError(
            self.registry(SCANS.replace("{scan: Sum}", "{scan: 'a + b'}")), 37, "the rule must be a C++ name"
        )

    def test_unknown_option(self):
        self.assertError(
            self.registry(SCANS.replace("{scan: Sum}", "{scan: Sum, exclusive: true}")),
            37,
            "engine: unknown option exclusive: True",
        )

    def test_engine_runs_its_meta_family(self):
        self.assertError(
            self.registry(SCANS.replace("{scan: Sum}\n  meta: along_dim", "{scan: Sum}\n  meta: reduction", 1)),
            37,
            "an op of engine 'scan' runs meta: along_dim",
        )

    def test_engine_needs_a_front_per_backend(self):
        engines = ENGINES.replace(", cuda: scan_engine.cuh", "")
        text = self.registry(
            SCANS.replace("{scan: Max}", "{scan: Max}\n  dispatch: {cpu: cummax, cuda: cummax}"), engines
        )
        self.assertError(text, 53, "engine 'scan' has no cuda front")

    def test_malformed_engine(self):
        self.assertError(self.registry(engines="engines:\n  scan: {meta: along_dim}\n"), 58, "'headers' must map")

    def test_pending_kernel_is_declared_not_served(self):
        dispatch = "{cpu: sum_all, cuda: {target: composite, pending: sum_rows}}\n  composite: sum_decomposed\n  variants: [function]"
        text = base.VALID.replace("{cpu: sum_all}", dispatch)
        r = self.run_gen(text, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("void sum_rows(", self.read("include/kiln/gen/kernels/cuda/sum_rows.h"))
        entry = self.read("src/ops/sum.cpp")
        self.assertIn("kKernels = { {&cpu::sum_all}, {nullptr} };", entry)
        self.assertIn("cuda: composite, kernel sum_rows pending", entry)
        # a pending kernel is a promise: the entry names it (kept, [[gnu::used]], in a CUDA build),
        # so one nobody defined fails to link as a serving one would
        self.assertIn('#include "kiln/gen/kernels/cuda/sum_rows.h"  // pending', entry)
        self.assertIn("[[gnu::used]] constexpr Kernel kPending0 = &cuda::sum_rows;  // dispatch: cuda: pending", entry)
        shutil.rmtree(os.path.join(self.tmp.name, "generated"))
        self.assertError(
            base.VALID.replace("{cpu: sum_all}", "{cpu: {target: sum_all, pending: sum_rows}}"),
            20,
            "pending names the kernel a composite target waits for",
        )


if __name__ == "__main__":
    unittest.main()
