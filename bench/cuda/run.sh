#!/usr/bin/env bash
# On a machine with a CUDA device and PyTorch: kiln's CUDA bench, then PyTorch's on the same
# GPU, then the paired table.   bench/cuda/run.sh BIN_DIR OUT_DIR [SAMPLES]
#   BIN_DIR holds kiln_cuda_bench (a CUDA build's bench/cuda folder); OUT_DIR gets
#   kiln.jsonl, torch.jsonl and table.md.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="$1" out="$2" samples="${3:-11}"
mkdir -p "$out"
"$bin/kiln_cuda_bench" "$samples" | tee "$out/kiln.jsonl"
python3 "$here/torch_cuda_bench.py" "$samples" | tee "$out/torch.jsonl"
python3 "$here/compare.py" "$out/kiln.jsonl" "$out/torch.jsonl" | tee "$out/table.md"
