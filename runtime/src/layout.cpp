// Layout and memory-format names (torch.layout / torch.memory_format spelling).
#include "kiln/layout.h"

#include "kiln/error.h"

namespace kiln {
namespace {

std::string_view without_torch_prefix(std::string_view name) {
  constexpr std::string_view prefix = "torch.";
  return name.substr(0, prefix.size()) == prefix ? name.substr(prefix.size()) : name;
}

}  // namespace

const char* layout_name(Layout layout) {
  switch (layout) {
    case Layout::Strided: return "strided";
    case Layout::SparseCoo: return "sparse_coo";
    case Layout::SparseCsr: return "sparse_csr";
  }
  return "unknown";
}

const char* memory_format_name(MemoryFormat format) {
  switch (format) {
    case MemoryFormat::Contiguous: return "contiguous_format";
    case MemoryFormat::Preserve: return "preserve_format";
    case MemoryFormat::ChannelsLast: return "channels_last";
    case MemoryFormat::ChannelsLast3d: return "channels_last_3d";
  }
  return "unknown";
}

Layout parse_layout(std::string_view name, const char* op, const char* arg) {
  std::string_view n = without_torch_prefix(name);
  for (Layout l : {Layout::Strided, Layout::SparseCoo, Layout::SparseCsr})
    if (n == layout_name(l)) return l;
  KILN_FAIL(ValueError, op, arg, "unknown layout '", name, "' (strided, sparse_coo, sparse_csr)");
}

MemoryFormat parse_memory_format(std::string_view name, const char* op, const char* arg) {
  std::string_view n = without_torch_prefix(name);
  for (MemoryFormat f : {MemoryFormat::Contiguous, MemoryFormat::Preserve, MemoryFormat::ChannelsLast,
                         MemoryFormat::ChannelsLast3d})
    if (n == memory_format_name(f)) return f;
  KILN_FAIL(ValueError, op, arg, "unknown memory format '", name,
            "' (contiguous_format, preserve_format, channels_last, channels_last_3d)");
}

}  // namespace kiln
