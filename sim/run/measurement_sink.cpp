#include "sim/run/measurement_sink.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "sim/background_writer.hpp"
#include "sim/communicator.hpp"
#include "sim/config.hpp"
#include "sim/correlators.hpp"
#include "sim/output.hpp"
#include "sim/parallel/slab_fft.hpp"

namespace lattica {

namespace {

/// Throws (a runtime failure) at the first value of `batch` that is not finite, naming the
/// observable, the replica and the sweep, so that it never reaches the output: the couplings
/// made the energies overflow, or a Langevin pass diverged. sweeps[first + k] is the sweep of
/// the batch's measurement k.
void refuse_non_finite(const MeasurementBatch& batch, const std::vector<int64_t>& sweeps,
                       size_t first, const std::vector<std::string>& names, int replicas,
                       bool langevin) {
  const size_t per_measurement = names.size() * static_cast<size_t>(replicas);
  for (size_t i = 0; i < batch.values.size(); ++i) {
    if (std::isfinite(batch.values[i])) continue;
    const size_t k = i / per_measurement, r = i % per_measurement / names.size();
    std::ostringstream os;
    os << "the measurement at sweep " << sweeps[first + k] << " is not finite: observable '"
       << names[i % names.size()] << "' of replica " << r << " is " << batch.values[i]
       << (langevin ? "; the Langevin dynamics diverged: lower update.langevin_step, or use "
                      "\"mala\", whose accept/reject keeps it stable"
                    : "; the couplings make the model's numbers overflow: choose smaller ones");
    throw std::runtime_error(os.str());
  }
}

/// Appends the batch's rows `rows` (indices k of its measurements) with their values to `to`;
/// sweeps[first + k] is the sweep of measurement k.
void append_rows(SweepRows& to, const std::vector<int64_t>& rows, const std::vector<double>& values,
                 const std::vector<int64_t>& sweeps, size_t first) {
  for (int64_t row : rows) to.sweeps.push_back(sweeps[first + static_cast<size_t>(row)]);
  to.values.insert(to.values.end(), values.begin(), values.end());
}

}  // namespace

MeasurementSink::MeasurementSink(const Config& config, Engine& engine, OutputFile* output,
                                 BackgroundWriter& writer, Communicator* ranks)
    : engine_(engine),
      output_(output),
      writer_(writer),
      ranks_(ranks && ranks->size() > 1 ? ranks : nullptr),
      observable_names_(engine.observable_names()),
      langevin_(std::any_of(config.sequence.begin(), config.sequence.end(),
                            [](const std::string& a) { return a == "langevin" || a == "mala"; })),
      per_mode_tables_(config.structure_factor_tables == "full"),
      capacity_(config.engine_settings().measurement_capacity),
      flush_every_(config.flush_every) {}

void MeasurementSink::record(int64_t sweep) {
  pending_.observables.sweeps.push_back(sweep);
  if (engine_.queued() == capacity_) collect();
  if (static_cast<int64_t>(pending_.observables.sweeps.size()) >= flush_every_) write();
}

void MeasurementSink::collect() {
  engine_.collect(batch_);
  // The batch holds the last batch_.count measurements recorded.
  const std::vector<int64_t>& sweeps = pending_.observables.sweeps;
  const size_t first = sweeps.size() - static_cast<size_t>(batch_.count);
  refuse_non_finite(batch_, sweeps, first, observable_names_, engine_.replicas(), langevin_);
  std::vector<double>& values = pending_.observables.values;
  values.insert(values.end(), batch_.values.begin(), batch_.values.end());
  append_rows(pending_.structure_factor, batch_.spectral_rows, batch_.spectral_values, sweeps,
              first);
  append_rows(pending_.timeslices, batch_.timeslice_rows, batch_.timeslice_values, sweeps, first);
  pending_.replica_rungs.insert(pending_.replica_rungs.end(), batch_.replica_rungs.begin(),
                                batch_.replica_rungs.end());
  pending_.log_weights.insert(pending_.log_weights.end(), batch_.log_weights.begin(),
                              batch_.log_weights.end());
}

void MeasurementSink::write() {
  if (engine_.queued() > 0) collect();
  if (output_) {
    writer_.submit([output = output_, rows = std::move(pending_)] {
      output->append_measurements(rows.observables.sweeps, rows.observables.values);
      output->append_structure_factor_series(rows.structure_factor.sweeps,
                                             rows.structure_factor.values);
      output->append_timeslices(rows.timeslices.sweeps, rows.timeslices.values);
      output->append_tempering(rows.observables.sweeps, rows.replica_rungs, rows.log_weights);
      output->flush();
    });
  }
  pending_ = PendingMeasurements{};
}

void MeasurementSink::write_results() {
  writer_.drain();
  if (output_) output_->write_histograms(engine_.histograms());
  StructureFactorSums structure_factor;  // decomposed: every rank its rows
  if (engine_.structure_factor(structure_factor) && structure_factor.samples > 0)
    write_structure_factor(structure_factor);
  if (!output_) return;
  output_->write_step_tuning(engine_.step_tuning());
  output_->write_tempering(engine_.tempering());
}

void MeasurementSink::write_structure_factor(const StructureFactorSums& sums) {
  StructureFactorTables tables = structure_factor_tables(sums, ranks_, per_mode_tables_);
  if (!ranks_ || !tables.per_mode) {
    if (output_) output_->write_structure_factor(tables);
    return;
  }
  // Every other rank's rows of S and G (three tables on the half spectrum, two on the lattice),
  // sent table by table; rank 0 takes them a rank at a time, so it holds two ranks' rows at most.
  constexpr int kTag = 12;
  const int64_t row_modes = volume_of(tables.spectrum_shape) / tables.spectrum_shape[0];
  const int64_t row_sites = volume_of(sums.dims) / sums.dims[0];
  const auto parts = [&](StructureFactorTables& t) {
    return std::array<std::pair<std::vector<double>*, int64_t>, 5>{{{&t.s, row_modes},
                                                                    {&t.s_error, row_modes},
                                                                    {&t.s_connected, row_modes},
                                                                    {&t.g, row_sites},
                                                                    {&t.g_connected, row_sites}}};
  };
  if (ranks_->rank() != 0) {
    if (tables.rows == 0) return;
    for (auto [part, size] : parts(tables))
      ranks_->send(part->data(), part->size() * sizeof(double), 0, kTag);
    return;
  }
  output_->write_structure_factor(tables);
  const AxisSplit split{sums.dims[0], ranks_->size()};
  for (int rank = 1; rank < ranks_->size(); ++rank) {
    StructureFactorTables rows;
    rows.first_row = split.first(rank);
    rows.rows = split.count(rank);
    if (rows.rows == 0) continue;
    for (auto [part, size] : parts(rows)) {
      part->resize(static_cast<size_t>(rows.rows * size));
      ranks_->receive(part->data(), part->size() * sizeof(double), rank, kTag);
    }
    output_->write_structure_factor_rows(rows);
  }
}

}  // namespace lattica
