#ifndef KILN_RUNTIME_INCLUDE_KILN_CPU_MEMORY_H_
#define KILN_RUNTIME_INCLUDE_KILN_CPU_MEMORY_H_
// Measuring the CPU allocator's peak (cpu_allocator_stats() is in kiln/storage.h).
namespace kiln {

// peak_bytes := live_bytes, so the next peak measures what follows (as
// torch.cuda.reset_peak_memory_stats does for CUDA).
void cpu_allocator_reset_peak_stats();

}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_CPU_MEMORY_H_
