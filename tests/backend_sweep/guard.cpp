// Guard regions around out= destinations (ggml's test-backend-ops idea): a kernel that writes
// past its output, or into the gaps of a strided one, changes a sentinel the check reads back.
#include <limits>
#include "sweep.h"

namespace kiln::sweep {

namespace {
constexpr int64_t kGuard = 64;          // sentinel elements before and after the destination
constexpr int64_t kPatternByte = 0xA5;  // integers and bool: not a value the samples produce

// `t`'s elements as bytes (one more dim of element_size), any layout, on t's device.
Tensor bytes_of(const Tensor& t) {
  const int64_t es = int64_t(t.element_size());
  std::vector<int64_t> sizes = t.sizes().vec(), strides = t.strides().vec();
  for (int64_t& s : strides) s *= es;
  sizes.push_back(es);
  strides.push_back(1);
  return t.as_strided_view(sizes, strides, t.storage_offset() * es, kUInt8);
}

// What must not change: the guards before and after the destination, and its gaps.
std::vector<Tensor> guard_regions(const Guarded& g) {
  const int64_t n = numel_of(g.shape), step = g.every_other ? 2 : 1;
  std::vector<Tensor> regions = {g.buffer.narrow(0, 0, kGuard), g.buffer.narrow(0, kGuard + n * step, kGuard)};
  if (g.every_other && n > 0) {
    DimVector strides = contiguous_strides(g.shape);
    for (int64_t& s : strides) s *= 2;
    regions.push_back(g.buffer.as_strided_view(g.shape, strides, kGuard + 1));
  }
  return regions;
}
}  // namespace

Guarded guarded_view(IntArrayRef shape, DType dtype, Device device, bool every_other) {
  const int64_t n = numel_of(shape), step = every_other ? 2 : 1;
  Guarded g;
  g.every_other = every_other;
  g.shape = DimVector(shape);
  g.buffer = empty({kGuard + n * step + kGuard}, TensorOptions(dtype, device));
  if (is_floating(dtype) || is_complex(dtype)) g.buffer.fill_(std::numeric_limits<double>::quiet_NaN());
  else bytes_of(g.buffer).fill_(kPatternByte);
  DimVector strides = contiguous_strides(shape);
  for (int64_t& s : strides) s *= step;
  g.view = g.buffer.as_strided_view(shape, strides, kGuard);
  // the bytes as the device wrote them (a device may store another NaN than the host would)
  for (const Tensor& r : guard_regions(g)) g.pristine.push_back(bytes_of(r).to_vector<int64_t>());
  return g;
}

std::string check_guard(const Guarded& g) {
  if (g.view.storage().get() != g.buffer.storage().get() || g.view.storage_offset() != kGuard)
    return "out= moved the destination out of its buffer (it must write into the given view)";
  static const char* const kWhere[] = {"before the destination", "after the destination",
                                       "into the gaps of the destination"};
  const std::vector<Tensor> regions = guard_regions(g);
  const int64_t es = int64_t(g.buffer.element_size());
  for (size_t r = 0; r < regions.size(); ++r) {
    const std::vector<int64_t> now = bytes_of(regions[r]).to_vector<int64_t>();
    for (size_t i = 0; i < now.size(); ++i)
      if (now[i] != g.pristine[r][i])
        return "wrote " + std::string(kWhere[r]) + " (guard element " + std::to_string(int64_t(i) / es) + " of " +
               std::to_string(regions[r].numel()) + ")";
  }
  return "";
}

}  // namespace kiln::sweep
