#!/usr/bin/env python3
"""Fails when a file held to kiln's format differs from it (CTest `format`).

Python: every .py file of the repository (black, pyproject.toml's settings).
C++: the files under FORMATTED_CPP (clang-format, .clang-format's settings). The tree predates
.clang-format and most of it would be rewrapped, so a folder joins the list once it is
formatted; new folders start on it. Generated code is not checked.

`--fix` formats the held files in place instead of checking them.
"""
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY_DIRS = ["codegen", "tests", "tools", "bench", "fuzz"]
# Folders and files held to .clang-format.
FORMATTED_CPP = [
    "optim",
    "kernels/include/kiln/kernel",
    "tests/backend_sweep",
    "tests/support/layouts.h",
    "tests/support/layouts.cpp",
    "tests/test_device_hooks.cpp",
    "runtime/include/kiln/device_hooks.h",
    "runtime/src/device_hooks.cpp",
    "kernels/cuda/device_hooks.cpp",
    "kernels/cpu/device_hooks.cpp",
    "kernels/cpu/device_copy.h",
    "kernels/cpu/device_random.h",
    "kernels/cpu/copy.cpp",
    "kernels/cpu/random.cpp",
    "runtime/include/kiln/backend_registry.h",
    "runtime/src/backend_registry.cpp",
    "tests/test_private_backend.cpp",
]
CPP_SUFFIXES = (".h", ".cpp", ".cu", ".cuh")


def cpp_files():
    for entry in FORMATTED_CPP:
        path = os.path.join(ROOT, entry)
        if os.path.isfile(path):
            yield path
            continue
        for dirpath, _, files in os.walk(path):
            for f in sorted(files):
                if f.endswith(CPP_SUFFIXES):
                    yield os.path.join(dirpath, f)


def tool(name, package):
    found = shutil.which(name)
    if not found:
        sys.exit(f"check_format: {name} not found (Debian: apt-get install {package}; tools/kiln setup installs it)")
    return found


def main():
    fix = sys.argv[1:] == ["--fix"]
    black = tool("black", "black")
    clang_format = tool("clang-format", "clang-format")
    py = [d for d in PY_DIRS if os.path.isdir(os.path.join(ROOT, d))]
    rc = subprocess.run([black, "-q"] + ([] if fix else ["--check", "--diff"]) + py, cwd=ROOT).returncode
    cpp = list(cpp_files())
    flags = ["-i"] if fix else ["--dry-run", "-Werror"]
    rc |= subprocess.run([clang_format, "--style=file"] + flags + cpp, cwd=ROOT).returncode
    print(
        f"format: {len(cpp)} C++ file(s) held to .clang-format and the Python of {', '.join(py)}: "
        + ("formatted" if fix else "clean" if rc == 0 else "not formatted (tools/check_format.py --fix)")
    )
    return 1 if rc and not fix else 0


if __name__ == "__main__":
    sys.exit(main())
