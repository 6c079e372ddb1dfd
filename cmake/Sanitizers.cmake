# Sanitizer and fuzzing builds (issue 5). Included by the top-level CMakeLists.txt.
#   KILN_SANITIZE=address,undefined   ASan + LSan + UBSan for every target (CI: build-asan, clang)
#   KILN_SANITIZE=thread              TSan (CI: build-tsan, only the reliability tests are built)
#   KILN_FUZZ=ON                      clang only: coverage-instruments the library for libFuzzer
#                                     and adds the fuzz/ targets
set(KILN_SANITIZE "" CACHE STRING "Sanitizers for every target, e.g. address,undefined or thread")
option(KILN_FUZZ "Build the libFuzzer targets in fuzz/ (needs clang)" OFF)

if(KILN_SANITIZE)
  # Every target, tests included, so a report anywhere fails the run (no recovery).
  add_compile_options(-fsanitize=${KILN_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer -g1)
  add_link_options(-fsanitize=${KILN_SANITIZE})
endif()

if(KILN_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "KILN_FUZZ needs clang (libFuzzer): CXX=clang++ cmake ... (Debian: clang libclang-rt-14-dev libomp-14-dev)")
  endif()
  # Coverage feedback from the library itself, not only from the fuzz driver.
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

if(KILN_SANITIZE OR KILN_FUZZ)
  # -O1: quicker to build, and the reports keep usable stack traces.
  string(REPLACE "-O2" "-O1" CMAKE_CXX_FLAGS_RELEASE "${CMAKE_CXX_FLAGS_RELEASE}")
endif()

if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  # `#pragma omp simd` loops that clang cannot vectorize at -O1 warn once per instantiation.
  add_compile_options(-Wno-pass-failed)
endif()
