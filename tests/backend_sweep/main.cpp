// kiln_backend_sweep: the registry's ops on the CPU and on a device backend, compared (sweep.h).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>
#include "kiln/cuda_device.h"
#include "sweep.h"

namespace {
using namespace kiln;
using namespace kiln::sweep;

const char kUsage[] =
    "usage: kiln_backend_sweep [--device cpu|cuda[:N]] [--op REGEX] [--no-larger] [--larger-numel N] [--perf]\n"
    "                          [--inject-fault values|guard]\n"
    "  Runs every registry op's samples on the CPU and on the device (default: cuda when one is\n"
    "  visible) from the same values and compares them: dense inputs, other layouts, out= into\n"
    "  guarded views, and each sample scaled to at least --larger-numel elements (default 65536).\n"
    "  --device cpu: the device side is the CPU again (a self-test of the harness).\n"
    "  --perf: times each op's larger sample on both sides instead of checking.\n"
    "  --inject-fault: corrupts the device's results (or the guard) to prove that checks fail.\n";

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--device" && has_value) {
      o.device = Device(std::string(argv[++i]));
      o.device_given = true;
    } else if (a == "--op" && has_value) {
      o.op_filter = argv[++i];
    } else if (a == "--no-larger") {
      o.larger = false;
    } else if (a == "--larger-numel" && has_value) {
      o.larger_numel = std::stoll(argv[++i]);
    } else if (a == "--perf") {
      o.perf = true;
    } else if (a == "--inject-fault" && has_value) {
      const std::string f = argv[++i];
      if (f != "values" && f != "guard") return false;
      o.fault = f == "values" ? Fault::Values : Fault::Guard;
    } else {
      return false;
    }
  }
  return true;
}

std::string reasons(const Tally& t) {
  std::ostringstream s;
  for (const auto& [why, n] : t.why_skipped) s << (s.tellp() ? "; " : " (") << why << ": " << n;
  if (!t.why_skipped.empty()) s << ")";
  return s.str();
}

int run_perf(const std::vector<SweptOp>& ops, const Options& o) {
  std::printf("%-40s %-9s %-28s %12s %12s %8s\n", "op", "dtype", "largest input", "cpu us",
              (o.device.str() + " us").c_str(), "ratio");
  for (const SweptOp& op : ops) {
    try {
      perf_op(testing::op_info(op.name), op.dtypes, o);
    } catch (const std::exception& e) {
      std::printf("%-40s skipped: %s\n", op.name.c_str(), e.what());
    }
  }
  std::printf("backend sweep --perf: %zu ops (ratio: cpu time / %s time)\n", ops.size(), o.device.str().c_str());
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    if (!parse(argc, argv, o)) {
      std::fputs(kUsage, stderr);
      return 2;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n%s", e.what(), kUsage);
    return 2;
  }
  if (!o.device_given || o.device.is_cuda()) {
    if (!cuda::is_available()) {
      std::printf("backend sweep: skipped (no CUDA device: %s; --device cpu runs the harness on the CPU)\n",
                  cuda::unavailable_reason().c_str());
      return 0;
    }
    if (!o.device_given) o.device = Device(DeviceType::CUDA, 0);
  }
  const std::vector<SweptOp> ops = swept_ops(device_type_name(o.device.type), o.op_filter);
  if (o.perf) return run_perf(ops, o);

  std::cout << "backend sweep: " << ops.size() << " ops, cpu against " << o.device.str()
            << (o.larger ? ", larger samples of at least " + std::to_string(o.larger_numel) + " elements" : "")
            << std::endl;
  const auto start = std::chrono::steady_clock::now();
  int64_t passed = 0, failed = 0, skipped = 0;
  for (const SweptOp& op : ops) {
    const testing::OpInfo& info = testing::op_info(op.name);
    const auto op_start = std::chrono::steady_clock::now();
    Tally t;
    try {
      t = check_op(info, op.dtypes, o);
    } catch (const std::exception& e) {  // the harness itself (a sample it cannot build)
      std::cout << "FAIL " << op.name << ": " << e.what() << std::endl;
      ++t.failed;
    }
    if (!op.device_only.empty())
      t.skip("dtypes without a CPU kernel to compare with", int64_t(op.device_only.size() * info.samples.size()));
    std::printf("%s: %zu samples, %lld passed, %lld failed, %lld skipped%s%s in %.2f s\n", op.name.c_str(),
                info.samples.size(), (long long)t.passed, (long long)t.failed, (long long)t.skipped, reasons(t).c_str(),
                info.compare_values && !info.random ? "" : " [sizes and dtype only]",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - op_start).count());
    std::fflush(stdout);
    passed += t.passed;
    failed += t.failed;
    skipped += t.skipped;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("elapsed %.1f s\nbackend sweep: %lld passed, %lld failed, %lld skipped\n", seconds, (long long)passed,
              (long long)failed, (long long)skipped);
  return failed ? 1 : 0;
}
