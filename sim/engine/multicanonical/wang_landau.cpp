#include "sim/engine/multicanonical/wang_landau.hpp"

#include <algorithm>
#include <stdexcept>

#include "kernels/models/ising.hpp"  // metropolis_threshold

namespace lattica {

WangLandau::WangLandau(int64_t bins, const WangLandauSettings& settings)
    : settings_(settings),
      lnf_(settings.lnf_initial),
      log_g_(static_cast<size_t>(bins), 0.0),
      stage_counts_(static_cast<size_t>(bins), 0),
      visited_(static_cast<size_t>(bins), 0) {}

bool WangLandau::add(const std::vector<uint64_t>& counts) {
  if (counts.size() != log_g_.size())
    throw std::invalid_argument("WangLandau::add: one count per bin expected");
  for (size_t b = 0; b < counts.size(); ++b) {
    if (counts[b] == 0) continue;
    log_g_[b] += lnf_ * static_cast<double>(counts[b]);
    stage_counts_[b] += counts[b];
    visited_[b] = 1;
  }
  if (!flat()) return false;
  lnf_ *= 0.5;
  ++stages_;
  std::fill(stage_counts_.begin(), stage_counts_.end(), 0);
  return true;
}

bool WangLandau::flat() const {
  uint64_t smallest = UINT64_MAX;
  long double total = 0;
  int64_t bins = 0;
  for (size_t b = 0; b < visited_.size(); ++b) {
    if (!visited_[b]) continue;
    smallest = std::min(smallest, stage_counts_[b]);
    total += stage_counts_[b];
    ++bins;
  }
  return bins > 0 && smallest > 0 && smallest >= settings_.flatness * (total / bins);
}

std::vector<double> muca_log_weights(const std::vector<double>& log_g) {
  const double top = *std::min_element(log_g.begin(), log_g.end());
  std::vector<double> w(log_g.size());
  for (size_t b = 0; b < w.size(); ++b) w[b] = top - log_g[b];
  return w;
}

std::vector<uint64_t> muca_thresholds(const std::vector<double>& log_weight, int d) {
  const auto bins = static_cast<int64_t>(log_weight.size());
  const int moves = 4 * d + 1;
  std::vector<uint64_t> t(static_cast<size_t>(bins * moves), 0);
  for (int64_t k = 0; k < bins; ++k) {
    for (int dk = -2 * d; dk <= 2 * d; ++dk) {
      if (k + dk < 0 || k + dk >= bins) continue;
      // metropolis_threshold(x) accepts with min(1, e^-x); here x = lnW(k) - lnW(k + dk).
      t[k * moves + dk + 2 * d] = metropolis_threshold(log_weight[k] - log_weight[k + dk]);
    }
  }
  return t;
}

}  // namespace lattica
