#ifndef KILN_RUNTIME_INCLUDE_KILN_CORE_H_
#define KILN_RUNTIME_INCLUDE_KILN_CORE_H_
// kiln without the op functions: Tensor with its methods and operators, the factories,
// autograd, random generators, threads and Value. kiln's own sources include this and
// kiln/gen/api/<op>.h for each op function they call (kiln::sum(x), not x.sum()), so that
// adding an op without a method recompiles none of them. Programs include kiln/kiln.h. The
// training frontend (kiln/optim.h, optim/) is a layer above the core and not included here.
#include "kiln/autograd.h"
#include "kiln/dtype.h"
#include "kiln/error.h"
#include "kiln/gen/tensor_methods_inl.h"
#include "kiln/random.h"
#include "kiln/scalar.h"
#include "kiln/tensor.h"
#include "kiln/threads.h"
#include "kiln/value.h"
#endif  // KILN_RUNTIME_INCLUDE_KILN_CORE_H_
