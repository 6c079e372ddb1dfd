// Pooling ops over the 2-d kernels (ops/pooling.yaml): max_pool2d is max_pool2d_with_indices'
// values; the 1-d pools run the 2-d kernels on [.., C, 1, W] (as PyTorch's); adaptive_avg_pool2d
// is _adaptive_avg_pool2d (a mean for 1 x 1 on CUDA); max_unpool2d scatters each value to its index.
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/meta/pooling.h"
#include "kiln/gen/api/_adaptive_avg_pool2d.h"
#include "kiln/gen/api/adaptive_max_pool2d.h"
#include "kiln/gen/api/amax.h"
#include "kiln/gen/api/amin.h"
#include "kiln/gen/api/avg_pool2d.h"
#include "kiln/gen/api/mean.h"
#include "kiln/gen/api/max_pool1d_with_indices.h"
#include "kiln/gen/api/max_pool2d_with_indices.h"
#include "kiln/gen/api/scatter.h"

namespace kiln::composite {
namespace {

// A 1-d pool's int[1] argument: one int (stride may be omitted: then the kernel size).
int64_t one_int(const char* op, const char* name, IntArrayRef v, int64_t if_empty) {
  if (v.empty() && if_empty >= 0) return if_empty;
  KILN_CHECK(v.size() == 1, ValueError, op, name, op, "() argument '", name, "' should contain one int (got ", v.size(),
             ")");
  return v[0];
}

void check_1d_input(const char* op, const Tensor& self) {
  KILN_CHECK(self.dim() == 2 || self.dim() == 3, ShapeError, op, "self", "Expected 2 to 3 dimensions, but got ",
             self.dim(), "-dimensional tensor for argument #1 'self' (while checking arguments for ", op, ")");
}

}  // namespace

Tensor max_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  return std::get<0>(kiln::max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode));
}

std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                                                   IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  const char* op = "max_pool1d";
  KILN_CHECK(kernel_size.size() == 1, ValueError, op, "kernel_size",
             "max_pool1d() kernel_size must be an int, list of ints or tuple of ints of size 1 but got size ",
             kernel_size.size());
  KILN_CHECK(stride.empty() || stride.size() == 1, ValueError, op, "stride",
             "max_pool1d() stride must be None, an int, list of ints, or tuple of ints of size 1 but got size ",
             stride.size());
  KILN_CHECK(padding.size() == 1, ValueError, op, "padding",
             "max_pool1d() padding must be an int, list of ints, or tuple of ints of size 1 but got size ",
             padding.size());
  KILN_CHECK(dilation.size() == 1, ValueError, op, "dilation",
             "max_pool1d() dilation must be an int, list of ints or tuple of ints of size 1 but got size ",
             dilation.size());
  KILN_CHECK(self.dim() == 2 || self.dim() == 3, ShapeError, op, "self",
             "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got:",
             shape_str(self.sizes()));
  const int64_t k = kernel_size[0], s = stride.empty() ? k : stride[0];
  auto [out, idx] =
      kiln::max_pool2d_with_indices(self.unsqueeze(-2), {1, k}, {1, s}, {0, padding[0]}, {1, dilation[0]}, ceil_mode);
  return {out.squeeze(-2), idx.squeeze(-2)};  // with one row, the flat index is the column
}

Tensor max_pool1d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  return std::get<0>(kiln::max_pool1d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode));
}

Tensor avg_pool1d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                  bool count_include_pad) {
  const char* op = "avg_pool1d";
  const int64_t k = one_int(op, "kernel_size", kernel_size, -1);
  const int64_t s = one_int(op, "stride", stride, k);
  const int64_t p = one_int(op, "padding", padding, -1);
  check_1d_input(op, self);
  return kiln::avg_pool2d(self.unsqueeze(-2), {1, k}, {1, s}, {0, p}, ceil_mode, count_include_pad, std::nullopt)
      .squeeze(-2);
}

Tensor adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size) {
  // global average pooling on CUDA is a mean over the plane (a reduction kernel), as PyTorch's; the
  // CPU kernel sums each plane as one vector run instead (kiln's mean over 49-element rows is slow)
  if (!self.device().is_cpu() && output_size.size() == 2 && output_size[0] == 1 && output_size[1] == 1 &&
      (self.dim() == 3 || self.dim() == 4)) {
    meta::adaptive_pool2d("adaptive_avg_pool2d", self, output_size);  // the same checks and messages
    const int64_t plane[2] = {-2, -1};
    return kiln::mean(self, IntArrayRef(plane, 2), /*keepdim=*/true);
  }
  return kiln::_adaptive_avg_pool2d(self, output_size);
}

Tensor adaptive_avg_pool1d(const Tensor& self, IntArrayRef output_size) {
  const char* op = "adaptive_avg_pool1d";
  const int64_t o = one_int(op, "output_size", output_size, -1);
  check_1d_input(op, self);
  return kiln::_adaptive_avg_pool2d(self.unsqueeze(-2), {1, o}).squeeze(-2);
}

std::tuple<Tensor, Tensor> adaptive_max_pool1d(const Tensor& self, IntArrayRef output_size) {
  const char* op = "adaptive_max_pool1d";
  const int64_t o = one_int(op, "output_size", output_size, -1);
  check_1d_input(op, self);
  auto [out, idx] = kiln::adaptive_max_pool2d(self.unsqueeze(-2), {1, o});
  return {out.squeeze(-2), idx.squeeze(-2)};
}

Tensor max_unpool2d(const Tensor& self, const Tensor& indices, IntArrayRef output_size) {
  const char* op = "max_unpool2d";
  KILN_CHECK(output_size.size() == 2, ValueError, op, "output_size",
             "There should be exactly two elements (height, width) in output_size, but got ", output_size.size(),
             " elements.");
  KILN_CHECK(self.dim() == 3 || self.dim() == 4, ShapeError, op, "self",
             "Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with ", self.dim(),
             " dimensions.");
  KILN_CHECK(indices.dtype() == DType::Int64, DTypeError, op, "indices",
             "elements in indices should be type int64 but got: ", dtype_name(indices.dtype()));
  KILN_CHECK(self.sizes().equals(indices.sizes()), ShapeError, op, "indices",
             "Expected shape of indices to be same as that of the input tensor (", shape_str(self.sizes()),
             ") but got indices tensor with shape: ", shape_str(indices.sizes()));
  for (int64_t d = self.dim() - 3; d < self.dim(); ++d)
    KILN_CHECK(self.size(d) > 0, ShapeError, op, "self",
               "max_unpooling2d(): Expected input to have non-zero size for "
               "non-batch dimensions, but got ",
               shape_str(self.sizes()), " with dimension ", d, " being empty.");
  const int64_t oh = output_size[0], ow = output_size[1], plane = oh * ow;
  DimVector sizes = self.sizes();
  sizes[size_t(self.dim() - 2)] = oh;
  sizes[size_t(self.dim() - 1)] = ow;
  if (self.numel() == 0) return kiln::zeros(sizes, TensorOptions(self.dtype(), self.device()));
  // every index inside the plane (one read of the extremes, as PyTorch checks each)
  const int64_t lo = kiln::amin(indices).item<int64_t>(), hi = kiln::amax(indices).item<int64_t>();
  KILN_CHECK(lo >= 0 && hi < plane, IndexError, op, "indices", "Found an invalid max index: ", lo < 0 ? lo : hi,
             " (output volumes are of size ", oh, "x", ow);
  const Tensor flat_self = self.flatten(self.dim() - 2, -1), flat_idx = indices.flatten(self.dim() - 2, -1);
  DimVector flat_sizes = flat_self.sizes();
  flat_sizes.back() = plane;
  const Tensor zeros = kiln::zeros(flat_sizes, TensorOptions(self.dtype(), self.device()));
  return kiln::scatter(zeros, -1, flat_idx, flat_self).view(sizes);
}

}  // namespace kiln::composite
