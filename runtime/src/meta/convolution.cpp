// Convolution's meta steps (see kiln/meta/convolution.h), with PyTorch's messages.
#include "kiln/meta/convolution.h"

#include <string>

namespace kiln::meta {
namespace {

int64_t product(const DimVector& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// "(5 x 5)", as PyTorch prints per-channel sizes
std::string per_channel(const DimVector& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? " x " : "") + std::to_string(v[i]);
  return s + ")";
}

void check_same(const char* op, const char* name, const TensorBase& t, const TensorBase& input) {
  KILN_CHECK(t.dtype() == input.dtype(), DTypeError, op, name, "Input type (", dtype_name(input.dtype()), ") and ",
             name, " type (", dtype_name(t.dtype()), ") should be the same");
  KILN_CHECK(t.device() == input.device(), DeviceError, op, name, "Input on ", input.device().str(), " and ", name,
             " on ", t.device().str(), " should be on the same device");
}

struct Geometry {
  DimVector stride, padding, dilation, output_padding;
};

Geometry geometry(const char* op, int64_t dims, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                  IntArrayRef output_padding) {
  Geometry g{expand_conv_param(op, "stride", stride, dims), expand_conv_param(op, "padding", padding, dims),
             expand_conv_param(op, "dilation", dilation, dims),
             expand_conv_param(op, "output_padding", output_padding, dims)};
  for (int64_t d = 0; d < dims; ++d) {
    KILN_CHECK(g.stride[d] > 0, ValueError, op, "stride", "non-positive stride is not supported");
    KILN_CHECK(g.padding[d] >= 0, ValueError, op, "padding", "negative padding is not supported");
    KILN_CHECK(g.dilation[d] > 0, ValueError, op, "dilation", "dilation should be greater than zero");
    KILN_CHECK(g.output_padding[d] >= 0, ValueError, op, "output_padding", "negative output_padding is not supported");
  }
  return g;
}

// The sizes of the windows' grid over an image (the small side of a convolution).
DimVector window_grid(const char* op, const char* arg, const DimVector& image, const DimVector& kernel,
                      const Geometry& g) {
  DimVector padded, effective, out;
  bool fits = true, positive = true;
  for (size_t d = 0; d < image.size(); ++d) {
    padded.push_back(image[d] + 2 * g.padding[d]);
    effective.push_back(g.dilation[d] * (kernel[d] - 1) + 1);
    fits = fits && effective[d] <= padded[d];
    out.push_back(fits ? (padded[d] - effective[d]) / g.stride[d] + 1 : 0);
    positive = positive && out[d] > 0;
  }
  KILN_CHECK(fits, ShapeError, op, arg, "Calculated padded input size per channel: ", per_channel(padded),
             ". Kernel size: ", per_channel(effective), ". Kernel size can't be greater than actual input size");
  KILN_CHECK(positive, ShapeError, op, arg, "Given input size per channel: ", per_channel(image),
             ". Calculated output size per channel: ", per_channel(out), ". Output size is too small");
  return out;
}

ConvPlan plan_for(int64_t dims, int64_t batch, int64_t groups, bool transposed, const DimVector& kernel,
                  const Geometry& g, DType dtype) {
  ConvPlan p;
  p.dims = dims;
  p.batch = batch;
  p.groups = groups;
  p.transposed = transposed;
  p.kernel = kernel;
  p.stride = g.stride;
  p.padding = g.padding;
  p.dilation = g.dilation;
  p.dtype = dtype;
  return p;
}

// Checks the weight against input and fills the plan's two sides (all but sizes).
ConvPlan conv_plan(const char* op, const char* input_name, const TensorBase& input, IntArrayRef weight_sizes,
                   IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                   IntArrayRef output_padding, int64_t groups) {
  const int64_t wdim = int64_t(weight_sizes.size());
  KILN_CHECK(wdim >= 3 && wdim <= 5, ValueError, op, "weight",
             "expected a 3-, 4- or 5-dimensional weight (1 to 3 spatial dims), but got weight of size ",
             shape_str(weight_sizes));
  const int64_t dims = wdim - 2;
  KILN_CHECK(input.dim() == wdim, ShapeError, op, input_name, "Expected ", wdim, "-dimensional input for ", wdim,
             "-dimensional weight ", shape_str(weight_sizes), ", but got ", input.dim(), "-dimensional input of size ",
             shape_str(input.sizes()), " instead");
  KILN_CHECK(groups > 0, ValueError, op, "groups", "non-positive groups is not supported");
  const Geometry g = geometry(op, dims, stride, padding, dilation, output_padding);
  DimVector kernel(IntArrayRef(weight_sizes.data() + 2, size_t(dims)));
  for (int64_t k : kernel)
    KILN_CHECK(k > 0, ValueError, op, "weight", "expected a kernel of positive sizes, got weight of size ",
               shape_str(weight_sizes));
  ConvPlan p = plan_for(dims, input.size(0), groups, transposed, kernel, g, input.dtype());
  DimVector in_spatial(IntArrayRef(input.sizes().data() + 2, size_t(dims)));
  const int64_t in_channels = input.size(1);
  if (!transposed) {
    KILN_CHECK(weight_sizes[0] % groups == 0, ShapeError, op, "weight", "Given groups=", groups,
               ", expected weight to be divisible by ", groups, " at dimension 0, but got weight of size ",
               shape_str(weight_sizes), " instead");
    KILN_CHECK(in_channels == weight_sizes[1] * groups, ShapeError, op, input_name, "Given groups=", groups,
               ", weight of size ", shape_str(weight_sizes), ", expected input", shape_str(input.sizes()), " to have ",
               weight_sizes[1] * groups, " channels, but got ", in_channels, " channels instead");
    p.image_channels = in_channels;
    p.small_channels = weight_sizes[0];
    p.image_sizes = in_spatial;
    p.small_sizes = window_grid(op, input_name, in_spatial, kernel, g);
  } else {
    KILN_CHECK(in_channels == weight_sizes[0], ShapeError, op, input_name, "Given transposed=1, weight of size ",
               shape_str(weight_sizes), ", expected input", shape_str(input.sizes()), " to have ", weight_sizes[0],
               " channels, but got ", in_channels, " channels instead");
    KILN_CHECK(weight_sizes[0] % groups == 0, ShapeError, op, "weight", "Given groups=", groups,
               ", expected weight to be divisible by ", groups, " at dimension 0, but got weight of size ",
               shape_str(weight_sizes), " instead");
    DimVector out;
    for (int64_t d = 0; d < dims; ++d) {
      KILN_CHECK(g.output_padding[d] < g.stride[d] || g.output_padding[d] < g.dilation[d], ValueError, op,
                 "output_padding",
                 "output padding must be smaller than either stride or dilation, but got output_padding=",
                 shape_str(g.output_padding), ", stride=", shape_str(g.stride), ", dilation=", shape_str(g.dilation));
      out.push_back((in_spatial[d] - 1) * g.stride[d] - 2 * g.padding[d] + g.dilation[d] * (kernel[d] - 1) +
                    g.output_padding[d] + 1);
    }
    bool positive = true;
    for (int64_t o : out) positive = positive && o > 0;
    KILN_CHECK(positive, ShapeError, op, input_name, "Given input size per channel: ", per_channel(in_spatial),
               ". Calculated output size per channel: ", per_channel(out), ". Output size is too small");
    p.image_channels = weight_sizes[1] * groups;
    p.small_channels = in_channels;
    p.image_sizes = out;
    p.small_sizes = in_spatial;
  }
  return p;
}

}  // namespace

int64_t ConvPlan::kernel_numel() const { return product(kernel); }
int64_t ConvPlan::image_numel() const { return product(image_sizes); }
int64_t ConvPlan::small_numel() const { return product(small_sizes); }

DimVector expand_conv_param(const char* op, const char* name, IntArrayRef values, int64_t dims) {
  if (values.size() == 1) return DimVector(size_t(dims), values[0]);
  KILN_CHECK(int64_t(values.size()) == dims, ValueError, op, name, "expected ", name,
             " to be a single integer value or a list of ", dims,
             " values to match the convolution dimensions, but got ", name, "=", shape_str(values));
  return DimVector(values);
}

ConvPlan convolution(const char* op, const TensorBase& input, const TensorBase& weight, const TensorBase& bias,
                     IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                     IntArrayRef output_padding, int64_t groups) {
  check_same(op, "weight", weight, input);
  ConvPlan p =
      conv_plan(op, "input", input, weight.sizes(), stride, padding, dilation, transposed, output_padding, groups);
  const int64_t out_channels = transposed ? p.image_channels : p.small_channels;
  if (bias.defined()) {
    check_same(op, "bias", bias, input);
    KILN_CHECK(bias.dim() == 1 && bias.size(0) == out_channels, ShapeError, op, "bias", "Given weight of size ",
               shape_str(weight.sizes()), ", expected bias to be 1-dimensional with ", out_channels,
               " elements, but got bias of size ", shape_str(bias.sizes()), " instead");
  }
  p.sizes = {p.batch, out_channels};
  for (int64_t s : transposed ? p.image_sizes : p.small_sizes) p.sizes.push_back(s);
  return p;
}

ConvPlan convolution_backward_weight(const char* op, const TensorBase& grad_output, const TensorBase& input,
                                     IntArrayRef weight_size, IntArrayRef stride, IntArrayRef padding,
                                     IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                                     int64_t groups) {
  check_same(op, "grad_output", grad_output, input);
  ConvPlan p =
      conv_plan(op, "input", input, weight_size, stride, padding, dilation, transposed, output_padding, groups);
  DimVector expected{p.batch, transposed ? p.image_channels : p.small_channels};
  for (int64_t s : transposed ? p.image_sizes : p.small_sizes) expected.push_back(s);
  KILN_CHECK(grad_output.sizes().equals(expected.ref()), ShapeError, op, "grad_output", "expected grad_output of size ",
             shape_str(expected.ref()), ", got ", shape_str(grad_output.sizes()));
  p.sizes = DimVector(weight_size);
  return p;
}

namespace {

DimVector fold_params(const char* op, const char* name, IntArrayRef v, bool positive) {
  KILN_CHECK(v.size() == 2, ValueError, op, name, "It is expected ", name, " equals to 2, but got size ", v.size());
  for (int64_t x : v) {
    if (positive)
      KILN_CHECK(x > 0, ValueError, op, name, "expected ", name, " to be greater than zero, but got ", name, "=",
                 shape_str(v));
    else
      KILN_CHECK(x >= 0, ValueError, op, name, "expected ", name, " to be non-negative, but got ", name, "=",
                 shape_str(v));
  }
  return DimVector(v);
}

ConvPlan fold_plan(const char* op, int64_t batch, int64_t channels, const DimVector& image, IntArrayRef kernel_size,
                   IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride, DType dtype) {
  const Geometry g{fold_params(op, "stride", stride, true), fold_params(op, "padding", padding, false),
                   fold_params(op, "dilation", dilation, true), DimVector{0, 0}};
  const DimVector kernel = fold_params(op, "kernel_size", kernel_size, true);
  ConvPlan p = plan_for(2, batch, 1, false, kernel, g, dtype);
  p.image_channels = channels;
  p.small_channels = 0;
  p.image_sizes = image;
  p.small_sizes = window_grid(op, "self", image, kernel, g);
  return p;
}

}  // namespace

ConvPlan im2col(const char* op, const TensorBase& self, IntArrayRef kernel_size, IntArrayRef dilation,
                IntArrayRef padding, IntArrayRef stride) {
  const bool batched = self.dim() == 4;
  KILN_CHECK((self.dim() == 3 || batched) && self.numel() > 0 && self.size(-1) > 0 && self.size(-2) > 0, ShapeError, op,
             "self",
             "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
             "dimensions for input, but got: ",
             shape_str(self.sizes()));
  const int64_t batch = batched ? self.size(0) : 1;
  ConvPlan p = fold_plan(op, batch, self.size(-3), DimVector{self.size(-2), self.size(-1)}, kernel_size, dilation,
                         padding, stride, self.dtype());
  if (batched) p.sizes.push_back(batch);
  p.sizes.push_back(p.col_rows());
  p.sizes.push_back(p.small_numel());
  return p;
}

ConvPlan col2im(const char* op, const TensorBase& self, IntArrayRef output_size, IntArrayRef kernel_size,
                IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride) {
  const bool batched = self.dim() == 3;
  KILN_CHECK((self.dim() == 2 || batched) && self.size(-1) > 0 && self.size(-2) > 0, ShapeError, op, "self",
             "Expected 2D or 3D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for "
             "input, but got: ",
             shape_str(self.sizes()));
  const DimVector image = fold_params(op, "output_size", output_size, true);
  const DimVector kernel = fold_params(op, "kernel_size", kernel_size, true);
  const int64_t kk = kernel[0] * kernel[1];
  KILN_CHECK(
      self.size(-2) % kk == 0, ShapeError, op, "self",
      "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got input.size(1)=",
      self.size(-2), " and kernel_size=", shape_str(kernel_size));
  const int64_t batch = batched ? self.size(0) : 1;
  ConvPlan p = fold_plan(op, batch, self.size(-2) / kk, image, kernel_size, dilation, padding, stride, self.dtype());
  KILN_CHECK(p.small_numel() == self.size(-1), ShapeError, op, "self", "Given output_size=", shape_str(output_size),
             ", kernel_size=", shape_str(kernel_size), ", dilation=", shape_str(dilation),
             ", padding=", shape_str(padding), ", stride=", shape_str(stride),
             ", expected size of input's dimension 2 to match the "
             "calculated number of sliding blocks ",
             p.small_sizes[0], " * ", p.small_sizes[1], " = ", p.small_numel(),
             ", but got input.size(2)=", self.size(-1), ".");
  if (batched) p.sizes.push_back(batch);
  p.sizes.push_back(p.image_channels);
  p.sizes.push_back(image[0]);
  p.sizes.push_back(image[1]);
  return p;
}

}  // namespace kiln::meta
