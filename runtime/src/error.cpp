// kiln::Error: one message format for every failure, built once at throw time.
#include "kiln/error.h"

namespace kiln {

const char* error_kind_name(ErrorKind k) {
  switch (k) {
    case ErrorKind::Shape: return "ShapeError";
    case ErrorKind::DType: return "DTypeError";
    case ErrorKind::Device: return "DeviceError";
    case ErrorKind::Index: return "IndexError";
    case ErrorKind::Value: return "ValueError";
    case ErrorKind::NotImplemented: return "NotImplementedError";
    case ErrorKind::Autograd: return "AutogradError";
    case ErrorKind::Internal: return "InternalError";
  }
  return "Error";
}

namespace {
// "kiln::<op>: argument '<arg>': <what>"; the argument part is left out when there is none.
std::string format_message(const std::string& op, const std::string& arg, const std::string& what) {
  std::string msg = op.empty() ? std::string("kiln") : "kiln::" + op;
  if (!arg.empty()) msg += ": argument '" + arg + "'";
  msg += ": ";
  msg += what;
  return msg;
}
}  // namespace

Error::Error(ErrorKind kind, std::string op, std::string arg, const std::string& what)
    : std::runtime_error(format_message(op, arg, what)), kind_(kind), op_(std::move(op)), arg_(std::move(arg)) {}

}  // namespace kiln
