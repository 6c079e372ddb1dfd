// --perf: each op's first larger sample timed on the CPU and on the device (median of a few
// runs after a warm-up, the device synchronized after each), one table row per op.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include "kiln/cuda_device.h"
#include "sample_inputs.h"
#include "sweep.h"

namespace kiln::sweep {

namespace {
constexpr int kRuns = 5;

double median_us(const OpInfo& op, const Named& args, Device device) {
  auto once = [&] {
    testing::call_op(op, args);
    if (device.is_cuda()) cuda::synchronize(device.index);
  };
  once();  // warm-up: first-use allocations, cuBLAS loading, kernel caches
  std::vector<double> us;
  for (int r = 0; r < kRuns; ++r) {
    auto start = std::chrono::steady_clock::now();
    once();
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(us.begin(), us.begin() + kRuns / 2, us.end());
  return us[kRuns / 2];
}

// The biggest tensor input (of a list, too), as name[sizes].
std::string largest_input(const Named& args) {
  std::string shown = "-";
  int64_t most = -1;
  auto consider = [&](const std::string& name, const Tensor& t) {
    if (t.defined() && t.numel() > most) most = t.numel(), shown = name + t.shape_str();
  };
  for (const auto& [name, v] : args) {
    if (v.is_tensor()) consider(name, v.to_tensor());
    if (v.kind() == Value::Kind::TensorList)
      for (const Tensor& t : v.to_tensor_list()) consider(name, t);
  }
  return shown;
}
}  // namespace

void perf_op(const OpInfo& op, const std::vector<DType>& dtypes, const Options& o) {
  if (dtypes.empty()) return;
  const DType dtype = std::find(dtypes.begin(), dtypes.end(), kFloat32) != dtypes.end() ? kFloat32 : dtypes[0];
  std::string why = "no sample";
  for (size_t i = 0; i < op.samples.size(); ++i) {
    OpInfo big;
    if (!larger_sample(op, i, dtype, o.larger_numel, big, why)) continue;
    Named cpu_args, device_args;
    try {
      cpu_args = testing::sample_args(big, i, dtype, kCPU);
      device_args = copy_to(cpu_args, o.device);
      const double cpu_us = median_us(big, cpu_args, kCPU), device_us = median_us(big, device_args, o.device);
      std::printf("%-40s %-9s %-28s %12.1f %12.1f %8.2f\n", op.name.c_str(), dtype_name(dtype),
                  largest_input(cpu_args).c_str(), cpu_us, device_us, cpu_us / device_us);
      return;
    } catch (const kiln::Error& e) {
      why = std::string("the larger sample is refused (a ") + error_kind_name(e.kind()) + ")";
    }
  }
  std::printf("%-40s skipped: %s\n", op.name.c_str(), why.c_str());
}

}  // namespace kiln::sweep
