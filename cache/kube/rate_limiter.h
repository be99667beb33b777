// Client-side request rate limit (token bucket), like client-go's --kube-api-qps/--kube-api-burst.
#ifndef LAHAR_CACHE_KUBE_RATE_LIMITER_H_
#define LAHAR_CACHE_KUBE_RATE_LIMITER_H_

#include <chrono>
#include <mutex>

namespace lahar {

class RateLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  // qps <= 0 disables limiting. The bucket starts full (`burst` requests go at once).
  RateLimiter(double qps, int burst);

  // Takes a token, or reserves the next one and says how long the caller must wait for it.
  // Reservations queue callers fairly: each waits for its own token, in arrival order.
  Clock::duration Reserve(Clock::time_point now);
  // Reserve and sleep.
  void Wait();

 private:
  const double qps_;
  const double burst_;
  std::mutex mu_;
  double tokens_;  // may go negative: tokens promised to waiting callers
  Clock::time_point last_;
};

}  // namespace lahar

#endif  // LAHAR_CACHE_KUBE_RATE_LIMITER_H_
