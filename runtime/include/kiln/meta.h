#ifndef KILN_RUNTIME_INCLUDE_KILN_META_H_
#define KILN_RUNTIME_INCLUDE_KILN_META_H_
// The meta steps of structured kernel ops, one header per family: the device-independent part
// of a kernel op (argument checks, dims, dtypes, result shapes) that every backend shares.
#include "kiln/meta/along_dim.h"
#include "kiln/meta/amp.h"
#include "kiln/meta/attention.h"
#include "kiln/meta/convolution.h"
#include "kiln/meta/factories.h"
#include "kiln/meta/foreach.h"
#include "kiln/meta/indexing.h"
#include "kiln/meta/masking.h"
#include "kiln/meta/inputs.h"
#include "kiln/meta/matmul.h"
#include "kiln/meta/nll_loss.h"
#include "kiln/meta/normalization.h"
#include "kiln/meta/pooling.h"
#include "kiln/meta/reduction.h"
#include "kiln/meta/searching.h"
#include "kiln/meta/shape_build.h"
#include "kiln/meta/sorting.h"
#endif  // KILN_RUNTIME_INCLUDE_KILN_META_H_
