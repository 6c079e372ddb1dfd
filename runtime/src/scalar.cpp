// Scalar: the dtype a Python number promotes as, its repr and equality.
#include "kiln/scalar.h"

#include "core/number_format.h"

namespace kiln {

DType Scalar::dtype() const {
  switch (kind_) {
    case Kind::Bool: return DType::Bool;
    case Kind::Int: return DType::Int64;
    case Kind::Float: return DType::Float64;
    case Kind::Complex: break;
  }
  return DType::Complex128;
}

std::string Scalar::str() const {
  switch (kind_) {
    case Kind::Bool: return v_.i ? "True" : "False";
    case Kind::Int: return std::to_string(v_.i);
    case Kind::Float: return detail::python_float_repr(v_.d);
    case Kind::Complex: break;
  }
  return detail::python_complex_repr(v_.c);
}

// Same kind and same value: Scalar(1) != Scalar(1.0), since the kind decides promotion.
bool Scalar::operator==(const Scalar& o) const {
  if (kind_ != o.kind_) return false;
  switch (kind_) {
    case Kind::Bool: case Kind::Int: return v_.i == o.v_.i;
    case Kind::Float: return v_.d == o.v_.d;
    case Kind::Complex: break;
  }
  return v_.c == o.v_.c;
}

}  // namespace kiln
