#ifndef KILN_RUNTIME_INCLUDE_KILN_KILN_H_
#define KILN_RUNTIME_INCLUDE_KILN_KILN_H_
// kiln: tensors, autograd and every op of ops/*.yaml.
#include "kiln/autograd.h"
#include "kiln/dtype.h"
#include "kiln/error.h"
#include "kiln/gen/ops.h"
#include "kiln/gen/tensor_methods_inl.h"
#include "kiln/optim.h"
#include "kiln/random.h"
#include "kiln/scalar.h"
#include "kiln/tensor.h"
#include "kiln/threads.h"
#include "kiln/value.h"
#endif  // KILN_RUNTIME_INCLUDE_KILN_KILN_H_
