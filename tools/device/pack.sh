#!/usr/bin/env bash
# Host side of a run on the workplace's GPU machine (the `device` tool), which has CUDA, cuDNN (in
# PyTorch's wheel) and PyTorch but none of kiln's build dependencies: packs a CUDA build's device
# suite, backend sweep and CUDA bench (sm_90: configure with -DCMAKE_CUDA_ARCHITECTURES=90 to stay
# under the tool's 64 MiB), the op samples and the shared libraries they need into .devrun/ (keep
# it in .git/info/exclude), with tools/device/run.sh beside them. Then, with the device tool:
#   run(command="SUITE_TIMEOUT=300 BENCH=1 bash .devrun/run.sh", carry=[".devrun"])
# and record what passed: tools/record_device_run.py <files_at>/cuda_cov.jsonl ...
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${KILN_BUILD_DIR:-$root/build}" out="$root/.devrun"
mkdir -p "$out"
# each binary is some 12 MB packed: PACK_BINARIES may name fewer to stay under the 64 MiB
for b in ${PACK_BINARIES:-tests/cuda/kiln_cuda_tests tests/backend_sweep/kiln_backend_sweep bench/cuda/kiln_cuda_bench}; do
  n=$(basename $b)
  strip --strip-debug -o "/tmp/$n" "$build/$b"
  xz -T2 -6 -c "/tmp/$n" > "$out/$n.xz"
done
tar cJf "$out/op_samples.tar.xz" -C "$build/generated" op_samples coverage_declared.json  # the sweep reads both
# where the binaries look for them (KILN_GENERATED_DIR, compiled in): run.sh unpacks them there
echo "$build/generated" > "$out/generated_dir"
# what the binaries link that the GPU machine may lack (Debian's OpenBLAS, oneDNN, their runtimes, cudart)
libs=$(ldd "$build/tests/cuda/kiln_cuda_tests" | awk '/libgomp|libgfortran|libdnnl|libopenblas|libquadmath|libcudart/ {print $3}')
tar cJhf "$out/libs.tar.xz" --transform 's|.*/||' $libs
cp "$root/tools/device/run.sh" "$out/run.sh"
du -sh "$out"
