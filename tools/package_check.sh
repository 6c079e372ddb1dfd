# The package check of `tools/kiln test` (sourced by tools/kiln; --quick skips it): the example
# consumer (examples/consumer, a program that trains a one-weight model) is built and run
#   installed  against `cmake --install` of the main build (static kiln, find_package(kiln))
#   subdir     with kiln as its add_subdirectory in a Debug project (CPU only, BUILD_SHARED_LIBS=ON:
#              a shared kiln built at -O0, the configuration a consumer debugging its own code has,
#              and about half an optimized build's compile time: 171 s against 360 s in CI)
# Each run checks that it converges and that OpenBLAS is the OpenMP build.
PACKAGE_DIR="$BUILD/package-check"

package_check() {
  local start=$SECONDS prefix="$PACKAGE_DIR/prefix"
  rm -rf "$PACKAGE_DIR"
  cmake --install "$BUILD" --prefix "$prefix" >/dev/null || return 1
  cmake -S "$ROOT/examples/consumer" -B "$PACKAGE_DIR/installed" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$prefix" >/dev/null || return 1
  cmake --build "$PACKAGE_DIR/installed" -j "$JOBS" >/dev/null || return 1
  "$PACKAGE_DIR/installed/fit_line" || return 1
  say "package: installed kiln (find_package) passed in $((SECONDS - start)) s"
  start=$SECONDS
  cmake -S "$ROOT/examples/consumer" -B "$PACKAGE_DIR/subdir" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DKILN_SOURCE_DIR="$ROOT" -DKILN_CUDA=OFF -DBUILD_SHARED_LIBS=ON >/dev/null || return 1
  cmake --build "$PACKAGE_DIR/subdir" -j "$JOBS" >/dev/null || return 1
  "$PACKAGE_DIR/subdir/fit_line" || return 1
  say "package: kiln as a subdirectory (shared, Debug) passed in $((SECONDS - start)) s"
}
