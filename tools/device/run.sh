#!/usr/bin/env bash
# GPU machine side (see tools/device/pack.sh): unpacks .devrun/, runs the device suite into
# $OUT/suite.log and $OUT/cuda_cov.jsonl, the backend sweep into $OUT/sweep.log (SWEEP=0: not;
# SWEEP_ARGS=--perf: its timings instead), and with BENCH=1 the CUDA bench beside PyTorch's
# ($OUT/bench/table.md). The suite's reference files are read from /work/main, as built.
set -u
root="$(pwd)" d="$(pwd)/.devrun"
nvidia-smi -L
cd "$d"
python3 - <<'PY'
import lzma, shutil, tarfile, os
for f in os.listdir('.'):
    if f.endswith('.xz') and not f.endswith('.tar.xz'):
        with lzma.open(f) as src, open(f[:-3], 'wb') as dst: shutil.copyfileobj(src, dst)
tarfile.open('libs.tar.xz', 'r:xz').extractall('.')
PY
chmod +x kiln_cuda_tests kiln_backend_sweep kiln_cuda_bench 2>/dev/null  # those packed
if [ "$root" != /work/main ]; then mkdir -p /work; rm -rf /work/main; ln -s "$root" /work/main; fi
gen="$(cat generated_dir)"  # the build's generated/ (pack.sh), which the binaries read
mkdir -p "$gen" && tar xJf op_samples.tar.xz -C "$gen"
cudnn=$(find /opt /usr/local /usr/lib -name 'libcudnn.so.9' 2>/dev/null | head -1)
echo "cudnn: ${cudnn:-none}"
export LD_LIBRARY_PATH="$d${cudnn:+:$(dirname "$cudnn")}:${LD_LIBRARY_PATH:-}"
ldd ./kiln_cuda_tests | grep -i "not found"
cd "$root"
if [ "${SUITE:-1}" = 1 ]; then
  start=$(date +%s)
  KILN_COVERAGE_RESULTS=$OUT/cuda_cov.jsonl timeout "${SUITE_TIMEOUT:-400}" "$d/kiln_cuda_tests" ${SUITE_ARGS:-} \
    > "$OUT/suite.log" 2>&1
  echo "suite rc=$? in $(($(date +%s) - start)) s"
  grep -E "TEST CASE|ERROR|FATAL|error:|test cases|MESSAGE: cuDNN|max error" "$OUT/suite.log" | head -150
fi
if [ "${SWEEP:-1}" = 1 ] && [ -x "$d/kiln_backend_sweep" ]; then
  start=$(date +%s)
  timeout "${SWEEP_TIMEOUT:-400}" "$d/kiln_backend_sweep" ${SWEEP_ARGS:-} > "$OUT/sweep.log" 2>&1
  echo "sweep rc=$? in $(($(date +%s) - start)) s"
  grep -E "^FAIL|skipped \(no|backend sweep" "$OUT/sweep.log" | head -80
fi
if [ "${BENCH:-0}" = 1 ]; then
  bash bench/cuda/run.sh "$d" "$OUT/bench" "${SAMPLES:-11}" > "$OUT/bench.log" 2>&1
  echo "bench rc=$?"
  cat "$OUT/bench/table.md"
fi
