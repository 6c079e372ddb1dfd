#ifndef KILN_RUNTIME_INCLUDE_KILN_LAYOUT_H_
#define KILN_RUNTIME_INCLUDE_KILN_LAYOUT_H_
// How a tensor's elements are stored (its layout) and how a factory orders a dense tensor's
// dims in memory (its memory format), as torch.layout and torch.memory_format.
#include <cstdint>
#include <string_view>

namespace kiln {

// Dispatch is indexed by (device type, layout): every op has strided kernels; the sparse
// layouts have no tables yet, so an op asked for one raises NotImplementedError naming it.
enum class Layout : int8_t { Strided = 0, SparseCoo = 1, SparseCsr = 2 };
inline constexpr int kNumLayouts = 3;

enum class MemoryFormat : int8_t { Contiguous = 0, Preserve = 1, ChannelsLast = 2, ChannelsLast3d = 3 };

const char* layout_name(Layout layout);               // "strided", "sparse_coo", "sparse_csr"
const char* memory_format_name(MemoryFormat format);  // "contiguous_format", "preserve_format", ...
// Parses the names above (also with a "torch." prefix); ValueError naming `op` and `arg` otherwise.
Layout parse_layout(std::string_view name, const char* op, const char* arg);
MemoryFormat parse_memory_format(std::string_view name, const char* op, const char* arg);

}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_LAYOUT_H_
