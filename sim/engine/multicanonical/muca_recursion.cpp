#include "sim/engine/multicanonical/muca_recursion.hpp"

#include <cmath>
#include <stdexcept>
#include <utility>

namespace lattica {

MucaRecursion::MucaRecursion(std::vector<double> wang_landau_log_g,
                             const std::vector<uint8_t>& visited, MucaWindow window,
                             double prior_weight)
    : wang_landau_log_g_(std::move(wang_landau_log_g)),
      window_(window),
      prior_weight_(prior_weight) {
  const auto bins = static_cast<int64_t>(wang_landau_log_g_.size());
  if (window.first < 0 || window.last < window.first || window.last >= bins ||
      static_cast<int64_t>(visited.size()) != bins)
    throw std::invalid_argument("MucaRecursion: the window must lie within the bins");
  if (!(prior_weight > 0))
    throw std::invalid_argument("MucaRecursion: the prior weight must be positive");
  for (int64_t k = window.first; k <= window.last; ++k) {
    if (visited[k]) nodes_.push_back(k);
  }
  state_.pair_weight.assign(static_cast<size_t>(bins), 0.0);
  state_.pair_sum.assign(static_cast<size_t>(bins), 0.0);
}

void MucaRecursion::restore(MucaRecursionState state) {
  if (state.pair_weight.size() != wang_landau_log_g_.size() ||
      state.pair_sum.size() != wang_landau_log_g_.size() || state.iterations < 0)
    throw std::invalid_argument("MucaRecursion: a state of another number of bins");
  state_ = std::move(state);
}

void MucaRecursion::add(const uint32_t* counts, const std::vector<double>& log_weight) {
  if (log_weight.size() != wang_landau_log_g_.size())
    throw std::invalid_argument("MucaRecursion::add: one log weight per bin expected");
  for (size_t j = 0; j + 1 < nodes_.size(); ++j) {
    const int64_t a = nodes_[j], b = nodes_[j + 1];
    const uint32_t ha = counts[a - window_.first], hb = counts[b - window_.first];
    if (ha == 0 || hb == 0) continue;
    const double x = static_cast<double>(ha), y = static_cast<double>(hb);
    const double w = x * y / (x + y);
    const double d = std::log(y) - std::log(x) - (log_weight[b] - log_weight[a]);
    state_.pair_weight[a] += w;
    state_.pair_sum[a] += w * d;
  }
}

std::vector<double> MucaRecursion::log_g() const {
  std::vector<double> lng = wang_landau_log_g_;
  if (nodes_.empty()) return lng;
  const std::vector<double>& prior = wang_landau_log_g_;
  // Each bin of the window is shifted as the visited bin at or below it (the first visited bin
  // for those below it): cumulative sums in increasing order, the same on every backend.
  double shift = 0;
  size_t j = 0;
  for (int64_t k = window_.first; k <= window_.last; ++k) {
    if (j + 1 < nodes_.size() && k == nodes_[j + 1]) {
      const int64_t a = nodes_[j];
      const double d = (prior_weight_ * (prior[k] - prior[a]) + state_.pair_sum[a]) /
                       (prior_weight_ + state_.pair_weight[a]);
      shift = (lng[a] + d) - prior[k];
      ++j;
    }
    lng[k] = prior[k] + shift;
  }
  return lng;
}

}  // namespace lattica
