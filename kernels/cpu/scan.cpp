// Scans along one dim on CPU: each kernel names its combine rule (kiln/common/scan_rules.h)
// and the engine (scan_engine.h) does the rest.
#include "scan_engine.h"
#include "kiln/gen/kernels/cpu/_cumsum_reverse.h"
#include "kiln/gen/kernels/cpu/_logcumsumexp_reverse.h"
#include "kiln/gen/kernels/cpu/cummax.h"
#include "kiln/gen/kernels/cpu/cummin.h"
#include "kiln/gen/kernels/cpu/cumprod.h"
#include "kiln/gen/kernels/cpu/cumsum.h"
#include "kiln/gen/kernels/cpu/logcumsumexp.h"

namespace kiln::cpu {

void cumsum(const meta::AlongDimPlan& plan, const TensorBase& out, const TensorBase& self) {
  scan_values<scan::Sum>(plan, out, self, "cumsum");
}

void _cumsum_reverse(const meta::AlongDimPlan& plan, const TensorBase& out, const TensorBase& self) {
  scan_values<scan::Sum, /*kReverse=*/true>(plan, out, self, "_cumsum_reverse");
}

void cumprod(const meta::AlongDimPlan& plan, const TensorBase& out, const TensorBase& self) {
  scan_values<scan::Prod>(plan, out, self, "cumprod");
}

void logcumsumexp(const meta::AlongDimPlan& plan, const TensorBase& out, const TensorBase& self) {
  scan_values<scan::LogAddExp>(plan, out, self, "logcumsumexp");
}

void _logcumsumexp_reverse(const meta::AlongDimPlan& plan, const TensorBase& out, const TensorBase& self) {
  scan_values<scan::LogAddExp, /*kReverse=*/true>(plan, out, self, "_logcumsumexp_reverse");
}

void cummax(const meta::AlongDimPlan& plan, const TensorBase& values, const TensorBase& indices,
            const TensorBase& self) {
  scan_values_indices<scan::Max>(plan, values, indices, self, "cummax");
}

void cummin(const meta::AlongDimPlan& plan, const TensorBase& values, const TensorBase& indices,
            const TensorBase& self) {
  scan_values_indices<scan::Min>(plan, values, indices, self, "cummin");
}

}  // namespace kiln::cpu
