#pragma once
// The measurements an engine has queued on its backend (each replica's exact or fixed-order
// sums, Model::Sums) until collect() moves them to the host as observables, and the exact
// histograms they are binned into. It does not depend on the lattice's dimension.

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/models/lattice_model.hpp"
#include "sim/communicator.hpp"
#include "sim/engine/engine.hpp"

namespace lattica {

template <class Exec, class Model>
class MeasurementQueue {
 public:
  using Sums = typename Model::Sums;

  MeasurementQueue(const Exec& exec, int replicas, int64_t capacity)
      : exec_(exec),
        replicas_(replicas),
        capacity_(capacity),
        sums_(exec.template allocate<Sums>(capacity * replicas)) {
    exec_.zero(sums_);  // fused measurements add to their slot (and collect() clears it)
    for (const HistogramInfo& info : Model::histograms()) {
      histograms_.push_back({info.name, info.description, {}, 0});
    }
  }

  /// Where the next measurement's sums go, one per replica, zero.
  Sums* next() {
    if (queued_ >= capacity_) throw std::logic_error("measure: queue full, collect() first");
    return sums_.data() + queued_ * replicas_;
  }
  /// The measurement at next() is complete.
  void push() { ++queued_; }
  int64_t queued() const { return queued_; }

  /// Moves the queued sums into out.count and out.values (observables of volume `volume`) and
  /// into the histograms. `ranks`: a decomposed run's ranks, whose partial sums are added
  /// first (the same totals on every rank), or null. `record_params`: the couplings of each
  /// record k * replicas + r (tempered runs), or null: `params` for all.
  void collect(const typename Model::Params& params, double volume, Communicator* ranks,
               MeasurementBatch& out,
               const typename Model::Params* const* record_params = nullptr) {
    const int64_t n = queued_ * replicas_;
    host_sums_.resize(static_cast<size_t>(n));
    exec_.copy_to_host(sums_, host_sums_.data(), n);
    if (ranks && n > 0) {
      sum_over_ranks(*ranks, host_sums_.data(), n);
      exec_.copy_to_device(host_sums_.data(), sums_, n);  // the histograms bin them there
    }
    // Discrete models: exact sums until this last step, so both backends give the same doubles.
    const size_t observables = Model::observable_names(params).size();
    out.count = queued_;
    out.values.resize(static_cast<size_t>(n) * observables);
    for (int64_t i = 0; i < n; ++i) {
      Model::observables(record_params ? *record_params[i] : params,
                         host_sums_[static_cast<size_t>(i)], volume, &out.values[i * observables]);
    }
    if constexpr (Model::kExactHistograms) {
      const std::vector<HistogramInfo> info = Model::histograms();
      for (size_t h = 0; h < histograms_.size(); ++h) {
        accumulate(histograms_[h], n, static_cast<int>(h), info[h].step);
      }
    }
    exec_.zero(sums_, n);  // fused measurements add to their slot
    queued_ = 0;
  }

  /// The sums the last collect() moved to the host, [k * replicas + r].
  const std::vector<Sums>& collected_sums() const { return host_sums_; }
  const std::vector<ExactHistogram>& histograms() const { return histograms_; }
  void restore(const std::vector<ExactHistogram>& histograms) { histograms_ = histograms; }

 private:
  /// Bins the queued totals (still in the backend's memory) over the window of values they
  /// span, then adds the window to the sparse exact histogram.
  void accumulate(ExactHistogram& h, int64_t n, int which, long long step) {
    if (n == 0) return;
    long long lowest = Model::histogram_total(host_sums_[0], which), highest = lowest;
    for (const Sums& s : host_sums_) {
      lowest = std::min(lowest, Model::histogram_total(s, which));
      highest = std::max(highest, Model::histogram_total(s, which));
    }
    const int64_t bins = (highest - lowest) / step + 1;
    if (bins > 4 * n) {
      // A wide, sparse window (a chain still far from equilibrium): the totals are on the host
      // already, and counting them there beats clearing, filling and copying empty bins.
      for (const Sums& s : host_sums_) ++h.counts[Model::histogram_total(s, which)];
      h.samples += n;
      return;
    }
    if (counts_.size() < bins) counts_ = exec_.template allocate<unsigned long long>(bins);
    exec_.histogram(n, TotalBin<Model>{sums_.data(), lowest, step, which}, bins, counts_);
    host_counts_.resize(static_cast<size_t>(bins));
    exec_.copy_to_host(counts_, host_counts_.data(), bins);
    for (int64_t b = 0; b < bins; ++b) {
      if (host_counts_[b] != 0)
        h.counts[lowest + step * b] += static_cast<long long>(host_counts_[b]);
    }
    h.samples += n;
  }

  const Exec& exec_;
  int replicas_;
  int64_t capacity_;
  int64_t queued_ = 0;
  typename Exec::template Buffer<Sums> sums_;  ///< [k][replica]
  typename Exec::template Buffer<unsigned long long> counts_;
  std::vector<Sums> host_sums_;
  std::vector<unsigned long long> host_counts_;
  std::vector<ExactHistogram> histograms_;
};

}  // namespace lattica
