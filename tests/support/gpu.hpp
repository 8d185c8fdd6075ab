#pragma once
// GPU tests skip on machines without a usable CUDA device, and fail there instead when
// SIM_REQUIRE_GPU=1 (set it on GPU machines, so a broken driver cannot pass as a skip).

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "sim/engine/engine.hpp"

namespace lattica::test {

inline bool gpu_required() {
  const char* v = std::getenv("SIM_REQUIRE_GPU");
  return v && std::strcmp(v, "1") == 0;
}

}  // namespace lattica::test

/// Use at the top of a GPU test body.
#define LATTICA_REQUIRE_GPU_OR_SKIP()                                                     \
  do {                                                                                    \
    std::string reason_;                                                                  \
    if (::lattica::cuda_device_count(reason_) == 0) {                                     \
      if (::lattica::test::gpu_required()) FAIL() << "SIM_REQUIRE_GPU=1 but " << reason_; \
      GTEST_SKIP() << reason_;                                                            \
    }                                                                                     \
  } while (0)
