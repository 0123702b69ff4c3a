#pragma once
// Small helpers the solver's passes share: wall-clock timing, a lock-free maximum and a
// parallel permutation of one particle array (the Z-order sort gathers every array with it).
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

namespace octo::parallel {

using Clock = std::chrono::steady_clock;
inline double msSince(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

inline void atomicMax(std::atomic<float>& target, float value) {
    float cur = target.load(std::memory_order_relaxed);
    while (value > cur && !target.compare_exchange_weak(cur, value, std::memory_order_relaxed)) {
    }
}

/// data[k] <- data[order[k]] for every k, through scratch (swapped in).
template <class T>
void gather(std::span<const uint32_t> order, std::vector<T>& data, std::vector<T>& scratch) {
    scratch.resize(data.size());
    tbb::parallel_for(tbb::blocked_range<size_t>(0, order.size(), 8192),
                      [&](const tbb::blocked_range<size_t>& r) {
                          for (size_t k = r.begin(); k < r.end(); ++k)
                              scratch[k] = data[order[k]];
                      });
    data.swap(scratch);
}

} // namespace octo::parallel
