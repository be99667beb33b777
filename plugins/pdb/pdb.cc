#include "plugins/pdb/pdb.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "api/labels.h"
#include "api/status_macros.h"
#include "scheduler/framework/session.h"

namespace lahar {
namespace {

// count, or pct% of `of` rounded up (Kubernetes' GetScaledValueFromIntOrPercent, roundUp).
int32_t Scaled(const IntOrPercent& value, int32_t of) {
  if (!value.percent) return value.value;
  return static_cast<int32_t>((static_cast<int64_t>(value.value) * of + 99) / 100);
}

// The session's budgets with the tasks each selects.
class Budgets {
 public:
  explicit Budgets(const Session& session) : session_(session) {
    const ClusterSnapshot& cluster = session.cluster();
    budgets_of_task_.resize(cluster.tasks.size());
    for (const auto& pdb : cluster.disruption_budgets) {
      if (!pdb->selector) continue;  // policy/v1: a null selector selects nothing
      Budget budget{pdb.get(), {}, 0};
      const int32_t index = static_cast<int32_t>(budgets_.size());
      for (const TaskInfo& task : cluster.tasks) {
        if (task.namespace_() != pdb->meta.namespace_ || task.status == TaskStatus::kSucceeded ||
            task.status == TaskStatus::kFailed || !MatchesLabelSelector(*pdb->selector, task.pod->meta.labels)) {
          continue;
        }
        budget.tasks.push_back(task.id);
        if (task.status == TaskStatus::kReleasing) ++budget.releasing_at_open;
        budgets_of_task_[task.id].push_back(index);
      }
      if (!budget.tasks.empty()) budgets_.push_back(std::move(budget));
    }
  }

  bool empty() const { return budgets_.empty(); }

  std::vector<TaskId> Allowed(const std::vector<TaskId>& candidates) const {
    std::vector<int32_t> remaining(budgets_.size(), -1);  // -1: not computed yet
    std::vector<TaskId> out;
    for (TaskId t : candidates) {
      const std::vector<int32_t>& budgets = budgets_of_task_[t];
      bool allowed = true;
      for (int32_t b : budgets) {
        if (remaining[b] < 0) remaining[b] = std::max(0, DisruptionsAllowed(budgets_[b]));
        allowed = allowed && remaining[b] > 0;
      }
      if (!allowed) continue;
      for (int32_t b : budgets) --remaining[b];
      out.push_back(t);
    }
    return out;
  }

 private:
  struct Budget {
    const PodDisruptionBudget* pdb;
    std::vector<TaskId> tasks;
    int32_t releasing_at_open;
  };

  int32_t DisruptionsAllowed(const Budget& budget) const {
    const PodDisruptionBudget& pdb = *budget.pdb;
    int32_t selected = 0;
    int32_t healthy = 0;
    int32_t releasing = 0;
    for (TaskId t : budget.tasks) {
      const TaskStatus status = session_.task(t).status;
      ++selected;
      if (status == TaskStatus::kRunning) ++healthy;
      if (status == TaskStatus::kReleasing) ++releasing;
    }
    if (pdb.has_status) {
      if (pdb.observed_generation < pdb.meta.generation) return 0;
      return pdb.disruptions_allowed - (releasing - budget.releasing_at_open);
    }
    if (pdb.min_available) return healthy - Scaled(*pdb.min_available, selected);
    if (pdb.max_unavailable) return Scaled(*pdb.max_unavailable, selected) - (selected - healthy);
    return healthy;
  }

  const Session& session_;
  std::vector<Budget> budgets_;
  std::vector<std::vector<int32_t>> budgets_of_task_;  // per task id
};

class PdbPlugin : public Plugin {
 public:
  std::string_view Name() const override { return "pdb"; }

  void OnSessionOpen(Session& session) override {
    if (session.cluster().disruption_budgets.empty()) return;
    auto budgets = std::make_shared<const Budgets>(session);
    if (budgets->empty()) return;
    auto allowed = [budgets](const TaskInfo&, const std::vector<TaskId>& candidates) {
      return budgets->Allowed(candidates);
    };
    session.AddPreemptableFn(allowed);
    session.AddReclaimableFn(allowed);
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewPdbPlugin(const Arguments& arguments) {
  return std::make_unique<PdbPlugin>();
}

}  // namespace lahar
