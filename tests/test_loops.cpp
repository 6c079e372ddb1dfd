// CPU elementwise loop engine (kiln/cpu/loops.h): geometry (dim dropping, ordering, coalescing),
// run iteration over arbitrary ranges, thread splitting, and results on non-contiguous operands.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>
#include "kiln/cpu/loops.h"
#include "kiln/core.h"

using namespace kiln;
using cpu::StridedGeometry;

namespace {

Tensor iota(IntArrayRef shape) { return arange(numel_of(shape), TensorOptions(kFloat32)).reshape(shape); }

StridedGeometry geometry(const Tensor& out, const Tensor& in) {
  const TensorBase* ops[] = {&out, &in};
  return cpu::make_geometry(ops, 2);
}

std::vector<int64_t> sizes_of(const StridedGeometry& g) { return std::vector<int64_t>(g.sizes, g.sizes + g.ndim); }
std::vector<int64_t> strides_of(const StridedGeometry& g, int k) {
  return std::vector<int64_t>(g.strides[k], g.strides[k] + g.ndim);
}

// A call with `out` and the inputs as they are (already of one shape), as prepare would leave it.
PointwiseCall make_call(const Tensor& out, std::initializer_list<Tensor> inputs) {
  PointwiseCall call;
  call.out = out;
  for (const Tensor& t : inputs) call.hold_input(call.num_inputs++, t);
  return call;
}

}  // namespace

TEST_CASE("make_geometry: contiguous operands coalesce into one dense run") {
  Tensor out = empty({2, 3, 4}), in = iota({2, 3, 4});
  StridedGeometry g = geometry(out, in);
  CHECK(g.ndim == 1);
  CHECK(g.numel == 24);
  CHECK(sizes_of(g) == std::vector<int64_t>{24});
  CHECK(strides_of(g, 0) == std::vector<int64_t>{4});
  CHECK(g.contiguous);
  CHECK(g.base[0] == out.data_ptr());
  CHECK(g.base[1] == in.data_ptr());

  // size-1 dims change no address and are dropped
  StridedGeometry g1 = geometry(empty({2, 1, 3}), iota({2, 1, 3}));
  CHECK(g1.ndim == 1);
  CHECK(g1.contiguous);

  // operands of different element sizes are still dense
  Tensor flags = empty({5}, TensorOptions(kBool)), d = zeros({5}, TensorOptions(kFloat64));
  StridedGeometry g2 = geometry(flags, d);
  CHECK(g2.contiguous);
  CHECK(strides_of(g2, 0) == std::vector<int64_t>{1});
  CHECK(strides_of(g2, 1) == std::vector<int64_t>{8});
}

TEST_CASE("make_geometry: a transposed input keeps two dims, ordered by the output") {
  Tensor out = empty({4, 3}), in = iota({3, 4}).t();  // in strides [1, 4]
  StridedGeometry g = geometry(out, in);
  CHECK(g.ndim == 2);
  CHECK_FALSE(g.contiguous);
  CHECK(sizes_of(g) == std::vector<int64_t>{3, 4});
  CHECK(strides_of(g, 0) == std::vector<int64_t>{4, 12});
  CHECK(strides_of(g, 1) == std::vector<int64_t>{16, 4});
}

TEST_CASE("make_geometry: a transposed output iterates in its memory order") {
  Tensor out = empty({3, 4}).t(), in = iota({4, 3});  // out strides [1, 4]
  StridedGeometry g = geometry(out, in);
  CHECK(g.ndim == 2);
  CHECK(sizes_of(g) == std::vector<int64_t>{4, 3});
  CHECK(strides_of(g, 0) == std::vector<int64_t>{4, 16});
  CHECK(strides_of(g, 1) == std::vector<int64_t>{12, 4});
  // both transposed the same way: dense again
  StridedGeometry both = geometry(out, iota({3, 4}).t());
  CHECK(both.ndim == 1);
  CHECK(both.contiguous);
}

TEST_CASE("make_geometry: broadcast and sliced inputs") {
  Tensor out = empty({2, 3});
  StridedGeometry row = geometry(out, iota({3}).expand({2, 3}));
  CHECK(sizes_of(row) == std::vector<int64_t>{3, 2});
  CHECK(strides_of(row, 1) == std::vector<int64_t>{4, 0});
  StridedGeometry col = geometry(out, iota({2, 1}).expand({2, 3}));
  CHECK(sizes_of(col) == std::vector<int64_t>{3, 2});
  CHECK(strides_of(col, 1) == std::vector<int64_t>{0, 4});

  StridedGeometry cols = geometry(empty({3, 2}), iota({3, 4}).slice(1, 0, 2));
  CHECK(sizes_of(cols) == std::vector<int64_t>{2, 3});
  CHECK(strides_of(cols, 1) == std::vector<int64_t>{4, 16});

  // every other block of a [4, 3, 2] tensor: the inner two dims merge, the outer one cannot
  Tensor blocks = iota({4, 3, 2}).slice(0, 0, 4, 2);
  StridedGeometry gb = geometry(empty({2, 3, 2}), blocks);
  CHECK(sizes_of(gb) == std::vector<int64_t>{6, 2});
  CHECK(strides_of(gb, 1) == std::vector<int64_t>{4, 48});
  // a nonzero storage offset shows in the base pointer
  Tensor four = iota({4});
  CHECK(geometry(empty({2}), four.narrow(0, 2, 2)).base[1] == static_cast<char*>(four.data_ptr()) + 8);
}

TEST_CASE("make_geometry: empty and 0-d tensors, too many dims") {
  StridedGeometry e = geometry(empty({0, 3}), zeros({0, 3}));
  CHECK(e.numel == 0);
  StridedGeometry s = geometry(empty({}), scalar_tensor(2.0, TensorOptions(kFloat32)));
  CHECK(s.numel == 1);
  CHECK(s.ndim == 0);
  CHECK(s.contiguous);

  // 17 dims of size 2 where the input runs backwards: nothing merges
  DimVector shape(17, 2), rev;
  for (int64_t d = 16; d >= 0; --d) rev.push_back(d);
  Tensor in = zeros(shape).permute(rev);
  CHECK_THROWS_AS(geometry(empty(shape), in), NotImplementedError);
}

TEST_CASE("for_each_run: any begin..end range visits exactly those elements in order") {
  Tensor out = empty({3, 4}).t(), in = iota({4, 3});
  StridedGeometry g = geometry(out, in);
  char* base = g.base[1];
  // element offsets (in floats) of the input, in iteration order, for the whole range
  std::vector<int64_t> all;
  cpu::for_each_run(g, 2, 0, g.numel, [&](char** p, const int64_t* s, int64_t count) {
    for (int64_t i = 0; i < count; ++i) all.push_back((p[1] + i * s[1] - base) / 4);
  });
  CHECK(all == std::vector<int64_t>{0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11});
  for (int64_t b = 0; b <= g.numel; ++b) {
    for (int64_t e = b; e <= g.numel; ++e) {
      std::vector<int64_t> part;
      cpu::for_each_run(g, 2, b, e, [&](char** p, const int64_t* s, int64_t count) {
        for (int64_t i = 0; i < count; ++i) part.push_back((p[1] + i * s[1] - base) / 4);
      });
      CHECK(part == std::vector<int64_t>(all.begin() + b, all.begin() + e));
    }
  }
}

TEST_CASE("parallel_range and parallel_items cover the range once, in aligned chunks") {
  for (int64_t n : {int64_t(10), cpu::kParallelGrain * 2 + 7, cpu::kParallelGrain * 5 + 1}) {
    std::vector<int> hits(size_t(n), 0);
    std::vector<int64_t> begins;
    detail::parallel_range(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) ++hits[size_t(i)];  // disjoint ranges: no race
#pragma omp critical
      begins.push_back(b);
    });
    bool once = true;
    for (int h : hits) once = once && h == 1;
    CHECK(once);
    for (int64_t b : begins) CHECK(b % 64 == 0);
    std::vector<int> items(size_t(n), 0);
    detail::parallel_items(n, 3, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) ++items[size_t(i)];
    });
    once = true;
    for (int h : items) once = once && h == 1;
    CHECK(once);
  }
  // The grain decides the threads: one per kParallelGrain elements, never more than the items.
  CHECK(detail::threads_for(cpu::kParallelGrain - 1, 1000) == 1);
  CHECK(detail::threads_for(cpu::kParallelGrain * 64, 1) == 1);
}

TEST_CASE("fill_ and copy_ walk the iteration layer: transposed, broadcast and strided operands") {
  // a transposed source large enough to take the tiles, with a change of dtype
  Tensor a = iota({40, 24});
  Tensor t = empty({24, 40}, TensorOptions(kFloat64));
  t.copy_(a.t());
  std::vector<double> got = t.to_vector<double>();
  bool same = true;
  for (int64_t i = 0; i < 24; ++i)
    for (int64_t j = 0; j < 40; ++j) same = same && got[size_t(i * 40 + j)] == double(j * 24 + i);
  CHECK(same);
  // a row broadcast into every row of a column-major destination
  Tensor dst = empty({5, 3}).t();  // [3, 5], stride (1, 3)
  dst.copy_(iota({5}));
  CHECK(dst.to_vector<float>() == std::vector<float>{0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4});
  // fill_ of every other element leaves the rest
  Tensor z = zeros({6});
  z.slice(0, 0, 6, 2).fill_(7);
  CHECK(z.to_vector<float>() == std::vector<float>{7, 0, 7, 0, 7, 0});
}

TEST_CASE("pointwise_loop: contiguous, strided and broadcast operands") {
  Tensor a = iota({3, 4}), b = iota({4}).expand({3, 4});
  Tensor out = empty({3, 4});
  cpu::pointwise_loop<float, float, float>(make_call(out, {a, b}), [](float x, float y) { return x * 10 + y; });
  CHECK(out.to_vector<float>() ==
        std::vector<float>{0, 11, 22, 33, 40, 51, 62, 73, 80, 91, 102, 113});

  // transposed input into a contiguous output, with a change of type
  Tensor flags = empty({4, 3}, TensorOptions(kBool));
  cpu::pointwise_loop<bool, float>(make_call(flags, {iota({3, 4}).t()}), [](float x) { return x > 5; });
  CHECK(flags.to_vector<bool>() ==
        std::vector<bool>{false, false, true, false, false, true, false, true, true, false, true, true});

  // an offset view is read from its offset
  Tensor tail = iota({6}).narrow(0, 3, 3), o3 = empty({3});
  cpu::pointwise_loop<float, float>(make_call(o3, {tail}), [](float x) { return -x; });
  CHECK(o3.to_vector<float>() == std::vector<float>{-3, -4, -5});
}

TEST_CASE("pointwise_loop: large non-contiguous operands split across threads") {
  const int64_t rows = 300, cols = 257;  // 77100 elements: above two parallel grains
  Tensor src = iota({cols, rows});
  Tensor in = src.t();                    // [rows, cols], column-major
  Tensor other = iota({cols}).expand({rows, cols});
  Tensor out64 = empty({rows, cols}, TensorOptions(kFloat64));
  cpu::pointwise_loop<double, float, float>(make_call(out64, {in, other}),
                                            [](float x, float y) { return double(x) - double(y); });
  std::vector<double> got = out64.to_vector<double>();
  bool ok = true;
  for (int64_t r = 0; r < rows && ok; ++r)
    for (int64_t c = 0; c < cols && ok; ++c) ok = got[size_t(r * cols + c)] == double(c * rows + r) - double(c);
  CHECK(ok);

  // a transposed destination
  Tensor dst = empty({cols, rows}).t();
  cpu::pointwise_loop<float, float>(make_call(dst, {iota({rows, cols})}), [](float x) { return x + 1; });
  std::vector<float> d = dst.contiguous().to_vector<float>();
  bool ok2 = true;
  for (size_t i = 0; i < d.size() && ok2; ++i) ok2 = d[i] == float(i) + 1;
  CHECK(ok2);
}
