// Values a plugin works out per job, made for the jobs it is asked about: a session's plugins
// work on the live jobs, and a table of every job of a backlog would be made and freed in every
// session for nothing. By default what is made never moves (a deque), which hooks nested in each
// other need. A user that never holds a value while another is made may keep them in a vector
// (`Storage`), cheaper to index and to make: drf's and proportion's sums, changed by every task
// move; the victim planner's candidates (victims_internal::Candidates) keep such slots too.
#ifndef LAHAR_SCHEDULER_FRAMEWORK_PER_JOB_H_
#define LAHAR_SCHEDULER_FRAMEWORK_PER_JOB_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "api/cluster_info.h"

namespace lahar {

template <typename T, typename Storage = std::deque<T>>
class PerJob {
 public:
  // Room for jobs of ids below `jobs`, none made.
  void Reset(size_t jobs) {
    slot_.assign(jobs, -1);
    made_.clear();
  }
  // Room for `values` made without growing again (vector storage only: a deque never moves them).
  void Reserve(size_t values) { made_.reserve(values); }
  // The job's value, made (T()) when first asked for. In a deque it stays where it is while others
  // are made; in a vector it may move then.
  T& operator[](JobId job) { return TryEmplace(job); }
  // The job's value, made from `args` when not made yet (a made one is left as it is).
  template <typename... Args>
  T& TryEmplace(JobId job, Args&&... args) {
    int32_t& slot = slot_[static_cast<size_t>(job)];
    if (slot < 0) {
      slot = static_cast<int32_t>(made_.size());
      made_.emplace_back(std::forward<Args>(args)...);
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
  Storage made_;
};

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_FRAMEWORK_PER_JOB_H_
