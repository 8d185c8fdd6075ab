#pragma once
// The sampler of every lattice model, written once over an execution policy (CpuExec or
// CudaExec) and a model (kernels/models/lattice_model.hpp).

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "kernels/backend/exec_options.hpp"
#include "kernels/lattice/checkerboard.hpp"
#include "kernels/lattice/row_block.hpp"
#include "kernels/models/ising.hpp"
#include "kernels/models/lattice_model.hpp"
#include "kernels/models/on.hpp"
#include "kernels/models/phi4.hpp"
#include "kernels/models/potts.hpp"
#include "kernels/spectral/structure_factor.hpp"
#include "kernels/spectral/timeslice.hpp"
#include "sim/decomposed_box.hpp"
#include "sim/engine.hpp"
#include "sim/fourier_langevin.hpp"
#include "sim/packed_ising.hpp"

namespace lattica {

inline IsingParams model_params(IsingModel, const EngineSettings& s, int d) {
  return make_ising_params(d, s.beta, s.field, s.seed);
}
inline PottsParams model_params(PottsModel, const EngineSettings& s, int d) {
  return make_potts_params(d, s.q, s.beta, s.field, s.seed);
}
template <class Real, int N>
OnParams model_params(OnModel<Real, N>, const EngineSettings& s, int d) {
  return {s.seed, s.beta, s.field, s.step, s.hits, d};
}
template <class Real>
Phi4Params model_params(Phi4Model<Real>, const EngineSettings& s, int d) {
  return {s.seed, s.kappa, s.lambda, s.field, s.step, s.hits, d};
}

static_assert(std::max({sizeof(IsingSums), sizeof(PottsSums), sizeof(OnSums), sizeof(Phi4Sums)}) <=
                  kMaxMeasurementBytes,
              "engine_bytes() must count the largest measurement record");

/// Bounds of a tuned Metropolis step.
constexpr double kMinStep = 1e-6;
constexpr double kMaxStep = 1e3;

template <class Exec, int D, class Model>
class LatticeEngine final : public Engine {
  using Spin = typename Model::Spin;
  using Sums = typename Model::Sums;
  static constexpr bool kPackable = std::is_same_v<Model, IsingModel>;

  /// Sites of the byte-per-spin checkerboard storage: none when the spins are packed.
  static int64_t storage_sites(const EngineSettings& s, const Checkerboard<D>& lattice) {
    return uses_packed_ising(s) ? 0 : s.replicas * lattice.volume();
  }
  /// Sites of the lexicographic copy: needed packed only for spectral measurements and staged
  /// snapshots.
  static int64_t lexicographic_sites(const EngineSettings& s, const Checkerboard<D>& lattice) {
    return uses_packed_ising(s) && !packed_keeps_lexicographic(s) ? 0
                                                                  : s.replicas * lattice.volume();
  }

 public:
  explicit LatticeEngine(const EngineSettings& settings)
      : exec_(ExecOptions{settings.cpu_threads, settings.cuda_device, settings.cuda_block_size}),
        lattice_(engine_lattice<D>(settings)),
        volume_(volume_of(settings.dims)),
        params_(model_params(Model{}, settings, D)),
        settings_(settings),
        spins_(exec_.template allocate<Spin>(storage_sites(settings, lattice_))),
        lexicographic_(exec_.template allocate<Spin>(lexicographic_sites(settings, lattice_))),
        sums_(exec_.template allocate<Sums>(settings.measurement_capacity * settings.replicas)) {
    exec_.zero(sums_);  // fused measurements add to their slot (and collect() clears it)
    for (const HistogramInfo& info : Model::histograms()) {
      histograms_.push_back({info.name, info.description, {}, 0});
    }
    if (decomposed(settings)) make_box(settings);
    if constexpr (kPackable) {
      if (uses_packed_ising(settings)) {
        packed_ = std::make_unique<PackedIsing<Exec, D>>(exec_, lattice_, settings.replicas,
                                                         box_.get());
      }
    }
    if (settings.snapshot_bits && !kPackable) {
      throw InputError("output.snapshot_packing: \"bits\" is for the Ising model only");
    }
    if (settings.sequence.empty() || settings.sequence.size() > kMaxUpdatePasses) {
      throw InputError("update.sequence: 1 to " + std::to_string(kMaxUpdatePasses) +
                       " passes per sweep");
    }
    // Decomposed, rank 0 computes the spectra of the gathered field; the others only send.
    if (root()) {
      if (settings.structure_factor_every > 0 || settings.timeslice_every > 0) prepare_field();
      if (settings.structure_factor_every > 0) prepare_structure_factor();
      if (settings.timeslice_every > 0) prepare_timeslices();
    }
    if constexpr (Model::kTunableStep) {
      for (UpdateAlgorithm a : settings.sequence) metropolis_passes_ += a == UpdateAlgorithm::metropolis;
      if (metropolis_passes_ > 0) {
        accepted_ = exec_.template allocate<uint8_t>(settings.replicas * lattice_.half_volume);
        exec_.zero(accepted_);  // a box's ghosts are never updated: they count nothing
      }
    }
    if (std::any_of(settings.sequence.begin(), settings.sequence.end(), is_whole_lattice)) {
      if constexpr (Model::kFourierLangevin) {
        langevin_ = std::make_unique<FourierLangevin<Exec, D, Model>>(
            exec_, settings.dims, settings.replicas, settings.langevin_step);
      } else {
        throw InputError("update.algorithm: langevin and mala are for phi^4 only");
      }
    }
  }

  void initialize() override {
    if constexpr (kPackable) {
      if (packed_) return packed_->initialize(params_, settings_.start == InitialState::hot);
    }
    const bool hot = settings_.start == InitialState::hot;
    if (box_) {  // ghosts included: they start as the neighbouring boxes' sites
      return exec_.for_each(replicas() * lattice_.volume(),
                            Initialize<D, Model, true>{lattice_, params_, spins_.data(), hot});
    }
    exec_.for_each(replicas() * lattice_.volume(),
                   Initialize<D, Model>{lattice_, params_, spins_.data(), hot});
  }

  void sweep(uint64_t first, uint64_t count) override {
    for (uint64_t s = first; s < first + count; ++s) sweep_once(s, false);
  }

  void thermalization_sweep(uint64_t first, uint64_t count) override {
    if (metropolis_passes_ == 0 && !langevin_) return sweep(first, count);
    // One slot per Metropolis half-pass of the block, read back once at its end.
    const int64_t slots = static_cast<int64_t>(count) * metropolis_passes_ * 2;
    if (acceptance_sums_.size() < slots)
      acceptance_sums_ = exec_.template allocate<long long>(slots);
    acceptance_slots_ = 0;
    for (uint64_t s = first; s < first + count; ++s) sweep_once(s, true);
    if constexpr (Model::kFourierLangevin) {
      if (langevin_) tune_langevin();
    }
    if (metropolis_passes_ == 0) return;
    host_acceptance_.resize(static_cast<size_t>(slots));
    exec_.copy_to_host(acceptance_sums_, host_acceptance_.data(), slots);
    long long accepted = 0;
    for (long long a : host_acceptance_) accepted += a;
    if (box_) box_->sum_over_ranks(&accepted, 1);
    const double proposals = static_cast<double>(count) * metropolis_passes_ * settings_.hits *
                             static_cast<double>(volume_) * replicas();
    acceptance_ = proposals > 0 ? accepted / proposals : -1.0;
    if constexpr (Model::kTunableStep) {
      if (settings_.tune_step && acceptance_ >= 0) {
        // Larger steps lower the acceptance; scale by the ratio, at most a factor 2 at a time.
        const double ratio = std::clamp(acceptance_ / settings_.target_acceptance, 0.5, 2.0);
        params_.step = std::clamp(params_.step * ratio, kMinStep, kMaxStep);
      }
    }
  }

  StepTuning step_tuning() const override {
    StepTuning t;
    if constexpr (Model::kTunableStep) {
      t.applies = metropolis_passes_ > 0;
      t.step = params_.step;
      t.acceptance = acceptance_;
    }
    if (langevin_) {
      t.langevin = true;
      t.adjusted = std::count(settings_.sequence.begin(), settings_.sequence.end(),
                              UpdateAlgorithm::mala) > 0;
      t.langevin_step = langevin_->step();
      t.langevin_shift = langevin_->shift();
      t.langevin_acceptance = langevin_acceptance_;
    }
    return t;
  }

  std::vector<std::string> observable_names() const override {
    return Model::observable_names(params_);
  }
  std::vector<std::string> observable_descriptions() const override {
    return Model::observable_descriptions(params_);
  }

  void measure() override {
    Sums* sums = next_sums();
    if (packed()) {
      if constexpr (kPackable) packed_->sums_into(sums);
    } else if (!box_ && lattice_.half_volume <= kSerialSumSites) {
      exec_.for_each(replicas(), ReplicaSums<D, Model>{lattice_, params_, spins_.data(), sums});
    } else {
      for (int r = 0; r < replicas(); ++r) {
        const SiteSums<D, Model> site_sums{lattice_, params_, spins_.data() + r * lattice_.volume()};
        if (box_) {  // the interior sites only
          over_row_block(box_->interior(), lattice_.half_last, 0, site_sums,
                         [&](int64_t n, const auto& g) {
                           exec_.template reduce_sum_into<Sums>(n, g, sums + r);
                         });
        } else {
          exec_.template reduce_sum_into<Sums>(lattice_.half_volume, site_sums, sums + r);
        }
      }
    }
    measure_rest();
  }

  void sweep_and_measure(uint64_t first, uint64_t count) override {
    if (!packed() || count == 0) return Engine::sweep_and_measure(first, count);
    // The sums come from the last pass's second colour (PackedIsingUpdate::update_and_sum).
    Sums* sums = next_sums();  // zero: the queue is cleared after every collect()
    sweep(first, count - 1);
    sweep_once(first + count - 1, false, sums);
    measure_rest();
  }

  int64_t queued() const override { return queued_; }

 private:
  /// Where the next measurement's sums go.
  Sums* next_sums() {
    if (queued_ >= settings_.measurement_capacity) {
      throw std::logic_error("LatticeEngine::measure: queue full, collect() first");
    }
    return sums_.data() + queued_ * replicas();
  }

  /// A measurement's spectral parts, once its sums are queued.
  void measure_rest() {
    const bool spectrum_due = settings_.structure_factor_every > 0 &&
                              measurements_ % settings_.structure_factor_every == 0;
    const bool timeslices_due =
        settings_.timeslice_every > 0 && measurements_ % settings_.timeslice_every == 0;
    // Decomposed: the whole field on rank 0 (gathered a box at a time), which takes the spectra.
    const bool here = root();
    if (spectrum_due || timeslices_due) {
      const Spin* source = lexicographic_.data();
      if (box_) {
        whole_host_.resize(here ? static_cast<size_t>(replicas() * volume_) : 0);
        configuration(whole_host_.data());
        if (here) exec_.copy_to_device(whole_host_.data(), whole_lexicographic_);
        source = whole_lexicographic_.data();
      } else {
        gather_lexicographic();
      }
      if (here) {
        exec_.for_each(replicas() * components_ * volume_,
                       FieldComponents<Model>{params_, source, field_.data(), volume_, components_});
      }
    }
    if (spectrum_due && here) measure_structure_factor();
    if (timeslices_due && here) measure_timeslices();
    ++measurements_;
    ++queued_;
  }

 public:
  void collect(MeasurementBatch& out) override {
    const int64_t n = queued_ * replicas();
    host_sums_.resize(static_cast<size_t>(n));
    exec_.copy_to_host(sums_, host_sums_.data(), n);
    if (box_ && n > 0) {
      // The whole lattice's sums, the same on every rank; the histograms bin them where they are.
      box_->sum_over_ranks(host_sums_.data(), n);
      exec_.copy_to_device(host_sums_.data(), sums_, n);
    }
    // Discrete models: exact sums until this last step, so both backends give the same doubles.
    const size_t n_obs = observable_names().size();
    out.count = queued_;
    out.values.resize(static_cast<size_t>(n) * n_obs);
    for (int64_t i = 0; i < n; ++i) {
      Model::observables(params_, host_sums_[static_cast<size_t>(i)], static_cast<double>(volume_),
                         &out.values[i * n_obs]);
    }
    // Values that are not finite (a diverging Langevin run) are refused by the run loop, which
    // knows their sweeps.
    out.spectral_rows = spectral_rows_;
    out.spectral_values.resize(spectral_rows_.size() * 2 * replicas());
    if (!spectral_rows_.empty()) {
      exec_.copy_to_host(spectral_queue_, out.spectral_values.data(),
                         static_cast<int64_t>(out.spectral_values.size()));
    }
    spectral_rows_.clear();
    out.timeslice_rows = timeslice_rows_;
    out.timeslice_values.resize(timeslice_rows_.size() * replicas() * time_ * timeslice_momenta_);
    if (!timeslice_rows_.empty()) {
      exec_.copy_to_host(timeslice_queue_, out.timeslice_values.data(),
                         static_cast<int64_t>(out.timeslice_values.size()));
    }
    timeslice_rows_.clear();
    if constexpr (Model::kExactHistograms) {
      const std::vector<HistogramInfo> info = Model::histograms();
      for (size_t h = 0; h < histograms_.size(); ++h) {
        accumulate_histogram(histograms_[h], n, static_cast<int>(h), info[h].step);
      }
    }
    exec_.zero(sums_, n);  // fused measurements add to their slot
    queued_ = 0;
  }

  const std::vector<ExactHistogram>& histograms() const override { return histograms_; }

  bool structure_factor(StructureFactorSums& out) override {
    if (!fft_) return false;
    out.dims = settings_.dims;
    out.components = components_;
    out.samples = spectral_samples_;
    out.power_sum.resize(static_cast<size_t>(modes_));
    out.power_squares.resize(static_cast<size_t>(modes_));
    out.mean_field_sum.resize(static_cast<size_t>(components_));
    exec_.copy_to_host(power_sum_, out.power_sum.data());
    exec_.copy_to_host(power_squares_, out.power_squares.data());
    exec_.copy_to_host(mean_field_sum_, out.mean_field_sum.data());
    out.min_axes = min_axes_;
    return true;
  }

  void configuration(void* out) override {
    if (box_) {  // every box into rank 0's `out`
      std::vector<Spin> box(static_cast<size_t>(replicas() * lattice_.volume()));
      if (packed()) {
        if constexpr (kPackable) packed_->to_host(box.data());
      } else {
        gather_lexicographic();
        exec_.copy_to_host(lexicographic_, box.data());
      }
      box_->gather_whole(box.data(), out, sizeof(Spin));
      return;
    }
    if (packed()) {
      if constexpr (kPackable) packed_->to_host(static_cast<Spin*>(out));
      return;
    }
    gather_lexicographic();
    exec_.copy_to_host(lexicographic_, static_cast<Spin*>(out));
  }
  SnapshotFormat snapshot_format() const override { return Model::snapshot_format(params_); }

  void start_snapshot(int slot) override {
    const int64_t sites = replicas() * volume_;
    const bool bits = kPackable && settings_.snapshot_bits;
    const int64_t bytes = bits ? sites / 8 : sites * static_cast<int64_t>(sizeof(Spin));
    auto& frame = snapshot_frames_.at(static_cast<size_t>(slot));
    if (box_) return gathered_snapshot(frame, bytes, bits);
    if (frame.size() != bytes) frame = typename Exec::template HostFrame<unsigned char>(bytes);
    if (bits) {
      if constexpr (kPackable) start_bit_snapshot(slot, frame.data(), bytes);
      return;
    }
    if (lexicographic_.size() < sites) {  // packed, too large to stage: a chunk at a time
      configuration(frame.data());
      return;
    }
    gather_lexicographic();
    exec_.copy_to_host_async(lexicographic_, reinterpret_cast<Spin*>(frame.data()), sites,
                             snapshot_copies_[slot]);
  }

  const void* snapshot_data(int slot) override {
    exec_.wait(snapshot_copies_.at(static_cast<size_t>(slot)));
    return snapshot_frames_[slot].data();
  }

  EngineState state() override {
    if (queued_ != 0) throw std::logic_error("LatticeEngine::state: collect() first");
    EngineState s;
    // Decomposed: gathered on rank 0, which writes the checkpoint.
    if (root()) s.configuration.resize(static_cast<size_t>(replicas() * volume_) * sizeof(Spin));
    configuration(s.configuration.data());
    s.histograms = histograms_;
    structure_factor(s.structure_factor);
    s.measurements = measurements_;
    s.tuning = step_tuning();
    if constexpr (Model::kFourierLangevin) {
      if (langevin_) s.langevin_shift_set = langevin_->shift_ready();
    }
    return s;
  }

  void restore(const EngineState& s) override {
    if (s.configuration.size() != static_cast<size_t>(replicas() * volume_) * sizeof(Spin))
      throw std::invalid_argument("restore: the configuration does not match the lattice");
    // This rank's box of the whole configuration (every rank holds it), or all of it.
    std::vector<Spin> lexicographic(static_cast<size_t>(replicas() * lattice_.volume()));
    if (box_) {
      box_->box_from_whole(s.configuration.data(), lexicographic.data(), sizeof(Spin));
    } else {
      std::memcpy(lexicographic.data(), s.configuration.data(), s.configuration.size());
    }
    if (packed()) {
      if constexpr (kPackable) packed_->from_host(lexicographic.data());
    } else {
      exec_.copy_to_device(lexicographic.data(), lexicographic_);
      exec_.from_lexicographic(lattice_, lexicographic_.data(), spins_.data(), replicas());
    }
    histograms_ = s.histograms;
    measurements_ = s.measurements;
    if (fft_ && s.structure_factor.samples > 0) {
      exec_.copy_to_device(s.structure_factor.power_sum.data(), power_sum_);
      exec_.copy_to_device(s.structure_factor.power_squares.data(), power_squares_);
      exec_.copy_to_device(s.structure_factor.mean_field_sum.data(), mean_field_sum_);
      spectral_samples_ = s.structure_factor.samples;
    }
    if constexpr (Model::kTunableStep) {
      params_.step = s.tuning.applies ? s.tuning.step : params_.step;
      acceptance_ = s.tuning.acceptance;
    }
    if constexpr (Model::kFourierLangevin) {
      if (langevin_) {
        langevin_->set_step(s.tuning.langevin_step);
        if (s.langevin_shift_set) langevin_->restore_shift(params_, s.tuning.langevin_shift);
        langevin_acceptance_ = s.tuning.langevin_acceptance;
      }
    }
    exec_.synchronize();
  }

  int replicas() const override { return settings_.replicas; }
  int64_t volume() const override { return volume_; }
  std::string backend_name() const override { return Exec::kBackendName; }
  std::string device_name() const override { return exec_.device_name(); }
  void synchronize() override { exec_.synchronize(); }
  double timed_sweeps(uint64_t first, uint64_t count) override {
    return exec_.time([&] { sweep(first, count); });
  }

 private:
  /// Whether this engine holds the whole lattice's results: alone, or rank 0 of a decomposition
  /// (which gathers configurations and takes the spectra).
  bool root() const { return !box_ || box_->communicator().rank() == 0; }

  /// This rank's box of a decomposed lattice, its blocks and halo exchange (after the checks of
  /// what a decomposed run does not do yet).
  void make_box(const EngineSettings& s) {
    if (std::any_of(s.sequence.begin(), s.sequence.end(), is_whole_lattice)) {
      throw InputError("update.sequence: langevin and mala move the whole lattice through its "
                       "Fourier modes; they are not available with " +
                       std::to_string(s.communicator->size()) + " ranks yet");
    }
    if (uses_packed_ising(s)) {
      const int64_t words = lattice_.half_volume / 32;
      box_ = std::make_unique<DecomposedBox<Exec, D>>(exec_, s, lattice_, sizeof(uint32_t),
                                                      lattice_.half_last / 32, words, 2 * words);
    } else {
      box_ = std::make_unique<DecomposedBox<Exec, D>>(exec_, s, lattice_, sizeof(Spin),
                                                      lattice_.half_last, lattice_.half_volume,
                                                      lattice_.volume());
    }
  }

  /// A decomposed engine's snapshot: gathered into rank 0's frame at once (bit-packed there).
  void gathered_snapshot(typename Exec::template HostFrame<unsigned char>& frame, int64_t bytes,
                         bool bits) {
    if (root() && frame.size() != bytes) {
      frame = typename Exec::template HostFrame<unsigned char>(bytes);
    }
    if (!bits) return configuration(root() ? frame.data() : nullptr);
    std::vector<int8_t> whole(root() ? static_cast<size_t>(replicas() * volume_) : 0);
    configuration(whole.data());
    if (!root()) return;
    const PackSpinBits<LexicographicSpinBits> pack{{whole.data()}, frame.data(), 0};
    for (int64_t i = 0; i < bytes; ++i) pack(i);
  }

  /// The lexicographic order-parameter field both spectral measurements start from.
  void prepare_field() {
    components_ = Model::field_components(params_);
    field_ = exec_.template allocate<double>(replicas() * components_ * volume_);
    if (box_) whole_lexicographic_ = exec_.template allocate<Spin>(replicas() * volume_);
  }

  /// The plane-wave matrix (uploaded once), projections and the queue of correlators.
  void prepare_timeslices() {
    time_ = settings_.dims[D - 1];
    const std::vector<int64_t> momenta =
        timeslice_momenta(D, settings_.timeslice_momenta_per_axis);
    timeslice_momenta_ = D > 1 ? static_cast<int64_t>(momenta.size()) / (D - 1) : 1;
    const std::vector<double> waves = plane_wave_matrix(settings_.dims, momenta);
    plane_waves_ = exec_.template allocate<double>(static_cast<int64_t>(waves.size()));
    exec_.copy_to_device(waves.data(), plane_waves_);
    projections_ =
        exec_.template allocate<double>(replicas() * components_ * time_ * 2 * timeslice_momenta_);
    const int64_t queued = settings_.measurement_capacity / settings_.timeslice_every + 1;
    const int64_t entries = queued * replicas() * time_ * timeslice_momenta_;
    if (entries > (int64_t(1) << 26)) {  // 512 MiB of doubles waiting for the next collect
      throw InputError("measure.timeslice: " + std::to_string(queued) +
                       " queued measurements of correlators would need " +
                       std::to_string((entries * 8) >> 20) +
                       " MiB; lower output.flush_every or raise measure.timeslice_every");
    }
    timeslice_queue_ = exec_.template allocate<double>(entries);
  }

  /// Queues the time-slice correlators of every replica (no host wait).
  void measure_timeslices() {
    const int64_t spatial_volume = volume_ / time_;
    exec_.matmul_batched(time_, 2 * timeslice_momenta_, spatial_volume, field_.data(), volume_,
                         plane_waves_.data(), projections_.data(), replicas() * components_);
    const int64_t per_measurement = replicas() * time_ * timeslice_momenta_;
    exec_.for_each(per_measurement,
                   CorrelateTimeslices{projections_.data(),
                                       timeslice_queue_.data() +
                                           static_cast<int64_t>(timeslice_rows_.size()) *
                                               per_measurement,
                                       time_, timeslice_momenta_, components_,
                                       1.0 / static_cast<double>(volume_)});
    timeslice_rows_.push_back(queued_);
  }

  /// Buffers and FFT plan of the structure factor; the unit momenta along the longest axes.
  void prepare_structure_factor() {
    modes_ = half_spectrum_size(settings_.dims.data(), D);
    fft_ = exec_.make_fft(settings_.dims, replicas() * components_);
    spectrum_ = exec_.template allocate<Complex>(replicas() * components_ * modes_);
    power_sum_ = exec_.template allocate<double>(modes_);
    power_squares_ = exec_.template allocate<double>(modes_);
    mean_field_sum_ = exec_.template allocate<double>(components_);
    spectral_queue_ =
        exec_.template allocate<double>(settings_.measurement_capacity * replicas() * 2);
    const std::vector<double> zeros(static_cast<size_t>(std::max<int64_t>(modes_, components_)),
                                    0.0);
    exec_.copy_to_device(zeros.data(), power_sum_);
    exec_.copy_to_device(zeros.data(), power_squares_);
    exec_.copy_to_device(zeros.data(), mean_field_sum_);
    const int64_t longest = *std::max_element(settings_.dims.begin(), settings_.dims.end());
    for (int a = 0; a < D; ++a) {
      if (settings_.dims[a] == longest) min_axes_.push_back(a);
    }
    summary_ = {spectrum_.data(), nullptr,   mean_field_sum_.data(),
                modes_,           {},        static_cast<int>(min_axes_.size()),
                replicas(),       components_, static_cast<double>(volume_)};
    for (size_t i = 0; i < min_axes_.size(); ++i)
      summary_.unit_mode[i] = half_spectrum_unit_mode(settings_.dims.data(), D, min_axes_[i]);
  }

  /// Queues one structure-factor measurement of every replica from the gathered field.
  void measure_structure_factor() {
    fft_->forward(field_.data(), spectrum_.data());
    exec_.for_each(modes_, AccumulatePower{spectrum_.data(), power_sum_.data(),
                                           power_squares_.data(), modes_, replicas(),
                                           components_, static_cast<double>(volume_)});
    SpectrumSummary summary = summary_;
    summary.out = spectral_queue_.data() + spectral_rows_.size() * 2 * replicas();
    exec_.for_each(1, summary);
    spectral_rows_.push_back(queued_);
    spectral_samples_ += replicas();
  }

  bool packed() const { return packed_ != nullptr; }

  /// Later work on the backend starts once the snapshot copies in flight have read their
  /// source (no host wait).
  void wait_for_snapshot_copies() {
    for (const auto& copy : snapshot_copies_) exec_.order_after(copy);
  }

  /// A bit-packed snapshot (PackSpinBits) into `frame`: staged whole and copied while the
  /// chain goes on, or, past kMaxStagedSnapshotBytes, a chunk at a time.
  void start_bit_snapshot(int slot, unsigned char* frame, int64_t bytes) {
    // Once the copies in flight have read bit_stage_ (gather_lexicographic waits for them too).
    if (packed()) {
      wait_for_snapshot_copies();
    } else {
      gather_lexicographic();
    }
    const bool staged = bytes <= static_cast<int64_t>(kMaxStagedSnapshotBytes);
    if (bit_stage_.size() == 0) {
      bit_stage_ = exec_.template allocate<uint8_t>(
          staged ? bytes : static_cast<int64_t>(kPackedChunkBytes));
    }
    for (int64_t first = 0; first < bytes; first += bit_stage_.size()) {
      const int64_t n = std::min(bit_stage_.size(), bytes - first);
      if (packed()) {
        exec_.for_each(n, PackSpinBits<PackedSpinBits<D>>{packed_->spin_bits(), bit_stage_.data(),
                                                          first});
      } else {
        exec_.for_each(n, PackSpinBits<LexicographicSpinBits>{{lexicographic_.data()},
                                                              bit_stage_.data(), first});
      }
      if (staged) {
        exec_.copy_to_host_async(bit_stage_, frame, n, snapshot_copies_[slot]);
      } else {
        exec_.copy_to_host(bit_stage_, frame + first, n);
      }
    }
  }

  /// Every replica in lexicographic order into lexicographic_ (once snapshot copies from it
  /// have read it).
  void gather_lexicographic() {
    wait_for_snapshot_copies();
    if (packed()) {
      if constexpr (kPackable) packed_->to_lexicographic(lexicographic_.data());
    } else {
      exec_.to_lexicographic(lattice_, spins_.data(), lexicographic_.data(), replicas());
    }
  }

  /// Sweep s: every pass of the sequence over both colours. With count_accepted, each
  /// Metropolis half-pass's accepted moves are summed into the next slot of acceptance_sums_
  /// (no host wait). Packed, with `sums`: the last pass also queues the measurement there.
  void sweep_once(uint64_t s, bool count_accepted, Sums* sums = nullptr) {
    for (size_t pass = 0; pass < settings_.sequence.size(); ++pass) {
      const UpdateAlgorithm algorithm = settings_.sequence[pass];
      if (packed()) {
        if constexpr (kPackable) {
          const bool last = pass + 1 == settings_.sequence.size();
          packed_->update(params_, algorithm, static_cast<uint32_t>(pass), s,
                          last ? sums : nullptr);
        }
        continue;
      }
      if (is_whole_lattice(algorithm)) {
        if constexpr (Model::kFourierLangevin) {
          if (!langevin_->shift_ready()) langevin_->set_shift(params_, spins_.data());
          langevin_->step(lattice_, params_, spins_.data(), lexicographic_.data(),
                          algorithm == UpdateAlgorithm::mala, s, static_cast<uint32_t>(pass));
        }
        continue;
      }
      const bool count = count_accepted && algorithm == UpdateAlgorithm::metropolis;
      for (int colour = 0; colour < 2; ++colour) {
        if (box_) {
          const int local = box_->local_colour(colour);
          const UpdateColour<D, Model, true> update{lattice_, params_, spins_.data(),
                                                    count ? accepted_.data() : nullptr, local,
                                                    algorithm, static_cast<uint32_t>(pass), s};
          box_->update_colour(local, spins_.data(), [&](const RowBlock<D>& block) {
            for (int r = 0; r < replicas(); ++r) {  // UpdateColour's index: r * V/2 + site
              over_row_block(block, lattice_.half_last, r * lattice_.half_volume, update,
                             [&](int64_t n, const auto& g) { exec_.for_each(n, g); });
            }
          });
        } else {
          exec_.for_each(replicas() * lattice_.half_volume,
                         UpdateColour<D, Model>{lattice_, params_, spins_.data(),
                                                count ? accepted_.data() : nullptr, colour,
                                                algorithm, static_cast<uint32_t>(pass), s});
        }
        if (count) {
          exec_.template reduce_sum_into<long long>(replicas() * lattice_.half_volume,
                                                    AcceptedAt{accepted_.data()},
                                                    acceptance_sums_.data() + acceptance_slots_++);
        }
      }
    }
  }

  /// After a block of thermalization sweeps: the kernel's shift re-estimated from the field
  /// (always: it is not an input), the MALA acceptance, and with tuning the MALA step rescaled
  /// towards the target as the Metropolis step is.
  void tune_langevin() {
    langevin_->set_shift(params_, spins_.data());
    langevin_acceptance_ = langevin_->take_acceptance();
    if (settings_.tune_step && langevin_acceptance_ >= 0) {
      const double ratio =
          std::clamp(langevin_acceptance_ / settings_.target_acceptance, 0.5, 2.0);
      langevin_->set_step(std::clamp(langevin_->step() * ratio, kMinStep, kMaxStep));
    }
  }

  /// Bins the queued totals (still in the backend's memory) over the window of values they
  /// span, then adds the window to the sparse exact histogram.
  void accumulate_histogram(ExactHistogram& h, int64_t n, int which, long long step) {
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

  Exec exec_;
  Checkerboard<D> lattice_;  ///< the whole lattice, or this rank's box with its ghosts
  int64_t volume_;           ///< of the whole lattice
  typename Model::Params params_;
  EngineSettings settings_;
  typename Exec::template Buffer<Spin> spins_;
  typename Exec::template Buffer<Spin> lexicographic_;
  typename Exec::template Buffer<Sums> sums_;  ///< queued measurements, [k][replica]
  typename Exec::template Buffer<unsigned long long> counts_;
  typename Exec::template Buffer<uint8_t> accepted_;            ///< per site, while counting
  typename Exec::template Buffer<long long> acceptance_sums_;  ///< per half-pass of a block
  int metropolis_passes_ = 0;
  int64_t acceptance_slots_ = 0;
  double acceptance_ = -1.0;
  int64_t queued_ = 0;
  int64_t measurements_ = 0;  ///< measurements taken so far
  // Structure factor (when settings.structure_factor_every > 0).
  std::unique_ptr<typename Exec::Fft> fft_;
  int components_ = 0;
  int64_t modes_ = 0;
  typename Exec::template Buffer<double> field_;
  // Decomposed: rank 0's whole configuration for the spectra, on the host and the backend.
  std::vector<Spin> whole_host_;
  typename Exec::template Buffer<Spin> whole_lexicographic_;
  typename Exec::template Buffer<Complex> spectrum_;
  typename Exec::template Buffer<double> power_sum_, power_squares_, mean_field_sum_;
  typename Exec::template Buffer<double> spectral_queue_;  ///< [j][replica][S(0), S(k_min)]
  std::vector<int64_t> spectral_rows_;  ///< queued measurements that took the structure factor
  int64_t spectral_samples_ = 0;
  std::vector<int> min_axes_;
  SpectrumSummary summary_{};  ///< all but the output row, fixed at preparation
  // Time-slice correlators (when settings.timeslice_every > 0).
  int64_t time_ = 0;
  int64_t timeslice_momenta_ = 0;
  typename Exec::template Buffer<double> plane_waves_, projections_, timeslice_queue_;
  std::vector<int64_t> timeslice_rows_;
  std::vector<Sums> host_sums_;
  std::vector<unsigned long long> host_counts_;
  std::vector<long long> host_acceptance_;
  std::vector<ExactHistogram> histograms_;
  // Fourier-accelerated Langevin passes (phi^4 with langevin or mala in the sequence).
  std::unique_ptr<FourierLangevin<Exec, D, Model>> langevin_;
  double langevin_acceptance_ = -1.0;
  // This rank's box, when the lattice is decomposed over ranks (before packed_, which uses it).
  std::unique_ptr<DecomposedBox<Exec, D>> box_;
  // Multi-spin-coded Ising spins (uses_packed_ising()), in place of spins_.
  std::unique_ptr<PackedIsing<Exec, D>> packed_;
  // Snapshots in flight: host copies of lexicographic_ and their completion.
  std::array<typename Exec::template HostFrame<unsigned char>, kSnapshotSlots> snapshot_frames_;
  std::array<typename Exec::CopyDone, kSnapshotSlots> snapshot_copies_;
  typename Exec::template Buffer<uint8_t> bit_stage_;  ///< bit-packed snapshots on the backend
};

/// The engine of one model for the lattice dimension in settings.
template <class Exec, class Model>
std::unique_ptr<Engine> make_engine_for(const EngineSettings& settings) {
  switch (settings.dims.size()) {
    case 1:
      return std::make_unique<LatticeEngine<Exec, 1, Model>>(settings);
    case 2:
      return std::make_unique<LatticeEngine<Exec, 2, Model>>(settings);
    case 3:
      return std::make_unique<LatticeEngine<Exec, 3, Model>>(settings);
    case 4:
      return std::make_unique<LatticeEngine<Exec, 4, Model>>(settings);
    default:
      throw InputError("lattice.dims: 1 to 4 dimensions are supported");
  }
}

// Engines of one model family; each is instantiated in its own source file per backend
// (sim/engine_<backend>_<family>), so the many instantiations compile in parallel.
template <class Exec>
std::unique_ptr<Engine> make_discrete_engine(const EngineSettings& settings);
template <class Exec>
std::unique_ptr<Engine> make_on_engine(const EngineSettings& settings);
template <class Exec>
std::unique_ptr<Engine> make_phi4_engine(const EngineSettings& settings);

/// Instantiates the engine for the model and dimension in settings.
template <class Exec>
std::unique_ptr<Engine> make_lattice_engine(const EngineSettings& settings) {
  if (settings.replicas < 1 || settings.replicas > static_cast<int>(kMaxReplicas) ||
      settings.measurement_capacity < 1) {
    throw InputError("run.replicas: must be between 1 and " + std::to_string(kMaxReplicas));
  }
  switch (settings.model) {
    case ModelKind::ising:
    case ModelKind::potts:
      return make_discrete_engine<Exec>(settings);
    case ModelKind::on:
      return make_on_engine<Exec>(settings);
    case ModelKind::phi4:
      return make_phi4_engine<Exec>(settings);
  }
  throw InputError("model.kind: unknown model");
}

}  // namespace lattica
