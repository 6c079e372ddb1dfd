#ifndef KILN_TESTS_SUPPORT_TENSOR_JSON_H_
#define KILN_TESTS_SUPPORT_TENSOR_JSON_H_
// Tensors as the reference files store them: {"dtype", "shape", "data"} with data flat and
// row-major, complex elements as [re, im], non-finite values as "nan" / "inf" / "-inf".
#include <string>
#include <vector>
#include <nlohmann/json.hpp>
#include "kiln/tensor.h"

namespace kiln::testing {

// A CPU tensor of `dtype` from real values (and imaginary parts for complex dtypes).
Tensor host_tensor(IntArrayRef shape, DType dtype, const std::vector<double>& re, const std::vector<double>& im = {});
Tensor tensor_from_json(const nlohmann::json& t, Device device);
// The inverse: any tensor (any layout or device) in the stored form.
nlohmann::json tensor_to_json(const Tensor& t);

struct Tolerance {
  double rtol, atol;
};
Tolerance tolerance_for(DType dtype);

// Empty when `actual` has the expected dtype, shape and values (within the dtype's tolerance,
// NaN equal to NaN); otherwise what differs first.
std::string compare_with_json(const Tensor& actual, const nlohmann::json& expected);
// The same for dtype and shape only (uninitialized results, draws from kiln's generator).
std::string compare_metadata_with_json(const Tensor& actual, const nlohmann::json& expected);

}  // namespace kiln::testing
#endif  // KILN_TESTS_SUPPORT_TENSOR_JSON_H_
