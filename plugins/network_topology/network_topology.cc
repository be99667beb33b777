#include "plugins/network_topology/network_topology.h"

#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "api/quantity.h"
#include "api/status_macros.h"
#include "api/strings.h"
#include "api/topology.h"
#include "plugins/binpack/binpack.h"
#include "scheduler/framework/job_rules.h"
#include "scheduler/framework/session.h"

namespace lahar {
namespace {

constexpr std::string_view kLabels = "topology.labels";
constexpr std::string_view kCpuWeight = "hypernode.binpack.cpu";
constexpr std::string_view kMemoryWeight = "hypernode.binpack.memory";
constexpr std::string_view kResources = "hypernode.binpack.resources";
constexpr std::string_view kNormalPods = "hypernode.binpack.normal-pod.enable";

struct Options {
  std::vector<std::string> label_keys;
  bool pack_normal_pods = true;
  std::vector<std::pair<ResourceId, int64_t>> weights;  // default 1 for a resource not listed
};

std::string Amount(ResourceId id, int64_t amount) { return FormatQuantity(amount, ResourceUnit(id)); }

// Domains of one tier by the idle amount of one resource, then id.
using IdleOrder = std::set<std::pair<int64_t, DomainId>>;

class NetworkTopologyPlugin : public Plugin {
 public:
  explicit NetworkTopologyPlugin(Options options) : options_(std::move(options)) {}
  std::string_view Name() const override { return "network-topology-aware"; }

  void OnSessionOpen(Session& session) override {
    session_ = &session;
    if (session.cluster().topology) {
      topology_ = session.cluster().topology.get();
    } else if (!options_.label_keys.empty()) {
      own_ = BuildLabelTopology(options_.label_keys, session.nodes());
      topology_ = &own_;
    }
    domain_capacity_.clear();
    if (topology_ != nullptr) {
      domain_idle_.assign(topology_->domains.size(), Resources());
      tier_index_.clear();
      for (const TopologyDomain& domain : topology_->domains) {
        tier_index_.push_back(static_cast<int32_t>(
            std::lower_bound(topology_->tiers.begin(), topology_->tiers.end(), domain.tier) - topology_->tiers.begin()));
      }
      by_idle_.clear();
      node_idle_.assign(session.nodes().size(), Resources());
      node_seen_.assign(session.nodes().size(), UINT64_MAX);
      ConfineRunningJobs();
      // Placements and releases name their node: only those nodes are summed again. A change
      // that does not (a task back to pending) asks for a full pass.
      EventHandler handler;
      auto touched = [this](const TaskInfo& task) {
        if (task.node == kNoId) {
          refresh_all_ = true;
        } else {
          dirty_.push_back(task.node);
        }
      };
      handler.on_allocate = touched;
      handler.on_deallocate = touched;
      session.AddEventHandler(std::move(handler));
    }
    session.AddJobDomainsFn([this](const JobInfo& job, bool for_eviction) { return Domains(job, for_eviction); });
    // Only a job with a network topology is judged by more than its admission facts.
    session.AddJobAdmissionFn([this](const JobInfo& job, const Resources& need) { return NeverHeld(job, need); },
                              [](const JobInfo& job) { return !job.network_topology.has_value(); });
  }

 private:
  // The tier a hard job may span at most, or a reason it cannot be placed at all.
  struct TierLimit {
    int32_t tier = 0;
    std::optional<WaitReason> invalid;
  };

  TierLimit AllowedTier(const NetworkTopology& nt) const {
    if (!nt.invalid.empty()) {
      return {0, WaitReason{.kind = WaitKind::kInvalid, .subject = "InvalidNetworkTopology", .detail = nt.invalid}};
    }
    if (!nt.highest_tier_name.empty()) {
      const int32_t tier = topology_->TierNamed(nt.highest_tier_name);
      if (tier == 0) {
        return {0, WaitReason{.kind = WaitKind::kTopology,
                              .detail = StrCat("networkTopology.highestTierName \"", nt.highest_tier_name,
                                               "\" is the tierName of no HyperNode")}};
      }
      return {tier, std::nullopt};
    }
    return {nt.highest_tier_allowed > 0 ? nt.highest_tier_allowed : 1, std::nullopt};
  }

  // The nodes the job's pods hold or are promised.
  std::vector<NodeId> PlacedNodes(const JobInfo& job) const {
    std::vector<NodeId> nodes;
    for (TaskId t : job.tasks) {
      const TaskInfo& task = session_->task(t);
      if (HoldsNode(task.status) || task.status == TaskStatus::kPipelined) nodes.push_back(task.node);
    }
    return nodes;
  }

  // A hard job that holds nodes stays in the domain of its allowed tier that holds them all.
  void ConfineRunningJobs() {
    for (const JobInfo& job : session_->jobs()) {
      if (!job.network_topology || !job.network_topology->hard) continue;
      const std::vector<NodeId> nodes = PlacedNodes(job);
      if (nodes.empty()) continue;
      const TierLimit limit = AllowedTier(*job.network_topology);
      if (limit.invalid) continue;
      const DomainId domain = topology_->WidestWithin(topology_->Enclosing(nodes), limit.tier);
      if (domain != kNoId) session_->SetJobScope(job.id, &topology_->domains[domain].nodes);
    }
  }

  // Brings every domain's idle capacity up to date with the nodes that changed since last asked.
  void RefreshIdle() {
    if (!refresh_all_) {
      for (NodeId id : dirty_) RefreshNode(session_->node(id));
      dirty_.clear();
      return;
    }
    refresh_all_ = false;
    dirty_.clear();
    for (const NodeInfo& node : session_->nodes()) RefreshNode(node);
  }

  void RefreshNode(const NodeInfo& node) {
    const uint64_t version = session_->node_version(node.id);
    if (node_seen_[node.id] == version) return;
    node_seen_[node.id] = version;
    Resources idle;
    if (node.schedulable) {
      idle = node.Idle();
      idle.ClampNegativeToZero();
    }
    const Resources delta = idle - node_idle_[node.id];
    node_idle_[node.id] = std::move(idle);
    for (DomainId d = topology_->leaf_of[node.id]; d != kNoId; d = topology_->domains[d].parent) {
      for (ResourceId r = 0; r < by_idle_.size(); ++r) {
        const int64_t change = delta.Get(r);
        if (change == 0 || by_idle_[r].empty() || !topology_->domains[d].broken.empty()) continue;
        IdleOrder& order = by_idle_[r][tier_index_[d]];
        const int64_t before = domain_idle_[d].Get(r);
        order.erase({before, d});
        order.emplace(before + change, d);
      }
      domain_idle_[d] += delta;
    }
  }

  // Indexes the sound domains of each tier by their idle amount of `resource`, when first asked.
  void ByIdle(ResourceId resource) {
    if (by_idle_.size() <= resource) by_idle_.resize(resource + 1);
    std::vector<IdleOrder>& orders = by_idle_[resource];
    if (orders.empty()) {
      orders.resize(std::max<size_t>(topology_->tiers.size(), 1));
      for (DomainId d = 0; d < static_cast<DomainId>(topology_->domains.size()); ++d) {
        if (topology_->domains[d].broken.empty()) orders[tier_index_[d]].emplace(domain_idle_[d].Get(resource), d);
      }
    }
  }


  int64_t Weight(ResourceId id) const {
    for (const auto& [resource, weight] : options_.weights) {
      if (resource == id) return weight;
    }
    return 1;
  }

  // The resource `need` asks most of, as a weighted share of the cluster.
  ResourceId DominantResource(const Resources& need) const {
    const Resources& total = session_->cluster().total_allocatable;
    ResourceId best = kCpu;
    double best_share = -1;
    for (const auto& [id, amount] : need.NonZero()) {
      const int64_t of = total.Get(id);
      const double share = of > 0 ? static_cast<double>(Weight(id)) * static_cast<double>(amount) / static_cast<double>(of)
                                  : static_cast<double>(Weight(id));
      if (share > best_share) {
        best = id;
        best_share = share;
      }
    }
    return best;
  }

  std::optional<DomainCandidates> Domains(const JobInfo& job, bool for_eviction) {
    const bool constrained = job.network_topology.has_value();
    if (!constrained && (!options_.pack_normal_pods || topology_ == nullptr)) return std::nullopt;
    const bool hard = constrained && job.network_topology->hard;
    // Placed already: a hard job's scope says where its next pods go; any other job's pods are
    // tried first in the domain that holds its pods, then the ones above it, then anywhere.
    if (job.PlacedCount() + job.Count(TaskStatus::kPipelined) + job.Count(TaskStatus::kReleasing) > 0) {
      if (hard || for_eviction || topology_ == nullptr) return std::nullopt;
      return AroundPlacedPods(job);
    }
    DomainCandidates out;
    out.confine = hard;
    out.anywhere_after = !hard;
    if (topology_ == nullptr) {
      if (!hard) return std::nullopt;
      out.none_fits = [] { return NoTopologyReason(); };
      return out;
    }
    int32_t limit = topology_->tiers.empty() ? 0 : topology_->tiers.back();
    if (hard) {
      TierLimit allowed = AllowedTier(*job.network_topology);
      if (allowed.invalid) {
        out.none_fits = [why = *std::move(allowed.invalid)] { return why; };
        return out;
      }
      limit = allowed.tier;
    }
    Resources need;
    for (TaskId t : TasksToReachMin(*session_, job)) need += session_->task(t).request;
    if (need.IsZero() && !for_eviction) return std::nullopt;
    const ResourceId dominant = DominantResource(need);
    RefreshIdle();
    if (for_eviction) {
      // Evictions may make room anywhere: every sound domain up to the limit, by tier, then by
      // best fit (a stable sort keeps the name order among equal fits).
      std::vector<std::tuple<int32_t, int64_t, DomainId>> fits;  // (tier, left after it, domain)
      for (DomainId d = 0; d < static_cast<DomainId>(topology_->domains.size()); ++d) {
        const TopologyDomain& domain = topology_->domains[d];
        if (domain.tier > limit) break;
        if (domain.broken.empty()) fits.emplace_back(domain.tier, domain_idle_[d].Get(dominant) - need.Get(dominant), d);
      }
      std::stable_sort(fits.begin(), fits.end(), [](const auto& a, const auto& b) {
        return std::get<0>(a) != std::get<0>(b) ? std::get<0>(a) < std::get<0>(b) : std::get<1>(a) < std::get<1>(b);
      });
      out.next = [this, fits = std::move(fits), i = size_t{0}]() mutable -> const std::vector<NodeId>* {
        return i < fits.size() ? &topology_->domains[std::get<2>(fits[i++])].nodes : nullptr;
      };
    } else {
      // Best fit without a pass over every domain: within each tier, from the domain with the
      // least idle of the dominant resource that still covers it, skipping those short of
      // another resource. Ties go by domain id, which is name order within a tier.
      // A soft job that no domain holds whole tries last the fewest top domains that do.
      ByIdle(dominant);
      size_t tier = 0;
      std::optional<IdleOrder::const_iterator> at;
      bool spread = !hard;
      out.next = [this, need, dominant, limit, tier, at, spread]() mutable -> const std::vector<NodeId>* {
        for (; tier < topology_->tiers.size() && topology_->tiers[tier] <= limit; ++tier, at.reset()) {
          const IdleOrder& order = by_idle_[dominant][tier];
          if (!at) at = order.lower_bound({need.Get(dominant), 0});
          while (*at != order.end()) {
            const DomainId d = ((*at)++)->second;
            if (need.FitsIn(domain_idle_[d])) return &topology_->domains[d].nodes;
          }
        }
        if (!std::exchange(spread, false)) return nullptr;
        return FewestRootsHolding(need, dominant);
      };
    }
    out.none_fits = [this, need, dominant, limit] {
      RefreshIdle();
      return NoDomainReason(need, dominant, limit, domain_idle_, "most free");
    };
    return out;
  }

  static WaitReason NoTopologyReason() {
    return WaitReason{.kind = WaitKind::kTopology,
                      .detail = "networkTopology mode hard, but the cluster has no HyperNodes (and no topology.labels)"};
  }

  // Why a hard job that no sound domain of an allowed tier could hold even empty is not
  // admitted, or nullopt.
  std::optional<WaitReason> NeverHeld(const JobInfo& job, const Resources& need) {
    if (!job.network_topology || !job.network_topology->hard || need.IsZero()) return std::nullopt;
    if (topology_ == nullptr) return NoTopologyReason();
    TierLimit allowed = AllowedTier(*job.network_topology);
    if (allowed.invalid) return std::move(allowed.invalid);
    if (domain_capacity_.empty()) {
      domain_capacity_.assign(topology_->domains.size(), Resources());
      for (const NodeInfo& node : session_->nodes()) {
        for (DomainId d = topology_->leaf_of[node.id]; d != kNoId; d = topology_->domains[d].parent) {
          domain_capacity_[d] += node.allocatable;
        }
      }
    }
    for (DomainId d = 0; d < static_cast<DomainId>(topology_->domains.size()); ++d) {
      const TopologyDomain& domain = topology_->domains[d];
      if (domain.tier > allowed.tier) break;
      if (domain.broken.empty() && need.FitsIn(domain_capacity_[d])) return std::nullopt;
    }
    return NoDomainReason(need, DominantResource(need), allowed.tier, domain_capacity_, "largest");
  }

  // The domain holding a placed job's pods and those above it, each then anywhere.
  std::optional<DomainCandidates> AroundPlacedPods(const JobInfo& job) {
    const std::vector<NodeId> nodes = PlacedNodes(job);
    DomainId at = nodes.empty() ? kNoId : topology_->Enclosing(nodes);
    if (at == kNoId) return std::nullopt;
    DomainCandidates out;
    out.anywhere_after = true;
    out.next = [this, at]() mutable -> const std::vector<NodeId>* {
      while (at != kNoId) {
        const TopologyDomain& domain = topology_->domains[std::exchange(at, topology_->domains[at].parent)];
        if (domain.broken.empty()) return &domain.nodes;
      }
      return nullptr;
    };
    return out;
  }

  // The nodes of the fewest sound top domains (most idle of `dominant` first) that hold `need`
  // together, or nullptr when all of them together do not.
  const std::vector<NodeId>* FewestRootsHolding(const Resources& need, ResourceId dominant) {
    std::vector<std::pair<int64_t, DomainId>> roots;  // (-idle, domain): most idle first, then by name
    for (DomainId d = 0; d < static_cast<DomainId>(topology_->domains.size()); ++d) {
      const TopologyDomain& domain = topology_->domains[d];
      if (domain.parent == kNoId && domain.broken.empty()) roots.emplace_back(-domain_idle_[d].Get(dominant), d);
    }
    std::sort(roots.begin(), roots.end());
    Resources together;
    spread_nodes_.clear();
    for (const auto& [minus_idle, d] : roots) {
      together += domain_idle_[d];
      const std::vector<NodeId>& nodes = topology_->domains[d].nodes;
      spread_nodes_.insert(spread_nodes_.end(), nodes.begin(), nodes.end());
      if (need.FitsIn(together)) {
        std::sort(spread_nodes_.begin(), spread_nodes_.end());
        return &spread_nodes_;
      }
    }
    return nullptr;
  }

  // "needs 16 nvidia.com/gpu within one tier-1 hypernode; the most free is leaf-2 with 12".
  // `amounts` per domain, `which` the word for the domain with the most of the dominant resource.
  WaitReason NoDomainReason(const Resources& need, ResourceId dominant, int32_t limit,
                            const std::vector<Resources>& amounts, std::string_view which) {
    DomainId most = kNoId;
    std::string broken;
    for (DomainId d = 0; d < static_cast<DomainId>(topology_->domains.size()); ++d) {
      const TopologyDomain& domain = topology_->domains[d];
      if (domain.tier > limit) continue;
      if (!domain.broken.empty()) {
        if (broken.empty()) broken = StrCat("; HyperNode ", domain.name, " ", domain.broken);
        continue;
      }
      if (most == kNoId || amounts[d].Get(dominant) > amounts[most].Get(dominant)) most = d;
    }
    std::string detail = StrCat("needs ", Amount(dominant, need.Get(dominant)), " ", ResourceName(dominant),
                                " within one tier-", limit, " hypernode; ");
    if (most == kNoId) {
      StrAppend(&detail, "there is no sound HyperNode of tier ", limit, " or below");
    } else {
      StrAppend(&detail, "the ", which, " is ", topology_->domains[most].name, " with ",
                Amount(dominant, amounts[most].Get(dominant)));
    }
    return WaitReason{.kind = WaitKind::kTopology, .detail = detail + broken};
  }

  Options options_;
  Session* session_ = nullptr;
  Topology own_;  // built from node labels when the cluster has no HyperNodes
  const Topology* topology_ = nullptr;
  std::vector<Resources> domain_idle_;
  std::vector<Resources> domain_capacity_;  // allocatable per domain, summed when first asked
  std::vector<NodeId> spread_nodes_;          // FewestRootsHolding's answer
  std::vector<int32_t> tier_index_;          // each domain's place in topology_->tiers
  std::vector<std::vector<IdleOrder>> by_idle_;  // [resource][tier index]; empty until asked
  std::vector<Resources> node_idle_;
  std::vector<uint64_t> node_seen_;  // the node version node_idle_ was taken at
  std::vector<NodeId> dirty_;        // nodes a task moved onto or off since the last refresh
  bool refresh_all_ = true;
};

}  // namespace

std::vector<ArgumentSpec> NetworkTopologyArguments() {
  return {
      {kLabels, ArgumentKind::kString, "", ArgumentSupport::kHonoured,
       "node label keys, highest tier first, that build the topology when there are no HyperNodes"},
      {kCpuWeight, ArgumentKind::kInt, "1", ArgumentSupport::kHonoured, "weight of cpu in a job's dominant resource"},
      {kMemoryWeight, ArgumentKind::kInt, "1", ArgumentSupport::kHonoured,
       "weight of memory in a job's dominant resource"},
      {kResources, ArgumentKind::kString, "", ArgumentSupport::kHonoured, "comma-separated resources given a weight"},
      {"hypernode.binpack.resources.*", ArgumentKind::kInt, "1", ArgumentSupport::kHonoured,
       "weight of a resource listed in hypernode.binpack.resources"},
      {kNormalPods, ArgumentKind::kBool, "true", ArgumentSupport::kHonoured,
       "pack jobs without a constraint into the fullest domains that hold them"},
      {"hypernode.binpack.normal-pod.fading", ArgumentKind::kNumber, "", ArgumentSupport::kIgnored,
       "Volcano's fading of normal-pod packing"},
      {"weight", ArgumentKind::kInt, "1", ArgumentSupport::kIgnored,
       "Volcano's weight of the hypernode score (Lahar chooses the domain by best fit)"},
  };
}

absl::StatusOr<std::unique_ptr<Plugin>> NewNetworkTopologyPlugin(const Arguments& arguments) {
  Options options;
  ASSIGN_OR_RETURN(std::string labels, arguments.GetString(kLabels, ""));
  for (absl::string_view key : absl::StrSplit(labels, ',')) {
    const std::string k(absl::StripAsciiWhitespace(key));
    if (!k.empty()) options.label_keys.push_back(k);
  }
  ASSIGN_OR_RETURN(options.pack_normal_pods, arguments.GetBool(kNormalPods, true));
  ASSIGN_OR_RETURN(options.weights, ParseResourceWeights(arguments, "hypernode.binpack."));
  return std::make_unique<NetworkTopologyPlugin>(std::move(options));
}

}  // namespace lahar
