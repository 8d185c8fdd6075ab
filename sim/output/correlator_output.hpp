#pragma once
// The output's /correlators groups: the structure factor (a per-measurement series and the
// averaged tables) and the time-slice correlators (a per-measurement series).

#include <cstdint>
#include <vector>

#include "sim/correlators.hpp"
#include "sim/engine/engine.hpp"
#include "sim/output/record_series.hpp"

namespace lattica {

/// output.observables = "means": the means over the ladders of each column k < R / ladders of
/// values [(j * R + r) * block + e] (r = l * (R / ladders) + k, added in ladder order), as
/// /observables takes them.
std::vector<double> ladder_means(const std::vector<double>& values, int64_t count, int replicas,
                                 int ladders, size_t block);

/// /correlators/structure_factor: every `every`-th measurement's S(0), S(k_min) and xi2 in
/// series/, and the averaged S(k), G(r) and their tables next to it.
class StructureFactorOutput {
 public:
  /// Creates the group under `correlators` for lattices of extents `dims`; with `ladders` > 1
  /// (output.observables = "means") the series holds the means over the ladders (ladder_means)
  /// of S(0) and S(k_min), and xi2 from them.
  void create(hid_t correlators, const std::vector<int64_t>& dims, int replicas, int64_t every,
              int ladders);

  /// Opens the group of a file being resumed, its series cut back to `rows`.
  void open(hid_t file, const std::vector<int64_t>& dims, int replicas, int64_t rows, int ladders);

  /// Whether the run measures the structure factor (created or opened).
  bool exists() const { return series_.exists(); }
  RecordSeries& series() { return series_; }
  const RecordSeries& series() const { return series_; }

  /// Appends sweeps[j] and values[(j * R + r) * 2 + {0, 1}] = S(0), S(k_min), with xi_2 from
  /// them.
  void append(const std::vector<int64_t>& sweeps, const std::vector<double>& values);

  /// Writes the averaged tables (replacing earlier ones). Decomposed, `t` is rank 0's: its rows
  /// of S and G go in now, the other ranks' by write_average_rows().
  void write_averages(const StructureFactorTables& t);
  /// Writes the rows that `rows` holds of S, S_error, S_connected, G and G_connected into the
  /// tables of the last write_averages().
  void write_average_rows(const StructureFactorTables& rows);

  void close();

  /// Closes the group and its series to be opened again by attach() (RecordSeries::detach).
  void detach();
  void attach(hid_t file);

 private:
  std::vector<int64_t> dims_;
  int replicas_ = 1;
  int ladders_ = 1;
  H5Id group_;
  RecordSeries series_;
  bool detached_ = false;
};

/// /correlators/timeslice: every `every`-th measurement's C(dt, p), with the momenta p.
class TimesliceOutput {
 public:
  /// Creates the group under `correlators`: momenta_per_axis momenta along each spatial axis
  /// besides p = 0; with `ladders` > 1 the means over the ladders (ladder_means) of C.
  void create(hid_t correlators, const std::vector<int64_t>& dims, int replicas, int64_t every,
              int momenta_per_axis, int ladders);

  /// Opens the group of a file being resumed, its series cut back to `rows`.
  void open(hid_t file, const std::vector<int64_t>& dims, int replicas, int momenta_per_axis,
            int64_t rows, int ladders);

  bool exists() const { return series_.exists(); }
  RecordSeries& series() { return series_; }
  const RecordSeries& series() const { return series_; }

  /// Appends sweeps[j] and values[((j * R + r) * T + dt) * n_p + p].
  void append(const std::vector<int64_t>& sweeps, const std::vector<double>& values);

  void close() { series_.close(); }

  /// Closes the series to be opened again by attach() (RecordSeries::detach).
  void detach() { series_.detach(); }
  void attach(hid_t file) { series_.attach(file); }

 private:
  int replicas_ = 1, ladders_ = 1;
  size_t block_ = 1;  ///< values per replica and measurement: T x n_p
  RecordSeries series_;
};

}  // namespace lattica
