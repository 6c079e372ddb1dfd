#ifndef KILN_TESTS_SUPPORT_COVERAGE_LOG_H_
#define KILN_TESTS_SUPPORT_COVERAGE_LOG_H_
// Appends one coverage cell result as a JSON line to $KILN_COVERAGE_RESULTS (set by CTest to a
// file in the build dir; tools/coverage.py merges it into the report). Without the variable
// results are only printed by doctest.
#include <string>

namespace kiln::testing {

enum class CellStatus { Pass, Fail, Unverified };
const char* status_name(CellStatus s);

void record_cell(const std::string& op, const std::string& backend, const std::string& dtype, const char* check,
                 CellStatus status, const std::string& detail);

}  // namespace kiln::testing
#endif  // KILN_TESTS_SUPPORT_COVERAGE_LOG_H_
