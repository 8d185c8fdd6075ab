#pragma once
// Spectral measurements of the order-parameter field: the structure factor S(k) (running sums
// of every sample and the queued S(0), S(k_min) of each measurement) and momentum-projected
// time-slice correlators. They start from a lexicographic double field the engine fills
// (FieldComponents), so they depend on the backend only: sim/engine/spectral_measurements_*
// compile them once per backend (definitions in spectral_measurements_impl.hpp).

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/spectral/complex.hpp"
#include "kernels/spectral/structure_factor.hpp"
#include "sim/engine/engine.hpp"

namespace lattica {

/// Whether measurement number `measurement` (0, 1, ...) takes the structure factor.
inline bool structure_factor_due(const EngineSettings& s, int64_t measurement) {
  return s.structure_factor_every > 0 && measurement % s.structure_factor_every == 0;
}
/// Whether measurement number `measurement` takes the time-slice correlators.
inline bool timeslices_due(const EngineSettings& s, int64_t measurement) {
  return s.timeslice_every > 0 && measurement % s.timeslice_every == 0;
}

template <class Exec>
class SpectralMeasurements {
 public:
  /// Buffers, FFT plan and plane waves for the measurements `settings` asks for, over a field
  /// of `components` components per site. Throws InputError when the queue would not fit.
  SpectralMeasurements(const Exec& exec, const EngineSettings& settings, int components);
  ~SpectralMeasurements();

  /// The field the engine fills before measure(): [replica][component][site], lexicographic.
  double* field() { return field_.data(); }
  int components() const { return components_; }

  /// Queues what measurement number `measurement` takes (as due) from field(), as row `row`
  /// of the batch the next collect() returns.
  void measure(int64_t measurement, int64_t row);
  /// Moves the queued spectral values into `out` (its spectral and timeslice parts).
  void collect(MeasurementBatch& out);
  /// The structure factor's running sums; false when it is not measured.
  bool structure_factor(StructureFactorSums& out);
  /// Continues the running sums of a checkpoint.
  void restore(const StructureFactorSums& sums);

 private:
  void prepare_structure_factor();
  void prepare_timeslices();
  void measure_structure_factor(int64_t row);
  void measure_timeslices(int64_t row);

  const Exec& exec_;
  EngineSettings settings_;
  int replicas_;
  int64_t volume_;
  int components_;
  typename Exec::template Buffer<double> field_;
  // Structure factor.
  std::unique_ptr<typename Exec::Fft> fft_;
  int64_t modes_ = 0;
  typename Exec::template Buffer<Complex> spectrum_;
  typename Exec::template Buffer<double> power_sum_, power_squares_, mean_field_sum_;
  typename Exec::template Buffer<double> spectral_queue_;  ///< [j][replica][S(0), S(k_min)]
  std::vector<int64_t> spectral_rows_;  ///< queued measurements that took the structure factor
  int64_t spectral_samples_ = 0;
  std::vector<int> min_axes_;
  SpectrumSummary summary_{};  ///< all but the output row, fixed at preparation
  // Time-slice correlators.
  int64_t time_ = 0;
  int64_t timeslice_momenta_ = 0;
  typename Exec::template Buffer<double> plane_waves_, projections_, timeslice_queue_;
  std::vector<int64_t> timeslice_rows_;
};

}  // namespace lattica
