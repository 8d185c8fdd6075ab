#pragma once
// The processes of one run (issue 8): MPI ranks, or this process alone. Plain C++ only, so the
// engines (and .cu files) can use it without MPI's or NCCL's headers; sim/communicator_mpi.cpp
// implements it over MPI, with NCCL for device-to-device halo traffic.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace lattica {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// This rank's index among the ranks on its node (which GPU it takes).
  virtual int local_rank() const = 0;

  /// Every rank's `bytes` at `mine` into `all` (size() * bytes), in rank order.
  virtual void allgather(const void* mine, void* all, size_t bytes) = 0;
  /// The largest of every rank's `value` (flags that one rank raised for all, e.g. a signal).
  virtual int64_t max(int64_t value) = 0;
  /// Copies `bytes` at `data` from rank `root` to every rank.
  virtual void broadcast(void* data, size_t bytes, int root) = 0;
  /// Point to point, for gathering configurations a box at a time; `tag` tells messages apart.
  virtual void send(const void* data, size_t bytes, int to, int tag) = 0;
  virtual void receive(void* data, size_t bytes, int from, int tag) = 0;

  /// One axis of a halo exchange: sends `bytes` at send_down to rank `down` and at send_up to
  /// rank `up`, and receives into receive_down (from `down`) and receive_up (from `up`); `down`
  /// and `up` may be the same rank. Host memory when cuda_stream is null (MPI); otherwise
  /// device memory, queued on that cudaStream_t (NCCL, after enable_device()).
  virtual void exchange(int down, int up, const void* send_down, const void* send_up,
                        void* receive_down, void* receive_up, size_t bytes, void* cuda_stream) = 0;
  /// Personalised all-to-all (the transposes of a distributed FFT): sends send_counts[r]
  /// elements of `element_bytes` at send + send_offsets[r] elements to rank r, and receives
  /// receive_counts[r] elements from rank r at receive + receive_offsets[r]. Every vector has
  /// size() entries; the counts must agree pairwise between ranks. Host memory when cuda_stream
  /// is null (MPI); otherwise device memory, queued on that cudaStream_t (NCCL, after
  /// enable_device()).
  virtual void alltoallv(const void* send, const std::vector<int64_t>& send_counts,
                         const std::vector<int64_t>& send_offsets, void* receive,
                         const std::vector<int64_t>& receive_counts,
                         const std::vector<int64_t>& receive_offsets, size_t element_bytes,
                         void* cuda_stream) = 0;
  /// Prepares device-to-device exchanges from CUDA device `device` (collective: every rank calls
  /// it with its own device). Throws when this build has no NCCL.
  virtual void enable_device(int device) = 0;

  /// Splits off the ranks of the same `colour` (collective), ordered by rank; null for ranks
  /// that pass colour < 0.
  virtual std::unique_ptr<Communicator> split(int colour) = 0;

  /// The MPI communicator of these ranks (a const MPI_Comm*, for MPI-IO), or null where there
  /// is none (this process alone, or a build without MPI).
  virtual const void* mpi_comm() const { return nullptr; }
};

/// This process alone.
class SoloCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_rank() const override { return 0; }
  void allgather(const void* mine, void* all, size_t bytes) override;
  int64_t max(int64_t value) override { return value; }
  void broadcast(void*, size_t, int) override {}
  void send(const void*, size_t, int, int) override;
  void receive(void*, size_t, int, int) override;
  void exchange(int, int, const void*, const void*, void*, void*, size_t, void*) override;
  void alltoallv(const void* send, const std::vector<int64_t>& send_counts,
                 const std::vector<int64_t>& send_offsets, void* receive,
                 const std::vector<int64_t>& receive_counts,
                 const std::vector<int64_t>& receive_offsets, size_t element_bytes,
                 void* cuda_stream) override;
  void enable_device(int) override {}
  std::unique_ptr<Communicator> split(int colour) override;
};

/// Starts MPI when this build has it and the process was started by an MPI launcher
/// (mpirun, srun), and returns the communicator of every rank; otherwise a SoloCommunicator.
/// Call once, first thing in main(); finish_processes() ends MPI.
std::shared_ptr<Communicator> start_processes(int& argc, char**& argv);
void finish_processes();
/// Ends every rank at once with `code` after a failure on this one (MPI_Abort); returns when
/// there are no other ranks.
void abort_processes(int code);
/// Whether this build can run over MPI, and NCCL for GPUs.
bool mpi_available();
bool nccl_available();

/// Sum over ranks, in rank order, of `count` records of type T at `values` (every rank gets
/// it): exact for integer records, the same on every rank for floating point.
template <class T>
void sum_over_ranks(Communicator& comm, T* values, int64_t count) {
  const size_t bytes = static_cast<size_t>(count) * sizeof(T);
  std::vector<T> all(static_cast<size_t>(count * comm.size()));
  comm.allgather(values, all.data(), bytes);
  for (int64_t i = 0; i < count; ++i) {
    T total = all[static_cast<size_t>(i)];
    for (int r = 1; r < comm.size(); ++r) total = total + all[static_cast<size_t>(r * count + i)];
    values[i] = total;
  }
}

/// sum_over_ranks of a backend's buffer of `Exec` (sim's engines), through host memory: the
/// buffers summed this way are a few values per replica.
template <class Exec, class Buffer>
void sum_buffer_over_ranks(const Exec& exec, Communicator& comm, Buffer& values) {
  using T = std::remove_pointer_t<decltype(values.data())>;
  std::vector<T> host(static_cast<size_t>(values.size()));
  exec.copy_to_host(values, host.data());
  sum_over_ranks(comm, host.data(), values.size());
  exec.copy_to_device(host.data(), values);
}

}  // namespace lattica
