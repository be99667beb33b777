// Values a plugin works out per job, made for the jobs it is asked about: a session's plugins
// work on the live jobs, and a table of every job of a backlog would be made and freed in every
// session for nothing. The victim planner's candidates (victims_internal::Candidates) keep the
// same kind of slots over a vector instead: cheaper to make, but what is made moves when more
// is, which its one loop allows and the plugins' hooks, nested in each other, do not.
#ifndef LAHAR_SCHEDULER_FRAMEWORK_PER_JOB_H_
#define LAHAR_SCHEDULER_FRAMEWORK_PER_JOB_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "api/cluster_info.h"

namespace lahar {

template <typename T>
class PerJob {
 public:
  // Room for jobs of ids below `jobs`, none made.
  void Reset(size_t jobs) {
    slot_.assign(jobs, -1);
    made_.clear();
  }
  // The job's value, made (T()) when first asked for. It stays where it is while others are made.
  T& operator[](JobId job) {
    int32_t& slot = slot_[static_cast<size_t>(job)];
    if (slot < 0) {
      slot = static_cast<int32_t>(made_.size());
      made_.emplace_back();
    }
    return made_[static_cast<size_t>(slot)];
  }
  // The job's value, or null when none was made.
  T* Find(JobId job) {
    const int32_t slot = slot_[static_cast<size_t>(job)];
    return slot < 0 ? nullptr : &made_[static_cast<size_t>(slot)];
  }
  const T* Find(JobId job) const {
    const int32_t slot = slot_[static_cast<size_t>(job)];
    return slot < 0 ? nullptr : &made_[static_cast<size_t>(slot)];
  }

 private:
  std::vector<int32_t> slot_;  // per job: its place in made_, or -1
  std::deque<T> made_;         // a deque: what is made never moves
};

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_FRAMEWORK_PER_JOB_H_
