"""Property test of the generator: a mutated registry (ops.yaml and ops/*.yaml as one file) gives
`ops.yaml:LINE: message` errors and
exit 1, or is accepted and generates C++ that compiles, or whose compile errors are all inside
a composite body and so reported by the compiler at ops.yaml lines (`#line`); never a traceback.

Mutations (line deletions, duplications, swaps, token replacements, stray characters,
re-indentation, truncation, changed numbers) are drawn from a fixed seed, so every run tries
the same cases. KILN_CODEGEN_FUZZ_COUNT sets how many (default 150).
"""
import contextlib
import io
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "codegen"))

from kiln_codegen import main as codegen_main  # noqa: E402

COUNT = int(os.environ.get("KILN_CODEGEN_FUZZ_COUNT", "150"))
COMPILE_LIMIT = 3  # accepted mutations whose changed C++ is compiled (-fsyntax-only)
ERROR_LINE = re.compile(r"^ops\.yaml:(\d+): ")
STRAY = ["{", "}", "[", "]", ":", "- ", "'", '"', "\t", "#", "&a ", "*a", "!!python/object ", "\u00e9", "=", ",", "|"]


def mutate(rng, lines, tokens):
    """One random mutation of the registry's lines; returns (description, text)."""
    lines = list(lines)
    i = rng.randrange(len(lines))
    kind = rng.randrange(8)
    if kind == 0:
        desc = f"delete line {i + 1}"
        del lines[i]
    elif kind == 1:
        desc = f"duplicate line {i + 1}"
        lines.insert(i, lines[i])
    elif kind == 2 and i + 1 < len(lines):
        desc = f"swap lines {i + 1} and {i + 2}"
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
    elif kind == 3:
        words = re.findall(r"[A-Za-z_][A-Za-z_0-9]*", lines[i])
        if not words:
            return mutate(rng, lines, tokens)
        old, new = rng.choice(words), rng.choice(tokens)
        desc = f"line {i + 1}: {old} -> {new}"
        lines[i] = lines[i].replace(old, new, 1)
    elif kind == 4:
        pos = rng.randrange(len(lines[i]) + 1)
        ch = rng.choice(STRAY)
        desc = f"line {i + 1}: insert {ch!r} at {pos}"
        lines[i] = lines[i][:pos] + ch + lines[i][pos:]
    elif kind == 5:
        delta = rng.choice([-2, 2, 1])
        desc = f"line {i + 1}: indent {delta:+d}"
        lines[i] = (
            (" " * delta + lines[i]) if delta > 0 else lines[i][-delta:] if lines[i].startswith("  ") else lines[i]
        )
    elif kind == 6:
        desc = f"truncate after line {i + 1}"
        lines = lines[: i + 1]
    else:
        nums = list(re.finditer(r"-?\d+(\.\d+)?", lines[i]))
        if not nums:
            return mutate(rng, lines, tokens)
        m = rng.choice(nums)
        new = rng.choice(["-1", "0", "999999999999999999999", "1e400", "-5", "1.5", "nan"])
        desc = f"line {i + 1}: number {m.group(0)} -> {new}"
        lines[i] = lines[i][: m.start()] + new + lines[i][m.end() :]
    return desc, "".join(lines)


def run_gen(path, out, check):
    """The generator in-process: (exit code, stderr, traceback text or None)."""
    err = io.StringIO()
    argv = ["--registry", path, "--out", out, "--quiet"] + (["--check"] if check else [])
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = codegen_main.run(argv)
    except Exception:  # the property under test: this must never happen
        import traceback

        return None, err.getvalue(), traceback.format_exc()
    return rc, err.getvalue(), None


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def changed_sources(base, other):
    """Generated .cpp files whose content differs between two output trees."""
    out = []
    for dirpath, _, files in os.walk(other):
        for f in files:
            if not f.endswith(".cpp"):
                continue
            p = os.path.join(dirpath, f)
            q = os.path.join(base, os.path.relpath(p, other))
            if not os.path.exists(q) or _read(p) != _read(q):
                out.append(p)
    return sorted(out)


def syntax_check(gen_dir, source):
    cxx = shutil.which("c++") or shutil.which("g++")
    inc = [
        "-I",
        os.path.join(ROOT, "runtime", "include"),
        "-I",
        os.path.join(ROOT, "kernels", "include"),
        "-I",
        os.path.join(gen_dir, "include"),
        "-I",
        ROOT,
        "-I",
        os.path.join(ROOT, "tests"),
    ]
    for blas in ("/usr/include/x86_64-linux-gnu/openblas-openmp", "/usr/include/openblas"):
        if os.path.isdir(blas):
            inc += ["-I", blas]
    return subprocess.run(
        [cxx, "-std=c++17", "-fopenmp", "-fsyntax-only", *inc, source], capture_output=True, text=True
    )


COMPILER_ERROR = re.compile(r"^(.+?):(\d+):(?:\d+:)? (?:fatal )?error: ", re.M)


def errors_point_at(stderr, ops_path, num_lines):
    """True when the compiler reported errors and every one is at a line of ops.yaml: C++ the
    generator copies from a composite body, which only the compiler can judge."""
    found = COMPILER_ERROR.findall(stderr)
    return bool(found) and all(
        os.path.abspath(f) == os.path.abspath(ops_path) and 1 <= int(n) <= num_lines for f, n in found
    )


def one_file_registry():
    """kiln's registry (ops.yaml and the family files it lists) as one file, which the generator
    also reads: the mutations then move text across what were file boundaries too."""
    with open(os.path.join(ROOT, "ops.yaml"), encoding="utf-8") as f:
        root = f.read()
    files = yaml.safe_load(root)["files"]
    root = re.sub(r"^files:\n(?:[ #-].*\n|\n)*", "", root, flags=re.M)  # its other keys stay
    parts = []
    for name in files:
        with open(os.path.join(ROOT, name), encoding="utf-8") as f:
            text = f.read()
        parts.append(text.split("\nops:\n", 1)[1] if "\nops:\n" in text else text)
    return root + "ops:\n" + "".join(parts)


class RegistryFuzz(unittest.TestCase):
    def test_mutated_registries(self):
        original = one_file_registry()
        lines = original.splitlines(keepends=True)
        tokens = sorted(set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", original)))
        rng = random.Random(20261122)
        tmp = tempfile.mkdtemp(prefix="kiln-codegen-fuzz-")
        self.addCleanup(shutil.rmtree, tmp, True)
        path = os.path.join(tmp, "ops.yaml")
        base = os.path.join(tmp, "base")
        with open(path, "w", encoding="utf-8") as f:
            f.write(original)
        rc, err, tb = run_gen(path, base, check=False)
        self.assertEqual(rc, 0, err or tb)

        problems, rejected, accepted, compiled = [], 0, 0, 0
        for n in range(COUNT):
            desc, text = mutate(rng, lines, tokens)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            rc, err, tb = run_gen(path, os.path.join(tmp, "unused"), check=True)
            if tb:
                problems.append(f"#{n} {desc}: traceback\n{tb}")
                continue
            if rc == 1:
                rejected += 1
                reported = [l for l in err.splitlines() if l and not l.startswith(" ")]
                bad = [l for l in reported if not ERROR_LINE.match(l) and not l.startswith("ops.yaml: ")]
                lines_ok = all(
                    1 <= int(ERROR_LINE.match(l).group(1)) <= len(text.splitlines()) + 1
                    for l in reported
                    if ERROR_LINE.match(l)
                )
                if not reported or bad or not lines_ok or not any(ERROR_LINE.match(l) for l in reported):
                    problems.append(f"#{n} {desc}: error output is not 'ops.yaml:LINE: message':\n{err}")
                continue
            if rc != 0:
                problems.append(f"#{n} {desc}: exit code {rc}")
                continue
            accepted += 1
            if compiled >= COMPILE_LIMIT:
                continue
            # Accepted: what it generates must still be C++ that compiles.
            out = os.path.join(tmp, f"gen{n}")
            rc, err, tb = run_gen(path, out, check=False)
            if tb or rc != 0:
                problems.append(f"#{n} {desc}: --check passed but generation failed: {err}{tb or ''}")
                continue
            for src in changed_sources(base, out)[:2]:
                r = syntax_check(out, src)
                compiled += 1
                if r.returncode != 0 and not errors_point_at(r.stderr, path, len(text.splitlines())):
                    problems.append(
                        f"#{n} {desc}: generated {os.path.relpath(src, out)} does not compile:\n" f"{r.stderr[:2000]}"
                    )
            shutil.rmtree(out, True)
        print(
            f"codegen fuzz: {COUNT} mutations, {rejected} rejected with ops.yaml:LINE errors, "
            f"{accepted} accepted, {compiled} changed files compiled",
            file=sys.stderr,
        )
        self.assertEqual(problems, [], "\n\n".join(problems[:10]))
        self.assertGreater(rejected, COUNT // 4)


if __name__ == "__main__":
    unittest.main()
