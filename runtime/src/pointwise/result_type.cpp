// Type promotion and broadcasting, exactly as ATen's at::result_type and infer_size.
#include "kiln/pointwise.h"

namespace kiln::pointwise {

namespace {

// The dtype each priority group has collected so far (empty: nothing seen yet).
struct ResultTypeState {
  std::optional<DType> dim, zero_dim, wrapped;
};

void promote_into(std::optional<DType>& slot, DType t) { slot = slot ? promote_types(*slot, t) : t; }

// Python numbers carry no precision of their own: they count as the default float / complex.
DType default_complex_dtype() {
  return default_float_dtype() == DType::Float64 ? DType::Complex128 : DType::Complex64;
}
DType number_dtype(DType t) {
  if (is_complex(t)) return default_complex_dtype();
  if (is_floating(t)) return default_float_dtype();
  return t;
}

void update(ResultTypeState& s, const TensorBase& t) {
  if (!t.defined()) return;  // an absent `TensorBase?` takes no part, as in ATen
  bool wrapped = t.impl()->is_wrapped_number;
  DType current = wrapped ? number_dtype(t.dtype()) : t.dtype();
  if (t.dim() > 0) promote_into(s.dim, current);
  else if (wrapped) promote_into(s.wrapped, current);
  else promote_into(s.zero_dim, current);
}

// A lower-priority group only matters when its category is higher (ATen's combine_categories).
std::optional<DType> combine_categories(std::optional<DType> higher, std::optional<DType> lower) {
  if (!higher) return lower;
  if (!lower) return higher;
  if (is_complex(*higher)) return higher;
  if (is_complex(*lower)) {
    // keep the precision of a floating higher group: float64 + complex -> complex128
    if (is_floating(*higher)) return to_complex(*higher);
    return lower;
  }
  if (is_floating(*higher)) return higher;
  if (*higher == DType::Bool || is_floating(*lower)) return promote_types(*higher, *lower);
  return higher;
}

}  // namespace

DType scalar_dtype(const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::Bool: return DType::Bool;
    case Scalar::Kind::Int: return DType::Int64;
    case Scalar::Kind::Float: return default_float_dtype();
    case Scalar::Kind::Complex: break;
  }
  return default_complex_dtype();
}

DType result_type(const TensorBase* const* inputs, int n, const Scalar* const* scalars, int num_scalars) {
  // The common case, tensors of one dtype and no Python numbers, promotes to that dtype.
  if (num_scalars == 0 && n > 0 && inputs[0] && inputs[0]->defined() && !inputs[0]->impl()->is_wrapped_number) {
    const DType first = inputs[0]->dtype();
    bool same = true;
    for (int i = 1; i < n && same; ++i)
      same = inputs[i] && inputs[i]->defined() && !inputs[i]->impl()->is_wrapped_number && inputs[i]->dtype() == first;
    if (same) return first;
  }
  ResultTypeState s;
  for (int i = 0; i < n; ++i)
    if (inputs[i]) update(s, *inputs[i]);
  for (int i = 0; i < num_scalars; ++i)
    if (scalars[i]) promote_into(s.wrapped, scalar_dtype(*scalars[i]));
  std::optional<DType> r = combine_categories(s.dim, combine_categories(s.zero_dim, s.wrapped));
  KILN_CHECK(r.has_value(), ValueError, "result_type", "inputs", "expected at least one defined tensor or scalar");
  return *r;
}

DType result_type(std::initializer_list<const TensorBase*> inputs) {
  return result_type(inputs.begin(), int(inputs.size()));
}

DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op, const char* arg) {
  size_t n = std::max(a.size(), b.size());
  DimVector out(n, 1);
  for (size_t i = 0; i < n; ++i) {
    // align from the right; a missing leading dim counts as 1
    int64_t sa = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t sb = i < n - b.size() ? 1 : b[i - (n - b.size())];
    KILN_CHECK(sa == sb || sa == 1 || sb == 1, ShapeError, op, arg, "shapes ", shape_str(a), " and ", shape_str(b),
               " are not broadcastable");
    out[i] = sa == 1 ? sb : sa;
  }
  return out;
}

}  // namespace kiln::pointwise
