#pragma once
// The observables passes estimate themselves (Pass::estimates(), e.g. a cluster pass's improved
// estimator), queued per measurement beside the model's sums until collect() appends them to
// each row of observables. Each is an exact ratio of integers per replica, whose numerator and
// denominator are summed over the ranks of a decomposed run first.

#include <cstdint>
#include <vector>

#include "sim/communicator.hpp"
#include "sim/engine/engine.hpp"
#include "sim/engine/pass.hpp"

namespace lattica {

template <class Exec>
class EstimateQueue {
 public:
  EstimateQueue(const Exec& exec, std::vector<Estimate> estimates, int replicas, int64_t capacity)
      : exec_(exec), estimates_(std::move(estimates)), replicas_(replicas) {
    if (!estimates_.empty()) slots_ = exec_.template allocate<long long>(capacity * row());
  }

  const std::vector<Estimate>& estimates() const { return estimates_; }
  /// Where measurement `k` of the queue records its estimates (null when there are none).
  long long* slot(int64_t k) { return estimates_.empty() ? nullptr : slots_.data() + k * row(); }

  /// Widens out.values (out.count measurements x replicas rows of `model_observables`) by the
  /// estimates of the first out.count slots.
  void append_to(MeasurementBatch& out, size_t model_observables, Communicator* ranks) {
    if (estimates_.empty()) return;
    const int64_t n = out.count * row();
    host_.resize(static_cast<size_t>(n));
    if (n > 0) exec_.copy_to_host(slots_, host_.data(), n);
    if (ranks && n > 0) sum_over_ranks(*ranks, host_.data(), n);
    const size_t e = estimates_.size();
    const size_t rows = static_cast<size_t>(out.count) * static_cast<size_t>(replicas_);
    std::vector<double> widened(rows * (model_observables + e));
    for (size_t i = 0; i < rows; ++i) {
      for (size_t m = 0; m < model_observables; ++m)
        widened[i * (model_observables + e) + m] = out.values[i * model_observables + m];
      for (size_t k = 0; k < e; ++k) {
        const long long numerator = host_[2 * (i * e + k)];
        const long long denominator = host_[2 * (i * e + k) + 1];
        widened[i * (model_observables + e) + model_observables + k] =
            static_cast<double>(numerator) / static_cast<double>(denominator);
      }
    }
    out.values = std::move(widened);
  }

 private:
  int64_t row() const { return 2 * static_cast<int64_t>(estimates_.size()) * replicas_; }

  const Exec& exec_;
  std::vector<Estimate> estimates_;
  int replicas_;
  typename Exec::template Buffer<long long> slots_;  ///< [measurement][replica][estimate][2]
  std::vector<long long> host_;
};

}  // namespace lattica
