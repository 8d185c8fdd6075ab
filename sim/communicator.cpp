#include "sim/communicator.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#ifdef LATTICA_HAVE_MPI
#include <mpi.h>
#endif
#ifdef LATTICA_HAVE_NCCL
#include <cuda_runtime.h>
#include <nccl.h>
#endif

namespace lattica {

void SoloCommunicator::allgather(const void* mine, void* all, size_t bytes) {
  if (bytes > 0 && all != mine) std::memmove(all, mine, bytes);
}
void SoloCommunicator::send(const void*, size_t, int, int) {
  throw std::logic_error("SoloCommunicator::send: there are no other ranks");
}
void SoloCommunicator::receive(void*, size_t, int, int) {
  throw std::logic_error("SoloCommunicator::receive: there are no other ranks");
}
void SoloCommunicator::exchange(int, int, const void*, const void*, void*, void*, size_t, void*) {
  throw std::logic_error("SoloCommunicator::exchange: a single process has no halo to exchange");
}
void SoloCommunicator::alltoallv(const void* send, const std::vector<int64_t>& send_counts,
                                 const std::vector<int64_t>& send_offsets, void* receive,
                                 const std::vector<int64_t>& receive_counts,
                                 const std::vector<int64_t>& receive_offsets, size_t element_bytes,
                                 void* cuda_stream) {
  if (send_counts.size() != 1 || receive_counts.size() != 1 || send_counts[0] != receive_counts[0])
    throw std::logic_error("SoloCommunicator::alltoallv: counts for other ranks");
  const size_t bytes = static_cast<size_t>(send_counts[0]) * element_bytes;
  if (cuda_stream)  // device memory: the caller copies its own piece (SlabFft does)
    throw std::logic_error("SoloCommunicator::alltoallv: device memory");
  if (bytes == 0) return;
  std::memmove(static_cast<char*>(receive) + receive_offsets[0] * element_bytes,
               static_cast<const char*>(send) + send_offsets[0] * element_bytes, bytes);
}
std::unique_ptr<Communicator> SoloCommunicator::split(int colour) {
  if (colour < 0) return nullptr;
  return std::make_unique<SoloCommunicator>();
}

#ifdef LATTICA_HAVE_MPI

namespace {

void check_mpi(int code, const char* call, const char* file, int line) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + call +
                           " failed: " + std::string(text, static_cast<size_t>(length)));
}
#define LATTICA_MPI_CHECK(call) check_mpi((call), #call, __FILE__, __LINE__)

#ifdef LATTICA_HAVE_NCCL
void check_nccl(ncclResult_t code, const char* call, const char* file, int line) {
  if (code == ncclSuccess) return;
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + call +
                           " failed: " + ncclGetErrorString(code));
}
#define LATTICA_NCCL_CHECK(call) check_nccl((call), #call, __FILE__, __LINE__)
void check_cuda(cudaError_t code, const char* call, const char* file, int line) {
  if (code == cudaSuccess) return;
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + call +
                           " failed: " + cudaGetErrorString(code));
}
#define LATTICA_COMM_CUDA_CHECK(call) check_cuda((call), #call, __FILE__, __LINE__)
#endif

/// MPI counts are ints: messages go in pieces of at most 1 GiB.
constexpr size_t kMaxMessageBytes = size_t(1) << 30;

/// Message tags of a halo exchange: the layer going to the rank below, and above.
constexpr int kTagGoingDown = 1 << 20;
constexpr int kTagGoingUp = kTagGoingDown + 1;

class MpiCommunicator final : public Communicator {
 public:
  /// Takes ownership of `comm` unless it is MPI_COMM_WORLD.
  explicit MpiCommunicator(MPI_Comm comm) : comm_(comm) {
    LATTICA_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
    LATTICA_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
    LATTICA_MPI_CHECK(MPI_Comm_size(comm_, &size_));
    MPI_Comm node = MPI_COMM_NULL;
    LATTICA_MPI_CHECK(
        MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node));
    LATTICA_MPI_CHECK(MPI_Comm_rank(node, &local_rank_));
    LATTICA_MPI_CHECK(MPI_Comm_free(&node));
  }
  ~MpiCommunicator() override {
#ifdef LATTICA_HAVE_NCCL
    if (nccl_) ncclCommDestroy(nccl_);
#endif
    if (comm_ != MPI_COMM_WORLD) MPI_Comm_free(&comm_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  const void* mpi_comm() const override { return &comm_; }

  void allgather(const void* mine, void* all, size_t bytes) override {
    if (bytes > kMaxMessageBytes) throw std::length_error("allgather: more than 1 GiB per rank");
    LATTICA_MPI_CHECK(MPI_Allgather(mine, static_cast<int>(bytes), MPI_BYTE, all,
                                    static_cast<int>(bytes), MPI_BYTE, comm_));
  }

  int64_t max(int64_t value) override {
    long long in = value, out = 0;
    LATTICA_MPI_CHECK(MPI_Allreduce(&in, &out, 1, MPI_LONG_LONG, MPI_MAX, comm_));
    return out;
  }

  void broadcast(void* data, size_t bytes, int root) override {
    for (size_t done = 0; done < bytes; done += kMaxMessageBytes) {
      const size_t n = std::min(kMaxMessageBytes, bytes - done);
      LATTICA_MPI_CHECK(
          MPI_Bcast(static_cast<char*>(data) + done, static_cast<int>(n), MPI_BYTE, root, comm_));
    }
  }

  void send(const void* data, size_t bytes, int to, int tag) override {
    for (size_t done = 0; done < bytes; done += kMaxMessageBytes) {
      const size_t n = std::min(kMaxMessageBytes, bytes - done);
      LATTICA_MPI_CHECK(MPI_Send(static_cast<const char*>(data) + done, static_cast<int>(n),
                                 MPI_BYTE, to, tag, comm_));
    }
  }

  void receive(void* data, size_t bytes, int from, int tag) override {
    for (size_t done = 0; done < bytes; done += kMaxMessageBytes) {
      const size_t n = std::min(kMaxMessageBytes, bytes - done);
      LATTICA_MPI_CHECK(MPI_Recv(static_cast<char*>(data) + done, static_cast<int>(n), MPI_BYTE,
                                 from, tag, comm_, MPI_STATUS_IGNORE));
    }
  }

  void exchange(int down, int up, const void* send_down, const void* send_up, void* receive_down,
                void* receive_up, size_t bytes, void* cuda_stream) override {
    if (cuda_stream)
      return exchange_device(down, up, send_down, send_up, receive_down, receive_up, bytes,
                             cuda_stream);
    if (bytes > kMaxMessageBytes) throw std::length_error("halo exchange: a layer over 1 GiB");
    const int n = static_cast<int>(bytes);
    MPI_Request requests[4];
    // The layer that goes down arrives at the rank below as coming from above, and so on.
    LATTICA_MPI_CHECK(MPI_Irecv(receive_up, n, MPI_BYTE, up, kTagGoingDown, comm_, &requests[0]));
    LATTICA_MPI_CHECK(MPI_Irecv(receive_down, n, MPI_BYTE, down, kTagGoingUp, comm_, &requests[1]));
    LATTICA_MPI_CHECK(MPI_Isend(send_down, n, MPI_BYTE, down, kTagGoingDown, comm_, &requests[2]));
    LATTICA_MPI_CHECK(MPI_Isend(send_up, n, MPI_BYTE, up, kTagGoingUp, comm_, &requests[3]));
    LATTICA_MPI_CHECK(MPI_Waitall(4, requests, MPI_STATUSES_IGNORE));
  }

  void alltoallv(const void* send, const std::vector<int64_t>& send_counts,
                 const std::vector<int64_t>& send_offsets, void* receive,
                 const std::vector<int64_t>& receive_counts,
                 const std::vector<int64_t>& receive_offsets, size_t element_bytes,
                 void* cuda_stream) override {
    if (cuda_stream)
      return alltoallv_device(send, send_counts, send_offsets, receive, receive_counts,
                              receive_offsets, element_bytes, cuda_stream);
    // MPI counts and offsets are ints: in elements of one contiguous type, up to 2^31 - 1 each.
    const auto as_ints = [this](const std::vector<int64_t>& values, const char* what) {
      if (values.size() != static_cast<size_t>(size_))
        throw std::logic_error(std::string("alltoallv: ") + what + " for another rank count");
      std::vector<int> ints(values.size());
      for (size_t r = 0; r < values.size(); ++r) {
        if (values[r] < 0 || values[r] > INT32_MAX)
          throw std::length_error(std::string("alltoallv: ") + what + " " +
                                  std::to_string(values[r]) + " is not in 0..2^31-1 elements");
        ints[r] = static_cast<int>(values[r]);
      }
      return ints;
    };
    const std::vector<int> sc = as_ints(send_counts, "send count"),
                           so = as_ints(send_offsets, "send offset"),
                           rc = as_ints(receive_counts, "receive count"),
                           ro = as_ints(receive_offsets, "receive offset");
    if (element_bytes == 0 || element_bytes > INT32_MAX)
      throw std::length_error("alltoallv: element size " + std::to_string(element_bytes));
    MPI_Datatype element = MPI_DATATYPE_NULL;
    LATTICA_MPI_CHECK(MPI_Type_contiguous(static_cast<int>(element_bytes), MPI_BYTE, &element));
    LATTICA_MPI_CHECK(MPI_Type_commit(&element));
    const int code = MPI_Alltoallv(send, sc.data(), so.data(), element, receive, rc.data(),
                                   ro.data(), element, comm_);
    LATTICA_MPI_CHECK(MPI_Type_free(&element));
    LATTICA_MPI_CHECK(code);
  }

  void enable_device(int device) override {
#ifdef LATTICA_HAVE_NCCL
    if (nccl_) return;
    LATTICA_COMM_CUDA_CHECK(cudaSetDevice(device));
    ncclUniqueId id{};
    if (rank_ == 0) LATTICA_NCCL_CHECK(ncclGetUniqueId(&id));
    broadcast(&id, sizeof(id), 0);
    LATTICA_NCCL_CHECK(ncclCommInitRank(&nccl_, size_, id, rank_));
#else
    (void)device;
    throw std::runtime_error(
        "this sim was built without NCCL, so GPUs cannot exchange halos; build with a CUDA "
        "toolkit that ships NCCL, or run with run.backend = \"cpu\"");
#endif
  }

  std::unique_ptr<Communicator> split(int colour) override {
    MPI_Comm part = MPI_COMM_NULL;
    LATTICA_MPI_CHECK(MPI_Comm_split(comm_, colour < 0 ? MPI_UNDEFINED : colour, rank_, &part));
    if (part == MPI_COMM_NULL) return nullptr;
    return std::make_unique<MpiCommunicator>(part);
  }

 private:
  void exchange_device(int down, int up, const void* send_down, const void* send_up,
                       void* receive_down, void* receive_up, size_t bytes, void* cuda_stream) {
#ifdef LATTICA_HAVE_NCCL
    if (!nccl_) throw std::logic_error("halo exchange on the device before enable_device()");
    auto stream = static_cast<cudaStream_t>(cuda_stream);
    // NCCL pairs the messages between two ranks in the order they are issued: the receive from
    // above first matches what the rank above sends down first, also when down == up.
    LATTICA_NCCL_CHECK(ncclGroupStart());
    LATTICA_NCCL_CHECK(ncclSend(send_down, bytes, ncclUint8, down, nccl_, stream));
    LATTICA_NCCL_CHECK(ncclSend(send_up, bytes, ncclUint8, up, nccl_, stream));
    LATTICA_NCCL_CHECK(ncclRecv(receive_up, bytes, ncclUint8, up, nccl_, stream));
    LATTICA_NCCL_CHECK(ncclRecv(receive_down, bytes, ncclUint8, down, nccl_, stream));
    LATTICA_NCCL_CHECK(ncclGroupEnd());
#else
    (void)down, (void)up, (void)send_down, (void)send_up, (void)receive_down, (void)receive_up,
        (void)bytes, (void)cuda_stream;
    throw std::logic_error("halo exchange on the device without NCCL");
#endif
  }

  void alltoallv_device(const void* send, const std::vector<int64_t>& send_counts,
                        const std::vector<int64_t>& send_offsets, void* receive,
                        const std::vector<int64_t>& receive_counts,
                        const std::vector<int64_t>& receive_offsets, size_t element_bytes,
                        void* cuda_stream) {
#ifdef LATTICA_HAVE_NCCL
    if (!nccl_) throw std::logic_error("alltoallv on the device before enable_device()");
    for (const auto* v : {&send_counts, &send_offsets, &receive_counts, &receive_offsets}) {
      if (v->size() != static_cast<size_t>(size_))
        throw std::logic_error("alltoallv: counts or offsets for another rank count");
    }
    auto stream = static_cast<cudaStream_t>(cuda_stream);
    const auto at = [element_bytes](const void* base, int64_t offset) {
      return static_cast<const char*>(base) + static_cast<size_t>(offset) * element_bytes;
    };
    // One group of point-to-point messages (NCCL has no all-to-all with varying counts);
    // empty pieces are skipped on both sides, as the counts agree pairwise.
    LATTICA_NCCL_CHECK(ncclGroupStart());
    for (int r = 0; r < size_; ++r) {
      const size_t out = static_cast<size_t>(send_counts[r]) * element_bytes;
      const size_t in = static_cast<size_t>(receive_counts[r]) * element_bytes;
      if (out > 0)
        LATTICA_NCCL_CHECK(ncclSend(at(send, send_offsets[r]), out, ncclUint8, r, nccl_, stream));
      if (in > 0)
        LATTICA_NCCL_CHECK(ncclRecv(const_cast<char*>(at(receive, receive_offsets[r])), in,
                                    ncclUint8, r, nccl_, stream));
    }
    LATTICA_NCCL_CHECK(ncclGroupEnd());
#else
    (void)send, (void)send_counts, (void)send_offsets, (void)receive, (void)receive_counts,
        (void)receive_offsets, (void)element_bytes, (void)cuda_stream;
    throw std::logic_error("alltoallv on the device without NCCL");
#endif
  }

  MPI_Comm comm_;
  int rank_ = 0, size_ = 1, local_rank_ = 0;
#ifdef LATTICA_HAVE_NCCL
  ncclComm_t nccl_ = nullptr;
#endif
};

/// Whether an MPI launcher started this process (Open MPI, PMI/PMIx: MPICH, Slurm's srun).
bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"}) {
    if (std::getenv(name)) return true;
  }
  return false;
}

bool mpi_started = false;

}  // namespace

std::shared_ptr<Communicator> start_processes(int& argc, char**& argv) {
  if (!launched_by_mpi()) return std::make_shared<SoloCommunicator>();
  int provided = 0;
  // Only the main thread calls MPI (the output writer thread does not).
  LATTICA_MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided));
  mpi_started = true;
  return std::make_shared<MpiCommunicator>(MPI_COMM_WORLD);
}

void finish_processes() {
  if (mpi_started) MPI_Finalize();
  mpi_started = false;
}

void abort_processes(int code) {
  int size = 1;
  if (mpi_started) MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > 1) MPI_Abort(MPI_COMM_WORLD, code);
}

bool mpi_available() { return true; }

#else  // no MPI in this build

std::shared_ptr<Communicator> start_processes(int&, char**&) {
  // Several copies started by a launcher would each run the whole chain into the same file.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    const char* size = std::getenv(name);
    if (size && std::atoi(size) > 1) {
      throw std::runtime_error(std::string(name) + " = " + size +
                               ": this sim was built without MPI, so it cannot share one run "
                               "among ranks; rebuild with libopenmpi-dev installed");
    }
  }
  return std::make_shared<SoloCommunicator>();
}
void finish_processes() {}
void abort_processes(int) {}
bool mpi_available() { return false; }

#endif

bool nccl_available() {
#ifdef LATTICA_HAVE_NCCL
  return true;
#else
  return false;
#endif
}

}  // namespace lattica
