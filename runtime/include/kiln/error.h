#ifndef KILN_RUNTIME_INCLUDE_KILN_ERROR_H_
#define KILN_RUNTIME_INCLUDE_KILN_ERROR_H_
// One error hierarchy. Messages read "kiln::<op>: argument '<arg>': <what was expected>".
#include <sstream>
#include <stdexcept>
#include <string>

namespace kiln {

enum class ErrorKind { Shape, DType, Device, Index, Value, NotImplemented, Autograd, Internal };
const char* error_kind_name(ErrorKind k);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string op, std::string arg, const std::string& what);
  ErrorKind kind() const { return kind_; }
  const std::string& op() const { return op_; }
  const std::string& arg() const { return arg_; }

 private:
  ErrorKind kind_;
  std::string op_, arg_;
};

#define KILN_DEFINE_ERROR(Name, Kind)                                                  \
  class Name : public Error {                                                          \
   public:                                                                             \
    Name(std::string op, std::string arg, const std::string& what)                     \
        : Error(ErrorKind::Kind, std::move(op), std::move(arg), what) {}               \
  };
KILN_DEFINE_ERROR(ShapeError, Shape)
KILN_DEFINE_ERROR(DTypeError, DType)
KILN_DEFINE_ERROR(DeviceError, Device)
KILN_DEFINE_ERROR(IndexError, Index)
KILN_DEFINE_ERROR(ValueError, Value)
KILN_DEFINE_ERROR(NotImplementedError, NotImplemented)
KILN_DEFINE_ERROR(AutogradError, Autograd)
KILN_DEFINE_ERROR(InternalError, Internal)
#undef KILN_DEFINE_ERROR

namespace detail {
template <typename... Args>
std::string cat(const Args&... args) {
  std::ostringstream ss;
  (ss << ... << args);
  return ss.str();
}
}  // namespace detail

}  // namespace kiln

// KILN_CHECK(cond, ShapeError, "add", "other", "expected ... got ", x);
#define KILN_CHECK(cond, ErrType, op, arg, ...)                                  \
  do {                                                                          \
    if (!(cond)) throw ::kiln::ErrType((op), (arg), ::kiln::detail::cat(__VA_ARGS__)); \
  } while (0)
#define KILN_FAIL(ErrType, op, arg, ...) throw ::kiln::ErrType((op), (arg), ::kiln::detail::cat(__VA_ARGS__))
#endif  // KILN_RUNTIME_INCLUDE_KILN_ERROR_H_
