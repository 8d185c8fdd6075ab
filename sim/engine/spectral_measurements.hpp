#pragma once
// Spectral measurements of the order-parameter field: the structure factor S(k) (running sums
// of every sample and the queued S(0), S(k_min) of each measurement) and momentum-projected
// time-slice correlators. They start from a lexicographic double field the engine fills
// (FieldComponents), so they depend on the backend only: sim/engine/spectral_measurements_*
// compile them once per backend (definitions in spectral_measurements_impl.hpp).
//
// Decomposed over ranks (on the CPU backend, in host memory), the field is this rank's box: the
// structure factor moves it to the rank's slab of axis 0 (BoxSlabs) for the distributed FFT
// (SlabFft) and keeps the running sums of the rank's rows of the spectrum; the correlators
// project the box and add the projections over the ranks. Nothing is gathered: each rank keeps
// (and checkpoints) the running sums of its own rows.

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/spectral/complex.hpp"
#include "kernels/spectral/structure_factor.hpp"
#include "sim/engine/engine.hpp"

namespace lattica {

template <class Exec>
class BoxSlabs;
template <class Exec>
class SlabFft;
template <class Exec>
class SlabFfts;

/// Whether measurement number `measurement` (0, 1, ...) takes the structure factor.
inline bool structure_factor_due(const EngineSettings& s, int64_t measurement) {
  return s.structure_factor_every > 0 && measurement % s.structure_factor_every == 0;
}
/// Whether measurement number `measurement` takes the time-slice correlators.
inline bool timeslices_due(const EngineSettings& s, int64_t measurement) {
  return s.timeslice_every > 0 && measurement % s.timeslice_every == 0;
}

/// The spectral measurements as an engine drives them, whatever backend they run on.
class Spectra {
 public:
  virtual ~Spectra() = default;
  /// The field the engine fills before measure(): [replica][component][site], lexicographic
  /// over the whole lattice, or over this rank's box when decomposed; the backend's memory.
  virtual double* field() = 0;
  virtual int components() const = 0;
  /// Queues what measurement number `measurement` takes (as due) from field(), as row `row`
  /// of the batch the next collect() returns. Decomposed: collective.
  virtual void measure(int64_t measurement, int64_t row) = 0;
  /// Moves the queued spectral values into `out` (its spectral and timeslice parts).
  /// Decomposed: collective, and every rank gets the whole lattice's values.
  virtual void collect(MeasurementBatch& out) = 0;
  /// The structure factor's running sums; false when it is not measured. Decomposed: collective,
  /// each rank gets the sums of its rows (StructureFactorSums::first_row) and the whole
  /// lattice's mean field.
  virtual bool structure_factor(StructureFactorSums& out) = 0;
  /// Continues the running sums of a checkpoint, whose rows must include this rank's.
  virtual void restore(const StructureFactorSums& sums) = 0;
};

template <class Exec>
class SpectralMeasurements final : public Spectra {
 public:
  /// Buffers, FFT plan and plane waves for the measurements `settings` asks for, over a field
  /// of `components` components per site; decomposed when `settings` has several ranks (on a
  /// GPU, after the ranks' enable_device), through the rank's shared distributed FFTs `ffts`
  /// (null when not decomposed). Throws InputError when the queue would not fit.
  SpectralMeasurements(const Exec& exec, const EngineSettings& settings, int components,
                       SlabFfts<Exec>* ffts);
  ~SpectralMeasurements() override;

  double* field() override { return field_.data(); }
  int components() const override { return components_; }
  void measure(int64_t measurement, int64_t row) override;
  void collect(MeasurementBatch& out) override;
  bool structure_factor(StructureFactorSums& out) override;
  void restore(const StructureFactorSums& sums) override;

 private:
  void prepare_structure_factor();
  void prepare_timeslices();
  void measure_structure_factor(int64_t row);
  void measure_timeslices(int64_t row);

  const Exec& exec_;
  EngineSettings settings_;
  int replicas_;
  int64_t volume_;  ///< of the whole lattice
  int components_;
  // Decomposed: the ranks, this rank's box (its origin and extents) and sites.
  Communicator* ranks_ = nullptr;
  std::vector<int64_t> box_origin_, box_extents_;
  int64_t sites_;  ///< of the field: the whole lattice, or this rank's box
  typename Exec::template Buffer<double> field_;
  // Structure factor (decomposed: over this rank's slab of axis 0, rows of the spectrum).
  std::unique_ptr<typename Exec::Fft> fft_;
  SlabFfts<Exec>* ffts_ = nullptr;
  SlabFft<Exec>* slab_fft_ = nullptr;  ///< one of ffts_
  std::unique_ptr<BoxSlabs<Exec>> slabs_;
  typename Exec::template Buffer<double> slab_field_;  ///< unless the box is the slab
  int64_t modes_ = 0;       ///< of the spectrum held: all, or this rank's rows
  int64_t first_mode_ = 0;  ///< the first of them
  int64_t row_modes_ = 0;   ///< modes of one row of axis 0
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
