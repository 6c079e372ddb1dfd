// Gradients of the indexing views: zeros of the input's shape with the gradient written through
// the same view the forward took.
#include "kiln/gen/composite.h"
#include "kiln/gen/api/diagonal_backward.h"
#include "kiln/gen/api/select_backward.h"
#include "kiln/gen/api/slice_backward.h"

namespace kiln::composite {

namespace {
// `region` is a view of a fresh zeros tensor; the gradient must fill it exactly (copy_ would
// silently broadcast a wrong shape).
void write_grad(Tensor region, const Tensor& grad_output, const char* op) {
  KILN_CHECK(region.sizes().equals(grad_output.sizes()), ShapeError, op, "grad_output", "expected shape ",
             region.shape_str(), " (the forward view's), got ", grad_output.shape_str());
  region.copy_(grad_output);
}

// Zeros of the forward input's shape, refusing a negative size under this op's name.
Tensor zeros_of(IntArrayRef input_sizes, const Tensor& grad_output, const char* op) {
  for (int64_t s : input_sizes)
    KILN_CHECK(s >= 0, ValueError, op, "input_sizes", "negative dimension ", s, " in ", shape_str(input_sizes));
  return kiln::zeros(input_sizes, grad_output.options());
}
}  // namespace

Tensor slice_backward(const Tensor& grad_output, IntArrayRef input_sizes, int64_t dim, int64_t start, int64_t end,
                      int64_t step) {
  Tensor grad_input = zeros_of(input_sizes, grad_output, "slice_backward");
  write_grad(composite::slice(grad_input, dim, start, end, step), grad_output, "slice_backward");
  return grad_input;
}

Tensor select_backward(const Tensor& grad_output, IntArrayRef input_sizes, int64_t dim, int64_t index) {
  Tensor grad_input = zeros_of(input_sizes, grad_output, "select_backward");
  write_grad(composite::select(grad_input, dim, index), grad_output, "select_backward");
  return grad_input;
}

Tensor diagonal_backward(const Tensor& grad_output, IntArrayRef input_sizes, int64_t offset, int64_t dim1,
                         int64_t dim2) {
  Tensor grad_input = zeros_of(input_sizes, grad_output, "diagonal_backward");
  write_grad(composite::diagonal(grad_input, offset, dim1, dim2), grad_output, "diagonal_backward");
  return grad_input;
}

}  // namespace kiln::composite
