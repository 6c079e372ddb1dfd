// DType names, sizes and PyTorch's type-promotion lattice.
#include "kiln/dtype.h"

#include <atomic>
#include "kiln/error.h"

namespace kiln {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::Bool: return "bool";
    case DType::UInt8: return "uint8";
    case DType::Int8: return "int8";
    case DType::Int16: return "int16";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::Float16: return "float16";
    case DType::BFloat16: return "bfloat16";
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Complex64: return "complex64";
    case DType::Complex128: return "complex128";
  }
  return "unknown";
}

std::optional<DType> dtype_from_name(std::string_view name) {
  // "torch.float32" reads the same as "float32"
  if (name.substr(0, 6) == "torch.") name.remove_prefix(6);
  struct Alias { const char* name; DType dtype; };
  static constexpr Alias kAliases[] = {
      {"bool", DType::Bool},         {"uint8", DType::UInt8},       {"byte", DType::UInt8},
      {"int8", DType::Int8},         {"char", DType::Int8},         {"int16", DType::Int16},
      {"short", DType::Int16},       {"int32", DType::Int32},       {"int", DType::Int32},
      {"int64", DType::Int64},       {"long", DType::Int64},        {"float16", DType::Float16},
      {"half", DType::Float16},      {"bfloat16", DType::BFloat16}, {"float32", DType::Float32},
      {"float", DType::Float32},     {"float64", DType::Float64},   {"double", DType::Float64},
      {"complex64", DType::Complex64}, {"cfloat", DType::Complex64}, {"complex128", DType::Complex128},
      {"cdouble", DType::Complex128},
  };
  for (const Alias& a : kAliases)
    if (name == a.name) return a.dtype;
  return std::nullopt;
}

size_t element_size(DType t) {
  switch (t) {
    case DType::Bool: case DType::UInt8: case DType::Int8: return 1;
    case DType::Int16: case DType::Float16: case DType::BFloat16: return 2;
    case DType::Int32: case DType::Float32: return 4;
    case DType::Int64: case DType::Float64: case DType::Complex64: return 8;
    case DType::Complex128: return 16;
  }
  return 0;
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  if (is_complex(a) || is_complex(b)) {
    if (a == DType::Complex128 || b == DType::Complex128) return DType::Complex128;
    // complex64 with float64 needs double precision parts
    DType other = is_complex(a) ? b : a;
    return other == DType::Float64 ? DType::Complex128 : DType::Complex64;
  }
  if (is_floating(a) && is_floating(b)) {
    // float16 and bfloat16 have no common 16-bit type
    if (a <= DType::BFloat16 && b <= DType::BFloat16) return DType::Float32;
    return a > b ? a : b;
  }
  if (is_floating(a)) return a;
  if (is_floating(b)) return b;
  // both integral: uint8 and int8 meet in int16; otherwise the wider one
  if ((a == DType::UInt8 && b == DType::Int8) || (a == DType::Int8 && b == DType::UInt8)) return DType::Int16;
  return a > b ? a : b;
}

DType to_complex(DType t) {
  switch (t) {
    case DType::Float64: case DType::Complex128: return DType::Complex128;
    case DType::Float16: case DType::BFloat16: case DType::Float32: case DType::Complex64: return DType::Complex64;
    default: break;
  }
  KILN_FAIL(DTypeError, "to_complex", "dtype", "expected a floating or complex dtype, got ", dtype_name(t));
}

DType to_real(DType t) {
  if (t == DType::Complex64) return DType::Float32;
  if (t == DType::Complex128) return DType::Float64;
  return t;
}

namespace {
// bool < integral < floating < complex: casting may not go down this order.
int category(DType t) {
  if (t == DType::Bool) return 0;
  if (is_integral(t, false)) return 1;
  if (is_floating(t)) return 2;
  return 3;
}
std::atomic<DType> g_default_float{DType::Float32};
}  // namespace

bool can_cast(DType from, DType to) { return category(from) <= category(to); }

DType default_float_dtype() { return g_default_float.load(std::memory_order_relaxed); }

void set_default_float_dtype(DType t) {
  KILN_CHECK(t == DType::Float32 || t == DType::Float64, DTypeError, "set_default_float_dtype", "dtype",
             "expected float32 or float64, got ", dtype_name(t));
  g_default_float.store(t, std::memory_order_relaxed);
}

}  // namespace kiln
