#ifndef KILN_BENCH_TWIN_H_
#define KILN_BENCH_TWIN_H_
// The same random data as a kiln tensor and a libtorch tensor, so both sides compute on
// identical values.
#include <ATen/ATen.h>
#include <kiln/kiln.h>

#include <cstring>
#include <vector>

namespace kiln_bench {

inline at::ScalarType torch_dtype(kiln::DType d) {
  switch (d) {
    case kiln::DType::Float64: return at::kDouble;
    case kiln::DType::Int64: return at::kLong;
    default: return at::kFloat;
  }
}

inline at::Tensor to_torch(const kiln::Tensor& t) {
  kiln::Tensor c = t.contiguous();
  std::vector<int64_t> sizes(c.sizes().begin(), c.sizes().end());
  at::Tensor out = at::empty(sizes, at::TensorOptions().dtype(torch_dtype(c.dtype())));
  std::memcpy(out.data_ptr(), c.data_ptr(), size_t(c.numel()) * kiln::element_size(c.dtype()));
  return out;
}

struct Twin {
  kiln::Tensor k;
  at::Tensor t;
};

inline Twin twin_randn(std::vector<int64_t> sizes, kiln::DType dtype = kiln::DType::Float32) {
  kiln::Tensor k = kiln::randn(sizes, kiln::TensorOptions(dtype));
  return {k, to_torch(k)};
}

// A model's parameters as leaves on both sides, in one order: each add() draws one twin and
// keeps scale * it + shift on each side.
struct TwinParams {
  std::vector<kiln::Tensor> k;
  std::vector<at::Tensor> t;
  void add(const std::vector<int64_t>& sizes, double scale, double shift = 0) {
    Twin w = twin_randn(sizes);
    k.push_back((w.k * scale + shift).detach().requires_grad_());
    t.push_back((w.t * scale + shift).detach().requires_grad_());
  }
};

}  // namespace kiln_bench
#endif  // KILN_BENCH_TWIN_H_
