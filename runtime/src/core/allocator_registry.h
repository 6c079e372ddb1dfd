#ifndef KILN_RUNTIME_SRC_CORE_ALLOCATOR_REGISTRY_H_
#define KILN_RUNTIME_SRC_CORE_ALLOCATOR_REGISTRY_H_
// allocator_for with the calling op's name in the error (kiln::empty: ... rather than a helper's name).
#include "kiln/storage.h"

namespace kiln::detail {

Allocator* allocator_for_op(Device d, const char* op);

}  // namespace kiln::detail
#endif  // KILN_RUNTIME_SRC_CORE_ALLOCATOR_REGISTRY_H_
