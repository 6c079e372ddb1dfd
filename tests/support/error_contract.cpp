#include "error_contract.h"
#include <sstream>

namespace kiln::testing {

std::string base_name(const std::string& op) { return op.substr(0, op.find('.')); }

void Ledger::expect_error(const std::string& what, const std::string& op, std::set<ErrorKind> kinds,
                          std::vector<std::string> names, const std::function<void()>& f) {
  ++tried_;
  try {
    f();
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (!kinds.count(e.kind())) return fail(what, std::string("raised ") + error_kind_name(e.kind()) + ": " + msg);
    if (msg.find("kiln::" + base_name(op)) == std::string::npos)
      return fail(what, "message does not name the op '" + base_name(op) + "': " + msg);
    for (const std::string& n : names)
      if (msg.find(n) == std::string::npos) return fail(what, "message does not name '" + n + "': " + msg);
    return;
  } catch (const std::exception& e) {
    return fail(what, std::string("raised a non-kiln exception: ") + e.what());
  }
  fail(what, "raised nothing");
}

void Ledger::expect_no_crash(const std::string& what, const std::function<void()>& f) {
  ++tried_;
  try {
    f();
  } catch (const Error&) {
  } catch (const std::exception& e) {
    fail(what, std::string("raised a non-kiln exception: ") + e.what());
  }
}

std::string Ledger::report(size_t max_lines) const {
  std::ostringstream ss;
  ss << failures_.size() << " of " << tried_ << " cases broke the contract";
  for (size_t i = 0; i < failures_.size() && i < max_lines; ++i) ss << "\n  " << failures_[i];
  if (failures_.size() > max_lines) ss << "\n  ...";
  return ss.str();
}

}  // namespace kiln::testing
