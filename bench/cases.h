#ifndef KILN_BENCH_CASES_H_
#define KILN_BENCH_CASES_H_
// The benchmark's cases, one file per group; each case runs the same work in kiln and libtorch.
#include <vector>

#include "harness.h"

namespace kiln_bench {

std::vector<Case> overhead_cases();
std::vector<Case> pointwise_cases();
std::vector<Case> copy_cases();
std::vector<Case> shape_cases();
std::vector<Case> factory_cases();
std::vector<Case> reduction_cases();
std::vector<Case> sorting_cases();
std::vector<Case> linalg_cases();
std::vector<Case> training_cases();
std::vector<Case> indexing_cases();
std::vector<Case> searching_cases();
std::vector<Case> nn_cases();
std::vector<Case> unique_cases();
std::vector<Case> rnn_cases();
std::vector<Case> transformer_cases();
std::vector<Case> cnn_cases();

}  // namespace kiln_bench
#endif  // KILN_BENCH_CASES_H_
