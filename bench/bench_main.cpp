// kiln_bench: every case with kiln and libtorch in one process, at 1 and 2 threads.
//   kiln_bench [--quick] [--rounds N] [--min-time S] [--threads 1,2] [--filter TEXT] [--json FILE]
// Prints a table as it goes and writes the results as JSON (tools/bench_report.py turns them
// into BENCHMARKS.md).
#include <ATen/Parallel.h>
#include <kiln/kiln.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cases.h"
#include "machine.h"

using namespace kiln_bench;
using nlohmann::json;

namespace {

struct Options {
  HarnessOptions harness;
  int rounds = 5;
  std::vector<int> threads{1, 2};
  std::string filter, json_path = "bench_results.json";
  bool quick = false;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "kiln_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--quick") {
      o.quick = true;
      o.rounds = 3;
      o.harness.min_time_s = 0.1;
    } else if (a == "--rounds") {
      o.rounds = std::max(1, std::stoi(next()));
    } else if (a == "--min-time") {
      o.harness.min_time_s = std::stod(next());
    } else if (a == "--threads") {
      o.threads.clear();
      std::string list = next();
      for (size_t p = 0; p < list.size();) {
        size_t q = list.find(',', p);
        o.threads.push_back(std::stoi(list.substr(p, q - p)));
        p = q == std::string::npos ? list.size() : q + 1;
      }
    } else if (a == "--filter") {
      o.filter = next();
    } else if (a == "--json") {
      o.json_path = next();
    } else {
      std::fprintf(stderr, "kiln_bench: unknown argument %s\n", a.c_str());
      std::exit(2);
    }
  }
  return o;
}

void set_threads(int n) {
  kiln::set_num_threads(n);
  at::set_num_threads(n);
}

std::string human_time(double s) {
  char buf[32];
  if (s < 1e-6) std::snprintf(buf, sizeof buf, "%.0f ns", s * 1e9);
  else if (s < 1e-3) std::snprintf(buf, sizeof buf, "%.2f us", s * 1e6);
  else std::snprintf(buf, sizeof buf, "%.2f ms", s * 1e3);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt = parse(argc, argv);
  std::vector<Case> cases;
  for (auto group :
       {overhead_cases, pointwise_cases, copy_cases, shape_cases, factory_cases, reduction_cases, sorting_cases,
        linalg_cases, training_cases, indexing_cases, searching_cases, nn_cases, unique_cases, rnn_cases, transformer_cases,
        cnn_cases})
    for (Case& c : group())
      if (opt.filter.empty() || c.name.find(opt.filter) != std::string::npos) cases.push_back(std::move(c));

  json out;
  out["rounds"] = opt.rounds;
  out["min_time_s"] = opt.harness.min_time_s;
  out["quick"] = opt.quick;
  out["blas"] = {{"cblas_sgemm", library_of("cblas_sgemm")}, {"sgemm_", library_of("sgemm_")}};
  out["machine"] = json::object();
  out["cases"] = json::array();
  std::printf("BLAS in this process: cblas_sgemm from %s, sgemm_ from %s\n", library_of("cblas_sgemm").c_str(),
              library_of("sgemm_").c_str());

  for (int threads : opt.threads) {
    set_threads(threads);
    MachineRates m = measure_machine(opt.harness);
    json& jm = out["machine"][std::to_string(threads)];
    jm["stream_add_gbs"] = m.stream_add_gbs;
    jm["gemm_gflops"] = m.gflops;
    std::printf("\n== %d thread%s: memory bandwidth %.1f GB/s (STREAM add); OpenBLAS sgemm 2048 %.1f GFLOP/s\n",
                threads, threads > 1 ? "s" : "", m.stream_add_gbs, m.gflops["sgemm2048"]);
    std::printf("%-46s %10s %10s %8s %15s  %s\n", "case", "kiln", "libtorch", "speedup", "spread", "derived");
    for (const Case& c : cases) {
      Prepared p = c.prepare();
      std::vector<double> ks, ts, ratios;
      for (int r = 0; r < opt.rounds; ++r) {
        Timing t = time_round(p, opt.harness);
        ks.push_back(t.kiln_s);
        ts.push_back(t.torch_s);
        ratios.push_back(t.torch_s / t.kiln_s);
      }
      double k = median(ks), t = median(ts), ratio = median(ratios);
      double lo = *std::min_element(ratios.begin(), ratios.end()), hi = *std::max_element(ratios.begin(), ratios.end());
      json jc = {{"name", c.name}, {"group", c.group}, {"threads", threads}, {"kiln_s", k}, {"torch_s", t},
                 {"speedup", ratio}, {"speedup_min", lo}, {"speedup_max", hi}, {"speedups", ratios},
                 {"kiln_rounds_s", ks}, {"torch_rounds_s", ts}};
      char derived[96] = "";
      if (c.bytes > 0) {
        double gbs = c.bytes / k / 1e9;
        jc["kiln_gbs"] = gbs;
        jc["torch_gbs"] = c.bytes / t / 1e9;
        jc["bandwidth_fraction"] = gbs / m.stream_add_gbs;
        std::snprintf(derived, sizeof derived, "%.1f GB/s (%.0f%% of STREAM)", gbs, 100 * gbs / m.stream_add_gbs);
      } else if (c.flops > 0) {
        double gf = c.flops / k / 1e9;
        jc["kiln_gflops"] = gf;
        jc["torch_gflops"] = c.flops / t / 1e9;
        if (!c.gemm_ref.empty()) {
          jc["blas_fraction"] = gf / m.gflops[c.gemm_ref];
          jc["torch_blas_fraction"] = c.flops / t / 1e9 / m.gflops[c.gemm_ref];
          std::snprintf(derived, sizeof derived, "%.1f GFLOP/s (%.2f of OpenBLAS)", gf, gf / m.gflops[c.gemm_ref]);
        } else {
          std::snprintf(derived, sizeof derived, "%.1f GFLOP/s", gf);
        }
      }
      std::printf("%-46s %10s %10s %7.2fx %6.2f - %5.2f  %s\n", c.name.c_str(), human_time(k).c_str(),
                  human_time(t).c_str(), ratio, lo, hi, derived);
      std::fflush(stdout);
      out["cases"].push_back(jc);
    }
  }
  std::ofstream(opt.json_path) << out.dump(2) << "\n";
  std::printf("\nresults: %s\n", opt.json_path.c_str());
  return 0;
}
