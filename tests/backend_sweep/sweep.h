#ifndef KILN_TESTS_BACKEND_SWEEP_SWEEP_H_
#define KILN_TESTS_BACKEND_SWEEP_SWEEP_H_
// kiln_backend_sweep (issue 38, after ggml's test-backend-ops): every registry op's samples run
// on the CPU and on a device backend from the same values, and the results compared. Its
// parts: ops.cpp (which ops and dtypes), larger.cpp (scaled samples), guard.cpp (out= into
// guarded views), compare.cpp, check.cpp (one op's checks), perf.cpp (--perf), main.cpp.
#include <cstdint>
#include <map>
#include <string>
#include <vector>
#include "kiln/core.h"
#include "op_catalog.h"

namespace kiln::sweep {

using testing::OpInfo;
using Named = std::map<std::string, Value>;

enum class Fault { None, Values, Guard };  // --inject-fault: proves the checks can fail

struct Options {
  Device device = kCPU;  // the side compared with the CPU
  bool device_given = false;
  bool larger = true;  // also each sample's larger version
  bool perf = false;
  int64_t larger_numel = 1 << 16;  // elements of the larger samples' biggest tensor (larger.cpp)
  std::string op_filter;           // ECMAScript regex searched in op names; empty: every op
  Fault fault = Fault::None;
};

// ---- ops.cpp ----
struct SweptOp {
  std::string name;
  std::vector<DType> dtypes;       // declared on the CPU and on the device
  std::vector<DType> device_only;  // declared on the device alone: nothing to compare with
};
// The ops of generated/coverage_declared.json with dtypes declared for `device_type`.
std::vector<SweptOp> swept_ops(const std::string& device_type, const std::string& op_filter);

// ---- larger.cpp ----
// `op` with sample `index` scaled: every tensor dim above 1 times the smallest factor that
// gives its biggest tensor at least `numel` elements, or a smaller one that keeps the results
// within 4 times that (as the CPU's results in `dtype` at factors 1 and 2 predict). Literal
// values and non-tensor arguments stay. False, with why, when there is nothing to scale or the
// CPU refuses scaled shapes.
bool larger_sample(const OpInfo& op, size_t index, DType dtype, int64_t numel, OpInfo& scaled, std::string& why);

// ---- guard.cpp ----
// An out= destination inside a larger buffer on `device` whose other elements hold a sentinel
// (NaN for floating dtypes, bytes 0xA5 otherwise): `view` is dense, or every other element.
struct Guarded {
  Tensor buffer, view;
  DimVector shape;
  bool every_other = false;
  std::vector<std::vector<int64_t>> pristine;  // the guards' bytes before the op ran
};
Guarded guarded_view(IntArrayRef shape, DType dtype, Device device, bool every_other);
// Empty when the buffer outside the view is unchanged and the view still lies in it.
std::string check_guard(const Guarded& g);

// ---- compare.cpp ----
// Empty when `got` (any device) matches `want` (CPU): dtype, sizes, device, and with `values`
// the values (integers exactly, floating within the per-op tests' tolerance; `larger` widens
// atol to rtol * max|want|: sums over many elements round in another order on a device).
std::string compare(const std::vector<Tensor>& got, const std::vector<Tensor>& want, Device device, bool values,
                    bool larger);

// ---- check.cpp ----
struct Tally {
  int64_t passed = 0, failed = 0, skipped = 0;
  std::map<std::string, int64_t> why_skipped;
  void skip(const std::string& why, int64_t n = 1) {
    skipped += n;
    why_skipped[why] += n;
  }
};
// Every sample of `op` on `dtypes`: dense, in the other layouts, through out= into guarded
// views, and (Options::larger) its larger version; prints each failure.
Tally check_op(const OpInfo& op, const std::vector<DType>& dtypes, const Options& o);
// The tensors and lists of `args` copied to `device` (a copy even on the same device).
Named copy_to(const Named& args, Device device);

// ---- perf.cpp ----
// --perf: times each op's first larger sample on both sides; prints one table row, or why not.
void perf_op(const OpInfo& op, const std::vector<DType>& dtypes, const Options& o);

}  // namespace kiln::sweep
#endif  // KILN_TESTS_BACKEND_SWEEP_SWEEP_H_
