#ifndef KILN_KERNELS_COMMON_RNN_CELL_H_
#define KILN_KERNELS_COMMON_RNN_CELL_H_
// One hidden unit of the fused LSTM and GRU cells, forward and backward, shared by the CPU and
// CUDA kernels (kernels/*/rnn.*) so both compute the same expressions. Acc is the compute type
// (float for 16-bit inputs). Gate and workspace layouts are ATen's (kiln/meta/rnn.h).
#include "math_activation.h"
#include "math_float.h"

namespace kiln::rnn {

template <typename Acc>
struct LstmForward {
  Acc hy, cy, i, f, g, o;  // i, f, g, o activated: the workspace
};

// gates: the four pre-activations (input + hidden gates + biases) of one unit.
template <typename Acc>
KILN_HOST_DEVICE inline LstmForward<Acc> lstm_forward(Acc gi, Acc gf, Acc gg, Acc go, Acc cx) {
  LstmForward<Acc> r;
  r.i = math::sigmoid(gi);
  r.f = math::sigmoid(gf);
  r.g = math::tanh(gg);
  r.o = math::sigmoid(go);
  r.cy = r.f * cx + r.i * r.g;
  r.hy = r.o * math::tanh(r.cy);
  return r;
}

template <typename Acc>
struct LstmBackward {
  Acc gi, gf, gg, go, gcx;  // the pre-activation gates' gradients and cx's
};

template <typename Acc>
KILN_HOST_DEVICE inline LstmBackward<Acc> lstm_backward(Acc ghy, Acc gcy, Acc cx, Acc cy, Acc i, Acc f, Acc g, Acc o) {
  const Acc tanh_cy = math::tanh(cy);
  const Acc gc = ghy * o * (Acc(1) - tanh_cy * tanh_cy) + gcy;  // cy's whole gradient
  LstmBackward<Acc> r;
  r.go = ghy * tanh_cy * o * (Acc(1) - o);
  r.gi = gc * g * i * (Acc(1) - i);
  r.gf = gc * cx * f * (Acc(1) - f);
  r.gg = gc * i * (Acc(1) - g * g);
  r.gcx = gc * f;
  return r;
}

template <typename Acc>
struct GruForward {
  Acc hy, r, z, n, hn;  // the workspace: r, z, n, hx, hn (hn = W_hn h + b_hn)
};

// ir, iz, in: input gates with input bias; hr, hz, hn: hidden gates with hidden bias.
template <typename Acc>
KILN_HOST_DEVICE inline GruForward<Acc> gru_forward(Acc ir, Acc iz, Acc in, Acc hr, Acc hz, Acc hn, Acc hx) {
  GruForward<Acc> s;
  s.r = math::sigmoid(ir + hr);
  s.z = math::sigmoid(iz + hz);
  s.n = math::tanh(in + s.r * hn);
  s.hn = hn;
  s.hy = s.n + s.z * (hx - s.n);
  return s;
}

template <typename Acc>
struct GruBackward {
  Acc gr, gz, gn, ghn, ghx;  // input gates' (gr, gz, gn), the hidden n gate's (ghn), hx's
};

template <typename Acc>
KILN_HOST_DEVICE inline GruBackward<Acc> gru_backward(Acc ghy, Acc r, Acc z, Acc n, Acc hx, Acc hn) {
  GruBackward<Acc> s;
  s.gn = ghy * (Acc(1) - z) * (Acc(1) - n * n);
  s.gz = ghy * (hx - n) * z * (Acc(1) - z);
  s.ghx = ghy * z;
  s.ghn = s.gn * r;
  s.gr = s.gn * hn * r * (Acc(1) - r);
  return s;
}

}  // namespace kiln::rnn
#endif  // KILN_KERNELS_COMMON_RNN_CELL_H_
