#include "harness.h"

#include <algorithm>
#include <chrono>

namespace kiln_bench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_for(const std::function<void()>& fn, long iters) {
  auto t0 = Clock::now();
  for (long i = 0; i < iters; ++i) fn();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Iterations per sample so that one sample lasts about target seconds (at least one).
long calibrate(const std::function<void()>& fn, double target) {
  long iters = 1;
  for (;;) {
    double t = seconds_for(fn, iters);
    if (t >= target || iters >= (1L << 24)) {
      if (t <= 0) return iters;
      return std::max(1L, long(double(iters) * target / t));
    }
    iters *= (t < target / 16) ? 8 : 2;
  }
}

}  // namespace

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

Timing time_round(const Prepared& p, const HarnessOptions& opt) {
  // warm-up: caches, allocator pools, thread pools, lazy initialisation on both sides
  long ik = calibrate(p.kiln, opt.sample_target_s);
  long it = calibrate(p.torch, opt.sample_target_s);
  std::vector<double> ks, ts;
  double k_total = 0, t_total = 0;
  while (k_total < opt.min_time_s || t_total < opt.min_time_s || int(ks.size()) < opt.min_samples) {
    double a = seconds_for(p.kiln, ik);
    double b = seconds_for(p.torch, it);
    k_total += a;
    t_total += b;
    ks.push_back(a / double(ik));
    ts.push_back(b / double(it));
  }
  return {median(ks), median(ts)};
}

double time_best(const std::function<void()>& fn, const HarnessOptions& opt) {
  long iters = calibrate(fn, opt.sample_target_s);
  double best = 1e300, total = 0;
  for (int n = 0; total < opt.min_time_s || n < opt.min_samples; ++n) {
    double t = seconds_for(fn, iters);
    total += t;
    best = std::min(best, t / double(iters));
  }
  return best;
}

}  // namespace kiln_bench
