// Waiting between retries in loops that must stop promptly (reflectors, leader election, the
// daemon's configuration watch).
#ifndef LAHAR_API_INTERRUPTIBLE_SLEEP_H_
#define LAHAR_API_INTERRUPTIBLE_SLEEP_H_

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

namespace lahar {

// Sleeps up to `duration`, waking within 20 ms when `stop` is set: the loops that wait between
// retries (reflectors, leader election, the daemon) must stop promptly.
inline void SleepUnlessStopped(std::chrono::milliseconds duration, const std::atomic<bool>& stop) {
  auto until = std::chrono::steady_clock::now() + duration;
  while (!stop.load() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        until - std::chrono::steady_clock::now(), std::chrono::milliseconds(20)));
  }
}

}  // namespace lahar

#endif  // LAHAR_API_INTERRUPTIBLE_SLEEP_H_
