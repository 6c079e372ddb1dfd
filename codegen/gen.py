#!/usr/bin/env python3
"""Entry point: python3 codegen/gen.py --registry ops.yaml --out generated"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from kiln_codegen.main import run  # noqa: E402

if __name__ == "__main__":
    try:
        sys.exit(run())
    except KeyboardInterrupt:
        sys.exit(130)
