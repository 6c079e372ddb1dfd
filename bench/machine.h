#ifndef KILN_BENCH_MACHINE_H_
#define KILN_BENCH_MACHINE_H_
// The machine's own ceilings, measured in the same run: memory bandwidth (a plain OpenMP
// STREAM-style add) and the GEMM rates of calling OpenBLAS directly.
#include <map>
#include <string>

#include "harness.h"

namespace kiln_bench {

struct MachineRates {
  double stream_add_gbs = 0;             // c[i] = a[i] + b[i] over 16M float32, counting 12 bytes/element
  std::map<std::string, double> gflops;  // "sgemm512", "sgemm1024", "sgemm2048", "dgemm1024", "sgemm128x64"
};

MachineRates measure_machine(const HarnessOptions& opt);

// The shared library a symbol resolves to in this process (which OpenBLAS both sides call).
std::string library_of(const char* symbol);

}  // namespace kiln_bench
#endif  // KILN_BENCH_MACHINE_H_
