// The fleet search (plan/fleet.h): each family's memory from the capacity
// model, its timing from the replica model, its largest rate per replica
// within the targets by bisection, then the replicas the load needs.
#include "plan/fleet.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <optional>

#include "plan/capacity.h"
#include "spec/cache_dtype.h"
#include "spec/weight_format.h"
#include "util/units.h"

namespace kvplan {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr uint64_t kMaxBatch = 4096;  // the largest batch an engine is set to

// One family: a GPU type, a replica shape and the formats, with what the
// capacity model says of its memory.
struct Family {
  const FleetGpu* gpu = nullptr;
  ReplicaShape shape;
  std::string kv_dtype, weight_dtype;  // resolved names
  std::string kv_flag, weight_flag;    // as asked
  std::string name;
  uint64_t mem_requests = 0;
  uint64_t bytes_per_token = 0;  // per GPU
  ModelCost cost;
};

std::string Ms(double s) {
  return fmt::format("{:.0f} ms", s * 1e3);
}

// The family's memory: the engine's cache at max_model_len, in requests of
// the mean length (the shared prefix held once). Empty with `why` set when
// the engine would not start or holds no request.
std::optional<Family> SizeFamily(const ModelSpec& model, const FleetGpu& gpu, ReplicaShape shape,
                                 const std::string& kv, const std::string& weight,
                                 const FleetLoad& load, const FleetOptions& o, std::string& why) {
  EngineConfig c;
  c.engine = o.engine;
  c.tp = shape.tp;
  c.pp = shape.pp;
  // A replica takes as many of the GPU's nodes as its stages need.
  c.gpus_per_node = std::max<uint64_t>(NodeOf(gpu.hw).gpus, 1);
  c.nodes = (shape.tp * shape.pp + c.gpus_per_node - 1) / c.gpus_per_node;
  c.max_model_len = load.max_len;
  c.kv_cache_dtype = kv;
  c.weight_dtype = weight;
  c.enable_prefix_caching = load.shared_prefix > 0;
  CapacityResult cap;
  try {
    cap = ComputeCapacity(model, gpu.hw, c);
  } catch (const Error& e) {
    why = e.what();
    return std::nullopt;
  }
  for (const Lint& l : cap.lints) {
    if (l.severity != Severity::kError) continue;
    // The weights alone: said in one short line; else the engine's words.
    why = cap.weights_bytes > cap.usable_bytes
              ? fmt::format("weights {} a GPU, {} usable", FormatGiB(cap.weights_bytes),
                            FormatGiB(cap.usable_bytes))
              : l.message;
    return std::nullopt;
  }
  const double mean = load.prompt + load.output - static_cast<double>(load.shared_prefix);
  if (cap.max_tokens <= load.shared_prefix || mean <= 0) {
    why = cap.kv_budget_bytes == 0
              ? fmt::format("the weights ({} a GPU) leave no room for the cache",
                            FormatBoth(cap.weights_bytes))
              : fmt::format("the cache holds {} tokens", cap.max_tokens);
    return std::nullopt;
  }
  Family f;
  f.gpu = &gpu;
  f.shape = shape;
  f.kv_dtype = cap.kv_cache_dtype;
  f.kv_flag = kv;
  // Asking for the checkpoint's own format (bf16 of a bf16 model) asks for
  // nothing: no flag, no other checkpoint to serve.
  f.weight_flag =
      weight.empty() || SameLayout(ModelWeightFormat(model, weight), ModelWeightFormat(model, ""))
          ? ""
          : weight;
  f.weight_dtype = cap.weight_dtype;
  f.mem_requests = std::min<uint64_t>(
      kMaxBatch,
      static_cast<uint64_t>(static_cast<double>(cap.max_tokens - load.shared_prefix) / mean));
  if (f.mem_requests == 0) {
    why = fmt::format("the cache holds {} tokens, less than one request of {:.0f}", cap.max_tokens,
                      load.prompt + load.output);
    return std::nullopt;
  }
  f.bytes_per_token = cap.bytes_per_token;
  EngineConfig resolved = ResolveEngineConfig(model, gpu.hw, c);
  f.cost = ComputeModelCost(model, FindCacheDtype(f.kv_dtype),
                            ResolvedWeightFormat(model, resolved), shape.tp);
  return f;
}

std::string FamilyName(const std::string& gpu, ReplicaShape s, const std::string& kv,
                       const std::string& weight) {
  std::string n = fmt::format("{} tp{}", gpu, s.tp);
  if (s.pp > 1) n += fmt::format(" pp{}", s.pp);
  return n + fmt::format(" {} weights, {} cache", weight, kv);
}

// What fails at `l` against the targets: "" when none.
std::string Failing(const ReplicaLoad& l, const FleetTargets& t) {
  if (!l.stable) return "memory";
  if (t.tpot_s > 0 && l.tpot_s > t.tpot_s) return "TPOT";
  if (t.ttft_s > 0 && l.ttft_s > t.ttft_s) return "TTFT";
  return "";
}

// The largest rate in (0, hi] at which `ok` holds (ok is monotone: true
// below some rate, false above); 0 when it fails at the smallest rate.
template <typename Ok>
double LargestRate(double hi, Ok ok) {
  if (ok(hi)) return hi;
  double lo = 0;
  for (int i = 0; i < 50; ++i) {
    const double mid = (lo + hi) / 2;
    (ok(mid) ? lo : hi) = mid;
  }
  return lo;
}

// Replicas to carry `load` at `per_replica` each: at least one.
uint64_t ReplicasFor(double load, double per_replica) {
  return std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(load / per_replica - 1e-9)));
}

void Price(FleetPlan& p, const FleetGpu& g, double output) {
  p.usd_per_hour = g.usd_per_hour * static_cast<double>(p.gpus);
  const double tokens_per_hour = p.rate * output * 3600;
  if (g.usd_per_hour > 0 && tokens_per_hour > 0) {
    p.usd_per_million_tokens = p.usd_per_hour / tokens_per_hour * 1e6;
  }
}

class Search {
 public:
  Search(const ModelSpec& m, const FleetLoad& l, const FleetTargets& t, const FleetOptions& o,
         FleetResult& r)
      : model_(m), load_(l), targets_(t), options_(o), result_(r) {}

  void Run(const std::vector<FleetGpu>& gpus) {
    for (const FleetGpu& g : gpus) {
      for (const std::string& kv : options_.kv_dtypes) {
        for (const std::string& w : options_.weight_dtypes) ForShapes(g, kv, w);
      }
    }
  }

 private:
  void ForShapes(const FleetGpu& g, const std::string& kv, const std::string& w) {
    const NodeSpec node = NodeOf(g.hw);
    // tp is a power of two within a node (what attention heads divide by);
    // a pipeline stage takes the widest such tp, a whole node where it has
    // 2, 4 or 8 GPUs, 4 of a node of 6.
    const uint64_t full_tp = std::bit_floor(node.gpus);
    bool fitted = false;
    for (uint64_t pp = 1; pp <= 8 && !fitted; pp *= 2) {
      // Stages past one node need a network; tp stays within a node.
      if (pp > 1 && node.network_gbps <= 0) break;
      for (uint64_t tp = 1; tp <= node.gpus; tp *= 2) {
        if (pp > 1 && tp != full_tp) continue;  // pipeline only once a stage is full
        std::string why;
        const ReplicaShape shape{tp, pp};
        const std::string name = FamilyName(g.hw.name, shape, kv, w.empty() ? "checkpoint" : w);
        std::optional<Family> f = SizeFamily(model_, g, shape, kv, w, load_, options_, why);
        if (!f) {
          Reject(name, "memory", why);
          continue;
        }
        fitted = true;
        f->name = FamilyName(g.hw.name, shape, f->kv_dtype, f->weight_dtype);
        Evaluate(*f);
      }
    }
  }

  void Evaluate(Family& f) {
    ReplicaModel r(model_, f.cost, f.gpu->hw, f.shape, load_.prompt, load_.output);
    const double floor = r.FloorSeconds();
    if (floor < best_tpot_) {
      best_tpot_ = floor;
      result_.best_tpot_s = floor;
      result_.best_tpot_family = f.name;
    }
    if (r.PrefillSeconds() < best_ttft_) {
      best_ttft_ = r.PrefillSeconds();
      result_.best_ttft_s = best_ttft_;
      result_.best_ttft_family = f.name;
    }
    AddFrontier(f, r);
    if (targets_.tpot_s > 0 && floor > targets_.tpot_s) {
      result_.rejected.push_back(
          {f.name, "TPOT",
           fmt::format("TPOT {} is below the weight-read floor of {} at batch 1",
                       Ms(targets_.tpot_s), Ms(floor))});
      return;
    }
    if (targets_.ttft_s > 0 && r.PrefillSeconds() > targets_.ttft_s) {
      result_.rejected.push_back(
          {f.name, "TTFT",
           fmt::format("TTFT {} is below one {:.0f}-token prefill's {}", Ms(targets_.ttft_s),
                       load_.prompt, Ms(r.PrefillSeconds()))});
      return;
    }
    Aggregated(f, r);
    if (options_.disaggregated) Disaggregated(f, r);
  }

  // Tokens/s per GPU against tokens/s per user, one replica at batches of
  // powers of two up to its memory, prefill's share included.
  void AddFrontier(const Family& f, ReplicaModel& r) {
    const double gpus = static_cast<double>(f.shape.tp * f.shape.pp);
    for (uint64_t b = 1; b <= f.mem_requests; b *= 2) {
      const double step = r.DecodeSeconds(b);
      const double rate = static_cast<double>(b) / (load_.output * step + b * r.PrefillSeconds());
      const double tpot = step / (1 - rate * r.PrefillSeconds());
      result_.pareto.push_back({f.name, b, rate * load_.output / gpus, 1 / tpot});
    }
  }

  // A rejection, once: the same reason for another cache dtype is merged.
  void Reject(const std::string& family, const std::string& bound, const std::string& why) {
    const std::string head = family.substr(0, family.find(','));
    for (FleetRejection& x : result_.rejected) {
      if (x.bound == bound && x.reason == why && x.family.substr(0, x.family.find(',')) == head) {
        x.family = head + ", any cache";
        return;
      }
    }
    result_.rejected.push_back({family, bound, why});
  }

  bool Meets(const ReplicaLoad& l) const { return Failing(l, targets_).empty(); }

  void Aggregated(Family& f, ReplicaModel& r) {
    const double pct = targets_.percentile;
    const double cap = static_cast<double>(f.mem_requests);
    const double saturated = SaturatedRate(r, cap);
    const double ceiling = saturated * targets_.max_utilisation;
    auto load = [&](double rate) { return LoadAggregated(r, rate, pct, cap); };
    const double best = LargestRate(ceiling, [&](double rate) { return Meets(load(rate)); });
    if (best <= 0) {
      const ReplicaLoad l = load(ceiling * 1e-6);
      result_.rejected.push_back(
          {f.name + ", aggregated", Failing(l, targets_),
           fmt::format("misses the targets even at a trickle (TTFT {}, TPOT {})", Ms(l.ttft_s),
                       Ms(l.tpot_s))});
      return;
    }
    const std::string limit =
        best >= ceiling ? "utilisation" : Failing(load(std::min(best * 1.02, ceiling)), targets_);
    uint64_t replicas = 0;
    double rate = 0;
    if (load_.users > 0) {
      // No more replicas than users: a replica holds at least one.
      const double held = load(best).in_flight;
      replicas = std::min(load_.users, ReplicasFor(static_cast<double>(load_.users), held));
      rate =
          RateHolding(static_cast<double>(load_.users) / static_cast<double>(replicas), best, load);
    } else {
      replicas = ReplicasFor(load_.rate, best);
      rate = load_.rate / static_cast<double>(replicas);
    }
    const ReplicaLoad l = load(rate);
    FleetPlan p = Base(f);
    p.replicas = replicas;
    p.rate = rate * static_cast<double>(replicas);
    Fill(p, f, l, saturated, limit);
    Add(p, f);
  }

  void Disaggregated(Family& f, ReplicaModel& r) {
    const double pct = targets_.percentile;
    const double cap = static_cast<double>(f.mem_requests);
    const NodeSpec& node = r.Node();
    const double net = node.network_gbps > 0 ? node.network_gbps : node.link_gbps;
    const double lat = node.network_gbps > 0 ? node.network_latency_us : node.link_latency_us;
    if (net <= 0) return;  // no link to move the cache over
    const double transfer =
        lat * 1e-6 + (net > 0 ? load_.prompt * static_cast<double>(f.bytes_per_token) /
                                    (net * 1e9 * kLinkEfficiency)
                              : kInf);
    const double prefill_cap = targets_.max_utilisation / r.PrefillSeconds();
    auto prefill = [&](double rate) {
      ReplicaLoad l = LoadPrefillOnly(r, rate, pct);
      l.ttft_s += transfer;
      return l;
    };
    const double decode_saturated = cap / (load_.output * r.DecodeSeconds(f.mem_requests));
    const double decode_ceiling = decode_saturated * targets_.max_utilisation;
    auto decode = [&](double rate) { return LoadDecodeOnly(r, rate, cap); };
    const double p_best =
        LargestRate(prefill_cap, [&](double rate) { return Meets(prefill(rate)); });
    const double d_best =
        LargestRate(decode_ceiling, [&](double rate) { return Meets(decode(rate)); });
    if (p_best <= 0 || d_best <= 0) {
      result_.rejected.push_back(
          {f.name + ", disaggregated", p_best <= 0 ? "TTFT" : "TPOT",
           p_best <= 0 ? fmt::format("prefill {} plus moving the cache {} misses TTFT {}",
                                     Ms(r.PrefillSeconds()), Ms(transfer), Ms(targets_.ttft_s))
                       : "decode misses the targets even at a trickle"});
      return;
    }
    double rate = load_.rate;
    uint64_t d = 0;
    if (load_.users > 0) {
      // Users split over the decode replicas; each holds users / D.
      const double held = decode(d_best).in_flight;
      d = std::min(load_.users, ReplicasFor(static_cast<double>(load_.users), held));
      rate =
          RateHolding(static_cast<double>(load_.users) / static_cast<double>(d), d_best, decode) *
          static_cast<double>(d);
    } else {
      d = ReplicasFor(rate, d_best);
    }
    const uint64_t pre = ReplicasFor(rate, p_best);
    const ReplicaLoad dl = decode(rate / static_cast<double>(d));
    const ReplicaLoad pl = prefill(rate / static_cast<double>(pre));
    FleetPlan p = Base(f);
    p.disaggregated = true;
    p.prefill_replicas = pre;
    p.decode_replicas = d;
    p.replicas = pre + d;
    p.rate = rate;
    p.transfer_bytes =
        load_.prompt * static_cast<double>(f.bytes_per_token * f.shape.tp * f.shape.pp);
    p.transfer_s = transfer;
    ReplicaLoad l = dl;
    l.ttft_s = pl.ttft_s;
    Fill(p, f, l, decode_saturated, d_best >= decode_ceiling ? "utilisation" : "TPOT");
    Add(p, f);
  }

  FleetPlan Base(const Family& f) const {
    FleetPlan p;
    p.gpu = f.gpu->hw.name;
    p.shape = f.shape;
    p.kv_dtype = f.kv_dtype;
    p.weight_dtype = f.weight_dtype;
    p.kv_flag = f.kv_flag;
    p.weight_flag = f.weight_flag;
    p.mem_requests = f.mem_requests;
    return p;
  }

  void Fill(FleetPlan& p, const Family& f, const ReplicaLoad& l, double saturated,
            const std::string& limit) const {
    const uint64_t per = f.shape.tp * f.shape.pp;
    p.gpus = p.replicas * per;
    const uint64_t node_gpus = NodeOf(f.gpu->hw).gpus;
    p.nodes = (p.gpus + node_gpus - 1) / node_gpus;
    p.batch = l.batch;
    // What the load holds, never past what the cache holds (no preemption).
    p.max_num_seqs =
        std::clamp<uint64_t>(static_cast<uint64_t>(std::ceil(l.in_flight)), 1, f.mem_requests);
    p.ttft_s = l.ttft_s;
    p.tpot_s = l.tpot_s;
    p.utilisation = l.rate / saturated;
    p.tokens_per_s_per_gpu = p.rate * load_.output / static_cast<double>(p.gpus);
    p.tokens_per_s_per_user = l.tpot_s > 0 ? 1 / l.tpot_s : 0;
    p.limit = limit;
    Price(p, *f.gpu, load_.output);
  }

  void Add(FleetPlan& p, const Family& f) {
    if (p.gpus > options_.max_gpus) {
      result_.rejected.push_back(
          {f.name + (p.disaggregated ? ", disaggregated" : ", aggregated"), "GPUs",
           fmt::format("needs {} GPUs, over --max-gpus {}", p.gpus, options_.max_gpus)});
      return;
    }
    result_.plans.push_back(p);
  }

  const ModelSpec& model_;
  const FleetLoad& load_;
  const FleetTargets& targets_;
  const FleetOptions& options_;
  FleetResult& result_;
  double best_tpot_ = kInf, best_ttft_ = kInf;
};

// Keeps the points no other point beats on both axes, by tokens/s per user.
std::vector<FleetPoint> Frontier(std::vector<FleetPoint> points) {
  std::sort(points.begin(), points.end(), [](const FleetPoint& a, const FleetPoint& b) {
    return a.tokens_per_s_per_user > b.tokens_per_s_per_user;
  });
  std::vector<FleetPoint> out;
  double best = -1;
  for (const FleetPoint& p : points) {
    if (p.tokens_per_s_per_gpu > best) {
      out.push_back(p);
      best = p.tokens_per_s_per_gpu;
    }
  }
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace

FleetResult PlanFleet(const ModelSpec& model, const std::vector<FleetGpu>& gpus,
                      const FleetLoad& load, const FleetTargets& targets,
                      const FleetOptions& options) {
  FleetResult r;
  r.priced = !gpus.empty() && std::all_of(gpus.begin(), gpus.end(),
                                          [](const FleetGpu& g) { return g.usd_per_hour > 0; });
  Search(model, load, targets, options, r).Run(gpus);
  const bool priced = r.priced;
  std::stable_sort(r.plans.begin(), r.plans.end(),
                   [priced](const FleetPlan& a, const FleetPlan& b) {
                     const double ca = priced ? a.usd_per_hour : static_cast<double>(a.gpus);
                     const double cb = priced ? b.usd_per_hour : static_cast<double>(b.gpus);
                     if (ca != cb) return ca < cb;
                     return a.tpot_s < b.tpot_s;
                   });
  r.pareto = Frontier(std::move(r.pareto));
  return r;
}

ServingPrediction PredictServing(const ModelSpec& model, const HardwareSpec& hw, Engine engine,
                                 ReplicaShape shape, const std::string& kv_dtype,
                                 const std::string& weight_dtype, uint64_t concurrency,
                                 double prompt, double output) {
  FleetLoad load;
  load.prompt = prompt;
  load.output = output;
  load.max_len = static_cast<uint64_t>(std::ceil(prompt + output));
  FleetOptions o;
  o.engine = engine;
  FleetGpu g{hw, 0};
  std::string why;
  std::optional<Family> f = SizeFamily(model, g, shape, kv_dtype, weight_dtype, load, o, why);
  if (!f) Fail("{} tp{}: {}", hw.name, shape.tp, why);
  ReplicaModel r(model, f->cost, hw, shape, prompt, output);
  ServingPrediction p;
  p.mem_requests = f->mem_requests;
  const double cap = static_cast<double>(f->mem_requests);
  const double held = concurrency == 0 ? cap : std::min<double>(concurrency, cap);
  const ReplicaLoad l = LoadHolding(r, held, 0.5, cap);
  p.output_tokens_per_s = l.rate * output;
  p.ttft_s = l.prefill_s;
  p.tpot_s = l.tpot_s;
  p.batch = l.batch;
  return p;
}

}  // namespace kvplan
