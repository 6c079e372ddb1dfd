#ifndef KILN_RUNTIME_INCLUDE_KILN_VALUE_H_
#define KILN_RUNTIME_INCLUDE_KILN_VALUE_H_
// A small variant for calling ops by name: kiln::call("add", {a, b}, {{"alpha", 2}}).
#include <complex>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>
#include "kiln/tensor.h"

namespace kiln {

class Generator;  // kiln/random.h

class Value {
 public:
  enum class Kind : int8_t {
    None, Bool, Int, Double, Complex, String, DType, Tensor, IntList, TensorList, Tuple,
    Device, Layout, MemoryFormat, Generator, DoubleList
  };
  Value() = default;  // None
  Value(std::nullopt_t) {}
  Value(bool b) : v_(b) {}
  template <typename I, typename = std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>>>
  Value(I i) : v_(int64_t(i)) {}
  Value(double d) : v_(d) {}
  Value(complex<double> c) : v_(c) {}
  Value(const char* s) : v_(std::string(s)) {}
  Value(std::string s) : v_(std::move(s)) {}
  Value(DType t) : v_(t) {}
  Value(Tensor t) : v_(std::move(t)) {}
  Value(std::vector<int64_t> l) : v_(std::move(l)) {}
  Value(std::initializer_list<int64_t> l) : v_(std::vector<int64_t>(l)) {}
  Value(std::vector<double> l) : v_(std::move(l)) {}  // float[] (histogram's range)
  Value(TensorList l) : v_(std::move(l)) {}
  Value(Device d) : v_(d) {}
  Value(Layout l) : v_(l) {}
  Value(MemoryFormat f) : v_(f) {}
  Value(Generator& g) : v_(&g) {}
  static Value tuple(std::vector<Value> items);
  Value(const Scalar& s);

  Kind kind() const { return Kind(v_.index()); }
  const char* kind_name() const;
  bool is_none() const { return kind() == Kind::None; }
  bool is_tensor() const { return kind() == Kind::Tensor; }
  bool is_number() const { return kind() == Kind::Bool || kind() == Kind::Int || kind() == Kind::Double || kind() == Kind::Complex; }

  // Typed access; a mismatch throws kiln::ValueError naming `op` and `arg`.
  bool to_bool(const char* op = "", const char* arg = "") const;
  int64_t to_int(const char* op = "", const char* arg = "") const;
  double to_double(const char* op = "", const char* arg = "") const;   // accepts Int too
  Scalar to_scalar(const char* op = "", const char* arg = "") const;   // Bool/Int/Double/Complex
  std::string to_string(const char* op = "", const char* arg = "") const;
  DType to_dtype(const char* op = "", const char* arg = "") const;     // DType or its name
  const Tensor& to_tensor(const char* op = "", const char* arg = "") const;
  std::vector<int64_t> to_int_list(const char* op = "", const char* arg = "") const;  // also from one Int
  std::vector<double> to_double_list(const char* op = "", const char* arg = "") const;  // also from an int[]
  const TensorList& to_tensor_list(const char* op = "", const char* arg = "") const;
  const std::vector<Value>& to_tuple(const char* op = "", const char* arg = "") const;
  Device to_device(const char* op = "", const char* arg = "") const;              // Device or "cuda:0"
  Layout to_layout(const char* op = "", const char* arg = "") const;              // Layout or "strided"
  MemoryFormat to_memory_format(const char* op = "", const char* arg = "") const; // or "channels_last"
  Generator* to_generator(const char* op = "", const char* arg = "") const;
  std::string str() const;

 private:
  struct TupleBox { std::vector<Value> items; };
  std::variant<std::monostate, bool, int64_t, double, complex<double>, std::string, DType, Tensor,
               std::vector<int64_t>, TensorList, std::shared_ptr<TupleBox>, Device, Layout, MemoryFormat,
               Generator*, std::vector<double>>
      v_;
};

using Kwargs = std::vector<std::pair<std::string, Value>>;

struct OpSchema {
  std::string name;       // "add.Tensor"
  std::string signature;  // the ATen schema string from ops/*.yaml
  std::string doc;
};

// Calls an op by its name ("add", or with overload "add.Tensor"). Without an overload name
// the first overload whose schema binds the arguments is used. Errors are kiln::Error.
Value call(const std::string& name, const std::vector<Value>& args, const Kwargs& kwargs = {});
// The out= variant of an op by name: the results are written into `out`, one tensor per result
// (resized when their shape differs, as PyTorch's out= does); returns them.
Value call_out(const std::string& name, const TensorList& out, const std::vector<Value>& args, const Kwargs& kwargs = {});
// The in-place variant of an op by name (the functional op's name, "add"): writes the result
// into the first argument and returns it.
Value call_inplace(const std::string& name, const std::vector<Value>& args, const Kwargs& kwargs = {});
// Every op in ops/*.yaml with its schema.
const std::vector<OpSchema>& ops();

}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_VALUE_H_
