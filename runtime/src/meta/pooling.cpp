// Meta steps of the 2-d pooling and resampling ops (see kiln/meta/pooling.h).
#include "kiln/meta/pooling.h"

#include <string>

namespace kiln::meta {
namespace {

// PyTorch's div_rtn: division rounding toward negative infinity.
int64_t div_floor(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// PyTorch's pooling_output_shape: with ceil_mode the last window must start inside the input or
// the left padding.
int64_t pooled_size(int64_t in, int64_t kernel, int64_t pad, int64_t stride, int64_t dilation, bool ceil_mode) {
  int64_t out = div_floor(in + 2 * pad - dilation * (kernel - 1) - 1 + (ceil_mode ? stride - 1 : 0), stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// One int or two (a list of one repeats it), as PyTorch's pooling arguments.
std::pair<int64_t, int64_t> pair_of(IntArrayRef v) { return {v[0], v.size() == 1 ? v[0] : v[1]}; }

struct Window {
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
};

// PyTorch's argument checks of max_pool2d (dilation) and avg_pool2d (no dilation), in its order.
Window window_args(const char* op, const char* name, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                   const IntArrayRef* dilation) {
  KILN_CHECK(kernel_size.size() == 1 || kernel_size.size() == 2, ValueError, op, "kernel_size", name,
             ": kernel_size must either be a single int, or a tuple of two ints");
  KILN_CHECK(stride.empty() || stride.size() == 1 || stride.size() == 2, ValueError, op, "stride", name,
             ": stride must either be omitted, a single int, or a tuple of two ints");
  KILN_CHECK(padding.size() == 1 || padding.size() == 2, ValueError, op, "padding", name,
             dilation ? ": padding must be either be a single int, or a tuple of two ints"
                      : ": padding must either be a single int, or a tuple of two ints");
  if (dilation)
    KILN_CHECK(dilation->size() == 1 || dilation->size() == 2, ValueError, op, "dilation", name,
               ": dilation must be either a single int, or a tuple of two ints");
  Window w;
  std::tie(w.kh, w.kw) = pair_of(kernel_size);
  std::tie(w.sh, w.sw) = stride.empty() ? std::pair{w.kh, w.kw} : pair_of(stride);
  std::tie(w.ph, w.pw) = pair_of(padding);
  std::tie(w.dh, w.dw) = dilation ? pair_of(*dilation) : std::pair<int64_t, int64_t>{1, 1};
  for (const auto& [k, s, p] : {std::tuple{w.kh, w.sh, w.ph}, std::tuple{w.kw, w.sw, w.pw}}) {
    KILN_CHECK(s != 0, ValueError, op, "stride", "stride should not be zero");
    KILN_CHECK(p >= 0, ValueError, op, "padding", "pad must be non-negative, but got pad: ", p);
    KILN_CHECK(p <= k / 2, ValueError, op, "padding", "pad should be at most half of kernel size, but got pad=", p,
               " and kernel_size=", k);
  }
  KILN_CHECK(w.kh > 0 && w.kw > 0, ValueError, op, "kernel_size",
             "kernel size should be greater than zero, but got kH: ", w.kh, " kW: ", w.kw);
  KILN_CHECK(w.sh > 0 && w.sw > 0, ValueError, op, "stride", "stride should be greater than zero, but got dH: ", w.sh,
             " dW: ", w.sw);
  KILN_CHECK(w.dh > 0 && w.dw > 0, ValueError, op, "dilation",
             "dilation should be greater than zero, but got dilationH: ", w.dh, " dilationW: ", w.dw);
  return w;
}

// [C, H, W] or [N, C, H, W] with non-empty C, H, W (an empty batch is fine).
void check_pool_input(const char* op, const TensorBase& self) {
  KILN_CHECK(self.dim() == 3 || self.dim() == 4, ShapeError, op, "self",
             "non-empty 3D or 4D (batch mode) tensor expected for input");
  const int64_t d = self.dim();
  KILN_CHECK(self.size(d - 1) != 0 && self.size(d - 2) != 0 && self.size(d - 3) != 0, ShapeError, op, "self",
             "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:",
             shape_str(self.sizes()));
}

void check_floating(const char* op, const char* name, const TensorBase& t, const TensorBase& like) {
  KILN_CHECK(t.dtype() == like.dtype(), DTypeError, op, name, "expected ", name, " to have dtype ",
             dtype_name(like.dtype()), ", got ", dtype_name(t.dtype()));
}

void check_indices(const char* op, const TensorBase& indices) {
  KILN_CHECK(indices.dtype() == DType::Int64, DTypeError, op, "indices", "expected indices to have dtype int64, got ",
             dtype_name(indices.dtype()));
}

// The plan over self's planes with result sizes [batch..., C, out_h, out_w].
Pool2dPlan plan_for(const TensorBase& self, int64_t out_h, int64_t out_w) {
  Pool2dPlan plan;
  const int64_t d = self.dim();
  auto& g = plan.geometry;
  g.planes = 1;
  for (int64_t i = 0; i < d - 2; ++i) g.planes *= self.size(i);
  g.h.in = self.size(d - 2);
  g.w.in = self.size(d - 1);
  g.h.out = out_h;
  g.w.out = out_w;
  plan.sizes = self.sizes();
  plan.sizes[size_t(d - 2)] = out_h;
  plan.sizes[size_t(d - 1)] = out_w;
  plan.dtype = self.dtype();
  return plan;
}

void set_window(pool::Dim& d, int64_t k, int64_t s, int64_t p, int64_t dil) {
  d.kernel = k;
  d.stride = s;
  d.pad = p;
  d.dilation = dil;
}

Pool2dPlan window_plan(const char* op, const TensorBase& self, const Window& w, bool ceil_mode) {
  check_pool_input(op, self);
  const int64_t d = self.dim();
  const int64_t in_h = self.size(d - 2), in_w = self.size(d - 1);
  const int64_t out_h = pooled_size(in_h, w.kh, w.ph, w.sh, w.dh, ceil_mode);
  const int64_t out_w = pooled_size(in_w, w.kw, w.pw, w.sw, w.dw, ceil_mode);
  KILN_CHECK(out_h >= 1 && out_w >= 1, ValueError, op, "self", "Given input size: (", self.size(d - 3), "x", in_h, "x",
             in_w, "). Calculated output size: (", self.size(d - 3), "x", out_h, "x", out_w,
             "). Output size is too small");
  Pool2dPlan plan = plan_for(self, out_h, out_w);
  set_window(plan.geometry.h, w.kh, w.sh, w.ph, w.dh);
  set_window(plan.geometry.w, w.kw, w.sw, w.pw, w.dw);
  return plan;
}

// A backward's tensor of the forward's result shape (grad_output, indices).
void check_result_shaped(const char* op, const char* name, const TensorBase& t, IntArrayRef sizes) {
  KILN_CHECK(t.sizes().equals(sizes), ShapeError, op, name, "Expected ", name, " of shape ", shape_str(sizes),
             " (the forward's result), but got ", shape_str(t.sizes()));
}

// A backward's plan: over the forward's geometry, sized as the forward's input.
Pool2dPlan backward_of(Pool2dPlan forward, const TensorBase& self) {
  forward.sizes = self.sizes();
  return forward;
}

std::string public_name(const char* op) { return op[0] == '_' ? std::string(op + 1) : std::string(op); }

}  // namespace

Pool2dPlan max_pool2d(const char* op, const TensorBase& self, IntArrayRef kernel_size, IntArrayRef stride,
                      IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  const Window w = window_args(op, "max_pool2d", kernel_size, stride, padding, &dilation);
  check_pool_input(op, self);
  return window_plan(op, self, w, ceil_mode);
}

Pool2dPlan max_pool2d_backward(const char* op, const TensorBase& grad_output, const TensorBase& self,
                               IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                               bool ceil_mode, const TensorBase& indices) {
  const Pool2dPlan forward = max_pool2d(op, self, kernel_size, stride, padding, dilation, ceil_mode);
  check_floating(op, "grad_output", grad_output, self);
  check_indices(op, indices);
  check_result_shaped(op, "grad_output", grad_output, forward.sizes);
  check_result_shaped(op, "indices", indices, forward.sizes);
  return backward_of(forward, self);
}

Pool2dPlan avg_pool2d(const char* op, const TensorBase& self, IntArrayRef kernel_size, IntArrayRef stride,
                      IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                      std::optional<int64_t> divisor_override) {
  const Window w = window_args(op, "avg_pool2d", kernel_size, stride, padding, nullptr);
  KILN_CHECK(!divisor_override || *divisor_override != 0, ValueError, op, "divisor_override",
             "divisor must be not zero");
  check_pool_input(op, self);
  Pool2dPlan plan = window_plan(op, self, w, ceil_mode);
  plan.geometry.count_include_pad = count_include_pad;
  plan.geometry.divisor = divisor_override.value_or(0);
  return plan;
}

Pool2dPlan avg_pool2d_backward(const char* op, const TensorBase& grad_output, const TensorBase& self,
                               IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                               bool count_include_pad, std::optional<int64_t> divisor_override) {
  const Pool2dPlan forward =
      avg_pool2d(op, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  check_floating(op, "grad_output", grad_output, self);
  check_result_shaped(op, "grad_output", grad_output, forward.sizes);
  return backward_of(forward, self);
}

Pool2dPlan adaptive_pool2d(const char* op, const TensorBase& self, IntArrayRef output_size) {
  const std::string name = public_name(op);
  KILN_CHECK(output_size.size() == 2, ValueError, op, "output_size", name, ": output_size must be 2");
  KILN_CHECK(output_size[0] >= 0 && output_size[1] >= 0, ValueError, op, "output_size", name,
             ": elements of output_size must be greater than or equal to 0 but received ", shape_str(output_size));
  KILN_CHECK(self.dim() == 3 || self.dim() == 4, ShapeError, op, "self", name, "(): Expected 3D or 4D tensor, but got ",
             shape_str(self.sizes()));
  for (int64_t i = self.dim() - 3; i < self.dim(); ++i)
    KILN_CHECK(self.size(i) > 0, ShapeError, op, "self", name,
               "(): Expected input to have non-zero size for non-batch dimensions, but input has sizes ",
               shape_str(self.sizes()), " with dimension ", i, " being empty");
  return plan_for(self, output_size[0], output_size[1]);
}

Pool2dPlan adaptive_pool2d_backward(const char* op, const TensorBase& grad_output, const TensorBase& self) {
  KILN_CHECK(grad_output.dim() == self.dim(), ShapeError, op, "grad_output", "expected grad_output with ", self.dim(),
             " dims (as self), got ", shape_str(grad_output.sizes()));
  const int64_t d = self.dim();
  const int64_t out[2] = {grad_output.size(d - 2), grad_output.size(d - 1)};
  const Pool2dPlan forward = adaptive_pool2d(op, self, IntArrayRef(out, 2));
  check_floating(op, "grad_output", grad_output, self);
  check_result_shaped(op, "grad_output", grad_output, forward.sizes);
  return backward_of(forward, self);
}

Pool2dPlan adaptive_pool2d_backward(const char* op, const TensorBase& grad_output, const TensorBase& self,
                                    const TensorBase& indices) {
  Pool2dPlan plan = adaptive_pool2d_backward(op, grad_output, self);
  check_indices(op, indices);
  check_result_shaped(op, "indices", indices, grad_output.sizes());
  return plan;
}

namespace {

// PyTorch's upsample_2d_common_check: 4-d sizes, positive spatial sizes, non-empty planes.
Pool2dPlan upsample_plan(const char* op, IntArrayRef input_size, IntArrayRef output_size,
                         std::optional<double> scales_h, std::optional<double> scales_w, DType dtype) {
  KILN_CHECK(output_size.size() == 2, ValueError, op, "output_size",
             "It is expected output_size equals to 2, but got size ", output_size.size());
  KILN_CHECK(input_size.size() == 4, ShapeError, op, "input_size",
             "It is expected input_size equals to 4, but got size ", input_size.size());
  const int64_t in_h = input_size[2], in_w = input_size[3], out_h = output_size[0], out_w = output_size[1];
  KILN_CHECK(in_h > 0 && in_w > 0 && out_h > 0 && out_w > 0, ValueError, op, "output_size",
             "Input and output sizes should be greater than 0, but got input (H: ", in_h, ", W: ", in_w,
             ") output (H: ", out_h, ", W: ", out_w, ")");
  KILN_CHECK(input_size[1] != 0, ShapeError, op, "self",
             "Non-empty 4D data tensor expected but got a tensor with sizes ", shape_str(input_size));
  Pool2dPlan plan;
  auto& g = plan.geometry;
  g.planes = input_size[0] * input_size[1];
  g.h.in = in_h;
  g.w.in = in_w;
  g.h.out = out_h;
  g.w.out = out_w;
  g.h.scale = scales_h && *scales_h > 0 ? *scales_h : 0.0;
  g.w.scale = scales_w && *scales_w > 0 ? *scales_w : 0.0;
  // PyTorch's compute_scales_value<float>: 1 / scale when given, else in / out, in float
  for (pool::Dim* dim : {&g.h, &g.w})
    dim->nearest_scale = dim->scale > 0 ? float(1.0 / dim->scale) : float(dim->in) / float(dim->out);
  plan.sizes = {input_size[0], input_size[1], out_h, out_w};
  plan.dtype = dtype;
  return plan;
}

Pool2dPlan upsample_backward_plan(const char* op, const TensorBase& grad_output, IntArrayRef output_size,
                                  IntArrayRef input_size, std::optional<double> scales_h,
                                  std::optional<double> scales_w) {
  Pool2dPlan plan = upsample_plan(op, input_size, output_size, scales_h, scales_w, grad_output.dtype());
  KILN_CHECK(grad_output.dim() == 4, ShapeError, op, "grad_output",
             "Expected grad_output to be a tensor of dimension 4 but got: dimension ", grad_output.dim());
  for (int64_t i = 0; i < 4; ++i)
    KILN_CHECK(grad_output.size(i) == plan.sizes[size_t(i)], ShapeError, op, "grad_output",
               "Expected grad_output to have the same shape as output; output.size(", i, ") = ", plan.sizes[size_t(i)],
               " but got grad_output.size(", i, ") = ", grad_output.size(i));
  plan.sizes = input_size;
  return plan;
}

}  // namespace

Pool2dPlan upsample_nearest2d(const char* op, const TensorBase& self, IntArrayRef output_size,
                              std::optional<double> scales_h, std::optional<double> scales_w) {
  return upsample_plan(op, self.sizes(), output_size, scales_h, scales_w, self.dtype());
}

Pool2dPlan upsample_nearest2d_backward(const char* op, const TensorBase& grad_output, IntArrayRef output_size,
                                       IntArrayRef input_size, std::optional<double> scales_h,
                                       std::optional<double> scales_w) {
  return upsample_backward_plan(op, grad_output, output_size, input_size, scales_h, scales_w);
}

Pool2dPlan upsample_bilinear2d(const char* op, const TensorBase& self, IntArrayRef output_size, bool align_corners,
                               std::optional<double> scales_h, std::optional<double> scales_w) {
  Pool2dPlan plan = upsample_plan(op, self.sizes(), output_size, scales_h, scales_w, self.dtype());
  plan.geometry.h.align_corners = plan.geometry.w.align_corners = align_corners;
  return plan;
}

Pool2dPlan upsample_bilinear2d_backward(const char* op, const TensorBase& grad_output, IntArrayRef output_size,
                                        IntArrayRef input_size, bool align_corners, std::optional<double> scales_h,
                                        std::optional<double> scales_w) {
  Pool2dPlan plan = upsample_backward_plan(op, grad_output, output_size, input_size, scales_h, scales_w);
  plan.geometry.h.align_corners = plan.geometry.w.align_corners = align_corners;
  return plan;
}

}  // namespace kiln::meta
