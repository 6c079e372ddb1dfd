#ifndef KILN_KERNELS_COMMON_MATH_SIMD_H_
#define KILN_KERNELS_COMMON_MATH_SIMD_H_
// Vector variants of the C library's float and double functions, from glibc's libmvec.
// glibc declares them only under -ffast-math, whose NaN/Inf shortcuts kiln must not take;
// redeclaring the functions with GCC's `simd` attribute lets `omp simd` loops call
// _ZGV{b,c,d,e}N*v_<fn> (SSE, AVX, AVX2, AVX-512) instead of the scalar function per element.
// libmvec's functions stay within glibc's documented ulp bounds (at most a few ulp), as
// PyTorch's SLEEF paths do. Host x86-64 with glibc >= 2.35 only; elsewhere nothing changes.
#include <cmath>

#if defined(__x86_64__) && defined(__GLIBC__) && !defined(__CUDACC__) && !defined(__clang__) && \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
#define KILN_HAVE_LIBMVEC 1
#define KILN_SIMD_FN(name)                                                   \
  float name##f(float) noexcept __attribute__((simd("notinbranch")));        \
  double name(double) noexcept __attribute__((simd("notinbranch")));
#define KILN_SIMD_FN2(name)                                                  \
  float name##f(float, float) noexcept __attribute__((simd("notinbranch"))); \
  double name(double, double) noexcept __attribute__((simd("notinbranch")));
extern "C" {
KILN_SIMD_FN(exp)
KILN_SIMD_FN(exp2)
KILN_SIMD_FN(expm1)
KILN_SIMD_FN(log)
KILN_SIMD_FN(log2)
KILN_SIMD_FN(log10)
KILN_SIMD_FN(log1p)
KILN_SIMD_FN(sin)
KILN_SIMD_FN(cos)
KILN_SIMD_FN(tan)
KILN_SIMD_FN(asin)
KILN_SIMD_FN(acos)
KILN_SIMD_FN(atan)
KILN_SIMD_FN(sinh)
KILN_SIMD_FN(cosh)
KILN_SIMD_FN(tanh)
KILN_SIMD_FN(asinh)
KILN_SIMD_FN(acosh)
KILN_SIMD_FN(atanh)
KILN_SIMD_FN(erf)
KILN_SIMD_FN(erfc)
KILN_SIMD_FN2(atan2)
KILN_SIMD_FN2(hypot)
KILN_SIMD_FN2(pow)
}
#undef KILN_SIMD_FN
#undef KILN_SIMD_FN2
#endif
#endif  // KILN_KERNELS_COMMON_MATH_SIMD_H_
