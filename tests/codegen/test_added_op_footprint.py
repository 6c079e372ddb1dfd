"""What adding an op changes in generated/: the files a build recompiles. A function-only op (the
default variants) must leave every header that kiln's sources share unchanged, so that it
recompiles only its own entry and kernel and its registry file's call-by-name and test parts."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
GEN = os.path.join(ROOT, "codegen", "gen.py")

FUNCTION_OP = """
- signature: footprint_probe(Tensor self) -> Tensor
  dtypes: [floating]
  pointwise: self * 2 + 1
  derivatives:
    self: grad * 2
  doc: A probe op.
"""
METHOD_OP = FUNCTION_OP.replace("  dtypes:", "  variants: [function, method, inplace, out]\n  dtypes:", 1)

# Shared by many sources: none may change when a function-only op is added.
SHARED = [
    "include/kiln/gen/tensor_methods.h",
    "include/kiln/gen/tensor_methods_inl.h",
    "include/kiln/gen/factories.h",
    "include/kiln/gen/composite.h",
    "include/kiln/gen/ops/operators.h",
    "src/registry.cpp",
]
# What a function-only pointwise op in ops/pointwise_unary.yaml may change or add.
ALLOWED = {
    "include/kiln/gen/ops.h",
    "include/kiln/gen/op_kernels.h",  # every backend tag; kiln's sources include an op's own (below)
    "include/kiln/gen/op_kernels/footprint_probe.h",
    "include/kiln/gen/api/footprint_probe.h",
    "include/kiln/gen/ops/footprint_probe.h",
    "include/kiln/gen/pointwise/footprint_probe.h",
    "src/ops/footprint_probe.cpp",
    "src/cpu/footprint_probe.cpp",
    "src/cuda/pointwise_entries.cpp",
    "src/cuda/cuda_elementwise.h",
    "src/registry/pointwise_unary.cpp",
    "tests/op_tests/pointwise_unary.cpp",
    "tests/cuda_op_tests/pointwise_unary.cpp",
    "sources.cmake",
    "op_samples.json",
    "op_samples/footprint_probe.json",
    "coverage_declared.json",
}


def snapshot(out):
    files = {}
    for dirpath, _, names in os.walk(out):
        for name in names:
            path = os.path.join(dirpath, name)
            with open(path, encoding="utf-8") as f:
                files[os.path.relpath(path, out).replace(os.sep, "/")] = f.read()
    return files


class AddedOpFootprint(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.ops = os.path.join(self.tmp.name, "ops")
        shutil.copytree(os.path.join(ROOT, "ops"), self.ops)
        self.registry = os.path.join(self.tmp.name, "ops.yaml")
        shutil.copy(os.path.join(ROOT, "ops.yaml"), self.registry)
        self.out = os.path.join(self.tmp.name, "generated")

    def tearDown(self):
        self.tmp.cleanup()

    def gen(self):
        done = subprocess.run(
            [sys.executable, GEN, "--registry", self.registry, "--out", self.out, "--quiet"],
            capture_output=True,
            text=True,
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        return snapshot(self.out)

    def changed_by(self, entry):
        before = self.gen()
        with open(os.path.join(self.ops, "pointwise_unary.yaml"), "a", encoding="utf-8") as f:
            f.write(entry)
        after = self.gen()
        return {f for f in set(before) | set(after) if before.get(f) != after.get(f)}

    def test_function_op_changes_only_its_own_files(self):
        changed = self.changed_by(FUNCTION_OP)
        # its CUDA kernel joins one batch of a few ops (src/cuda/pointwise_<NN>.cu)
        batches = {f for f in changed if re.fullmatch(r"src/cuda/pointwise_\d+\.cu", f)}
        self.assertEqual(len(batches), 1, batches)
        # and its entry one batch of entries (src/ops/batches/entries_<NN>.cpp)
        entry_batches = {f for f in changed if re.fullmatch(r"src/ops/batches/entries_\d+\.cpp", f)}
        self.assertEqual(len(entry_batches), 1, entry_batches)
        batches |= entry_batches
        self.assertEqual(sorted(changed - ALLOWED - batches), [])
        for f in SHARED:
            self.assertNotIn(f, changed)
        self.assertIn("include/kiln/gen/api/footprint_probe.h", changed)
        self.assertIn("src/registry/pointwise_unary.cpp", changed)

    def test_stamp_skips_a_run_on_the_same_inputs(self):
        stamp = os.path.join(self.tmp.name, "codegen.stamp")
        run = [sys.executable, GEN, "--registry", self.registry, "--out", self.out, "--stamp", stamp]
        first = subprocess.run(run, capture_output=True, text=True)
        self.assertEqual(first.returncode, 0, first.stderr)
        again = subprocess.run(run + ["--reuse-stamp"], capture_output=True, text=True)
        self.assertIn("generated/ is current", again.stdout)
        with open(os.path.join(self.ops, "pointwise_unary.yaml"), "a", encoding="utf-8") as f:
            f.write(FUNCTION_OP)
        edited = subprocess.run(run + ["--reuse-stamp"], capture_output=True, text=True)
        self.assertNotIn("generated/ is current", edited.stdout)
        self.assertTrue(os.path.exists(os.path.join(self.out, "include", "kiln", "gen", "api", "footprint_probe.h")))

    def test_method_op_changes_tensor(self):
        changed = self.changed_by(METHOD_OP)
        self.assertIn("include/kiln/gen/tensor_methods.h", changed)
        self.assertIn("include/kiln/gen/tensor_methods_inl.h", changed)
        self.assertNotIn("src/registry.cpp", changed)


if __name__ == "__main__":
    unittest.main()
