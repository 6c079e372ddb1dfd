#ifndef KILN_TESTS_SUPPORT_ERROR_CONTRACT_H_
#define KILN_TESTS_SUPPORT_ERROR_CONTRACT_H_
// The error contract (issue 5): bad input raises a kiln::Error of the expected kind whose
// message names the op and the argument; it never crashes or returns garbage. A Ledger
// collects every case's outcome so one test can try thousands and list the failures.
#include <functional>
#include <set>
#include <string>
#include <vector>
#include "kiln/core.h"

namespace kiln::testing {

class Ledger {
 public:
  // `f` must throw a kiln::Error of one of `kinds`, whose message names `op` and every part
  // of `names` (e.g. the argument). Anything else is recorded as a failure.
  void expect_error(const std::string& what, const std::string& op, std::set<ErrorKind> kinds,
                    std::vector<std::string> names, const std::function<void()>& f);
  // `f` may succeed or throw kiln::Error, but nothing else (other exceptions are failures;
  // crashes and sanitizer reports end the run).
  void expect_no_crash(const std::string& what, const std::function<void()>& f);
  void fail(const std::string& what, const std::string& why) { failures_.push_back(what + ": " + why); }

  int tried() const { return tried_; }
  const std::vector<std::string>& failures() const { return failures_; }
  std::string report(size_t max_lines = 60) const;

 private:
  int tried_ = 0;
  std::vector<std::string> failures_;
};

// "add.Tensor" -> "add": the name messages use.
std::string base_name(const std::string& op);

}  // namespace kiln::testing
#endif  // KILN_TESTS_SUPPORT_ERROR_CONTRACT_H_
