#pragma once
// One rank of a pretended run of several ranks, alone in a test's process: it answers who it
// is, agrees with itself (max is its own value, broadcasts keep the data), and fails the test
// on the traffic no test of it expects. Tests override what they record or fake.

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/communicator.hpp"

namespace lattica {

class StandInCommunicator : public Communicator {
 public:
  StandInCommunicator(int rank, int size) : rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return rank_; }
  int64_t max(int64_t value) override { return value; }
  void broadcast(void*, size_t, int) override {}
  void allgather(const void*, void*, size_t) override { ADD_FAILURE() << "allgather"; }
  void send(const void*, size_t, int, int) override { ADD_FAILURE() << "send"; }
  void receive(void*, size_t, int, int) override { ADD_FAILURE() << "receive"; }
  void exchange(int, int, const void*, const void*, void*, void*, size_t, void*) override {
    ADD_FAILURE() << "exchange";
  }
  void alltoallv(const void*, const std::vector<int64_t>&, const std::vector<int64_t>&, void*,
                 const std::vector<int64_t>&, const std::vector<int64_t>&, size_t, void*) override {
    ADD_FAILURE() << "alltoallv";
  }
  void enable_device(int) override {}
  std::unique_ptr<Communicator> split(int) override { return nullptr; }

 private:
  int rank_, size_;
};

}  // namespace lattica
