#ifndef KILN_TESTS_SUPPORT_SAMPLE_INPUTS_H_
#define KILN_TESTS_SUPPORT_SAMPLE_INPUTS_H_
// Deterministic random arguments for one sample of an op (gradcheck, and forward runs that
// have no PyTorch reference): tensors drawn uniformly inside their domain.
#include <map>
#include <string>
#include "op_catalog.h"

namespace kiln::testing {

// Named argument values of sample `index`: tensors whose spec gives no dtype take `dtype`,
// bool masks are random bools, integral dtypes get rounded values. Same op, sample and dtype
// always give the same values.
std::map<std::string, Value> sample_args(const OpInfo& op, size_t index, DType dtype, Device device);

// Seed derived from a name and a number (FNV-1a), shared by every random choice of the driver.
uint64_t seed_for(const std::string& name, uint64_t salt);

}  // namespace kiln::testing
#endif  // KILN_TESTS_SUPPORT_SAMPLE_INPUTS_H_
