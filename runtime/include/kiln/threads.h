#ifndef KILN_RUNTIME_INCLUDE_KILN_THREADS_H_
#define KILN_RUNTIME_INCLUDE_KILN_THREADS_H_
// The size of kiln's one thread pool (OpenMP's), which OpenBLAS shares: Debian's OpenMP build
// of OpenBLAS follows omp_get_max_threads() on every call, so one setting governs both.
namespace kiln {

void set_num_threads(int n);  // n >= 1; applies to the calling thread's later parallel ops
int get_num_threads();

}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_THREADS_H_
