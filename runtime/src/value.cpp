// Value: the variant kiln::call passes arguments in; typed access with errors naming op and argument.
#include "kiln/value.h"

#include "core/number_format.h"

namespace kiln {
namespace {

[[noreturn]] void mismatch(const Value& v, const char* expected, const char* op, const char* arg) {
  KILN_FAIL(ValueError, op, arg, "expected ", expected, ", got ", v.kind_name());
}

}  // namespace

Value Value::tuple(std::vector<Value> items) {
  Value v;
  v.v_ = std::make_shared<TupleBox>(TupleBox{std::move(items)});
  return v;
}

Value::Value(const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::Bool: v_ = s.to<bool>(); break;
    case Scalar::Kind::Int: v_ = s.to<int64_t>(); break;
    case Scalar::Kind::Float: v_ = s.to<double>(); break;
    case Scalar::Kind::Complex: v_ = s.to<complex<double>>(); break;
  }
}

// Schema spellings, so errors read like the signature in ops/*.yaml.
const char* Value::kind_name() const {
  switch (kind()) {
    case Kind::None: return "None";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Double: return "float";
    case Kind::Complex: return "complex";
    case Kind::String: return "str";
    case Kind::DType: return "ScalarType";
    case Kind::Tensor: return "Tensor";
    case Kind::IntList: return "int[]";
    case Kind::TensorList: return "Tensor[]";
    case Kind::Tuple: return "tuple";
    case Kind::Device: return "Device";
    case Kind::Layout: return "Layout";
    case Kind::MemoryFormat: return "MemoryFormat";
    case Kind::Generator: return "Generator";
    case Kind::DoubleList: return "float[]";
  }
  return "unknown";
}

bool Value::to_bool(const char* op, const char* arg) const {
  if (kind() != Kind::Bool) mismatch(*this, "bool", op, arg);
  return std::get<bool>(v_);
}

int64_t Value::to_int(const char* op, const char* arg) const {
  if (kind() != Kind::Int) mismatch(*this, "int", op, arg);
  return std::get<int64_t>(v_);
}

double Value::to_double(const char* op, const char* arg) const {
  if (kind() == Kind::Int) return double(std::get<int64_t>(v_));
  if (kind() != Kind::Double) mismatch(*this, "float", op, arg);
  return std::get<double>(v_);
}

Scalar Value::to_scalar(const char* op, const char* arg) const {
  switch (kind()) {
    case Kind::Bool: return Scalar(std::get<bool>(v_));
    case Kind::Int: return Scalar(std::get<int64_t>(v_));
    case Kind::Double: return Scalar(std::get<double>(v_));
    case Kind::Complex: return Scalar(std::get<complex<double>>(v_));
    default: mismatch(*this, "a number (Scalar)", op, arg);
  }
}

std::string Value::to_string(const char* op, const char* arg) const {
  if (kind() != Kind::String) mismatch(*this, "str", op, arg);
  return std::get<std::string>(v_);
}

DType Value::to_dtype(const char* op, const char* arg) const {
  if (kind() == Kind::DType) return std::get<DType>(v_);
  if (kind() != Kind::String) mismatch(*this, "ScalarType", op, arg);
  const std::string& name = std::get<std::string>(v_);
  std::optional<DType> t = dtype_from_name(name);
  KILN_CHECK(t.has_value(), ValueError, op, arg, "expected ScalarType, got unknown dtype name '", name, "'");
  return *t;
}

const Tensor& Value::to_tensor(const char* op, const char* arg) const {
  if (kind() != Kind::Tensor) mismatch(*this, "Tensor", op, arg);
  return std::get<Tensor>(v_);
}

std::vector<int64_t> Value::to_int_list(const char* op, const char* arg) const {
  if (kind() == Kind::Int) return {std::get<int64_t>(v_)};  // int[1] accepts one int, as ATen
  if (kind() != Kind::IntList) mismatch(*this, "int[]", op, arg);
  return std::get<std::vector<int64_t>>(v_);
}

std::vector<double> Value::to_double_list(const char* op, const char* arg) const {
  if (kind() == Kind::IntList) {  // [0, 3] reads as [0., 3.], as Python's float list
    const auto& ints = std::get<std::vector<int64_t>>(v_);
    return std::vector<double>(ints.begin(), ints.end());
  }
  if (kind() != Kind::DoubleList) mismatch(*this, "float[]", op, arg);
  return std::get<std::vector<double>>(v_);
}

const TensorList& Value::to_tensor_list(const char* op, const char* arg) const {
  if (kind() != Kind::TensorList) mismatch(*this, "Tensor[]", op, arg);
  return std::get<TensorList>(v_);
}

const std::vector<Value>& Value::to_tuple(const char* op, const char* arg) const {
  if (kind() != Kind::Tuple) mismatch(*this, "tuple", op, arg);
  return std::get<std::shared_ptr<TupleBox>>(v_)->items;
}

Device Value::to_device(const char* op, const char* arg) const {
  if (kind() == Kind::Device) return std::get<Device>(v_);
  if (kind() != Kind::String) mismatch(*this, "Device", op, arg);
  try {
    return Device::parse(std::get<std::string>(v_));
  } catch (const ValueError&) {
    KILN_FAIL(ValueError, op, arg, "expected a device like 'cpu', 'cuda' or 'cuda:1', got '", std::get<std::string>(v_),
              "'");
  }
}

Layout Value::to_layout(const char* op, const char* arg) const {
  if (kind() == Kind::Layout) return std::get<Layout>(v_);
  if (kind() != Kind::String) mismatch(*this, "Layout", op, arg);
  return parse_layout(std::get<std::string>(v_), op, arg);
}

MemoryFormat Value::to_memory_format(const char* op, const char* arg) const {
  if (kind() == Kind::MemoryFormat) return std::get<MemoryFormat>(v_);
  if (kind() != Kind::String) mismatch(*this, "MemoryFormat", op, arg);
  return parse_memory_format(std::get<std::string>(v_), op, arg);
}

Generator* Value::to_generator(const char* op, const char* arg) const {
  if (kind() != Kind::Generator) mismatch(*this, "Generator", op, arg);
  return std::get<Generator*>(v_);
}

// Python's repr of the value (tensors as they print).
std::string Value::str() const {
  switch (kind()) {
    case Kind::None: return "None";
    case Kind::Bool: return std::get<bool>(v_) ? "True" : "False";
    case Kind::Int: return std::to_string(std::get<int64_t>(v_));
    case Kind::Double: return detail::python_float_repr(std::get<double>(v_));
    case Kind::Complex: return detail::python_complex_repr(std::get<complex<double>>(v_));
    case Kind::String: return "'" + std::get<std::string>(v_) + "'";
    case Kind::DType: return std::string("torch.") + dtype_name(std::get<DType>(v_));
    case Kind::Tensor: return std::get<Tensor>(v_).str();
    case Kind::IntList: return shape_str(std::get<std::vector<int64_t>>(v_));
    case Kind::TensorList: {
      std::string s = "[";
      const TensorList& l = std::get<TensorList>(v_);
      for (size_t i = 0; i < l.size(); ++i) s += (i ? ", " : "") + l[i].str();
      return s + "]";
    }
    case Kind::Tuple: {
      const std::vector<Value>& items = to_tuple();
      std::string s = "(";
      for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i].str();
      return s + (items.size() == 1 ? ",)" : ")");
    }
    case Kind::Device: return "device(type='" + std::string(device_type_name(std::get<Device>(v_).type)) + "', index=" +
                              std::to_string(int(std::get<Device>(v_).index)) + ")";
    case Kind::Layout: return std::string("torch.") + layout_name(std::get<Layout>(v_));
    case Kind::MemoryFormat: return std::string("torch.") + memory_format_name(std::get<MemoryFormat>(v_));
    case Kind::Generator: return "<torch._C.Generator>";
    case Kind::DoubleList: {
      std::string s = "[";
      const auto& l = std::get<std::vector<double>>(v_);
      for (size_t i = 0; i < l.size(); ++i) s += (i ? ", " : "") + detail::python_float_repr(l[i]);
      return s + "]";
    }
  }
  return "?";
}

}  // namespace kiln
