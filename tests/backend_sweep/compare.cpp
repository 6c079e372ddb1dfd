// The comparison: the device suite's close() (tests/cuda/device_compare.h) with the tolerances
// the per-op tests hold both backends to (tolerance_for, tests/support/tensor_json.h).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include "cuda/device_compare.h"
#include "sweep.h"
#include "tensor_json.h"

namespace kiln::sweep {

namespace {
// A complex tensor's (re, im) pairs as a real tensor of one more dim; others unchanged.
Tensor real_view(const Tensor& dense) {
  if (!is_complex(dense.dtype())) return dense;
  std::vector<int64_t> sizes = dense.sizes().vec(), strides = dense.strides().vec();
  for (int64_t& s : strides) s *= 2;
  sizes.push_back(2);
  strides.push_back(1);
  return dense.as_strided_view(sizes, strides, dense.storage_offset() * 2, to_real(dense.dtype()));
}

std::string num(double v) {
  std::ostringstream s;
  s.precision(9);
  s << v;
  return s.str();
}

double largest_finite_magnitude(const Tensor& t) {
  return t.numel() ? t.nan_to_num(0.0, 0.0, 0.0).abs().max().item<double>() : 0.0;
}

std::string compare_one(const Tensor& got, const Tensor& want, Device device, bool values, bool larger) {
  if (got.device() != device) return "on " + got.device().str() + ", expected " + device.str();
  if (got.dtype() != want.dtype())
    return std::string("dtype ") + dtype_name(got.dtype()) + ", expected " + dtype_name(want.dtype());
  if (!got.sizes().equals(want.sizes())) return "shape " + got.shape_str() + ", expected " + want.shape_str();
  if (!values) return "";
  const Tensor g = got.cpu().contiguous(), w = want.contiguous();
  if (is_integral(want.dtype(), true)) {  // exactly, and in int64: doubles would round large values
    const size_t bytes = size_t(g.numel()) * g.element_size();  // both dense
    if (bytes == 0 || std::memcmp(g.data_ptr(), w.data_ptr(), bytes) == 0) return "";
    const std::vector<int64_t> x = g.to_vector<int64_t>(), y = w.to_vector<int64_t>();
    for (size_t i = 0; i < x.size(); ++i)
      if (x[i] != y[i])
        return "element " + std::to_string(i) + ": " + std::to_string(x[i]) + ", expected " + std::to_string(y[i]);
    return "";
  }
  const Tensor gr = real_view(g), wr = real_view(w);
  const testing::Tolerance tol = testing::tolerance_for(want.dtype());
  double atol = tol.atol;
  if (larger) atol = std::max(atol, tol.rtol * largest_finite_magnitude(wr));
  if (testing::close(gr, wr, tol.rtol, atol)) return "";
  // what to report: the largest difference (a NaN or infinity on one side only counts as one)
  const std::vector<double> x = gr.to_vector<double>(), y = wr.to_vector<double>();
  size_t worst = 0;
  double worst_diff = -1;
  for (size_t i = 0; i < x.size(); ++i) {
    const double d = x[i] == y[i] || (std::isnan(x[i]) && std::isnan(y[i])) ? 0 : std::fabs(x[i] - y[i]);
    if (!(d <= worst_diff)) worst = i, worst_diff = std::isnan(d) ? HUGE_VAL : d;
  }
  const size_t element = is_complex(want.dtype()) ? worst / 2 : worst;
  return "element " + std::to_string(element) + ": " + num(x[worst]) + ", expected " + num(y[worst]) + " (rtol " +
         num(tol.rtol) + ", atol " + num(atol) + ")";
}
}  // namespace

std::string compare(const std::vector<Tensor>& got, const std::vector<Tensor>& want, Device device, bool values,
                    bool larger) {
  if (got.size() != want.size())
    return "returned " + std::to_string(got.size()) + " tensors, expected " + std::to_string(want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    std::string d = compare_one(got[i], want[i], device, values, larger);
    if (!d.empty()) return got.size() > 1 ? "output " + std::to_string(i) + ": " + d : d;
  }
  return "";
}

}  // namespace kiln::sweep
