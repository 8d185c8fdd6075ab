#pragma once
// What the command-line tests share: running sim as a subprocess in a fresh temporary directory
// (the Cli fixture) and reading the HDF5 file it writes with the HDF5 C API.
//
// SIM_EXE and SIM_SOURCE_DIR override the executable and the source tree (for running the
// tests from a bundle on another machine); by default the build's own are used.

#include <gtest/gtest.h>
#include <hdf5.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "sim/output.hpp"

namespace lattica::cli {

namespace fs = std::filesystem;

inline std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

inline std::string sim_exe() { return env_or("SIM_EXE", LATTICA_SIM_EXE); }
inline std::string source_dir() { return env_or("SIM_SOURCE_DIR", LATTICA_SOURCE_DIR); }
inline std::string default_input() { return source_dir() + "/inputs/lattice.toml"; }

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct RunResult {
  int exit_code = -1;  ///< the exit status, or -SIGNAL when the process was killed
  std::string out;
  std::string err;
  std::string all() const { return out + err; }
};

inline std::ostream& operator<<(std::ostream& os, const RunResult& r) {
  return os << "exit code " << r.exit_code << "\n--- stdout ---\n"
            << r.out << "--- stderr ---\n"
            << r.err;
}

// --- reading the output file ----------------------------------------------------------------

inline hid_t checked(hid_t id, const std::string& what) {
  if (id < 0) throw std::runtime_error("HDF5 call failed: " + what);
  return id;
}

inline H5Id open_file(const std::string& path) {
  return H5Id(checked(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "open " + path),
              H5Fclose);
}

inline H5Id open_group(hid_t file, const char* name) {
  return H5Id(checked(H5Gopen2(file, name, H5P_DEFAULT), std::string("open group ") + name),
              H5Gclose);
}

/// A string attribute, variable or fixed length.
inline std::string string_attribute(hid_t object, const char* name) {
  H5Id attr(checked(H5Aopen(object, name, H5P_DEFAULT), std::string("open attribute ") + name),
            H5Aclose);
  H5Id type(checked(H5Aget_type(attr.get()), name), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_STRING)
    throw std::runtime_error(std::string(name) + " is not a string");
  H5Id memory_type(checked(H5Tcopy(H5T_C_S1), "H5Tcopy"), H5Tclose);
  H5Tset_cset(memory_type.get(), H5Tget_cset(type.get()));  // HDF5 converts neither way
  if (H5Tis_variable_str(type.get()) > 0) {
    H5Tset_size(memory_type.get(), H5T_VARIABLE);
    char* text = nullptr;
    checked(H5Aread(attr.get(), memory_type.get(), &text), std::string("read attribute ") + name);
    std::string value = text ? text : "";
    H5free_memory(text);
    return value;
  }
  const size_t size = H5Tget_size(type.get());
  H5Tset_size(memory_type.get(), size);
  std::string value(size, '\0');
  checked(H5Aread(attr.get(), memory_type.get(), value.data()),
          std::string("read attribute ") + name);
  return value.substr(0, value.find('\0'));
}

/// A numeric attribute (scalar or 1-D) converted to T on reading.
template <class T>
inline std::vector<T> numeric_attribute(hid_t object, const char* name, hid_t memory_type) {
  H5Id attr(checked(H5Aopen(object, name, H5P_DEFAULT), std::string("open attribute ") + name),
            H5Aclose);
  H5Id space(checked(H5Aget_space(attr.get()), name), H5Sclose);
  std::vector<T> values(static_cast<size_t>(H5Sget_simple_extent_npoints(space.get())));
  checked(H5Aread(attr.get(), memory_type, values.data()), std::string("read attribute ") + name);
  return values;
}

inline int64_t int64_attribute(hid_t object, const char* name) {
  const auto v = numeric_attribute<int64_t>(object, name, H5T_NATIVE_INT64);
  if (v.size() != 1) throw std::runtime_error(std::string(name) + " is not a scalar");
  return v[0];
}

inline double double_attribute(hid_t object, const char* name) {
  const auto v = numeric_attribute<double>(object, name, H5T_NATIVE_DOUBLE);
  if (v.size() != 1) throw std::runtime_error(std::string(name) + " is not a scalar");
  return v[0];
}

/// What a dataset holds: type class, size in bytes, signedness, shape.
struct DatasetInfo {
  H5T_class_t type_class = H5T_NO_CLASS;
  size_t type_size = 0;
  H5T_sign_t sign = H5T_SGN_ERROR;
  std::vector<hsize_t> shape;
};

inline DatasetInfo dataset_info(hid_t file, const char* name) {
  H5Id set(checked(H5Dopen2(file, name, H5P_DEFAULT), std::string("open dataset ") + name),
           H5Dclose);
  H5Id type(checked(H5Dget_type(set.get()), name), H5Tclose);
  H5Id space(checked(H5Dget_space(set.get()), name), H5Sclose);
  DatasetInfo info;
  info.type_class = H5Tget_class(type.get());
  info.type_size = H5Tget_size(type.get());
  if (info.type_class == H5T_INTEGER) info.sign = H5Tget_sign(type.get());
  info.shape.resize(static_cast<size_t>(H5Sget_simple_extent_ndims(space.get())));
  H5Sget_simple_extent_dims(space.get(), info.shape.data(), nullptr);
  return info;
}

/// The whole dataset, converted to T on reading.
template <class T>
inline std::vector<T> read_dataset(hid_t file, const char* name, hid_t memory_type) {
  H5Id set(checked(H5Dopen2(file, name, H5P_DEFAULT), std::string("open dataset ") + name),
           H5Dclose);
  H5Id space(checked(H5Dget_space(set.get()), name), H5Sclose);
  std::vector<T> values(static_cast<size_t>(H5Sget_simple_extent_npoints(space.get())));
  if (!values.empty()) {
    checked(H5Dread(set.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()),
            std::string("read dataset ") + name);
  }
  return values;
}

inline std::vector<double> read_doubles(hid_t file, const char* name) {
  return read_dataset<double>(file, name, H5T_NATIVE_DOUBLE);
}
inline std::vector<int64_t> read_int64s(hid_t file, const char* name) {
  return read_dataset<int64_t>(file, name, H5T_NATIVE_INT64);
}

/// Every dataset of a file, as its raw values in the stored type: name -> bytes.
inline std::map<std::string, std::string> dataset_bytes(const std::string& path) {
  const H5Id file = open_file(path);
  std::map<std::string, std::string> out;
  auto visit = [](hid_t object, const char* name, const H5O_info_t* info, void* data) -> herr_t {
    if (info->type != H5O_TYPE_DATASET) return 0;
    H5Id set(checked(H5Dopen2(object, name, H5P_DEFAULT), name), H5Dclose);
    H5Id type(checked(H5Dget_type(set.get()), name), H5Tclose);
    H5Id native(checked(H5Tget_native_type(type.get(), H5T_DIR_ASCEND), name), H5Tclose);
    H5Id space(checked(H5Dget_space(set.get()), name), H5Sclose);
    const auto points = static_cast<size_t>(H5Sget_simple_extent_npoints(space.get()));
    std::string bytes(points * H5Tget_size(native.get()), '\0');
    if (points > 0)
      checked(H5Dread(set.get(), native.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()), name);
    (*static_cast<std::map<std::string, std::string>*>(data))[name] = std::move(bytes);
    return 0;
  };
  checked(H5Ovisit2(file.get(), H5_INDEX_NAME, H5_ITER_NATIVE, visit, &out, H5O_INFO_BASIC),
          "visit " + path);
  return out;
}

/// Expects two files to hold the same datasets with the same bytes.
inline void expect_same_datasets(const std::string& a, const std::string& b) {
  const auto x = dataset_bytes(a), y = dataset_bytes(b);
  std::set<std::string> names;
  for (const auto& [name, bytes] : x) names.insert(name);
  for (const auto& [name, bytes] : y) names.insert(name);
  for (const std::string& name : names) {
    const bool both = x.count(name) && y.count(name);
    EXPECT_TRUE(both && x.at(name) == y.at(name))
        << name << " differs between " << a << " and " << b;
  }
  EXPECT_GT(names.size(), 10u);
}

// --- the fixture ----------------------------------------------------------------------------

/// An input sim must refuse: exit status 2, a message naming each of `expected`, no output.
struct BadInput {
  const char* name;
  std::string input;
  std::vector<std::string> expected;  ///< what the message must name
};

class Cli : public testing::Test {
 protected:
  /// Runs sim (CPU backend) on each of `cases` and checks that it refuses it as BadInput says.
  void expect_bad_inputs(const std::vector<BadInput>& cases) const {
    for (const BadInput& c : cases) {
      std::ofstream(path("bad.toml")) << c.input;
      const RunResult r = sim({path("bad.toml"), "--backend", "cpu", "-o", "x.h5"});
      EXPECT_EQ(r.exit_code, 2) << c.name << "\n" << r;
      for (const std::string& text : c.expected)
        EXPECT_NE(r.err.find(text), std::string::npos) << c.name << ": no '" << text << "'\n" << r;
      EXPECT_FALSE(fs::exists(path("x.h5"))) << c.name;
    }
  }

  void SetUp() override {
    char base[] = "/tmp/lattica_cli_test_XXXXXX";
    ASSERT_NE(mkdtemp(base), nullptr) << "cannot create a temporary directory";
    base_ = base;
    dir_ = base_ + "/work";
    ASSERT_TRUE(fs::create_directory(dir_));
  }

  void TearDown() override {
    std::error_code ec;
    if (!base_.empty()) fs::remove_all(base_, ec);
  }

  /// Waits (at most 2 minutes) until a file exists, e.g. a running sim's first checkpoint.
  static void wait_for_file(const std::string& file) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (!fs::exists(file) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }

  /// A path inside the test's working directory.
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  /// Runs sim with `args` in the working directory, capturing stdout, stderr and the exit code.
  RunResult sim(const std::vector<std::string>& args) const { return finish(start(args)); }

  /// Starts sim with `args` in the working directory (stdout and stderr to files of this
  /// process); finish() waits for it. Several may run at once.
  pid_t start(const std::vector<std::string>& args, const std::string& program = "") const {
    const std::string exe = program.empty() ? sim_exe() : program;
    const int capture = captures_++;
    const std::string out_path = capture_path("stdout", capture),
                      err_path = capture_path("stderr", capture);
    std::vector<std::string> argv_strings{exe};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_strings) argv.push_back(a.data());
    argv.push_back(nullptr);
    // Idle OpenMP threads sleep instead of spinning: with several tests running at once on a
    // small machine, spinning threads of tiny runs slow each other down a hundredfold.
    std::vector<std::string> env_strings;
    for (char** e = environ; *e; ++e) env_strings.emplace_back(*e);
    if (!std::getenv("OMP_WAIT_POLICY")) env_strings.emplace_back("OMP_WAIT_POLICY=passive");
    std::vector<char*> envp;
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);

    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      // The child: only async-signal-safe calls until exec.
      const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (out < 0 || err < 0 || dup2(out, STDOUT_FILENO) < 0 || dup2(err, STDERR_FILENO) < 0 ||
          chdir(dir_.c_str()) != 0) {
        _exit(126);
      }
      close(out);
      close(err);
      execve(exe.c_str(), argv.data(), envp.data());
      _exit(127);
    }
    capture_of_[pid] = capture;
    return pid;
  }

  RunResult finish(pid_t pid) const {
    const std::string exe = sim_exe();
    const int capture = capture_of_.at(pid);
    const std::string out_path = capture_path("stdout", capture),
                      err_path = capture_path("stderr", capture);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
      if (errno != EINTR) throw std::runtime_error("waitpid failed");
    }
    capture_of_.erase(pid);
    RunResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    r.out = read_bytes(out_path);
    r.err = read_bytes(err_path);
    if (r.exit_code == 127 || r.exit_code == 126) {
      ADD_FAILURE() << "could not run " << exe << " (set SIM_EXE to the sim executable)";
    }
    return r;
  }

  /// The default input made small: 16x16, 10 + 40 * 3 = 130 sweeps, snapshots every 30.
  static std::vector<std::string> small_run(const std::vector<std::string>& extra) {
    std::vector<std::string> args{
        default_input(),         "--set", "lattice.dims=[16,16]",    "--set",
        "run.thermalization=10", "--set", "run.measurements=40",     "--set",
        "run.measure_every=3",   "--set", "output.snapshot_every=30"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  std::string base_;  ///< per-test scratch; holds the captured output and dir_
  std::string dir_;   ///< the working directory sim runs in

 private:
  std::string capture_path(const char* stream, int capture) const {
    return base_ + "/" + stream + "." + std::to_string(capture) + ".txt";
  }
  mutable int captures_ = 0;                 ///< processes started so far
  mutable std::map<pid_t, int> capture_of_;  ///< the capture files of each running process
};

/// A sweep over three couplings of a small lattice, written to sweep.<i>.h5.
inline std::vector<std::string> sweep_run(const std::vector<std::string>& extra,
                                          const std::string& output = "sweep.h5") {
  std::vector<std::string> args{default_input(),
                                "--set",
                                "lattice.dims=[8,8]",
                                "--set",
                                "model.beta=[0.40, 0.42, 0.44]",
                                "--set",
                                "run.thermalization=10",
                                "--set",
                                "run.measurements=20",
                                "--backend",
                                "cpu",
                                "--output",
                                output};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

}  // namespace lattica::cli
