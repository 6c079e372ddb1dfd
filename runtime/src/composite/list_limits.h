#ifndef KILN_RUNTIME_SRC_COMPOSITE_LIST_LIMITS_H_
#define KILN_RUNTIME_SRC_COMPOSITE_LIST_LIMITS_H_
// Ops that return one tensor per piece (split, chunk, unbind, tensor_split) refuse a count no
// memory holds up front, with a typed error naming the argument: a dim of 2^40 (an empty
// tensor's, or an expanded one's) or a split_size of 1 over it would otherwise build views
// until memory runs out, which is what PyTorch does (the fuzzer's findings).
#include <cstdint>
#include "kiln/error.h"

namespace kiln::composite {

constexpr int64_t kMaxListLength = int64_t(1) << 24;

inline void check_list_length(const char* op, const char* arg, int64_t n) {
  KILN_CHECK(n <= kMaxListLength, ValueError, op, arg, op, " would return ", n, " tensors; at most ",
             kMaxListLength, " fit in a returned list");
}

}  // namespace kiln::composite
#endif  // KILN_RUNTIME_SRC_COMPOSITE_LIST_LIMITS_H_
