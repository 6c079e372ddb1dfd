// One op's checks: each sample in each dtype both backends declare, made on the CPU, copied to
// the device, and run on both; the device's results must match the CPU's.
#include <functional>
#include <iostream>
#include "layouts.h"
#include "sample_inputs.h"
#include "sweep.h"

namespace kiln::sweep {

using testing::call_op;
using testing::flatten_result;
using testing::Variant;

Named copy_to(const Named& args, Device device) {
  Named out;
  for (const auto& [name, v] : args) {
    if (v.is_tensor() && v.to_tensor().defined()) {
      out[name] = Value(v.to_tensor().to(device, false, true));
    } else if (v.kind() == Value::Kind::TensorList) {
      TensorList list;
      for (const Tensor& t : v.to_tensor_list()) list.push_back(t.defined() ? t.to(device, false, true) : t);
      out[name] = Value(std::move(list));
    } else if (v.kind() == Value::Kind::Device) {  // a factory's device keyword
      out[name] = Value(device);
    } else {
      out[name] = v;
    }
  }
  return out;
}

namespace {
bool is_view_op(const OpInfo& op) { return op.signature.find("-> Tensor(a)") != std::string::npos; }

std::string describe(const std::exception& e) {
  if (auto* k = dynamic_cast<const kiln::Error*>(&e))
    return std::string("kiln raised a ") + error_kind_name(k->kind()) + ": " + k->what();
  return std::string("unexpected exception: ") + e.what();
}

// Thrown by a check that does not apply (why empty: not counted) or cannot run (counted).
struct Skip {
  std::string why;
};

// One sample of one op in one dtype (or its larger version): its CPU inputs and results.
struct Cell {
  const OpInfo& op;
  size_t index;
  DType dtype;
  bool larger;
  const Options& o;
  Tally& tally;
  Named inputs;              // contiguous, on the CPU; each call gets copies (ops may write arguments)
  std::vector<Tensor> want;  // the op on the CPU
  bool values = true;        // false: sizes and dtype only (random draws, unspecified values)

  void record(const std::string& variant, const std::function<std::string()>& check) {
    std::string fail;
    try {
      fail = check();
    } catch (const Skip& s) {
      if (!s.why.empty()) tally.skip(s.why);
      return;
    } catch (const std::exception& e) {
      fail = describe(e);
    }
    if (fail.empty()) {
      ++tally.passed;
      return;
    }
    ++tally.failed;
    std::cout << "FAIL " << op.name << " [" << o.device.str() << ", " << dtype_name(dtype) << "] sample " << index
              << (larger ? " (larger)" : "") << ", " << variant << ": " << fail << std::endl;
  }

  void dense() {
    record(larger ? "dense inputs, larger shapes" : "dense inputs", [&] {
      std::vector<Tensor> got = flatten_result(call_op(op, copy_to(inputs, o.device)));
      if (o.fault == Fault::Values && !got.empty()) got[0] = got[0].eq(0).to(got[0].dtype());
      return compare(got, want, o.device, values, larger);
    });
  }

  void layouts() {
    for (const testing::Layout& layout : testing::input_layouts()) {
      record(std::string("inputs as ") + layout.name, [&] {
        Named laid, dense;
        if (!testing::lay_out(op, copy_to(inputs, o.device), layout, laid, dense)) throw Skip{};
        std::vector<Tensor> expected;
        try {
          expected = flatten_result(call_op(op, copy_to(dense, kCPU)));
        } catch (const kiln::Error&) {
          throw Skip{"the CPU refuses the values in another layout"};  // an expanded row may be singular
        }
        try {
          return compare(flatten_result(call_op(op, laid)), expected, o.device, values, false);
        } catch (const ShapeError&) {
          if (is_view_op(op)) throw Skip{"a view refuses strides it cannot express"};
          throw;
        }
      });
    }
  }

  void guarded_out(bool every_other) {
    record(every_other ? "out= into every other element of a guarded buffer" : "out= into a guarded view", [&] {
      std::vector<Guarded> guards;
      TensorList outs;
      for (const Tensor& w : want) {
        guards.push_back(guarded_view(w.sizes(), w.dtype(), o.device, every_other));
        outs.push_back(guards.back().view);
      }
      call_op(op, copy_to(inputs, o.device), Variant::Out, outs);
      if (o.fault == Fault::Guard && !guards.empty()) guards[0].buffer.narrow(0, 0, 1).fill_(1);
      for (size_t i = 0; i < guards.size(); ++i) {
        std::string d = check_guard(guards[i]);
        if (!d.empty()) return (guards.size() > 1 ? "output " + std::to_string(i) + ": " : std::string()) + d;
      }
      return compare(std::vector<Tensor>(outs.begin(), outs.end()), want, o.device, values, larger);
    });
  }
};

void check_cell(const OpInfo& op, size_t index, DType dtype, bool larger, const Options& o, Tally& tally) {
  Cell c{op, index, dtype, larger, o, tally, {}, {}};
  c.values = op.compare_values && !op.random;
  try {
    c.inputs = testing::sample_args(op, index, dtype, kCPU);
    c.want = flatten_result(call_op(op, copy_to(c.inputs, kCPU)));
  } catch (const kiln::Error& e) {  // whether it should is for the per-op tests to say
    tally.skip(std::string(larger ? "the CPU refuses the larger sample (a " : "the CPU refuses the sample (a ") +
               error_kind_name(e.kind()) + ")");
    return;
  }
  c.dense();
  if (!larger && !op.reads_storage) c.layouts();  // as_strided: other layouts give other values
  if (op.has_variant("out")) {
    c.guarded_out(false);
    if (!larger) c.guarded_out(true);
  }
}
}  // namespace

Tally check_op(const OpInfo& op, const std::vector<DType>& dtypes, const Options& o) {
  Tally tally;
  for (size_t i = 0; i < op.samples.size(); ++i) {
    for (DType dtype : dtypes) {
      check_cell(op, i, dtype, false, o, tally);
      if (!o.larger) continue;
      OpInfo big;
      std::string why;
      if (larger_sample(op, i, dtype, o.larger_numel, big, why)) check_cell(big, i, dtype, true, o, tally);
      else tally.skip("larger: " + why);
    }
  }
  return tally;
}

}  // namespace kiln::sweep
