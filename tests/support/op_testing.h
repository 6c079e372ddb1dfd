#ifndef KILN_TESTS_SUPPORT_OP_TESTING_H_
#define KILN_TESTS_SUPPORT_OP_TESTING_H_
// The per-op test driver that every generated op test calls.
//   check_forward:   runs the op on the inputs stored in tests/reference/<op>.json and compares
//                    dtype, shape and values with PyTorch's results, one cell per dtype.
//   check_gradients: finite-difference gradcheck (and gradgradcheck) in float64 on the samples
//                    of generated/op_samples.json.
//   check_variants:  out= and in-place against the functional result, and inputs in other
//                    layouts (strided, transposed, expanded) against their contiguous copies.
// Each cell's outcome is appended as a JSON line to $KILN_COVERAGE_RESULTS for the coverage report.
#include <vector>
#include "kiln/dtype.h"

namespace kiln::testing {

struct OpTestSpec {
  const char* op;              // full name with overload, "add.Tensor"
  const char* backend;         // "cpu" or "cuda"
  std::vector<DType> dtypes;   // dtypes declared for this backend
  bool gradgrad = true;        // also check second-order gradients
};

void check_forward(const OpTestSpec& spec);
void check_gradients(const OpTestSpec& spec);
void check_variants(const OpTestSpec& spec);

}  // namespace kiln::testing
#endif  // KILN_TESTS_SUPPORT_OP_TESTING_H_
