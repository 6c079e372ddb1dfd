#ifndef KILN_KERNELS_COMMON_MATH_H_
#define KILN_KERNELS_COMMON_MATH_H_
// kiln::math: the scalar functions the registry's `pointwise:` expressions call, written once
// for host and device (KILN_HOST_DEVICE). Generated functors evaluate their expression with
// `using namespace kiln::math;` and T the compute type: bool, uint8, int8, int16, int32,
// int64, float, double, complex<float>, complex<double> (float16/bfloat16 compute as float).
// Optional scalars arrive as Opt<T>, `str` choices as int64_t.
#include "math_base.h"
#include "math_complex.h"     // exp log sqrt sin ... of complex, abs, reciprocal, isnan ...
#include "math_float.h"       // exp exp2 log ... erf erfc atan2 hypot, isnan isinf isfinite truthy
#include "math_rounding.h"    // abs sign floor ceil trunc round_half_even
#include "math_conj.h"        // conj sgn angle (complex and real)
#include "math_compare.h"     // maximum minimum clamp nan_to_num
#include "math_integer.h"     // pow div_trunc div_floor python_mod fmod
#include "math_bitwise.h"     // bitwise_not/and/or/xor shift_left shift_right
#include "math_special.h"     // erfinv
#include "math_activation.h"  // sigmoid silu relu gelu gelu_grad elu mish softplus
#include "math_lerp.h"        // lerp
#endif  // KILN_KERNELS_COMMON_MATH_H_
