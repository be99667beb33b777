#include "scheduler/daemon/daemon.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "api/encode.h"
#include "api/interruptible_sleep.h"
#include "api/log.h"
#include "api/status_macros.h"
#include "api/strings.h"
#include "cache/cluster_cache.h"
#include "cache/kube/cache_sink.h"
#include "cache/kube/client.h"
#include "cache/kube/reflector.h"
#include "scheduler/builtins.h"
#include "scheduler/daemon/http_server.h"
#include "scheduler/daemon/kube_writer.h"
#include "scheduler/daemon/metrics.h"
#include "scheduler/daemon/wait_board.h"
#include "scheduler/daemon/status_writer.h"
#include "scheduler/daemon/topology_report.h"
#include "scheduler/daemon/work_queue.h"
#include "scheduler/framework/config.h"
#include "scheduler/framework/cycle.h"
#include "scheduler/framework/victims.h"

namespace lahar {
namespace {

using Clock = std::chrono::steady_clock;


struct ResourceSpec {
  ObjectKind kind;
  const char* resource;
  const char* path;
  const char* api_version;
  bool optional = false;  // its CRD may be absent: the daemon goes on without it
};
constexpr ResourceSpec kWatched[] = {
    {ObjectKind::kNode, "nodes", "/api/v1/nodes", "v1"},
    {ObjectKind::kPod, "pods", "/api/v1/pods", "v1"},
    {ObjectKind::kPodGroup, "podgroups", "/apis/scheduling.volcano.sh/v1beta1/podgroups", kVolcanoApiVersion},
    {ObjectKind::kQueue, "queues", "/apis/scheduling.volcano.sh/v1beta1/queues", kVolcanoApiVersion},
    {ObjectKind::kPriorityClass, "priorityclasses", "/apis/scheduling.k8s.io/v1/priorityclasses",
     "scheduling.k8s.io/v1"},
    {ObjectKind::kPodDisruptionBudget, "poddisruptionbudgets", "/apis/policy/v1/poddisruptionbudgets", "policy/v1"},
    // Spec 3.3: clusters without network topology have no HyperNode CRD.
    {ObjectKind::kHyperNode, "hypernodes", "/apis/topology.volcano.sh/v1alpha1/hypernodes", kTopologyApiVersion,
     /*optional=*/true},
};

// How long a pod whose eviction the apiserver refused is left out of victim plans: long
// enough not to ask every session, short enough to notice a budget that now allows it.
constexpr Millis kEvictionRefusedFor = 60'000;

std::string_view ApiVersionOf(ObjectKind kind) {
  for (const ResourceSpec& spec : kWatched) {
    if (spec.kind == kind) return spec.api_version;
  }
  return "v1";
}

void SplitKey(std::string_view key, std::string& namespace_, std::string& name) {
  size_t slash = key.find('/');
  namespace_ = std::string(key.substr(0, slash));
  name = slash == std::string_view::npos ? std::string() : std::string(key.substr(slash + 1));
}

}  // namespace

class SchedulerDaemon::Impl {
 public:
  explicit Impl(DaemonOptions options)
      : options_(std::move(options)),
        cache_(CacheOptions{options_.scheduler_names, options_.default_queue}),
        metrics_leader_(metrics_.Gauge("lahar_leader", "1 while this instance holds the leader lease.")),
        metrics_binds_(metrics_.Counter("lahar_binds_total", "Bindings posted, by result.", {"result"})),
        metrics_attempts_(metrics_.Counter("lahar_schedule_attempts_total",
                                           "Pods the scheduler tried to place, by result.", {"result"})),
        metrics_evictions_(metrics_.Counter("lahar_pod_evictions_total", "Pods evicted, by reason.", {"reason"})),
        metrics_evictions_refused_(metrics_.Counter("lahar_pod_evictions_refused_total",
                                                    "Evictions the apiserver refused (PodDisruptionBudgets).", {})),
        metrics_reloads_(metrics_.Counter("lahar_config_reloads_total",
                                          "Configuration reloads, by result.", {"result"})),
        metrics_config_ok_(metrics_.Gauge("lahar_config_last_reload_successful",
                                          "1 when the last configuration file read was valid.")),
        metrics_e2e_(metrics_.Histogram("lahar_e2e_scheduling_latency_seconds",
                                        "From pod creation to a successful binding.", {},
                                        ExponentialBuckets(0.01, 2, 16))),
        metrics_session_(metrics_.Histogram("lahar_session_duration_seconds", "Wall time of a scheduling session.",
                                            {}, ExponentialBuckets(0.0001, 2, 18))),
        metrics_action_(metrics_.Histogram("lahar_action_duration_seconds", "Wall time of each action in a session.",
                                           {"action"}, ExponentialBuckets(0.00001, 2, 20))),
        metrics_queue_allocated_(metrics_.Gauge("lahar_queue_allocated",
                                                "Resources held by the queue's jobs (cpu in cores).",
                                                {"queue", "resource"})),
        metrics_queue_deserved_(metrics_.Gauge("lahar_queue_deserved", "The queue's deserved share (cpu in cores).",
                                               {"queue", "resource"})),
        metrics_fulfillment_(metrics_.Gauge("lahar_job_fulfillment",
                                            "Elastic fulfillment score: (running - min) / (max - min).",
                                            {"namespace", "job"})),
        metrics_invalid_(metrics_.Counter("lahar_invalid_objects_total",
                                          "Objects the apiserver accepted but Lahar could not use, by kind.",
                                          {"kind"})),
        metrics_writes_(metrics_.Counter("lahar_status_writes_total", "Status, condition and Event writes.",
                                         {"kind", "result"})) {}

  absl::Status Init() {
    ASSIGN_OR_RETURN(client_, KubeClient::Create(options_.client));
    std::string yaml(DefaultSchedulerConfigYaml());
    if (!options_.scheduler_conf.empty()) {
      absl::StatusOr<std::string> text = ReadFileToString(options_.scheduler_conf);
      if (!text.ok()) return Annotate(text.status(), "--scheduler-conf");
      yaml = *std::move(text);
    }
    absl::StatusOr<SchedulerConfig> config = ParseSchedulerConfig(yaml, BuiltinRegistry());
    if (!config.ok()) return Annotate(config.status(), StrCat("--scheduler-conf ", options_.scheduler_conf));
    for (const std::string& warning : config->warnings) LAHAR_WARN("config") << warning;
    config_ = std::make_shared<const SchedulerConfig>(*std::move(config));
    config_text_ = yaml;
    metrics_config_ok_.Set({}, 1);

    bind_queue_ = std::make_unique<WorkQueue>(options_.bind_workers);
    status_queue_ = std::make_unique<WorkQueue>(options_.status_workers);
    // A reason to wait is reported (Event, pod conditions) once it has held this long.
    const auto report_delay =
        std::max<std::chrono::milliseconds>(2 * options_.schedule_period, std::chrono::seconds(1));
    status_writer_ = std::make_unique<StatusWriter>(
        *client_, *status_queue_, *bind_queue_, report_delay, [this](EventSpec event) { PostEvent(std::move(event)); },
        StatusWriter::Metrics{metrics_writes_, metrics_attempts_, metrics_fulfillment_, metrics_queue_allocated_,
                              metrics_queue_deserved_});
    for (const ResourceSpec& spec : kWatched) {
      CacheSink::ObserveFn observe;
      if (spec.kind == ObjectKind::kPodGroup) {
        observe = [this](WatchEventType type, const rapidjson::Value& object) {
          status_writer_->ObservePodGroup(type, object);
        };
      }
      sinks_.push_back(std::make_unique<CacheSink>(
          spec.kind, cache_, cache_mu_, [this](const InvalidObject& bad) { ReportInvalid(bad); }, std::move(observe)));
      ReflectorOptions reflector_options;
      reflector_options.optional = spec.optional;
      reflectors_.push_back(
          std::make_unique<Reflector>(*client_, spec.resource, spec.path, *sinks_.back(), reflector_options));
    }

    HttpHandlers handlers;
    handlers["/healthz"] = [](const HttpRequest&) { return HttpResponse{200, "text/plain; charset=utf-8", "ok"}; };
    handlers["/readyz"] = [this](const HttpRequest&) {
      if (Synced()) return HttpResponse{200, "text/plain; charset=utf-8", "ok"};
      return HttpResponse{503, "text/plain; charset=utf-8", "caches not synced"};
    };
    handlers["/metrics"] = [this](const HttpRequest&) {
      return HttpResponse{200, std::string(kPrometheusContentType), metrics_.Render()};
    };
    wait_board_ = std::make_unique<WaitBoard>([this] {
      std::lock_guard<std::mutex> lock(cache_mu_);
      return cache_.Snapshot(absl::ToUnixMillis(absl::Now()));
    });
    handlers["/debug/explain"] = [this](const HttpRequest& r) { return wait_board_->Explain(r); };
    handlers["/debug/queues"] = [this](const HttpRequest& r) { return wait_board_->Queues(r); };
    handlers["/ui"] = [this](const HttpRequest& r) { return wait_board_->Page(r); };
    handlers["/debug/snapshot"] = [this](const HttpRequest&) {
      std::lock_guard<std::mutex> lock(cache_mu_);
      return HttpResponse{200, "application/json",
                          EncodeObjectList(cache_.Nodes(), cache_.Pods(), cache_.PodGroups(), cache_.Queues(),
                                           cache_.PriorityClasses(), cache_.PodDisruptionBudgets(),
                                           cache_.HyperNodes())};
    };
    ASSIGN_OR_RETURN(http_, HttpServer::Start(options_.listen_address, std::move(handlers)));
    if (options_.leader_elect) elector_ = std::make_unique<LeaderElector>(*client_, options_.leader);
    return absl::OkStatus();
  }

  int http_port() const { return http_ ? http_->port() : 0; }

  absl::Status Run(const std::atomic<bool>& stop) {
    LAHAR_LOG(0, "daemon") << "identity=" << options_.leader.identity << " listening on " << options_.listen_address
                           << " (port " << http_port() << "), scheduling pods of " << options_.scheduler_names.size()
                           << " scheduler name(s) against " << options_.client.host << ":" << options_.client.port;
    std::atomic<bool> stop_all{false};
    std::vector<std::thread> threads;
    for (auto& reflector : reflectors_) {
      threads.emplace_back([&stop_all, r = reflector.get()] { r->Run(stop_all); });
    }
    threads.emplace_back([&] { WatchConfigFile(stop_all); });

    std::atomic<bool> lost{false};
    std::thread election;
    if (elector_ != nullptr) {
      election = std::thread([&] {
        if (!elector_->Acquire(stop_all)) return;
        metrics_leader_.Set({}, 1);
        if (!elector_->KeepRenewing(stop_all)) {
          metrics_leader_.Set({}, 0);
          lost.store(true);
        }
      });
    } else {
      metrics_leader_.Set({}, 1);
    }

    auto sleep_until = [&](Clock::time_point until) {
      while (Clock::now() < until && !stop.load() && !lost.load()) {
        std::this_thread::sleep_for(std::min<Clock::duration>(until - Clock::now(), std::chrono::milliseconds(20)));
      }
    };
    while (!stop.load() && !lost.load()) {
      // The first session runs as soon as the caches are synced (and the lease held), not a
      // period later.
      if (!Synced() || (elector_ != nullptr && !elector_->leading())) {
        sleep_until(Clock::now() + std::chrono::milliseconds(20));
        continue;
      }
      // A slow cycle delays the next one instead of bunching them.
      const Clock::time_point next = Clock::now() + options_.schedule_period;
      RunCycle();
      sleep_until(next);
    }

    // Finish the writes already decided, hand the lease back, then stop watching.
    bind_queue_->Stop();
    status_queue_->Stop();
    stop_all.store(true);
    if (election.joinable()) election.join();
    if (elector_ != nullptr && !lost.load()) elector_->Release();
    for (std::thread& t : threads) t.join();
    http_->Stop();
    if (lost.load()) return absl::AbortedError("lost the leader lease");
    return absl::OkStatus();
  }

 private:
  bool Synced() const {
    for (const auto& r : reflectors_) {
      if (!r->synced()) return false;
    }
    return true;
  }

  std::shared_ptr<const SchedulerConfig> Config() {
    std::lock_guard<std::mutex> lock(config_mu_);
    return config_;
  }

  // The mounted ConfigMap changes by swapping a symlink, so the file is compared by content.
  void WatchConfigFile(const std::atomic<bool>& stop) {
    if (options_.scheduler_conf.empty()) return;
    std::string last_seen = config_text_;
    while (!stop.load()) {
      SleepUnlessStopped(options_.config_poll_period, stop);
      if (stop.load()) break;
      absl::StatusOr<std::string> text = ReadFileToString(options_.scheduler_conf);
      if (!text.ok() || *text == last_seen) continue;  // mid-swap, or unchanged
      last_seen = *text;
      absl::StatusOr<SchedulerConfig> config = ParseSchedulerConfig(*text, BuiltinRegistry());
      if (!config.ok()) {
        metrics_reloads_.Add({"failure"});
        metrics_config_ok_.Set({}, 0);
        const std::string error = StrCat(options_.scheduler_conf, ": ", config.status().message());
        LAHAR_ERROR("config") << "configuration reload refused, keeping the last good configuration: " << error;
        ReportAboutSelf("ConfigRejected", StrCat("keeping the last good configuration: ", error));
        continue;
      }
      for (const std::string& warning : config->warnings) LAHAR_WARN("config") << warning;
      {
        std::lock_guard<std::mutex> lock(config_mu_);
        config_ = std::make_shared<const SchedulerConfig>(*std::move(config));
      }
      metrics_reloads_.Add({"success"});
      metrics_config_ok_.Set({}, 1);
      LAHAR_WARN("config") << "configuration reloaded from " << options_.scheduler_conf;
    }
  }

  // On our Pod when the downward API names it, else on our Lease.
  void ReportAboutSelf(std::string reason, std::string message) {
    const char* ns = std::getenv("POD_NAMESPACE");
    const char* name = std::getenv("POD_NAME");
    PostEvent(SchedulerEvent(ns != nullptr ? ns : "", name != nullptr ? name : "", options_.leader, std::move(reason),
                             std::move(message)));
  }

  void PostEvent(EventSpec event) {
    status_queue_->Push([this, event = std::move(event)] {
      absl::StatusOr<HttpResult> result = CreateEvent(*client_, event, options_.leader.identity);
      bool ok = result.ok() && result->ok();
      metrics_writes_.Add({"event", ok ? "success" : "error"});
      if (!ok) {
        LAHAR_WARN("events") << "posting event " << event.reason << " on " << event.kind << " " << event.name << ": "
                             << (result.ok() ? result->Describe() : std::string(result.status().message()));
      }
    });
  }

  // From reflector threads: an object the apiserver holds that Lahar cannot use.
  void ReportInvalid(const InvalidObject& bad) {
    {
      std::lock_guard<std::mutex> lock(report_mu_);
      std::string key = StrCat(ObjectKindName(bad.kind), "/", bad.namespace_, "/", bad.name, "/", bad.message);
      auto [it, first] = reported_invalid_.try_emplace(key);
      // An ignored object is reported again when a new version is as bad; a warning about a
      // used object only once, or every status write would repeat it.
      if (!bad.ignored && !first) return;
      if (!first && it->second == bad.resource_version) return;  // a relist shows the same version again
      it->second = bad.resource_version;
    }
    if (!bad.ignored) {
      LAHAR_WARN("cache") << ObjectKindName(bad.kind) << " " << bad.namespace_ << "/" << bad.name << ": " << bad.message;
      PostEvent(EventSpec{std::string(ObjectKindName(bad.kind)), std::string(ApiVersionOf(bad.kind)),
                          bad.namespace_.empty() ? "default" : bad.namespace_, bad.namespace_, bad.name, bad.uid,
                          "Warning", "InvalidAnnotation", bad.message});
      return;
    }
    metrics_invalid_.Add({std::string(ObjectKindName(bad.kind))});
    LAHAR_WARN("cache") << "ignoring " << ObjectKindName(bad.kind) << " "
                        << (bad.namespace_.empty() ? "" : bad.namespace_ + "/") << bad.name << ": " << bad.message;
    PostEvent(EventSpec{std::string(ObjectKindName(bad.kind)), std::string(ApiVersionOf(bad.kind)),
                        bad.namespace_.empty() ? "default" : bad.namespace_, bad.namespace_, bad.name, bad.uid,
                        "Warning", "InvalidSpec", StrCat("ignored by lahar-scheduler: ", bad.message)});
  }

  // A queue tree that does not hold together (a missing parent, a cycle) or that was mended (a
  // capability above its parent's; guarantees beyond the cluster) is logged and gets a Warning Event on the Queue, once per
  // distinct problem; its jobs wait with the same words and the rest of the cluster is scheduled.
  void ReportQueueTree(const std::vector<QueueInfo>& queues) {
    for (const QueueInfo& queue : queues) {
      std::string problem = queue.broken.empty() ? queue.warning : queue.broken;
      std::string& last = reported_queue_problems_[queue.name];
      if (problem == last) continue;
      last = problem;
      if (problem.empty()) continue;
      LAHAR_WARN("queues") << problem;
      PostEvent(EventSpec{"Queue", kVolcanoApiVersion, "default", "", queue.name, "", "Warning",
                          queue.broken.empty() ? "QueueWarning" : "InvalidQueueTree", problem});
    }
  }

  // HyperNodes the topology cannot use: a log line and a Warning Event on each when it breaks,
  // not every session; the jobs that need it wait with the same words (the plugin's reason).
  void ReportTopology(const std::shared_ptr<const Topology>& topology) {
    TopologyChanges changes = topology_problems_.Update(topology);
    for (const std::string& name : changes.mended) {
      LAHAR_LOG(0, "topology") << "HyperNode " << name << " is no longer broken (mended or deleted)";
    }
    if (changes.broken.empty()) return;
    std::map<std::string, std::string, std::less<>> uids;  // the Event's involvedObject.uid
    {
      std::lock_guard<std::mutex> lock(cache_mu_);
      for (const HyperNode* hypernode : cache_.HyperNodes()) uids[hypernode->meta.name] = hypernode->meta.uid;
    }
    for (BrokenHyperNode& broken : changes.broken) {
      LAHAR_WARN("topology") << broken.problem << " (no job is placed in it, nor in any HyperNode above it)";
      PostEvent(EventSpec{"HyperNode", kTopologyApiVersion, "default", "", broken.name, uids[broken.name], "Warning",
                          "InvalidHyperNode", StrCat(broken.problem, "; lahar-scheduler places no job in it")});
    }
  }

  void RunCycle() {
    const Millis now = absl::ToUnixMillis(absl::Now());
    ClusterSnapshot snapshot;
    {
      std::lock_guard<std::mutex> lock(cache_mu_);
      snapshot = cache_.Snapshot(now, std::move(spent_snapshot_));
    }
    ReportQueueTree(snapshot.queues);
    ReportTopology(snapshot.topology);
    std::vector<JobDigest> jobs;  // sorted by key, as the snapshot's jobs are
    jobs.reserve(snapshot.jobs.size());
    for (const JobInfo& job : snapshot.jobs) {
      JobDigest& d = jobs.emplace_back();
      d.key = job.key();
      d.namespace_ = job.namespace_;
      d.name = job.name;
      d.uid = job.uid;
      d.has_pod_group = job.has_pod_group;
      d.phase = job.phase;
      d.min = job.min_available;
      d.fulfillment = FulfillmentOf(job).value();
      d.max = job.MaxCount();
      d.placed = job.PlacedCount();
      d.running = job.Count(TaskStatus::kRunning);
      d.succeeded = job.Count(TaskStatus::kSucceeded);
      d.failed = job.Count(TaskStatus::kFailed);
      for (TaskId t : job.tasks) {
        const TaskInfo& task = snapshot.tasks[t];
        if (task.status != TaskStatus::kPending) continue;
        d.pending_pods.push_back(task.name());
        if (task.gated) d.gated_pods.insert(task.name());
      }
    }
    std::shared_ptr<const SchedulerConfig> config = Config();
    if (config != memo_config_) {  // what sessions remembered holds for one configuration only
      wait_memo_ = WaitMemo();
      memo_config_ = config;
    }
    absl::StatusOr<CycleResult> result =
        RunSchedulingCycle(std::move(snapshot), *config, BuiltinRegistry(), &wait_memo_, &spent_snapshot_);
    if (!result.ok()) {
      metrics_attempts_.Add({"error"});
      LAHAR_ERROR("daemon") << "scheduling session failed: " << result.status().message();
      return;
    }
    metrics_session_.Observe({}, static_cast<double>(result->duration_micros) / 1e6);
    for (const auto& [action, micros] : result->action_micros) {
      metrics_action_.Observe({action}, static_cast<double>(micros) / 1e6);
    }

    std::vector<int64_t> created;  // per bind: the pod's creation time, for the e2e latency
    created.reserve(result->binds.size());
    std::map<std::pair<std::string, std::string>, int> evicted_from;  // (victim PodGroup, reason) -> pods
    std::set<std::string, std::less<>> existing_queues;
    {
      std::lock_guard<std::mutex> lock(cache_mu_);
      for (const auto& u : result->job_updates) {
        const PodGroup* group = cache_.FindPodGroup(u.job);
        if (group != nullptr && group->phase != u.phase) (void)cache_.SetPodGroupPhase(u.job, u.phase);
        if (u.scaled) cache_.RecordScale(u.job, now);
        if (u.waiting) cache_.NoteWaitReported(u.job, *u.waiting);
      }
      for (const auto& b : result->binds) {
        absl::Status assumed = cache_.AssumeBound(b.pod, b.node);
        if (!assumed.ok()) LAHAR_WARN("daemon") << "not binding: " << assumed.message();
        const Pod* pod = cache_.FindPod(b.pod);
        created.push_back(pod != nullptr ? pod->meta.creation_timestamp : 0);
      }
      for (const Queue* q : cache_.Queues()) existing_queues.insert(q->meta.name);
      for (const auto& e : result->evicts) {
        (void)cache_.MarkReleasing(e.pod);
        if (cache_.FindPodGroup(e.job) != nullptr) ++evicted_from[{e.job, e.reason}];
      }
    }
    metrics_attempts_.Add({"scheduled"}, static_cast<double>(result->binds.size()));
    for (size_t i = 0; i < result->binds.size(); ++i) SubmitBind(result->binds[i], created[i]);
    for (const auto& e : result->evicts) SubmitEvict(e);
    // Spec 3.1: the victim's PodGroup is told, in the eviction's words, once per reason.
    for (const auto& [what, pods] : evicted_from) {
      std::string ns, name;
      SplitKey(what.first, ns, name);
      PostEvent(EventSpec{"PodGroup", kVolcanoApiVersion, ns, ns, name, "", "Normal", "Evicted",
                          StrCat(pods, pods == 1 ? " pod" : " pods", " evicted by lahar-scheduler: ", what.second)});
    }
    wait_board_->Update(spent_snapshot_, *result, now);
    status_writer_->WriteJobStatus(*result, jobs);
    status_writer_->WriteQueueStatus(*result, existing_queues);
  }

  void SubmitBind(const CycleResult::Bind& bind, int64_t created) {
    bind_queue_->Push([this, bind, created] {
      std::string ns, name;
      SplitKey(bind.pod, ns, name);
      absl::StatusOr<HttpResult> result = BindPod(*client_, ns, name, bind.node);
      if (result.ok() && result->ok()) {
        metrics_binds_.Add({"success"});
        if (created > 0) {
          metrics_e2e_.Observe({}, std::max(0.0, static_cast<double>(UnixMicrosNow()) / 1e6 - static_cast<double>(created)));
        }
        LAHAR_LOG(2, "bind") << bind.pod << " -> " << bind.node;
        return;
      }
      const bool conflict = result.ok() && result->status == 409;
      metrics_binds_.Add({conflict ? "conflict" : "error"});
      LAHAR_WARN("bind") << "binding " << bind.pod << " to " << bind.node << " failed: "
                         << (result.ok() ? result->Describe() : std::string(result.status().message()));
      std::lock_guard<std::mutex> lock(cache_mu_);
      cache_.ForgetBound(bind.pod);
    });
  }

  void SubmitEvict(const CycleResult::Evict& evict) {
    bind_queue_->Push([this, evict] {
      std::string ns, name;
      SplitKey(evict.pod, ns, name);
      absl::StatusOr<HttpResult> result = EvictPod(*client_, ns, name);
      if (result.ok() && (result->ok() || result->status == 404)) {
        // The reason names the job evicted for ("elastic-preempted-for ns/job"); the metric
        // keeps only its kind, so its series stay few.
        metrics_evictions_.Add({std::string(SplitEvictionReason(evict.reason).first)});
        LAHAR_LOG(1, "evict") << evict.pod << " from " << evict.node << ": " << evict.reason;
        PostEvent(EventSpec{"Pod", "v1", ns, ns, name, "", "Normal", "Evicted",
                            StrCat("evicted by lahar-scheduler: ", evict.reason)});
        return;
      }
      const std::string failure = result.ok() ? result->Describe() : std::string(result.status().message());
      LAHAR_WARN("evict") << "evicting " << evict.pod << " failed: " << failure;
      const bool refused = result.ok() && result->status == 429;
      if (refused) ReportRefusedEviction(evict, ns, name, failure);
      std::lock_guard<std::mutex> lock(cache_mu_);
      cache_.ForgetReleasing(evict.pod);
      if (refused) cache_.MarkEvictionRefused(evict.pod, absl::ToUnixMillis(absl::Now()) + kEvictionRefusedFor);
    });
  }

  // The apiserver refused an eviction (a PodDisruptionBudget forbids it): a Warning Event on the
  // pod and on the PodGroup of the job it was for, which waits; the pdb plugin plans no such
  // eviction in the first place.
  void ReportRefusedEviction(const CycleResult::Evict& evict, const std::string& ns, const std::string& name,
                             const std::string& failure) {
    metrics_evictions_refused_.Add({});
    PostEvent(EventSpec{"Pod", "v1", ns, ns, name, "", "Warning", "EvictionRefused",
                        StrCat("eviction by lahar-scheduler (", evict.reason, ") refused: ", failure)});
    std::string for_ns, for_job;
    SplitKey(SplitEvictionReason(evict.reason).second, for_ns, for_job);
    if (for_job.empty()) return;
    PostEvent(EventSpec{"PodGroup", kVolcanoApiVersion, for_ns, for_ns, for_job, "", "Warning", "EvictionRefused",
                        StrCat("waits: evicting ", evict.pod, " for it was refused: ", failure)});
  }

  DaemonOptions options_;
  std::unique_ptr<KubeClient> client_;

  std::mutex cache_mu_;
  ClusterCache cache_;
  std::vector<std::unique_ptr<CacheSink>> sinks_;
  std::vector<std::unique_ptr<Reflector>> reflectors_;

  std::mutex config_mu_;
  std::shared_ptr<const SchedulerConfig> config_;
  // Carried from session to session (scheduling thread only), for the configuration it was
  // learnt under.
  WaitMemo wait_memo_;
  ClusterSnapshot spent_snapshot_;  // the last session's, whose storage the next one reuses
  std::shared_ptr<const SchedulerConfig> memo_config_;
  std::string config_text_;

  std::unique_ptr<LeaderElector> elector_;
  std::unique_ptr<HttpServer> http_;
  std::unique_ptr<WorkQueue> bind_queue_;
  std::unique_ptr<WorkQueue> status_queue_;
  std::unique_ptr<StatusWriter> status_writer_;
  std::unique_ptr<WaitBoard> wait_board_;  // /debug/explain, /debug/queues, /ui

  std::mutex report_mu_;  // guards reported_invalid_ (reflector threads)
  std::map<std::string, std::string> reported_invalid_;

  MetricsRegistry metrics_;
  GaugeFamily& metrics_leader_;
  CounterFamily& metrics_binds_;
  CounterFamily& metrics_attempts_;
  CounterFamily& metrics_evictions_;
  CounterFamily& metrics_evictions_refused_;
  CounterFamily& metrics_reloads_;
  GaugeFamily& metrics_config_ok_;
  HistogramFamily& metrics_e2e_;
  HistogramFamily& metrics_session_;
  HistogramFamily& metrics_action_;
  GaugeFamily& metrics_queue_allocated_;
  GaugeFamily& metrics_queue_deserved_;
  GaugeFamily& metrics_fulfillment_;
  std::map<std::string, std::string> reported_queue_problems_;  // queue -> last problem reported
  TopologyProblemTracker topology_problems_;  // scheduling thread only
  CounterFamily& metrics_invalid_;
  CounterFamily& metrics_writes_;
};

absl::StatusOr<std::unique_ptr<SchedulerDaemon>> SchedulerDaemon::Create(DaemonOptions options) {
  if (options.schedule_period <= std::chrono::milliseconds(0)) {
    return absl::InvalidArgumentError("--schedule-period must be positive");
  }
  if (options.scheduler_names.empty()) return absl::InvalidArgumentError("--scheduler-name must not be empty");
  auto impl = std::make_unique<Impl>(std::move(options));
  RETURN_IF_ERROR(impl->Init());
  return std::unique_ptr<SchedulerDaemon>(new SchedulerDaemon(std::move(impl)));
}

SchedulerDaemon::SchedulerDaemon(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SchedulerDaemon::~SchedulerDaemon() = default;
absl::Status SchedulerDaemon::Run(const std::atomic<bool>& stop) { return impl_->Run(stop); }
int SchedulerDaemon::http_port() const { return impl_->http_port(); }

}  // namespace lahar
