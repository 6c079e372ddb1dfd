#include "coverage_log.h"
#include <fcntl.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

namespace kiln::testing {

const char* status_name(CellStatus s) {
  switch (s) {
    case CellStatus::Pass: return "pass";
    case CellStatus::Fail: return "fail";
    case CellStatus::Unverified: return "unverified";
  }
  return "fail";
}

void record_cell(const std::string& op, const std::string& backend, const std::string& dtype, const char* check,
                 CellStatus status, const std::string& detail) {
  const char* path = std::getenv("KILN_COVERAGE_RESULTS");
  if (!path || !*path) return;
  nlohmann::json line = {{"op", op},         {"backend", backend},           {"dtype", dtype},
                         {"check", check},   {"status", status_name(status)}, {"detail", detail.substr(0, 500)}};
  std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  // CTest runs tests in parallel processes: one O_APPEND write per line keeps lines whole.
  int fd = ::open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (fd < 0) {
    std::fprintf(stderr, "kiln tests: cannot append to KILN_COVERAGE_RESULTS=%s\n", path);
    return;
  }
  ssize_t n = ::write(fd, text.data(), text.size());
  (void)n;
  ::close(fd);
}

}  // namespace kiln::testing
