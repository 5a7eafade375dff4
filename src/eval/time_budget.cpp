#include "flynn/eval/time_budget.hpp"

#include "flynn/eval/fly_cv.hpp"

namespace flynn::eval {

double cv_evaluation_work(const FlyConfig& c, std::size_t rows, std::size_t L, std::uint32_t k,
                          std::size_t gammas) {
  const double n = static_cast<double>(rows);
  const double hashing = fly_cv_work(c, rows) * (FlyCvEvaluator::per_fold(c) ? k : 1) + n * c.m;
  return hashing + n * c.codes_per_row() * static_cast<double>(L) * static_cast<double>(gammas);
}

double fit_work(const FlyConfig& c, std::size_t rows) {
  return fly_cv_work(c, rows) + static_cast<double>(rows) * (c.m + c.codes_per_row());
}

}  // namespace flynn::eval
