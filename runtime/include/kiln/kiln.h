#ifndef KILN_RUNTIME_INCLUDE_KILN_KILN_H_
#define KILN_RUNTIME_INCLUDE_KILN_KILN_H_
// kiln: tensors, autograd and every op of ops/*.yaml.
#include "kiln/core.h"
#include "kiln/determinism.h"
#include "kiln/indexing.h"
#include "kiln/gen/ops.h"
#endif  // KILN_RUNTIME_INCLUDE_KILN_KILN_H_
