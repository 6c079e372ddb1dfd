#ifndef KILN_BENCH_HARNESS_H_
#define KILN_BENCH_HARNESS_H_
// Side-by-side timing of one case: kiln and libtorch alternate (A B A B ...) after a warm-up,
// each sample runs a calibrated number of iterations, and the per-iteration medians of one
// round give one ratio. Rounds are repeated so each ratio comes with its spread.
#include <functional>
#include <string>
#include <vector>

namespace kiln_bench {

// One case prepared at the current thread count: two closures doing the same work.
struct Prepared {
  std::function<void()> kiln;
  std::function<void()> torch;
};

struct Case {
  std::string name;
  std::string group;         // "overhead", "pointwise", "shape", "reduction", "linalg", "training"
  double bytes = 0;          // memory traffic of one call (for GB/s), 0 when not meaningful
  double flops = 0;          // floating-point work of one call (for GFLOP/s), 0 when not meaningful
  std::string gemm_ref;      // key of the direct-OpenBLAS rate this case compares with, if any
  std::function<Prepared()> prepare;
};

struct Timing {
  double kiln_s = 0;   // median seconds per call
  double torch_s = 0;
};

struct HarnessOptions {
  double min_time_s = 0.4;  // repetitions per side per round
  int min_samples = 5;
  double sample_target_s = 0.002;  // iterations per sample are calibrated to about this
};

// One round of alternating samples; returns the two medians.
Timing time_round(const Prepared& p, const HarnessOptions& opt);

// Fastest sample's seconds per call of fn alone: the machine's reference rates are ceilings,
// reported the STREAM way (best of the repetitions).
double time_best(const std::function<void()>& fn, const HarnessOptions& opt);

double median(std::vector<double> v);

}  // namespace kiln_bench
#endif  // KILN_BENCH_HARNESS_H_
