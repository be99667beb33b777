// A fixed pool of threads running queued tasks in FIFO order: the daemon's binds, evictions
// and status writes run here so that a slow apiserver never stalls the scheduling loop.
#ifndef LAHAR_SCHEDULER_DAEMON_WORK_QUEUE_H_
#define LAHAR_SCHEDULER_DAEMON_WORK_QUEUE_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace lahar {

class WorkQueue {
 public:
  explicit WorkQueue(int threads) {
    for (int i = 0; i < std::max(1, threads); ++i) workers_.emplace_back([this] { Work(); });
  }
  ~WorkQueue() { Stop(); }
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  void Push(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
      tasks_.push_back(std::move(task));
    }
    wake_.notify_one();
  }

  // Tasks queued or running.
  size_t Pending() const {
    std::lock_guard<std::mutex> lock(mu_);
    return tasks_.size() + running_;
  }

  // Runs what is queued, then joins the threads.
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& worker : workers_) {
      if (worker.joinable()) worker.join();
    }
  }

 private:
  void Work() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      wake_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping, and nothing left
      std::function<void()> task = std::move(tasks_.front());
      tasks_.pop_front();
      ++running_;
      lock.unlock();
      task();
      lock.lock();
      --running_;
    }
  }

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  size_t running_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_DAEMON_WORK_QUEUE_H_
