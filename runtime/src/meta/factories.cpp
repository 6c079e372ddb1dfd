// Meta steps of arange, linspace/logspace and eye: PyTorch's checks and messages, and the
// dtype a factory picks when the caller gives none.
#include "kiln/meta/factories.h"

#include <cmath>
#include <cstdint>

namespace kiln::meta {

RangePlan arange(const char* op, const Scalar& end, const TensorOptions& options) {
  return arange(op, Scalar(int64_t(0)), end, Scalar(int64_t(1)), options);
}

RangePlan arange(const char* op, const Scalar& start, const Scalar& end, const Scalar& step,
                 const TensorOptions& options) {
  KILN_CHECK(!start.is_complex() && !end.is_complex() && !step.is_complex(), ValueError, op, "start",
             "complex ranges are not supported");
  RangePlan plan;
  // torch.arange: floating if any bound or the step is floating, else int64
  const bool floating = start.is_floating() || end.is_floating() || step.is_floating();
  plan.dtype = options.dtype_given ? options.dtype : floating ? default_float_dtype() : DType::Int64;
  KILN_CHECK(plan.dtype != DType::Bool && !is_complex(plan.dtype), DTypeError, op, "dtype",
             "arange makes integral or floating tensors, not ", dtype_name(plan.dtype));
  // PyTorch converts the bounds to the accumulate type first: int64 for integral dtypes, so a
  // step of 0.5 becomes 0 for an integer range.
  const bool integral = is_integral(plan.dtype, false);
  double xs, xe, xst;
  if (integral) {
    xs = double(start.to_int()), xe = double(end.to_int()), xst = double(step.to_int());
  } else {
    xs = start.to_double(), xe = end.to_double(), xst = step.to_double();
  }
  KILN_CHECK(std::isfinite(xs) && std::isfinite(xe), ValueError, op, "end", "unsupported range: ", start.str(),
             " -> ", end.str());
  KILN_CHECK(xst != 0, ValueError, op, "step", "step must be nonzero");
  KILN_CHECK((xst > 0 && xe >= xs) || (xst < 0 && xe <= xs), ValueError, op, "step",
             "upper bound and larger bound inconsistent with step sign");
  double size_d;
  if (plan.dtype == DType::Int64) {
    int64_t s = start.to_int(), e = end.to_int(), st = step.to_int(), sgn = (st > 0) - (st < 0);
    size_d = double((e - s + st - sgn) / st);
  } else {
    size_d = std::ceil((end.to_double() - start.to_double()) / step.to_double());
  }
  KILN_CHECK(size_d >= 0 && size_d < 0x1p63, ValueError, op, "end",  // 2^63 itself is no int64
             "invalid size, possible overflow? (start ", start.str(), ", end ", end.str(), ", step ", step.str(), ")");
  plan.sizes = {int64_t(size_d)};
  if (integral) {
    plan.int_start = start.to_int(), plan.int_step = step.to_int();
  }
  plan.start = xs, plan.step = xst;
  return plan;
}

LinspacePlan linspace(const char* op, const Scalar& start, const Scalar& end, int64_t steps,
                      const TensorOptions& options) {
  KILN_CHECK(steps >= 0, ValueError, op, "steps", "number of steps must be non-negative, got ", steps);
  LinspacePlan plan;
  // without a dtype: the default float type, or its complex type for a complex bound (torch)
  const bool complex_bound = start.is_complex() || end.is_complex();
  plan.dtype = options.dtype_given ? options.dtype
                                   : complex_bound ? to_complex(default_float_dtype()) : default_float_dtype();
  KILN_CHECK(plan.dtype != DType::Bool, DTypeError, op, "dtype", op, " does not make bool tensors");
  KILN_CHECK(is_complex(plan.dtype) || !complex_bound, DTypeError, op, "dtype", "complex bounds need a complex dtype, got ",
             dtype_name(plan.dtype));
  plan.sizes = {steps};
  plan.start = start, plan.end = end, plan.steps = steps;
  return plan;
}

LinspacePlan linspace(const char* op, const Scalar& start, const Scalar& end, int64_t steps, double base,
                      const TensorOptions& options) {
  LinspacePlan plan = linspace(op, start, end, steps, options);
  plan.base = base;
  return plan;
}

EyePlan eye(const char* op, int64_t n, const TensorOptions& options) { return eye(op, n, n, options); }

EyePlan eye(const char* op, int64_t n, int64_t m, const TensorOptions& options) {
  KILN_CHECK(n >= 0, ValueError, op, "n", "n must be greater or equal to 0, got ", n);
  KILN_CHECK(m >= 0, ValueError, op, "m", "m must be greater or equal to 0, got ", m);
  EyePlan plan;
  plan.sizes = {n, m};
  plan.dtype = options.dtype;  // the default float dtype unless given
  return plan;
}

}  // namespace kiln::meta
