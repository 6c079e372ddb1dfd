# The reliability stages of `tools/kiln test` (issue 5), sourced by tools/kiln after the
# normal suite; `tools/kiln test --quick` skips them. Each stage has its own build directory
# and prints ctest's summary line:
#   asan  build-asan (clang, ASan + LSan + UBSan, -O1): the whole suite, any report fails it;
#         gradchecks there are first order only (KILN_TEST_FIRST_ORDER_ONLY: the normal run
#         checks second order, which under ASan re-runs the same kernels at several times the cost)
#   fuzz  build-asan: libFuzzer on op calls by name, KILN_FUZZ_RUNS inputs (12000, at most
#         KILN_FUZZ_SECONDS = 120 s) from seed KILN_FUZZ_SEED (1) and fuzz/corpus: replayable
#   tsan  build-tsan (clang, TSan, LLVM's OpenMP with its Archer tool, 2 OpenMP threads): the
#         reliability tests (threads, memory, autograd safety, kiln's own parallel loops)
# Environment: KILN_FUZZ_SEED, KILN_FUZZ_RUNS, KILN_FUZZ_SECONDS, KILN_ASAN_BUILD_DIR, KILN_TSAN_BUILD_DIR.

ASAN_BUILD="${KILN_ASAN_BUILD_DIR:-$ROOT/build-asan}"
TSAN_BUILD="${KILN_TSAN_BUILD_DIR:-$ROOT/build-tsan}"
FUZZ_SEED="${KILN_FUZZ_SEED:-1}"
FUZZ_RUNS="${KILN_FUZZ_RUNS:-12000}"
FUZZ_SECONDS="${KILN_FUZZ_SECONDS:-120}"
# allocator_may_return_null: a huge request must reach kiln's own out-of-memory error.
export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# kiln's OpenMP loops run on LLVM's runtime (clang's -fopenmp) with Archer, its OMPT tool that
# tells TSan about OpenMP's barriers and tasks, so two threads of one parallel loop are checked
# against each other. OpenBLAS keeps its own libgomp pool, which TSan cannot see into: the
# suppressions file names those third-party frames, never kiln's.
ARCHER_LIB="$(ls /usr/lib/llvm-*/lib/libarcher.so 2>/dev/null | sort -V | tail -n 1)"
TSAN_ENV=(OMP_NUM_THREADS=2 "OMP_TOOL_LIBRARIES=$ARCHER_LIB" "ARCHER_OPTIONS=verbose=0"
          "TSAN_OPTIONS=halt_on_error=1 second_deadlock_stack=1 ignore_noninstrumented_modules=1 suppressions=$ROOT/tests/reliability/tsan.supp")

stage_asan() {
  if [ ! -f "$ASAN_BUILD/build.ninja" ]; then
    CXX=clang++ cmake -S "$ROOT" -B "$ASAN_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_DEMO=OFF \
      -DKILN_SANITIZE=address,undefined -DKILN_FUZZ=ON -DKILN_CUDA=OFF >/dev/null
  fi
  cmake --build "$ASAN_BUILD" -j "$JOBS"
  # The generator's own tests are plain Python: the normal run has them.
  (cd "$ASAN_BUILD" && KILN_TEST_FIRST_ORDER_ONLY=1 ctest --output-on-failure -j "$JOBS" -LE "fuzz|codegen")
}

stage_fuzz() {
  cmake -S "$ROOT" -B "$ASAN_BUILD" -DKILN_FUZZ_SEED="$FUZZ_SEED" -DKILN_FUZZ_RUNS="$FUZZ_RUNS" \
    -DKILN_FUZZ_SECONDS="$FUZZ_SECONDS" >/dev/null
  cmake --build "$ASAN_BUILD" -j "$JOBS" --target kiln_fuzz_ops
  (cd "$ASAN_BUILD" && ctest --output-on-failure -L fuzz)
}

stage_tsan() {
  if [ ! -f "$TSAN_BUILD/build.ninja" ]; then
    CXX=clang++ cmake -S "$ROOT" -B "$TSAN_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_DEMO=OFF \
      -DKILN_SANITIZE=thread -DKILN_CUDA=OFF >/dev/null
  fi
  [ -n "$ARCHER_LIB" ] || { say "tsan: libarcher.so not found (Debian: libomp-14-dev)"; return 1; }
  cmake --build "$TSAN_BUILD" -j "$JOBS" --target kiln_reliability_tests
  (cd "$TSAN_BUILD" && env "${TSAN_ENV[@]}" ctest --output-on-failure -j "$JOBS" -L reliability)
}

# Runs every stage (a failing one does not stop the others); returns non-zero if any failed.
reliability_stages() {
  local rc=0 summary=() stage start status
  for stage in asan tsan fuzz; do  # fuzz last: a finding's report ends the log
    say "reliability stage: $stage"
    start=$SECONDS
    status=passed
    "stage_$stage" || { status=FAILED; rc=1; }
    summary+=("$(printf '%-5s %-7s %4ds' "$stage" "$status" $((SECONDS - start)))")
  done
  say "reliability stages:"
  printf '  %s\n' "${summary[@]}"
  return $rc
}
