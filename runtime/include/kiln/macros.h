#ifndef KILN_RUNTIME_INCLUDE_KILN_MACROS_H_
#define KILN_RUNTIME_INCLUDE_KILN_MACROS_H_
// Portability macros shared by host and device code.
#if defined(__CUDACC__)
#define KILN_HOST_DEVICE __host__ __device__
#define KILN_DEVICE __device__
#else
#define KILN_HOST_DEVICE
#define KILN_DEVICE
#endif
#define KILN_INLINE inline __attribute__((always_inline))
#define KILN_LIKELY(x) __builtin_expect(!!(x), 1)
#define KILN_UNLIKELY(x) __builtin_expect(!!(x), 0)
#endif  // KILN_RUNTIME_INCLUDE_KILN_MACROS_H_
