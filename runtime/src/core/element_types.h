#ifndef KILN_RUNTIME_SRC_CORE_ELEMENT_TYPES_H_
#define KILN_RUNTIME_SRC_CORE_ELEMENT_TYPES_H_
// X-macro over the C++ element type of every dtype, for explicit template instantiations.
#define KILN_FOR_EACH_ELEMENT_TYPE(X) \
  X(bool)                             \
  X(uint8_t)                          \
  X(int8_t)                           \
  X(int16_t)                          \
  X(int32_t)                          \
  X(int64_t)                          \
  X(Half)                             \
  X(BFloat16)                         \
  X(float)                            \
  X(double)                           \
  X(complex<float>)                   \
  X(complex<double>)
#endif  // KILN_RUNTIME_SRC_CORE_ELEMENT_TYPES_H_
