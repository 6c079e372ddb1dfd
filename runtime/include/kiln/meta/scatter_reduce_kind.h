#ifndef KILN_RUNTIME_INCLUDE_KILN_META_SCATTER_REDUCE_KIND_H_
#define KILN_RUNTIME_INCLUDE_KILN_META_SCATTER_REDUCE_KIND_H_
// How scatter combines a value with what is at its place (scatter's `reduce=`,
// scatter_reduce's `reduce`): decided by the meta step, applied by kiln/common/scatter_rules.h.
#include <cstdint>

namespace kiln::meta {
enum class ScatterReduce : uint8_t { None, Sum, Prod, Mean, Amax, Amin };
}  // namespace kiln::meta
#endif  // KILN_RUNTIME_INCLUDE_KILN_META_SCATTER_REDUCE_KIND_H_
