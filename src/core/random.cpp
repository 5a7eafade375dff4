#include "flynn/random.hpp"

#include <cmath>

namespace flynn {

double SeededRng::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  double u, v, q;
  do {
    u = 2.0 * uniform01() - 1.0;
    v = 2.0 * uniform01() - 1.0;
    q = u * u + v * v;
  } while (q >= 1.0 || q == 0.0);
  const double f = std::sqrt(-2.0 * std::log(q) / q);
  spare_ = v * f;
  has_spare_ = true;
  return u * f;
}

}  // namespace flynn
