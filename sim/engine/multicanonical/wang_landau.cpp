#include "sim/engine/multicanonical/wang_landau.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include "kernels/models/ising.hpp"  // metropolis_threshold

namespace lattica {

WangLandau::WangLandau(const std::vector<double>& initial_log_g, MucaWindow window,
                       const WangLandauSettings& settings)
    : settings_(settings),
      window_(window),
      lnf_(settings.lnf_initial),
      log_g_(initial_log_g),
      stage_counts_(initial_log_g.size(), 0),
      visited_(initial_log_g.size(), 0) {
  if (window.first < 0 || window.last < window.first ||
      window.last >= static_cast<int64_t>(initial_log_g.size()))
    throw std::invalid_argument("WangLandau: the window must lie within the bins");
}

WangLandau::WangLandau(WangLandauState state, MucaWindow window, const WangLandauSettings& settings)
    : WangLandau(state.log_g, window, settings) {
  if (state.stage_counts.size() != log_g_.size() || state.visited.size() != log_g_.size())
    throw std::invalid_argument("WangLandau: a state of another number of bins");
  lnf_ = state.lnf;
  stages_ = state.stages;
  stage_counts_ = std::move(state.stage_counts);
  visited_ = std::move(state.visited);
}

bool WangLandau::add(const std::vector<uint64_t>& counts) {
  if (counts.size() != log_g_.size())
    throw std::invalid_argument("WangLandau::add: one count per bin expected");
  uint64_t total = 0;
  int64_t bins_visited = 0;
  for (int64_t b = window_.first; b <= window_.last; ++b) {
    total += counts[b];
    bins_visited += counts[b] > 0;
  }
  if (total == 0) return false;
  const double rise_per_visit =
      lnf_ * static_cast<double>(bins_visited) / static_cast<double>(total);
  for (int64_t b = window_.first; b <= window_.last; ++b) {
    if (counts[b] == 0) continue;
    log_g_[b] += rise_per_visit * static_cast<double>(counts[b]);
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
  for (int64_t b = window_.first; b <= window_.last; ++b) {
    if (!visited_[b]) continue;
    smallest = std::min(smallest, stage_counts_[b]);
    total += stage_counts_[b];
    ++bins;
  }
  return bins > 0 && smallest > 0 && smallest >= settings_.flatness * (total / bins);
}

std::vector<double> muca_log_weights(const std::vector<double>& log_g, MucaWindow window) {
  const double top =
      *std::min_element(log_g.begin() + window.first, log_g.begin() + window.last + 1);
  std::vector<double> w(log_g.size(), std::numeric_limits<double>::quiet_NaN());
  for (int64_t b = window.first; b <= window.last; ++b) w[b] = top - log_g[b];
  return w;
}

std::vector<uint64_t> muca_thresholds(const std::vector<double>& log_weight, MucaWindow window,
                                      int d) {
  const auto bins = static_cast<int64_t>(log_weight.size());
  const int moves = 4 * d + 1;
  const uint64_t certain = uint64_t(1) << 32;
  std::vector<uint64_t> t(static_cast<size_t>(bins * moves), 0);
  for (int64_t k = 0; k < bins; ++k) {
    for (int dk = -2 * d; dk <= 2 * d; ++dk) {
      const int64_t to = k + dk;
      if (to < 0 || to >= bins) continue;
      uint64_t& entry = t[k * moves + dk + 2 * d];
      if (k < window.first) {
        entry = dk >= 0 ? certain : 0;
      } else if (k > window.last) {
        entry = dk <= 0 ? certain : 0;
      } else if (window.contains(to)) {
        // metropolis_threshold(x) accepts with min(1, e^-x); here x = lnW(k) - lnW(k + dk).
        entry = metropolis_threshold(log_weight[k] - log_weight[to]);
      }
    }
  }
  return t;
}

}  // namespace lattica
