#ifndef KILN_KERNELS_COMMON_WELFORD_H_
#define KILN_KERNELS_COMMON_WELFORD_H_
// Running mean and sum of squared deviations (Welford; partial results merged as Chan et al.),
// shared by the CPU and CUDA variance kernels. Unlike a mean pass followed by a deviation pass,
// a constant input gives exactly 0 (the mean is the value itself from the first element on),
// whatever the order elements are combined in — as PyTorch's var.
#include "kiln/complex.h"
#include "kiln/macros.h"

namespace kiln::welford {

// M: the mean's type (double, or complex<double> for complex inputs); n counts elements.
template <typename M>
struct State {
  M mean{};
  double m2 = 0;
  double n = 0;
};

KILN_HOST_DEVICE inline double abs2(double x) { return x * x; }
KILN_HOST_DEVICE inline double abs2(complex<double> z) { return z.re * z.re + z.im * z.im; }
KILN_HOST_DEVICE inline double scale(double x, double s) { return x * s; }
KILN_HOST_DEVICE inline complex<double> scale(complex<double> z, double s) { return {z.re * s, z.im * s}; }

// Finite without <cmath> on the device: x - x is 0 for finite x, NaN for infinities and NaN.
KILN_HOST_DEVICE inline bool finite(double x) { return x - x == 0.0; }
KILN_HOST_DEVICE inline bool finite(complex<double> z) { return finite(z.re) && finite(z.im); }

// One element. An infinity or NaN makes m2 NaN from the start, so the variance is NaN whatever
// the order of combination (PyTorch's result), never an order-dependent inf.
template <typename M>
KILN_HOST_DEVICE inline State<M> of(M x) {
  return {x, finite(x) ? 0.0 : __builtin_nan(""), 1.0};
}

// a then b (a holds the earlier elements); either may be empty.
template <typename M>
KILN_HOST_DEVICE inline State<M> combine(const State<M>& a, const State<M>& b) {
  if (b.n == 0) return a;
  if (a.n == 0) return b;
  const double n = a.n + b.n;
  const M delta = b.mean - a.mean;
  return {a.mean + scale(delta, b.n / n), a.m2 + b.m2 + abs2(delta) * (a.n * b.n / n), n};
}

}  // namespace kiln::welford
#endif  // KILN_KERNELS_COMMON_WELFORD_H_
