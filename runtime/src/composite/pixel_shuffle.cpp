// pixel_shuffle and pixel_unshuffle (ops/pooling.yaml): a reshape, a permute and a reshape, as
// PyTorch's math kernels (the result is a copy; autograd records the views and the copy).
#include "kiln/gen/composite.h"
#include "kiln/core.h"

namespace kiln::composite {

Tensor pixel_shuffle(const Tensor& self, int64_t upscale_factor) {
  const char* op = "pixel_shuffle";
  KILN_CHECK(self.dim() >= 3, ShapeError, op, "self",
             "pixel_shuffle expects input to have at least 3 dimensions, but got input with ", self.dim(),
             " dimension(s)");
  KILN_CHECK(upscale_factor > 0, ValueError, op, "upscale_factor",
             "pixel_shuffle expects a positive upscale_factor, but got ", upscale_factor);
  const int64_t r = upscale_factor, c = self.size(-3), h = self.size(-2), w = self.size(-1), d = self.dim();
  int64_t r2 = 0, hr = 0, wr = 0;
  KILN_CHECK(
      !__builtin_mul_overflow(r, r, &r2) && !__builtin_mul_overflow(h, r, &hr) && !__builtin_mul_overflow(w, r, &wr),
      ShapeError, op, "upscale_factor", "pixel_shuffle: upscale_factor ", r,
      " is too large (its square or the output's size overflows int64)");
  KILN_CHECK(c % r2 == 0, ShapeError, op, "self",
             "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, "
             "but input.size(-3)=",
             c, " is not divisible by ", r2);
  // [*, C, H, W] -> [*, C/r^2, r, r, H, W] -> [*, C/r^2, H, r, W, r] -> [*, C/r^2, H*r, W*r]
  const DimVector batch(IntArrayRef(self.sizes().data(), size_t(d - 3)));
  DimVector split = batch, result = batch;
  for (int64_t v : {c / r2, r, r, h, w}) split.push_back(v);
  for (int64_t v : {c / r2, hr, wr}) result.push_back(v);
  DimVector perm;
  for (int64_t i = 0; i < d - 3; ++i) perm.push_back(i);
  for (int64_t i : {0, 3, 1, 4, 2}) perm.push_back(d - 3 + i);
  return self.reshape(split).permute(perm).reshape(result);
}

Tensor pixel_unshuffle(const Tensor& self, int64_t downscale_factor) {
  const char* op = "pixel_unshuffle";
  KILN_CHECK(self.dim() >= 3, ShapeError, op, "self",
             "pixel_unshuffle expects input to have at least 3 dimensions, but got input with ", self.dim(),
             " dimension(s)");
  KILN_CHECK(downscale_factor > 0, ValueError, op, "downscale_factor",
             "pixel_unshuffle expects a positive downscale_factor, but got ", downscale_factor);
  const int64_t r = downscale_factor, c = self.size(-3), h = self.size(-2), w = self.size(-1), d = self.dim();
  int64_t r2 = 0, cr2 = 0;
  KILN_CHECK(!__builtin_mul_overflow(r, r, &r2) && !__builtin_mul_overflow(c, r2, &cr2), ShapeError, op,
             "downscale_factor", "pixel_unshuffle: channels (", c, ") times downscale_factor squared (", r,
             "^2) overflows int64");
  KILN_CHECK(h % r == 0, ShapeError, op, "self",
             "pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)=", h,
             " is not divisible by ", r);
  KILN_CHECK(w % r == 0, ShapeError, op, "self",
             "pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)=", w,
             " is not divisible by ", r);
  // [*, C, H, W] -> [*, C, H/r, r, W/r, r] -> [*, C, r, r, H/r, W/r] -> [*, C*r^2, H/r, W/r]
  const DimVector batch(IntArrayRef(self.sizes().data(), size_t(d - 3)));
  DimVector split = batch, result = batch;
  for (int64_t v : {c, h / r, r, w / r, r}) split.push_back(v);
  for (int64_t v : {cr2, h / r, w / r}) result.push_back(v);
  DimVector perm;
  for (int64_t i = 0; i < d - 3; ++i) perm.push_back(i);
  for (int64_t i : {0, 2, 4, 1, 3}) perm.push_back(d - 3 + i);
  return self.reshape(split).permute(perm).reshape(result);
}

}  // namespace kiln::composite
