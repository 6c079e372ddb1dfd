#ifndef KILN_RUNTIME_INCLUDE_KILN_DTYPE_H_
#define KILN_RUNTIME_INCLUDE_KILN_DTYPE_H_
// Element types, their C++ types, categories and PyTorch's promotion lattice.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include "kiln/complex.h"
#include "kiln/half.h"

namespace kiln {

enum class DType : int8_t {
  Bool, UInt8, Int8, Int16, Int32, Int64, Float16, BFloat16, Float32, Float64, Complex64, Complex128
};
inline constexpr int kNumDTypes = 12;
// A set of dtypes, bit i for DType i: an op's declared dtypes (its entry's kDTypes). 64 bits, so
// the dtypes still to come (block-quantized int8, unsigned 16/32/64, float8s) fit without
// changing every op entry again.
using DTypeSet = uint64_t;
static_assert(kNumDTypes <= 64, "DTypeSet holds a bit per dtype");
constexpr DTypeSet dtype_bit(DType d) { return DTypeSet(1) << int(d); }

// kiln::kFloat32 etc. read like torch.float32.
inline constexpr DType kBool = DType::Bool, kUInt8 = DType::UInt8, kInt8 = DType::Int8, kInt16 = DType::Int16,
                       kInt32 = DType::Int32, kInt64 = DType::Int64, kFloat16 = DType::Float16,
                       kBFloat16 = DType::BFloat16, kFloat32 = DType::Float32, kFloat64 = DType::Float64,
                       kComplex64 = DType::Complex64, kComplex128 = DType::Complex128;

const char* dtype_name(DType t);                     // "float32"
std::optional<DType> dtype_from_name(std::string_view name);  // accepts "float32", "float", "int64", "long", ...
size_t element_size(DType t);

constexpr bool is_floating(DType t) { return t >= DType::Float16 && t <= DType::Float64; }
constexpr bool is_complex(DType t) { return t == DType::Complex64 || t == DType::Complex128; }
constexpr bool is_integral(DType t, bool include_bool) {
  return (t >= DType::UInt8 && t <= DType::Int64) || (include_bool && t == DType::Bool);
}
constexpr bool is_inexact(DType t) { return is_floating(t) || is_complex(t); }  // differentiable types

DType promote_types(DType a, DType b);  // torch.promote_types
DType to_complex(DType t);              // float32 -> complex64; others by value type
DType to_real(DType t);                 // complex64 -> float32; others unchanged
bool can_cast(DType from, DType to);    // torch.can_cast: no lowering of category
DType default_float_dtype();
// torch.finfo of a floating dtype (DTypeError for others).
struct FInfo {
  double max, lowest, eps, tiny;
};
FInfo finfo(DType t);
void set_default_float_dtype(DType t);  // float32 or float64

// C++ element type of each dtype and back.
template <DType D> struct CppTypeOf;
template <> struct CppTypeOf<DType::Bool> { using type = bool; };
template <> struct CppTypeOf<DType::UInt8> { using type = uint8_t; };
template <> struct CppTypeOf<DType::Int8> { using type = int8_t; };
template <> struct CppTypeOf<DType::Int16> { using type = int16_t; };
template <> struct CppTypeOf<DType::Int32> { using type = int32_t; };
template <> struct CppTypeOf<DType::Int64> { using type = int64_t; };
template <> struct CppTypeOf<DType::Float16> { using type = Half; };
template <> struct CppTypeOf<DType::BFloat16> { using type = BFloat16; };
template <> struct CppTypeOf<DType::Float32> { using type = float; };
template <> struct CppTypeOf<DType::Float64> { using type = double; };
template <> struct CppTypeOf<DType::Complex64> { using type = complex<float>; };
template <> struct CppTypeOf<DType::Complex128> { using type = complex<double>; };
template <DType D> using cpp_type = typename CppTypeOf<D>::type;

template <typename T> struct DTypeOf;
template <> struct DTypeOf<bool> { static constexpr DType value = DType::Bool; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::UInt8; };
template <> struct DTypeOf<int8_t> { static constexpr DType value = DType::Int8; };
template <> struct DTypeOf<int16_t> { static constexpr DType value = DType::Int16; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::Int32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::Int64; };
template <> struct DTypeOf<Half> { static constexpr DType value = DType::Float16; };
template <> struct DTypeOf<BFloat16> { static constexpr DType value = DType::BFloat16; };
template <> struct DTypeOf<float> { static constexpr DType value = DType::Float32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::Float64; };
template <> struct DTypeOf<complex<float>> { static constexpr DType value = DType::Complex64; };
template <> struct DTypeOf<complex<double>> { static constexpr DType value = DType::Complex128; };
template <typename T> inline constexpr DType dtype_of = DTypeOf<T>::value;

// Type used to compute on a storage type: 16-bit floats compute in float.
template <typename T> struct OpMath { using type = T; };
template <> struct OpMath<Half> { using type = float; };
template <> struct OpMath<BFloat16> { using type = float; };
template <typename T> using opmath_t = typename OpMath<T>::type;

// Calls f(T{}) with T the C++ type of `t`: KILN_VISIT_ALL_DTYPES-style switch for hand-written code.
template <typename F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::Bool: return f(bool{});
    case DType::UInt8: return f(uint8_t{});
    case DType::Int8: return f(int8_t{});
    case DType::Int16: return f(int16_t{});
    case DType::Int32: return f(int32_t{});
    case DType::Int64: return f(int64_t{});
    case DType::Float16: return f(Half{});
    case DType::BFloat16: return f(BFloat16{});
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    case DType::Complex64: return f(complex<float>{});
    case DType::Complex128: break;
  }
  return f(complex<double>{});
}

}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_DTYPE_H_
