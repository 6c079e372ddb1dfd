// The device suite's main: without a CUDA device every test case exits with 77 (CTest's
// "Skipped"), saying why; listing test cases (CTest's discovery at build time) always works.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <cstdio>
#include <cstring>
#include "kiln/cuda.h"

namespace {
bool only_lists(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--list", 6) == 0 || std::strncmp(argv[i], "-l", 2) == 0 ||
        std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0)
      return true;
  return false;
}
}  // namespace

int main(int argc, char** argv) {
  constexpr int kSkipped = 77;
  if (!only_lists(argc, argv) && !kiln::cuda::is_available()) {
    std::printf("skipped: no CUDA device (%s)\n", kiln::cuda::unavailable_reason().c_str());
    return kSkipped;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
