#ifndef KILN_KERNELS_INCLUDE_KILN_COMMON_SCATTER_REDUCE_KIND_H_
#define KILN_KERNELS_INCLUDE_KILN_COMMON_SCATTER_REDUCE_KIND_H_
// How scatter combines a value with what is at its place (scatter's `reduce=`,
// scatter_reduce's `reduce`): decided by the meta step, applied by kiln/common/scatter_rules.h.
// Here rather than in kiln/meta so that scatter_rules.h needs no meta header; the plan
// (kiln/meta/indexing.h) holds one.
#include <cstdint>

namespace kiln::meta {
enum class ScatterReduce : uint8_t { None, Sum, Prod, Mean, Amax, Amin };
}  // namespace kiln::meta
#endif  // KILN_KERNELS_INCLUDE_KILN_COMMON_SCATTER_REDUCE_KIND_H_
