#!/usr/bin/env python3
"""Golden tests: what the generator renders for six representative ops, pinned byte for byte.

The generator runs once on the real registry into a temporary folder (never generated/, which a
build may be using) and every file of GOLDEN must equal its copy in
tests/codegen/golden/<op>/<path under generated/>. A refactor of codegen/ that should not change
the generated C++ passes unchanged; one that does change it fails here with the diff, and after

    /usr/bin/python3 tests/codegen/test_golden.py --update

the golden files' diff in review shows what the change does to the generated C++.
"""
import difflib
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
GOLDEN_DIR = os.path.join(ROOT, "tests", "codegen", "golden")
REFRESH = "/usr/bin/python3 tests/codegen/test_golden.py --update"
DIFF_LINES = 60

# op (registry name) -> the generated files that belong to it alone, relative to generated/.
GEN = "include/kiln/gen"
GOLDEN = {
    # pointwise: entry, public and TensorBase headers, functor, CPU dtype switch, samples
    "add.Tensor": [
        f"{GEN}/api/add.h",
        f"{GEN}/ops/add.h",
        f"{GEN}/pointwise/add_Tensor.h",
        "src/ops/add_Tensor.cpp",
        "src/cpu/add_Tensor.cpp",
        "op_samples/add.Tensor.json",
    ],
    # structured reduction (meta: reduction): entry, headers, both backends' kernel declarations
    "sum.dim_IntList": [
        f"{GEN}/api/sum.h",
        f"{GEN}/ops/sum.h",
        f"{GEN}/kernels/cpu/sum.h",
        f"{GEN}/kernels/cuda/sum.h",
        "src/ops/sum_dim_IntList.cpp",
        "op_samples/sum.dim_IntList.json",
    ],
    # joint derivative formula (self, other: atan2_backward(..., grad_input_mask)), pointwise
    "atan2": [
        f"{GEN}/api/atan2.h",
        f"{GEN}/ops/atan2.h",
        f"{GEN}/pointwise/atan2.h",
        "src/ops/atan2.cpp",
        "src/cpu/atan2.cpp",
        "op_samples/atan2.json",
    ],
    # function composite (composite: linear) with an adapter over TensorBase and autocast
    "linear": [f"{GEN}/api/linear.h", f"{GEN}/ops/linear.h", "src/ops/linear.cpp", "op_samples/linear.json"],
    # kernel factory (meta: arange, TensorOptions); its declaration goes to the shared factories.h
    "arange.start_step": [
        f"{GEN}/kernels/cpu/arange.h",
        f"{GEN}/kernels/cuda/arange.h",
        "src/ops/arange_start_step.cpp",
        "op_samples/arange.start_step.json",
    ],
    # foreach in-place family (meta: foreach, Tensor(a!)[] lists, checks:, -> ())
    "_fused_adam_": [
        f"{GEN}/api/_fused_adam_.h",
        f"{GEN}/kernels/cpu/fused_adam.h",
        f"{GEN}/kernels/cuda/fused_adam.h",
        "src/ops/_fused_adam_.cpp",
        "op_samples/_fused_adam_.json",
    ],
}


def generator_command(out):
    """The generator as CMakeLists.txt runs it (KILN_CODEGEN_COMMAND), into `out`."""
    return [
        sys.executable,
        os.path.join(ROOT, "codegen", "gen.py"),
        "--registry",
        os.path.join(ROOT, "ops.yaml"),
        "--out",
        out,
        "--quiet",
    ]


def normalize(data, out):
    """A one-line composite body's `#line` directives name absolute paths (the registry file, the
    generated file): those become <root> and <generated>, so the golden files do not depend on
    where the tree or the temporary folder is."""
    return data.replace(os.path.abspath(out).encode(), b"<generated>").replace(ROOT.encode(), b"<root>")


_rendered = None


def rendered():
    """{path under generated/: normalized bytes} of the files GOLDEN names that the generator
    wrote (one run per process)."""
    global _rendered
    if _rendered is None:
        with tempfile.TemporaryDirectory(prefix="kiln_golden_") as tmp:
            out = os.path.join(tmp, "generated")
            done = subprocess.run(generator_command(out), capture_output=True, text=True, cwd=ROOT)
            if done.returncode != 0:
                raise RuntimeError(
                    f"the generator failed ({' '.join(generator_command(out))}):\n" f"{done.stdout}{done.stderr}"
                )
            files = {}
            for paths in GOLDEN.values():
                for rel in paths:
                    path = os.path.join(out, rel)
                    if os.path.isfile(path):
                        with open(path, "rb") as fh:
                            files[rel] = normalize(fh.read(), out)
            _rendered = files
    return _rendered


def golden_path(op, rel):
    return os.path.join(GOLDEN_DIR, op, rel)


def _lines(data, rel):
    text = data.decode("utf-8", errors="replace")
    if rel.endswith(".json"):  # one long line: compare the indented form, so the diff says where
        try:
            text = json.dumps(json.loads(text), indent=1) + "\n"
        except ValueError:
            pass
    return text.splitlines(keepends=True)


def unified_diff(expected, actual, rel):
    diff = list(
        difflib.unified_diff(
            _lines(expected, rel), _lines(actual, rel), fromfile=f"golden/{rel}", tofile=f"generated/{rel}"
        )
    )
    if not diff:  # the JSON differs in its spelling alone
        diff = list(
            difflib.unified_diff(
                _lines(expected, ""), _lines(actual, ""), fromfile=f"golden/{rel}", tofile=f"generated/{rel}"
            )
        )
    shown = "".join(line if line.endswith("\n") else line + "\n" for line in diff[:DIFF_LINES])
    if len(diff) > DIFF_LINES:
        shown += f"... ({len(diff) - DIFF_LINES} more diff lines)\n"
    return shown


KEEP = {".clang-format"}  # golden/.clang-format: clang-format leaves the golden copies as generated


def files_under(folder):
    found = set()
    for dirpath, _, names in os.walk(folder):
        for name in names:
            if dirpath == folder and name in KEEP:
                continue
            found.add(os.path.relpath(os.path.join(dirpath, name), folder).replace(os.sep, "/"))
    return found


class GoldenFiles(unittest.TestCase):
    """One test per op of GOLDEN (added below), plus the golden folder's own bookkeeping."""

    def check_op(self, op):
        generated = rendered()
        for rel in GOLDEN[op]:
            with self.subTest(file=rel):
                if rel not in generated:
                    self.fail(
                        f"{op}: the generator no longer writes {rel}; fix GOLDEN in "
                        f"tests/codegen/test_golden.py and run `{REFRESH}`"
                    )
                path = golden_path(op, rel)
                if not os.path.isfile(path):
                    self.fail(f"{op}: no golden copy of {rel} (tests/codegen/golden/{op}/{rel}); run `{REFRESH}`")
                with open(path, "rb") as fh:
                    expected = fh.read()
                if expected != generated[rel]:
                    self.fail(
                        f"{op}: generated {rel} differs from its golden copy:\n"
                        f"{unified_diff(expected, generated[rel], rel)}"
                        f"If the change is intended, refresh with `{REFRESH}` and review the golden diff."
                    )

    def test_no_stray_golden_files(self):
        """Every file under golden/ is one GOLDEN names (a file dropped from the table goes too)."""
        expected = {f"{op}/{rel}" for op, paths in GOLDEN.items() for rel in paths}
        stray = sorted(files_under(GOLDEN_DIR) - expected)
        self.assertFalse(stray, f"golden files GOLDEN does not name: {stray}; run `{REFRESH}` to remove them")


class SameOutputAnywhere(unittest.TestCase):
    """What is generated depends on the registry, the templates and codegen/ alone: not on the
    environment (a variable such as the retired KILN_ALLOW_MISSING_KERNELS, a build option) nor on
    the folder the generator runs from."""

    def test_environment_changes_nothing(self):
        def tree(out, env, cwd):
            done = subprocess.run(generator_command(out), capture_output=True, text=True, env=env, cwd=cwd)
            self.assertEqual(done.returncode, 0, done.stderr)
            found = {}
            for rel in files_under(out):
                with open(os.path.join(out, rel), "rb") as fh:
                    found[rel] = normalize(fh.read(), out)
            return found

        plain = {k: v for k, v in os.environ.items() if not k.startswith(("KILN_", "CUDA"))}
        changed = dict(plain, KILN_ALLOW_MISSING_KERNELS="1", KILN_WITH_CUDA="1", CUDA_HOME="/nowhere", CXX="clang++")
        with tempfile.TemporaryDirectory(prefix="kiln_env_") as tmp:
            first = tree(os.path.join(tmp, "a", "generated"), plain, ROOT)
            second = tree(os.path.join(tmp, "b", "generated"), changed, tmp)
        self.assertEqual(sorted(first), sorted(second))
        for rel in first:
            if first[rel] != second[rel]:
                self.fail(f"{rel} depends on the environment:\n{unified_diff(first[rel], second[rel], rel)}")
        self.assertIn("src/helpers_check.cpp", first)
        self.assertNotIn("src/missing.cpp", first)


def _add_op_test(op):
    name = "test_" + "".join(c if c.isalnum() else "_" for c in op).strip("_")
    setattr(GoldenFiles, name, lambda self: self.check_op(op))


for _op in GOLDEN:
    _add_op_test(_op)


def update():
    """Rewrite the golden files from the current generator; remove those the table no longer names
    or the generator no longer writes. Returns the exit status (1 when GOLDEN names a file the
    generator does not write)."""
    generated = rendered()
    written, unchanged, gone = [], 0, []
    for op, paths in GOLDEN.items():
        for rel in paths:
            path = golden_path(op, rel)
            if rel not in generated:
                gone.append(f"{op}/{rel}")
                if os.path.exists(path):
                    os.remove(path)
                continue
            if os.path.isfile(path):
                with open(path, "rb") as fh:
                    if fh.read() == generated[rel]:
                        unchanged += 1
                        continue
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as fh:
                fh.write(generated[rel])
            written.append(f"{op}/{rel}")
    expected = {f"{op}/{rel}" for op, paths in GOLDEN.items() for rel in paths}
    stray = sorted(files_under(GOLDEN_DIR) - expected) if os.path.isdir(GOLDEN_DIR) else []
    for rel in stray:
        os.remove(os.path.join(GOLDEN_DIR, rel))
    for dirpath, _, _ in sorted(os.walk(GOLDEN_DIR), key=lambda w: -len(w[0])):  # empty folders left behind
        if dirpath != GOLDEN_DIR and not os.listdir(dirpath):
            os.rmdir(dirpath)
    for rel in written:
        print(f"updated tests/codegen/golden/{rel}")
    for rel in stray:
        print(f"removed tests/codegen/golden/{rel} (not in GOLDEN)")
    for rel in gone:
        print(f"removed tests/codegen/golden/{rel}: the generator no longer writes it; fix GOLDEN", file=sys.stderr)
    print(
        f"golden files: {len(written)} updated, {unchanged} unchanged, {len(stray)} removed"
        + (f", {len(gone)} named in GOLDEN but not generated" if gone else "")
    )
    return 1 if gone else 0


if __name__ == "__main__":
    if "--update" in sys.argv[1:]:
        sys.argv.remove("--update")
        if sys.argv[1:]:
            sys.exit(f"usage: {REFRESH}")
        sys.exit(update())
    unittest.main()
