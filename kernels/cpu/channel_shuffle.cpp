// channel_shuffle on CPU: each output row of `inner` elements is one memcpy from its source
// channel, so every dtype shares one kernel. The meta step (kiln/meta/channel_shuffle.h) has
// checked the arguments.
#include <cstring>
#include "kiln/cpu/parallel.h"
#include "kiln/gen/kernels/cpu/channel_shuffle.h"

namespace kiln::cpu {

void channel_shuffle(const meta::ChannelShufflePlan& plan, const TensorBase& out, const TensorBase& self) {
  const int64_t channels = plan.groups * plan.per_group, rows = plan.batch * channels;
  if (rows == 0 || plan.inner == 0) return;
  const size_t row_bytes = size_t(plan.inner) * out.element_size();
  char* o = static_cast<char*>(out.data_ptr());
  const char* s = static_cast<const char*>(self.data_ptr());
  ::kiln::detail::parallel_items(rows, plan.inner, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      // out channel c = i * groups + j reads channel j * per_group + i of the same sample
      const int64_t b = r / channels, c = r % channels, i = c / plan.groups, j = c % plan.groups;
      const int64_t src = b * channels + j * plan.per_group + i;
      std::memcpy(o + size_t(r) * row_bytes, s + size_t(src) * row_bytes, row_bytes);
    }
  });
}

}  // namespace kiln::cpu
