// OutputFile: the file of one run, its root attributes, its observables and snapshots, and its
// life from creation (or a resume's working copy) to close.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iterator>

#include "sim/output.hpp"
#include "sim/output/file_copy.hpp"
#include "sim/output/hdf5.hpp"
#include "sim/output/results.hpp"
#include "sim/output/snapshot_box.hpp"
#include "sim/version.hpp"

namespace lattica {

namespace {

/// The memory and file type of configuration values.
hid_t snapshot_type(ElementType type) {
  switch (type) {
    case ElementType::uint8:
      return H5T_NATIVE_UINT8;
    case ElementType::float32:
      return H5T_NATIVE_FLOAT;
    case ElementType::float64:
      return H5T_NATIVE_DOUBLE;
    case ElementType::int8:
      break;
  }
  return H5T_NATIVE_INT8;
}

/// The columns of /snapshots: one frame [R,] L0, ... [/ 8 when bit-packed] [, components] a
/// row, and the sweeps.
std::vector<Column> snapshot_columns(const RunMetadata& m) {
  const SnapshotFormat& f = m.snapshot;
  std::vector<hsize_t> row = replica_axis(m.replicas);
  row.insert(row.end(), m.dims.begin(), m.dims.end());
  if (f.bit_packed) row.back() /= 8;
  if (f.components > 1) row.push_back(static_cast<hsize_t>(f.components));
  const hid_t type = snapshot_type(f.type);
  const std::string description =
      std::string(f.description) +
      (m.replicas > 1 ? ", frames x replicas x lattice" : ", frames x lattice") +
      (f.components > 1 ? " x components" : "") +
      (f.bit_packed ? " (the last axis in bytes of 8 sites)" : "") +
      " in lexicographic order (last lattice axis fastest)";
  std::vector<hsize_t> chunk = snapshot_chunk(row, m.snapshot_box, m.replicas, H5Tget_size(type));
  // Early allocation: a frame's chunks get their place in the file when the frame is appended,
  // so that the ranks can write them collectively without changing the file's metadata (parallel
  // HDF5 does not reliably place chunks while writing). Nothing is written there before.
  return {Column{"configuration", type, std::move(row), std::move(chunk), description, true},
          make_column("sweep", H5T_NATIVE_INT64, {}, 256,
                      "sweeps completed when each frame was taken")};
}

/// The columns of /observables: one per observable (descriptions: empty when reopened), then
/// the sweeps.
std::vector<Column> observable_columns(const std::vector<std::string>& names,
                                       const std::vector<std::string>& descriptions, int replicas) {
  std::vector<Column> columns;
  for (size_t o = 0; o < names.size(); ++o) {
    columns.push_back(make_column(names[o], H5T_NATIVE_DOUBLE, replica_axis(replicas), 4096,
                                  o < descriptions.size() ? descriptions[o] : ""));
  }
  columns.push_back(make_column("sweep", H5T_NATIVE_INT64, {}, 4096,
                                "sweeps completed when the measurement was taken"));
  return columns;
}

/// Columns of /observables per observable: every replica, or with means one per rung (tempered)
/// or a single value.
int observable_width(const RunMetadata& m) {
  return !m.observable_means ? m.replicas : m.rungs > 0 ? m.rungs : 1;
}

/// Replicas averaged into each column of /observables and, alike, of the structure factor's and
/// time-slice series (1: every replica's series).
int averaged_ladders(const RunMetadata& m) { return m.replicas / observable_width(m); }

/// The powers of an observable x whose replica means output.observables = "means" writes, so
/// that <|x|>, <x^2>, <x^4> (a Binder cumulant, a susceptibility, a specific heat) stay exact
/// averages over the configurations: the dataset's name for x's, and x's value.
struct Moment {
  std::string (*name)(const std::string& x);
  double (*of)(double x);
  const char* description;
};
const Moment kMoments[] = {
    {[](const std::string& x) { return x; }, [](double x) { return x; }, "the mean of"},
    {[](const std::string& x) { return "|" + x + "|"; }, [](double x) { return std::abs(x); },
     "the mean of the absolute value of"},
    {[](const std::string& x) { return x + "^2"; }, [](double x) { return x * x; },
     "the mean of the square of"},
    {[](const std::string& x) { return x + "^4"; }, [](double x) { return x * x * x * x; },
     "the mean of the fourth power of"},
};

/// /observables of a run that writes means: every moment of every observable, averaged over
/// `averaged` replicas in each of `width` columns.
std::vector<Column> moment_columns(const std::vector<std::string>& names,
                                   const std::vector<std::string>& descriptions, int width,
                                   int averaged) {
  std::vector<std::string> all, texts;
  for (const Moment& moment : kMoments) {
    for (size_t o = 0; o < names.size(); ++o) {
      all.push_back(moment.name(names[o]));
      texts.push_back(std::string(moment.description) + " " + names[o] + " over " +
                      std::to_string(averaged) + " replicas" +
                      (o < descriptions.size() ? " (" + descriptions[o] + ")" : ""));
    }
  }
  return observable_columns(all, texts, width);
}

/// The columns of /observables: every replica's series, or every moment's means.
std::vector<Column> observables_layout(const RunMetadata& m, const std::vector<std::string>& names,
                                       const std::vector<std::string>& descriptions) {
  if (!m.observable_means) return observable_columns(names, descriptions, m.replicas);
  return moment_columns(names, descriptions, observable_width(m), m.replicas / observable_width(m));
}

/// Columns of /kept_replicas: the kept replicas, or the kept ladders' every rung.
int kept_columns(const RunMetadata& m) { return m.kept_replicas * (m.rungs > 0 ? m.rungs : 1); }

/// The columns of /tempering: each measurement's rung of every replica slot and log weights
/// (with means only the sweeps: the slots' series would be as large as the replicas' were).
std::vector<Column> tempering_columns(int replicas, int rungs, bool means) {
  const auto slots = static_cast<hsize_t>(replicas), width = static_cast<hsize_t>(rungs);
  if (means)
    return {make_column("sweep", H5T_NATIVE_INT64, {}, 4096,
                        "sweeps completed when the measurement was taken")};
  return {make_column("replica_rung", H5T_NATIVE_INT32, {slots}, 1024,
                      "rung of the configuration in each replica slot (snapshots and "
                      "checkpoints are in slot order) when the measurement was taken"),
          make_column("log_weight", H5T_NATIVE_DOUBLE, {slots, width}, 256,
                      "[measurement, i, j]: ln of the Boltzmann weight of the configuration "
                      "measured at rung-ordered index i (ladder i / rungs, rung i % rungs) under "
                      "rung j's couplings, for reweighting across rungs (MBAR)"),
          make_column("sweep", H5T_NATIVE_INT64, {}, 4096,
                      "sweeps completed when the measurement was taken")};
}

/// /tempering of a new file: the ladder (every rung's couplings) and its series.
RecordSeries create_tempering(hid_t root, const RunMetadata& m) {
  RecordSeries series = RecordSeries::create(
      root, "tempering", tempering_columns(m.replicas, m.rungs, m.observable_means));
  const hid_t group = series.group();
  const int64_t rungs = m.rungs, ladders = m.replicas / m.rungs;
  write_numeric_attribute(group, "rungs", H5T_NATIVE_INT64, &rungs, 1, true);
  write_numeric_attribute(group, "ladders", H5T_NATIVE_INT64, &ladders, 1, true);
  write_numeric_attribute(group, "exchange_every", H5T_NATIVE_INT64, &m.exchange_every, 1, true);
  std::string tempered;
  for (const std::string& name : m.tempered) tempered += (tempered.empty() ? "" : ",") + name;
  write_string_attribute(group, "tempered", tempered);
  for (const auto& [name, values] : m.rung_couplings) {
    write_vector(group, name.c_str(), values, "the coupling of every rung, rung order");
    if (m.feedback > 0 && name == m.tempered.front())
      write_vector(group, "ladder_input", values,
                   "the input's ladder of " + name + ", before the feedback moved it");
  }
  if (m.feedback > 0) {
    const int64_t steps = m.feedback;
    write_numeric_attribute(group, "feedback", H5T_NATIVE_INT64, &steps, 1, true);
  }
  return series;
}

/// The root attributes of a new file.
void write_root_attributes(hid_t root, const RunMetadata& m) {
  write_string_attribute(root, "schema", "lattica/1");
  write_string_attribute(root, "program_version", kLatticaVersion);
  write_string_attribute(root, "git_commit", kLatticaGitCommit);
  write_string_attribute(root, "created_utc", utc_now_iso8601());
  // 1 once the run did all its sweeps; set in place, so the root's header never grows at the
  // end of the file (where a copy cut short would lose it).
  set_int64_attribute(root, "finished", 0);
  write_string_attribute(root, "input_path", m.input_path);
  write_string_attribute(root, "input_toml", m.input_toml);
  write_string_attribute(root, "resolved_config", m.resolved_toml);
  write_string_attribute(root, "model", m.model);
  write_string_attribute(root, "algorithm", m.algorithm);
  write_string_attribute(root, "backend", m.backend);
  write_string_attribute(root, "device", m.device);
  write_numeric_attribute(root, "seed", H5T_NATIVE_UINT64, &m.seed, 1, true);
  if (m.model == "phi4") {
    write_numeric_attribute(root, "kappa", H5T_NATIVE_DOUBLE, &m.kappa, 1, true);
    write_numeric_attribute(root, "lambda", H5T_NATIVE_DOUBLE, &m.lambda, 1, true);
  } else {
    write_numeric_attribute(root, "beta", H5T_NATIVE_DOUBLE, &m.beta, 1, true);
  }
  write_numeric_attribute(root, "h", H5T_NATIVE_DOUBLE, &m.field, 1, true);
  if (m.n > 0) {
    const int64_t n = m.n;
    write_numeric_attribute(root, "n", H5T_NATIVE_INT64, &n, 1, true);
  }
  if (!m.precision.empty()) {
    write_string_attribute(root, "precision", m.precision);
    const int64_t hits = m.hits;
    write_numeric_attribute(root, "hits", H5T_NATIVE_INT64, &hits, 1, true);
  }
  write_numeric_attribute(root, "lattice_dims", H5T_NATIVE_INT64, m.dims.data(), m.dims.size(),
                          false);
  if (m.q > 0) {
    const int64_t q = m.q;
    write_numeric_attribute(root, "q", H5T_NATIVE_INT64, &q, 1, true);
  }
  const int64_t replicas = m.replicas;
  write_numeric_attribute(root, "replicas", H5T_NATIVE_INT64, &replicas, 1, true);
  if (m.point_index >= 0) {
    write_numeric_attribute(root, "point_index", H5T_NATIVE_INT64, &m.point_index, 1, true);
    write_string_attribute(root, "swept_parameters", m.swept);
  }
}

}  // namespace

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

OutputFile::OutputFile(const std::string& path, bool overwrite, const RunMetadata& m,
                       const std::vector<std::string>& observables,
                       const std::vector<std::string>& descriptions)
    : path_(path), dims_(m.dims), replicas_(m.replicas), observable_count_(observables.size()) {
  quiet_hdf5();
  file_ = H5Id(H5_CHECK(H5Fcreate(path.c_str(), overwrite ? H5F_ACC_TRUNC : H5F_ACC_EXCL,
                                  H5P_DEFAULT, file_access().get())),
               H5Fclose);
  const hid_t root = file_.get();
  write_root_attributes(root, m);
  observable_means_ = m.observable_means;
  observables_ =
      RecordSeries::create(root, "observables", observables_layout(m, observables, descriptions));
  if (observable_means_) {
    const int64_t averaged = averaged_ladders(m);
    write_numeric_attribute(observables_.group(), "averaged_over", H5T_NATIVE_INT64, &averaged, 1,
                            true);
  }
  kept_columns_ = kept_columns(m);
  if (kept_columns_ > 0) {
    kept_ = RecordSeries::create(root, "kept_replicas",
                                 observable_columns(observables, descriptions, kept_columns_));
  }
  snapshots_ = RecordSeries::create(root, "snapshots", snapshot_columns(m));
  write_string_attribute(snapshots_.column(0), "packing", m.snapshot.bit_packed ? "bits" : "none");
  rungs_ = m.rungs;
  if (m.feedback > 0) tuned_coupling_ = m.tempered.front();
  if (rungs_ > 0) tempering_ = create_tempering(root, m);
  if (m.structure_factor_every > 0 || m.timeslice_every > 0) {
    const H5Id correlators = create_group(root, "correlators");
    if (m.timeslice_every > 0) {
      timeslices_.create(correlators.get(), m.dims, replicas_, m.timeslice_every,
                         m.timeslice_momenta, averaged_ladders(m));
    }
    if (m.structure_factor_every > 0) {
      structure_factor_.create(correlators.get(), m.dims, replicas_, m.structure_factor_every,
                               averaged_ladders(m));
    }
  }
  flush();
}

OutputFile::OutputFile(const std::string& path, const RunMetadata& m,
                       const std::vector<std::string>& observables, const OutputLengths& lengths)
    : path_(path), dims_(m.dims), replicas_(m.replicas), observable_count_(observables.size()) {
  quiet_hdf5();
  working_path_ = working_copy_path(path);
  copy_whole_file(path, working_path_);
  try {
    reopen(m, observables, lengths);
  } catch (...) {
    std::remove(working_path_.c_str());  // the output stays as it was
    throw;
  }
}

void OutputFile::reopen(const RunMetadata& m, const std::vector<std::string>& observables,
                        const OutputLengths& lengths) {
  match_recorded_length(working_path_);
  file_ =
      H5Id(H5_CHECK(H5Fopen(working_path_.c_str(), H5F_ACC_RDWR, file_access().get())), H5Fclose);
  const hid_t root = file_.get();
  set_int64_attribute(root, "finished", 0);  // until the resumed run is done
  replace_string_attribute(root, "input_toml", m.input_toml);
  replace_string_attribute(root, "resolved_config", m.resolved_toml);
  // Where the chain continued, and on what: one line per resume.
  replace_string_attribute(root, "resumed",
                           read_string_attribute(root, "resumed") + utc_now_iso8601() +
                               ": resumed on " + m.backend + " (" + m.device + ")\n");

  observable_means_ = m.observable_means;
  observables_ = RecordSeries::open(root, "observables", observables_layout(m, observables, {}),
                                    lengths.measurements);
  kept_columns_ = kept_columns(m);
  if (kept_columns_ > 0) {
    kept_ = RecordSeries::open(root, "kept_replicas",
                               observable_columns(observables, {}, kept_columns_),
                               lengths.measurements);
  }
  snapshots_ = RecordSeries::open(root, "snapshots", snapshot_columns(m), lengths.snapshots);
  rungs_ = m.rungs;
  if (m.feedback > 0) tuned_coupling_ = m.tempered.front();
  if (rungs_ > 0) {  // one row per measurement, like /observables
    tempering_ = RecordSeries::open(root, "tempering",
                                    tempering_columns(replicas_, rungs_, observable_means_),
                                    lengths.measurements);
  }
  if (m.structure_factor_every > 0) {
    structure_factor_.open(root, m.dims, replicas_, lengths.structure_factor_series,
                           averaged_ladders(m));
  }
  if (m.timeslice_every > 0) {
    timeslices_.open(root, m.dims, replicas_, m.timeslice_momenta, lengths.timeslices,
                     averaged_ladders(m));
  }
  flush();
}

OutputFile::~OutputFile() {
  if (!working_path_.empty()) std::remove(working_path_.c_str());
}

void OutputFile::publish() {
  if (working_path_.empty()) return;
  replace_by(working_path_, path_);
  working_path_.clear();
}

void OutputFile::mark_finished() { set_int64_attribute(file_.get(), "finished", 1); }

void OutputFile::append_measurements(const std::vector<int64_t>& sweeps,
                                     const std::vector<double>& values) {
  const auto count = static_cast<int64_t>(sweeps.size());
  if (count == 0) return;
  // values holds every observable of a row together, [measurement][column][observable] with
  // the columns in rung order (l x rungs + k); the file holds one dataset per observable.
  const size_t n_obs = observable_count_, replicas = static_cast<size_t>(replicas_);
  const auto value = [&](int64_t j, size_t column, size_t o) {
    return values[(static_cast<size_t>(j) * replicas + column) * n_obs + o];
  };
  // Columns 0 .. width-1 of every measurement (ladders = 1), or the means over the ladders of
  // each moment of each column k < width (added in ladder order).
  const auto append = [&](RecordSeries& series, size_t width, size_t ladders,
                          const std::vector<Moment>& moments) {
    std::vector<std::vector<double>> columns;
    for (const Moment& moment : moments) {
      for (size_t o = 0; o < n_obs; ++o) {
        std::vector<double>& column = columns.emplace_back(static_cast<size_t>(count) * width);
        for (int64_t j = 0; j < count; ++j) {
          for (size_t k = 0; k < width; ++k) {
            double sum = 0;
            for (size_t l = 0; l < ladders; ++l) sum += moment.of(value(j, l * width + k, o));
            column[static_cast<size_t>(j) * width + k] =
                ladders > 1 ? sum / static_cast<double>(ladders) : sum;
          }
        }
      }
    }
    std::vector<const void*> data;
    for (const std::vector<double>& column : columns) data.push_back(column.data());
    data.push_back(sweeps.data());
    series.append(count, data);
  };
  const std::vector<Moment> plain(kMoments, kMoments + 1);
  if (!observable_means_) {
    append(observables_, replicas, 1, plain);
    return;
  }
  const size_t width = rungs_ > 0 ? static_cast<size_t>(rungs_) : 1;
  append(observables_, width, replicas / width,
         std::vector<Moment>(std::begin(kMoments), std::end(kMoments)));
  if (kept_columns_ > 0) append(kept_, static_cast<size_t>(kept_columns_), 1, plain);
}

void OutputFile::append_snapshot(int64_t sweep, const void* configuration) {
  snapshots_.append(1, {configuration, &sweep});
}

void OutputFile::begin_snapshot(int64_t sweep) { snapshots_.append(1, {nullptr, &sweep}); }

void OutputFile::write_snapshot_block(const std::vector<int64_t>& origin,
                                      const std::vector<int64_t>& extents, const void* box) {
  const FrameBlock b = snapshot_box_block(snapshots_.column(0), dims_, replicas_, origin, extents);
  snapshots_.write_block(0, snapshots_.length() - 1, b.start, b.count, box);
}

bool OutputFile::snapshot_chunks_placed_early() const {
  H5Id plist(H5_CHECK(H5Dget_create_plist(snapshots_.column(0))), H5Pclose);
  H5D_alloc_time_t when = H5D_ALLOC_TIME_DEFAULT;
  H5_CHECK(H5Pget_alloc_time(plist.get(), &when));
  return when == H5D_ALLOC_TIME_EARLY;
}

std::string OutputFile::close_for_frame(int64_t sweep) {
  begin_snapshot(sweep);  // its chunks placed, not written
  // Every open object goes, so that the file is closed for good (not merely dereferenced) and
  // the ranks can open it over MPI-IO.
  observables_.detach();
  snapshots_.detach();
  structure_factor_.detach();
  timeslices_.detach();
  tempering_.detach();
  kept_.detach();
  for (RecordSeries& series : further_) series.detach();
  const ssize_t open = H5_CHECK(H5Fget_obj_count(file_.get(), H5F_OBJ_ALL));
  if (open != 1)
    throw HdfError("close_for_frame: " + std::to_string(open - 1) + " objects of " + path_ +
                   " still open");
  H5_CHECK(H5Fclose(file_.release()));
  return working_path_.empty() ? path_ : working_path_;
}

void OutputFile::reopen_after_frame() {
  const std::string& path = working_path_.empty() ? path_ : working_path_;
  file_ = H5Id(H5_CHECK(H5Fopen(path.c_str(), H5F_ACC_RDWR, file_access().get())), H5Fclose);
  const hid_t root = file_.get();
  observables_.attach(root);
  snapshots_.attach(root);
  structure_factor_.attach(root);
  timeslices_.attach(root);
  tempering_.attach(root);
  kept_.attach(root);
  for (RecordSeries& series : further_) series.attach(root);
}

void OutputFile::append_structure_factor_series(const std::vector<int64_t>& sweeps,
                                                const std::vector<double>& values) {
  structure_factor_.append(sweeps, values);
}

void OutputFile::append_timeslices(const std::vector<int64_t>& sweeps,
                                   const std::vector<double>& values) {
  timeslices_.append(sweeps, values);
}

void OutputFile::append_tempering(const std::vector<int64_t>& sweeps,
                                  const std::vector<int32_t>& rungs,
                                  const std::vector<double>& log_weights) {
  if (rungs_ == 0 || sweeps.empty()) return;
  if (observable_means_) {  // the sweeps only (tempering_columns)
    tempering_.append(static_cast<int64_t>(sweeps.size()), {sweeps.data()});
    return;
  }
  tempering_.append(static_cast<int64_t>(sweeps.size()),
                    {rungs.data(), log_weights.data(), sweeps.data()});
}

RecordSeries& OutputFile::create_series(const char* name, const std::vector<Column>& columns) {
  further_.push_back(RecordSeries::create(file_.get(), name, columns));
  return further_.back();
}

void OutputFile::write_tempering(const TemperingState& state) {
  if (rungs_ == 0) return;
  write_tempering_statistics(tempering_.group(), state);
  if (!tuned_coupling_.empty())
    write_tempering_feedback(tempering_.group(), tuned_coupling_, state);
}

void OutputFile::write_structure_factor(const StructureFactorTables& tables) {
  structure_factor_.write_averages(tables);
}

void OutputFile::write_structure_factor_rows(const StructureFactorTables& rows) {
  structure_factor_.write_average_rows(rows);
}

void OutputFile::write_step_tuning(const StepTuning& tuning) {
  lattica::write_step_tuning(file_.get(), tuning);
}

void OutputFile::write_histograms(const std::vector<ExactHistogram>& histograms) {
  lattica::write_histograms(file_.get(), histograms);
}

void OutputFile::write_multicanonical(const MulticanonicalRecord& record) {
  lattica::write_multicanonical(file_.get(), record);
}

void OutputFile::flush() {
  reserve_file_space(file_.get(), 0);  // a full disk stops us before HDF5 writes its metadata
  // Data first, then the lengths that vouch for it, then the lengths themselves.
  H5_CHECK(H5Fflush(file_.get(), H5F_SCOPE_GLOBAL));
  observables_.commit();
  snapshots_.commit();
  if (structure_factor_.exists()) structure_factor_.series().commit();
  if (timeslices_.exists()) timeslices_.series().commit();
  if (tempering_.exists()) tempering_.commit();
  if (kept_.exists()) kept_.commit();
  for (RecordSeries& series : further_) series.commit();
  H5_CHECK(H5Fflush(file_.get(), H5F_SCOPE_GLOBAL));
}

void OutputFile::close() {
  if (file_.get() < 0) return;
  flush();
  observables_.close();
  snapshots_.close();
  structure_factor_.close();
  timeslices_.close();
  tempering_.close();
  kept_.close();
  for (RecordSeries& series : further_) series.close();
  // Closed here, not in a destructor, so that failures are reported.
  H5_CHECK(H5Fclose(file_.release()));
  trim_to_recorded_length(working_path_.empty() ? path_ : working_path_);
  publish();
}

}  // namespace lattica
