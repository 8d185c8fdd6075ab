#pragma once
// Definitions of SpectralMeasurements (sim/engine/spectral_measurements.hpp); only the files
// that instantiate it for a backend include this.

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/spectral/timeslice.hpp"
#include "sim/decomposition.hpp"
#include "sim/engine/spectral_measurements.hpp"
#include "sim/parallel/box_slabs.hpp"
#include "sim/parallel/slab_fft.hpp"

namespace lattica {

template <class Exec>
SpectralMeasurements<Exec>::SpectralMeasurements(const Exec& exec, const EngineSettings& settings,
                                                 int components, SlabFfts<Exec>* ffts)
    : exec_(exec),
      settings_(settings),
      replicas_(settings.replicas),
      volume_(volume_of(settings.dims)),
      components_(components),
      sites_(volume_) {
  if (settings.communicator && settings.communicator->size() > 1) {
    if (!ffts)
      throw std::logic_error("SpectralMeasurements: a decomposed field needs the ranks' FFTs");
    ffts_ = ffts;
    ranks_ = settings.communicator.get();
    const Decomposition boxes(settings.dims, settings.parallel_grid, ranks_->size());
    box_origin_ = boxes.box_origin(ranks_->rank());
    box_extents_ = boxes.box();
    sites_ = volume_of(box_extents_);
  }
  field_ = exec.template allocate<double>(replicas_ * components_ * sites_);
  if (settings.structure_factor_every > 0) prepare_structure_factor();
  if (settings.timeslice_every > 0) prepare_timeslices();
}

template <class Exec>
SpectralMeasurements<Exec>::~SpectralMeasurements() = default;

template <class Exec>
void SpectralMeasurements<Exec>::measure(int64_t measurement, int64_t row) {
  if (structure_factor_due(settings_, measurement)) measure_structure_factor(row);
  if (timeslices_due(settings_, measurement)) measure_timeslices(row);
}

template <class Exec>
void SpectralMeasurements<Exec>::collect(MeasurementBatch& out) {
  out.spectral_rows = spectral_rows_;
  out.spectral_values.resize(spectral_rows_.size() * 2 * replicas_);
  if (!spectral_rows_.empty()) {
    exec_.copy_to_host(spectral_queue_, out.spectral_values.data(),
                       static_cast<int64_t>(out.spectral_values.size()));
    // Decomposed, each rank queued the share of the modes it holds.
    if (ranks_)
      sum_over_ranks(*ranks_, out.spectral_values.data(),
                     static_cast<int64_t>(out.spectral_values.size()));
  }
  spectral_rows_.clear();
  out.timeslice_rows = timeslice_rows_;
  out.timeslice_values.resize(timeslice_rows_.size() * replicas_ * time_ * timeslice_momenta_);
  if (!timeslice_rows_.empty()) {
    exec_.copy_to_host(timeslice_queue_, out.timeslice_values.data(),
                       static_cast<int64_t>(out.timeslice_values.size()));
  }
  timeslice_rows_.clear();
}

template <class Exec>
bool SpectralMeasurements<Exec>::structure_factor(StructureFactorSums& out) {
  if (settings_.structure_factor_every <= 0) return false;
  out.dims = settings_.dims;
  out.components = components_;
  out.samples = spectral_samples_;
  out.first_row = row_modes_ > 0 ? first_mode_ / row_modes_ : 0;  // 1D: one process, no rows
  out.power_sum.resize(static_cast<size_t>(modes_));
  out.power_squares.resize(static_cast<size_t>(modes_));
  exec_.copy_to_host(power_sum_, out.power_sum.data());
  exec_.copy_to_host(power_squares_, out.power_squares.data());
  out.mean_field_sum.resize(static_cast<size_t>(components_));
  exec_.copy_to_host(mean_field_sum_, out.mean_field_sum.data());
  // Only the rank holding k = 0 sums the mean field: adding the others' zeros keeps its bits.
  if (ranks_) sum_over_ranks(*ranks_, out.mean_field_sum.data(), components_);
  out.min_axes = min_axes_;
  return true;
}

template <class Exec>
void SpectralMeasurements<Exec>::restore(const StructureFactorSums& sums) {
  if (settings_.structure_factor_every <= 0 || sums.samples == 0) return;
  const int64_t offset = first_mode_ - sums.first_row * row_modes_;
  if (offset < 0 || offset + modes_ > static_cast<int64_t>(sums.power_sum.size()) ||
      sums.power_squares.size() != sums.power_sum.size())
    throw std::logic_error("SpectralMeasurements::restore: the sums lack this rank's rows");
  exec_.copy_to_device(sums.power_sum.data() + offset, power_sum_);
  exec_.copy_to_device(sums.power_squares.data() + offset, power_squares_);
  if (first_mode_ == 0) exec_.copy_to_device(sums.mean_field_sum.data(), mean_field_sum_);
  spectral_samples_ = sums.samples;
}

/// Buffers and FFT plan of the structure factor; the unit momenta along the longest axes.
/// Decomposed: the distributed FFT, the moves between box and slab, and this rank's modes.
template <class Exec>
void SpectralMeasurements<Exec>::prepare_structure_factor() {
  const int d = static_cast<int>(settings_.dims.size());
  const int batch = replicas_ * components_;
  const int64_t all_modes = half_spectrum_size(settings_.dims.data(), d);
  row_modes_ = all_modes / settings_.dims[0];
  if (ranks_) {
    slab_fft_ = &(*ffts_)(batch);
    const Decomposition boxes(settings_.dims, settings_.parallel_grid, ranks_->size());
    slabs_ = std::make_unique<BoxSlabs<Exec>>(exec_, *ranks_, boxes, slab_fft_->row_split(), batch,
                                              sizeof(double));
    if (!slabs_->identity())
      slab_field_ = exec_.template allocate<double>(batch * slabs_->slab_sites());
    modes_ = slab_fft_->rows() * row_modes_;
    first_mode_ = slab_fft_->first_row() * row_modes_;
  } else {
    fft_ = exec_.make_fft(settings_.dims, batch);
    modes_ = all_modes;
  }
  spectrum_ = exec_.template allocate<Complex>(batch * modes_);
  power_sum_ = exec_.template allocate<double>(modes_);
  power_squares_ = exec_.template allocate<double>(modes_);
  mean_field_sum_ = exec_.template allocate<double>(components_);
  spectral_queue_ = exec_.template allocate<double>(settings_.measurement_capacity * replicas_ * 2);
  const std::vector<double> zeros(static_cast<size_t>(std::max<int64_t>(modes_, components_)), 0.0);
  exec_.copy_to_device(zeros.data(), power_sum_);
  exec_.copy_to_device(zeros.data(), power_squares_);
  exec_.copy_to_device(zeros.data(), mean_field_sum_);
  const int64_t longest = *std::max_element(settings_.dims.begin(), settings_.dims.end());
  for (int a = 0; a < d; ++a) {
    if (settings_.dims[a] == longest) min_axes_.push_back(a);
  }
  // The index of a mode in the spectrum held, or -1 where another rank holds it.
  const auto held = [&](int64_t mode) {
    return mode >= first_mode_ && mode < first_mode_ + modes_ ? mode - first_mode_ : -1;
  };
  summary_ = {spectrum_.data(),
              nullptr,
              mean_field_sum_.data(),
              modes_,
              held(0),
              {},
              static_cast<int>(min_axes_.size()),
              replicas_,
              components_,
              static_cast<double>(volume_)};
  for (size_t i = 0; i < min_axes_.size(); ++i)
    summary_.unit_mode[i] = held(half_spectrum_unit_mode(settings_.dims.data(), d, min_axes_[i]));
}

/// The plane-wave matrix (uploaded once), projections and the queue of correlators.
template <class Exec>
void SpectralMeasurements<Exec>::prepare_timeslices() {
  const int d = static_cast<int>(settings_.dims.size());
  time_ = settings_.dims[d - 1];
  const std::vector<int64_t> momenta = timeslice_momenta(d, settings_.timeslice_momenta_per_axis);
  timeslice_momenta_ = d > 1 ? static_cast<int64_t>(momenta.size()) / (d - 1) : 1;
  const std::vector<double> waves =
      plane_wave_matrix(settings_.dims, momenta, box_origin_, box_extents_);
  plane_waves_ = exec_.template allocate<double>(static_cast<int64_t>(waves.size()));
  exec_.copy_to_device(waves.data(), plane_waves_);
  projections_ =
      exec_.template allocate<double>(replicas_ * components_ * time_ * 2 * timeslice_momenta_);
  const int64_t queued = settings_.measurement_capacity / settings_.timeslice_every + 1;
  const int64_t entries = queued * replicas_ * time_ * timeslice_momenta_;
  if (entries > (int64_t(1) << 26)) {  // 512 MiB of doubles waiting for the next collect
    throw InputError("measure.timeslice: " + std::to_string(queued) +
                     " queued measurements of correlators would need " +
                     std::to_string((entries * 8) >> 20) +
                     " MiB; lower output.flush_every or raise measure.timeslice_every");
  }
  timeslice_queue_ = exec_.template allocate<double>(entries);
}

/// Queues the time-slice correlators of every replica (no host wait; decomposed: collective, the
/// projections of the boxes added over the ranks).
template <class Exec>
void SpectralMeasurements<Exec>::measure_timeslices(int64_t row) {
  const int64_t spatial_sites = sites_ / time_;  // the box's, when decomposed
  exec_.matmul_batched(time_, 2 * timeslice_momenta_, spatial_sites, field_.data(), sites_,
                       plane_waves_.data(), projections_.data(), replicas_ * components_);
  if (ranks_) sum_buffer_over_ranks(exec_, *ranks_, projections_);
  const int64_t per_measurement = replicas_ * time_ * timeslice_momenta_;
  double* out =
      timeslice_queue_.data() + static_cast<int64_t>(timeslice_rows_.size()) * per_measurement;
  exec_.for_each(per_measurement,
                 CorrelateTimeslices{projections_.data(), out, time_, timeslice_momenta_,
                                     components_, 1.0 / static_cast<double>(volume_)});
  timeslice_rows_.push_back(row);
}

/// Queues one structure-factor measurement of every replica from the field.
template <class Exec>
void SpectralMeasurements<Exec>::measure_structure_factor(int64_t row) {
  if (slab_fft_) {
    const double* slab = field_.data();  // the box, where it is the slab
    if (!slabs_->identity()) {
      slabs_->to_slab(field_.data(), slab_field_.data());
      slab = slab_field_.data();
    }
    slab_fft_->forward(slab, spectrum_.data());
  } else {
    fft_->forward(field_.data(), spectrum_.data());
  }
  exec_.for_each(modes_,
                 AccumulatePower{spectrum_.data(), power_sum_.data(), power_squares_.data(), modes_,
                                 replicas_, components_, static_cast<double>(volume_)});
  SpectrumSummary summary = summary_;
  summary.out = spectral_queue_.data() + spectral_rows_.size() * 2 * replicas_;
  exec_.for_each(1, summary);
  spectral_rows_.push_back(row);
  spectral_samples_ += replicas_;
}

}  // namespace lattica
