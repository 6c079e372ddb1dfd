#pragma once
// kiln: tensors, autograd and every op of ops.yaml.
#include "kiln/autograd.h"
#include "kiln/dtype.h"
#include "kiln/error.h"
#include "kiln/gen/ops.h"
#include "kiln/gen/tensor_methods_inl.h"
#if __has_include("kiln/random.h")
#include "kiln/random.h"
#endif
#include "kiln/scalar.h"
#include "kiln/tensor.h"
#include "kiln/value.h"
