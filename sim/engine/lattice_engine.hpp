#pragma once
// The sampler of every lattice model, written once over an execution policy (CpuExec or
// CudaExec), a model (kernels/models/lattice_model.hpp) and a storage (SiteStorage, or
// PackedIsing for multi-spin-coded Ising). It composes parts with one job each:
//   storage        the configuration, its lexicographic copy and per-replica sums
//   DecomposedBox  this rank's box and its halo exchange, when the lattice is split
//   Sweeper        the passes of update.sequence (sim/engine/pass.hpp)
//   MeasurementQueue, Spectra   what measure() queues and collect() returns
//   SnapshotFrames snapshots copied while the chain goes on

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/backend/exec_options.hpp"
#include "kernels/ensemble/replica_gather.hpp"
#include "kernels/lattice/checkerboard.hpp"
#include "kernels/models/ising.hpp"
#include "kernels/spectral/structure_factor.hpp"
#include "sim/engine/decomposed_box.hpp"
#include "sim/engine/engine.hpp"
#include "sim/engine/estimate_queue.hpp"
#include "sim/engine/measurement_queue.hpp"
#include "sim/engine/model_params.hpp"
#include "sim/engine/snapshot_frames.hpp"
#include "sim/engine/spectral_measurements.hpp"
#include "sim/engine/sweeper.hpp"

namespace lattica {

template <class Exec, int D, class Model, class Storage>
class LatticeEngine final : public Engine {
  using Spin = typename Model::Spin;
  using Sums = typename Model::Sums;
  using Params = typename Model::Params;
  /// Bit-packed snapshots (EngineSettings::snapshot_bits) are an Ising format.
  static constexpr bool kBitSnapshots = std::is_same_v<Model, IsingModel>;

 public:
  explicit LatticeEngine(const EngineSettings& settings)
      : exec_(ExecOptions{settings.cpu_threads, settings.cuda_device, settings.cuda_block_size}),
        lattice_(engine_lattice<D>(settings)),
        volume_(volume_of(settings.dims)),
        params_(model_params(Model{}, settings, D)),
        settings_(settings),
        box_(make_box(settings)),
        storage_(exec_, lattice_, settings, box_.get()),
        tempering_(exec_, settings_, D),
        sweeper_(PassContext<Exec, D, Model, Storage>{exec_, lattice_, storage_, box_.get(),
                                                      settings_, params_, tempering_}),
        queue_(exec_, settings.replicas, settings.measurement_capacity),
        estimates_(exec_, sweeper_.estimates(), settings.replicas, settings.measurement_capacity),
        snapshots_(exec_) {
    tempering_.refresh(params_);
    if (settings.snapshot_bits && !kBitSnapshots) {
      throw InputError("output.snapshot_packing: \"bits\" is for the Ising model only");
    }
    // Decomposed, every rank measures its box through the distributed FFT.
    if (settings.structure_factor_every > 0 || settings.timeslice_every > 0) {
      const int components = Model::field_components(params_);
      spectral_ = std::make_unique<SpectralMeasurements<Exec>>(exec_, settings, components,
                                                               box_ ? &box_->slab_ffts() : nullptr);
    }
  }

  void initialize() override {
    storage_.initialize(params_, settings_.start == InitialState::hot);
    tempering_.configuration_changed();
  }
  void sweep(uint64_t first, uint64_t count) override {
    for (uint64_t s = first; s < first + count; ++s) sweeper_.sweep(s, false);
  }
  void thermalization_sweep(uint64_t first, uint64_t count) override {
    sweeper_.thermalize(first, count);
    tempering_.refresh(params_);  // a pass may have tuned the shared step
  }
  StepTuning step_tuning() const override {
    StepTuning tuning;
    if constexpr (Model::kTunableStep) tuning.step = params_.step;
    sweeper_.report(tuning);
    return tuning;
  }

  std::vector<std::string> observable_names() const override {
    std::vector<std::string> names = Model::observable_names(params_);
    for (const Estimate& e : estimates_.estimates()) names.push_back(e.name);
    return names;
  }
  std::vector<std::string> observable_descriptions() const override {
    std::vector<std::string> descriptions = Model::observable_descriptions(params_);
    for (const Estimate& e : estimates_.estimates()) descriptions.push_back(e.description);
    return descriptions;
  }

  void measure() override {
    storage_.sums_into(params_, queue_.next());
    measure_rest();
  }
  void sweep_and_measure(uint64_t first, uint64_t count) override {
    if (!sweeper_.fuses_measurement() || count == 0) return Engine::sweep_and_measure(first, count);
    Sums* sums = queue_.next();  // zero: the queue is cleared after every collect()
    sweep(first, count - 1);
    sweeper_.sweep(first + count - 1, false, sums);
    measure_rest();
  }
  int64_t queued() const override { return queue_.queued(); }

  void collect(MeasurementBatch& out) override {
    Communicator* ranks = box_ ? &box_->communicator() : nullptr;
    if (tempering_.on()) queued_rungs_ = tempering_.recorded_rungs(queue_.queued());
    queue_.collect(params_, static_cast<double>(volume_), ranks, out,
                   tempering_.on() ? record_params() : nullptr);
    estimates_.append_to(out, Model::observable_names(params_).size(), ranks);
    if (tempering_.on()) order_by_rung(out);
    if (spectral_) return spectral_->collect(out);
    out.spectral_rows.clear();
    out.spectral_values.clear();
    out.timeslice_rows.clear();
    out.timeslice_values.clear();
  }
  const std::vector<ExactHistogram>& histograms() const override { return queue_.histograms(); }
  bool structure_factor(StructureFactorSums& out) override {
    return spectral_ && spectral_->structure_factor(out);
  }

  void configuration(void* out) override {
    snapshots_.order_after_copies();  // the storage's copies may be a snapshot's source
    if (!box_) return storage_.to_host(static_cast<Spin*>(out));
    std::vector<Spin> box(static_cast<size_t>(replicas() * lattice_.volume()));
    storage_.to_host(box.data());
    box_->gather_whole(box.data(), out, sizeof(Spin));  // every box into rank 0's `out`
  }
  SnapshotFormat snapshot_format() const override { return Model::snapshot_format(params_); }

  void start_snapshot(int slot) override {
    const int64_t sites = replicas() * volume_;
    const bool bits = kBitSnapshots && settings_.snapshot_bits;
    const int64_t bytes = bits ? sites / 8 : sites * static_cast<int64_t>(sizeof(Spin));
    if (box_) throw std::logic_error("start_snapshot: a decomposed engine streams snapshots");
    unsigned char* frame = snapshots_.frame(slot, bytes);
    snapshots_.order_after_copies();  // before the stage or the lexicographic copy is rewritten
    if (bits) {
      if constexpr (kBitSnapshots) snapshots_.stage_bits(slot, bytes, storage_.bit_source());
      return;
    }
    if (!storage_.keeps_lexicographic(sites)) {  // packed, too large to stage: in chunks, now
      return storage_.to_host(reinterpret_cast<Spin*>(frame));
    }
    storage_.refresh_lexicographic();
    snapshots_.copy_async(storage_.lexicographic(), sites, slot);
  }
  const void* snapshot_data(int slot) override { return snapshots_.wait(slot); }

  bool streams_snapshots() const override { return box_ != nullptr; }
  void stream_snapshot(const SnapshotBox& take) override {
    const std::vector<unsigned char> box = snapshot_box();
    const Decomposition& d = box_->decomposition();
    box_->to_root_in_turn(box.data(), box.size(), [&](int rank, const void* data) {
      take(d.box_origin(rank), d.box(), data);
    });
  }
  void own_snapshot_box(const SnapshotBox& take) override {
    const std::vector<unsigned char> box = snapshot_box();
    const Decomposition& d = box_->decomposition();
    take(d.box_origin(box_->communicator().rank()), d.box(), box.data());
  }

  EngineState state() override {
    if (queued() != 0) throw std::logic_error("LatticeEngine::state: collect() first");
    EngineState s;
    if (box_) {  // each rank its own part of the checkpoint
      s.configuration = box_interior(s.region_origin);
      s.region_extents = box_->decomposition().box();
    } else {
      s.configuration.resize(static_cast<size_t>(replicas() * volume_) * sizeof(Spin));
      configuration(s.configuration.data());
    }
    s.histograms = queue_.histograms();
    structure_factor(s.structure_factor);
    s.measurements = measurements_;
    s.tuning = step_tuning();
    sweeper_.save(s);
    s.tempering = tempering_.state();
    return s;
  }

  void restore(const EngineState& s) override {
    const size_t storage_bytes = static_cast<size_t>(replicas() * lattice_.volume()) * sizeof(Spin);
    std::vector<Spin> lexicographic(static_cast<size_t>(replicas() * lattice_.volume()));
    if (!s.region_extents.empty()) {  // this rank's storage, read from a decomposed checkpoint
      if (!box_ ||
          s.region_origin != box_->decomposition().storage_origin(box_->communicator().rank()) ||
          s.region_extents != box_->decomposition().storage_extents() ||
          s.configuration.size() != storage_bytes)
        throw std::invalid_argument("restore: the configuration is not this rank's box");
      std::memcpy(lexicographic.data(), s.configuration.data(), storage_bytes);
    } else if (s.configuration.size() != static_cast<size_t>(replicas() * volume_) * sizeof(Spin)) {
      throw std::invalid_argument("restore: the configuration does not match the lattice");
    } else if (box_) {  // this rank's box of the whole configuration
      box_->box_from_whole(s.configuration.data(), lexicographic.data(), sizeof(Spin));
    } else {
      std::memcpy(lexicographic.data(), s.configuration.data(), storage_bytes);
    }
    storage_.from_host(lexicographic.data());
    queue_.restore(s.histograms);
    measurements_ = s.measurements;
    if (spectral_) spectral_->restore(s.structure_factor);
    sweeper_.restore(s);
    tempering_.restore(s.tempering, params_);
    exec_.synchronize();
  }

  int replicas() const override { return settings_.replicas; }
  TemperingState tempering() const override { return tempering_.state(); }

  void set_beta(double beta) override { params_ = params_at(beta); }

  void log_weight_changes(double beta, std::vector<double>& out) override {
    check_annealable();
    const Params next = params_at(beta);
    if (annealing_sums_.size() == 0) annealing_sums_ = exec_.template allocate<Sums>(replicas());
    storage_.sums_into(params_, annealing_sums_.data());
    std::vector<Sums> sums(static_cast<size_t>(replicas()));
    exec_.copy_to_host(annealing_sums_, sums.data());
    out.resize(sums.size());
    const double v = static_cast<double>(volume_);
    for (size_t r = 0; r < sums.size(); ++r)
      out[r] = Model::log_weight(next, sums[r], v) - Model::log_weight(params_, sums[r], v);
  }

  void gather_replicas(const std::vector<int32_t>& source) override {
    check_annealable();
    if (source.size() != static_cast<size_t>(replicas()))
      throw std::invalid_argument("gather_replicas: one source per replica");
    using Unit = typename Storage::Unit;
    const int64_t units = Storage::replica_units(lattice_);
    const int64_t total = units * replicas();
    if (gathered_.size() == 0) {
      gathered_ = exec_.template allocate<Unit>(total);
      gather_sources_ = exec_.template allocate<int32_t>(replicas());
    }
    exec_.copy_to_device(source.data(), gather_sources_);
    exec_.for_each(total, GatherReplicas<Unit>{storage_.units(), gathered_.data(),
                                               gather_sources_.data(), units});
    exec_.for_each(total, CopyUnits<Unit>{gathered_.data(), storage_.units()});
  }
  int64_t volume() const override { return volume_; }
  std::string backend_name() const override { return Exec::kBackendName; }
  std::string device_name() const override { return exec_.device_name(); }
  void synchronize() override { exec_.synchronize(); }
  double timed_sweeps(uint64_t first, uint64_t count) override {
    return exec_.time([&] { sweep(first, count); });
  }

 private:
  /// This rank's box interior (every replica, lexicographic over the box), and its first
  /// site's global coordinates into `origin`.
  std::vector<unsigned char> box_interior(std::vector<int64_t>& origin) {
    snapshots_.order_after_copies();  // the storage's copies may be a snapshot's source
    std::vector<Spin> box(static_cast<size_t>(replicas() * lattice_.volume()));
    storage_.to_host(box.data());
    const Decomposition& d = box_->decomposition();
    origin = d.box_origin(box_->communicator().rank());
    std::vector<unsigned char> interior(static_cast<size_t>(replicas() * volume_of(d.box())) *
                                        sizeof(Spin));
    box_->interior_of_box(box.data(), interior.data(), sizeof(Spin));
    return interior;
  }

  /// This rank's box interior in the snapshot format (bit-packed: 8 sites of the last axis a
  /// byte).
  std::vector<unsigned char> snapshot_box() {
    std::vector<int64_t> origin;
    std::vector<unsigned char> interior = box_interior(origin);
    if (kBitSnapshots && settings_.snapshot_bits) {
      std::vector<unsigned char> packed(interior.size() / 8);
      const PackSpinBits<LexicographicSpinBits> pack{
          {reinterpret_cast<const int8_t*>(interior.data())}, packed.data(), 0};
      for (size_t i = 0; i < packed.size(); ++i) pack(static_cast<int64_t>(i));
      interior = std::move(packed);
    }
    return interior;
  }

  /// The model's Params at inverse temperature `beta`, the other couplings and a tuned step as
  /// in use.
  Params params_at(double beta) const {
    check_annealable();
    EngineSettings at = settings_;
    at.beta = beta;
    Params p = model_params(Model{}, at, D);
    if constexpr (Model::kTunableStep) p.step = params_.step;
    return p;
  }

  /// Population annealing changes every replica's beta and copies whole replicas: not for
  /// models without beta, tempered runs (couplings per slot) or decomposed ones (boxes).
  void check_annealable() const {
    if (settings_.model == ModelKind::phi4 || tempering_.on() || box_)
      throw InputError(
          "population annealing needs an Ising, Potts or O(n) model, one process, and no "
          "[tempering]");
  }

  /// This rank's box of a decomposed lattice, over the storage's units; null when alone.
  std::unique_ptr<DecomposedBox<Exec, D>> make_box(const EngineSettings& s) const {
    if (!decomposed(s)) return nullptr;
    return std::make_unique<DecomposedBox<Exec, D>>(
        exec_, s, lattice_, Storage::kUnitBytes, Storage::row_units(lattice_),
        Storage::colour_units(lattice_), Storage::replica_units(lattice_));
  }

  /// A measurement's spectral parts, once its sums are queued. Decomposed, each rank's box
  /// interior is the field, and the ranks take the spectra together.
  void measure_rest() {
    sweeper_.record_estimates(estimates_.slot(queue_.queued()));
    if (spectral_ && (structure_factor_due(settings_, measurements_) ||
                      timeslices_due(settings_, measurements_))) {
      const int components = spectral_->components();
      snapshots_.order_after_copies();  // the lexicographic copy may be a snapshot's source
      Spin* lexicographic = storage_.refresh_lexicographic();
      int64_t sites = volume_;
      if (box_) {
        sites = volume_of(box_->decomposition().box());
        lexicographic = box_->interior_sites(lexicographic, spectral_interior_);
      }
      exec_.for_each(
          replicas() * components * sites,
          FieldComponents<Model>{params_, lexicographic, spectral_->field(), sites, components});
      spectral_->measure(measurements_, queue_.queued());
    }
    ++measurements_;
    tempering_.record_rungs(queue_.queued());
    queue_.push();
  }

  /// Tempered: the couplings of each queued record (its slot's rung when it was measured).
  const Params* const* record_params() {
    record_params_.resize(queued_rungs_.size());
    for (size_t i = 0; i < queued_rungs_.size(); ++i)
      record_params_[i] = &tempering_.rung_params(queued_rungs_[i]);
    return record_params_.data();
  }

  /// Tempered: each measurement's rows into rung order (index l * rungs + k: ladder l, rung k),
  /// with the slots' rungs and every configuration's log weight at every rung.
  void order_by_rung(MeasurementBatch& out) {
    const int rungs = tempering_.rungs();
    const auto slots = static_cast<size_t>(replicas());
    const size_t records = static_cast<size_t>(out.count) * slots;
    const size_t width = records ? out.values.size() / records : 0;
    const std::vector<Sums>& sums = queue_.collected_sums();
    std::vector<double> values(out.values.size());
    out.log_weights.assign(records * static_cast<size_t>(rungs), 0.0);
    for (size_t i = 0; i < records; ++i) {
      const size_t slot = i % slots;
      const size_t to = i - slot % rungs + static_cast<size_t>(queued_rungs_[i]);  // same ladder
      std::copy_n(&out.values[i * width], width, &values[to * width]);
      for (int j = 0; j < rungs; ++j)
        out.log_weights[to * rungs + static_cast<size_t>(j)] = tempering_.log_weight(j, sums[i]);
    }
    out.values = std::move(values);
    out.replica_rungs = std::move(queued_rungs_);
    queued_rungs_.clear();
  }

  Exec exec_;
  Checkerboard<D> lattice_;  ///< the whole lattice, or this rank's box with its ghosts
  int64_t volume_;           ///< of the whole lattice
  typename Model::Params params_;
  EngineSettings settings_;
  std::unique_ptr<DecomposedBox<Exec, D>> box_;  ///< this rank's box, when decomposed
  Storage storage_;
  Tempering<Exec, Model> tempering_;  ///< parallel tempering's couplings and exchanges, or off
  Sweeper<Exec, D, Model, Storage> sweeper_;
  MeasurementQueue<Exec, Model> queue_;
  EstimateQueue<Exec> estimates_;
  std::unique_ptr<Spectra> spectral_;  ///< when measured; decomposed: every rank its box
  SnapshotFrames<Exec> snapshots_;
  typename Exec::template Buffer<Spin> spectral_interior_;  ///< decomposed: the box's field
  int64_t measurements_ = 0;           ///< measurements taken so far (the spectral cadence)
  std::vector<int32_t> queued_rungs_;  ///< tempered: [k * replicas + slot] of queued ones
  std::vector<const Params*> record_params_;
  // Population annealing (allocated at first use): each replica's sums for its weight, and the
  // gathered replicas with their sources.
  typename Exec::template Buffer<Sums> annealing_sums_;
  typename Exec::template Buffer<typename Storage::Unit> gathered_;
  typename Exec::template Buffer<int32_t> gather_sources_;
};

}  // namespace lattica
