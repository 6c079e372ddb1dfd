// Errors of the dispatch path that say what exists: a missing dtype lists the dtypes the device
// has, a missing backend lists the backends, a bad `str` choice lists the allowed values.
#include <cctype>
#include <string>
#include "kiln/pointwise.h"

namespace kiln::pointwise {

namespace {
std::string upper_device_name(Device d) {
  std::string s = device_type_name(d.type);
  for (char& c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}
}  // namespace

void throw_dtype_unsupported(const char* op, DType dtype, Device device, std::initializer_list<DType> supported) {
  std::string have;
  for (DType d : supported) {
    if (!have.empty()) have += ", ";
    have += dtype_name(d);
  }
  // the dispatch dtype is the first tensor's (or the promoted one), which is `self` for nearly every op
  KILN_FAIL(DTypeError, op, "self", "no ", upper_device_name(device), " kernel for dtype ", dtype_name(dtype),
            have.empty() ? std::string("; it has none") : "; it has: " + have);
}

int64_t choice_index(const char* op, const char* arg, std::string_view value,
                     std::initializer_list<const char*> choices) {
  int64_t i = 0;
  for (const char* c : choices) {
    if (value == c) return i;
    ++i;
  }
  std::string allowed;
  for (const char* c : choices) {
    if (!allowed.empty()) allowed += ", ";
    allowed += "'" + std::string(c) + "'";
  }
  KILN_FAIL(ValueError, op, arg, "expected one of ", allowed, ", got '", value, "'");
}

}  // namespace kiln::pointwise
