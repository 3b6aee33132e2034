// slub_bulk_bench (native mode): ns/object of the allocator model's own bulk alloc and free
// code on the host, over the seed's (object size, batch) grid, before (7.0 without the
// skip-freelist patch) and after (with it). See bench/slub_bulk_bench.h for what one round
// does and how the kernel module is read.
//
//   slub_bulk_bench [--rounds N] [--warmup N] [--total-mb M] [--grid 16:256,32:128,...]
//                   [--sizes 16,32 --batches 256,128] [--freelist-random on|off] [--cpus N]
//                   [--kernel NAME] [--costs NAME] [--json]
//
// Before and after rounds alternate (ABBA...) so that host drift hits both alike.
// Not a test: machines are noisy. Host time of a model is not kernel time (README.md).
#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "bench/slub_bulk_bench.h"

using namespace slubsim;
using namespace slubsim::bench;

namespace {

// The seed's grid (Shengming Hu, v1 of the patch, 30 Mar 2026).
const std::vector<std::pair<std::uint32_t, std::uint32_t>> kSeedGrid = {
    {16, 256}, {32, 128}, {64, 64}, {128, 32}, {256, 32}, {512, 32}};

[[noreturn]] void usage(const std::string& msg) {
  fmt::print(stderr,
             "slub_bulk_bench: {}\n"
             "usage: slub_bulk_bench [--rounds N] [--warmup N] [--total-mb M]\n"
             "         [--grid SIZE:BATCH,...] [--sizes S,... [--batches B,...]]\n"
             "         [--freelist-random on|off] [--cpus N] [--kernel NAME] [--costs NAME] [--json]\n",
             msg);
  std::exit(2);
}

std::vector<std::uint32_t> numbers(const std::string& text, const std::string& opt) {
  std::vector<std::uint32_t> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    auto comma = text.find(',', pos);
    std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    try {
      std::size_t used = 0;
      long v = std::stol(item, &used);
      if (used != item.size() || v <= 0) throw std::invalid_argument(item);
      out.push_back(static_cast<std::uint32_t>(v));
    } catch (const std::exception&) {
      usage(fmt::format("{}: '{}' is not a positive number", opt, item));
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

std::string pm(double mean, double sd) { return fmt::format("{:7.2f} ± {:5.2f}", mean, sd); }

}  // namespace

int main(int argc, char** argv) {
  int rounds = 20, warmup = 1;
  double total_mb = 256;
  bool json_out = false;
  BulkConfig base;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> grid = kSeedGrid;
  std::vector<std::uint32_t> sizes, batches;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    try {
      if (a == "--rounds") rounds = std::stoi(value());
      else if (a == "--warmup") warmup = std::stoi(value());
      else if (a == "--total-mb") total_mb = std::stod(value());
      else if (a == "--cpus") base.nr_cpus = std::stoi(value());
      else if (a == "--kernel") base.kernel = value();
      else if (a == "--costs") base.costs = value();
      else if (a == "--json") json_out = true;
      else if (a == "--sizes") sizes = numbers(value(), a);
      else if (a == "--batches") batches = numbers(value(), a);
      else if (a == "--grid") {
        grid.clear();
        std::string g = value();
        for (std::size_t pos = 0; pos <= g.size();) {
          auto comma = g.find(',', pos);
          std::string item = g.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
          auto colon = item.find(':');
          if (colon == std::string::npos) usage("--grid: '" + item + "' is not SIZE:BATCH");
          grid.emplace_back(numbers(item.substr(0, colon), a)[0], numbers(item.substr(colon + 1), a)[0]);
          if (comma == std::string::npos) break;
          pos = comma + 1;
        }
      } else if (a == "--freelist-random") {
        std::string v = value();
        if (v == "on") base.freelist_random = true;
        else if (v == "off") base.freelist_random = false;
        else usage("--freelist-random takes on or off");
      } else if (a == "-h" || a == "--help") {
        usage("help");
      } else {
        usage("unknown argument " + a);
      }
    } catch (const std::logic_error&) {  // stoi/stod
      usage(a + ": bad number");
    }
  }
  if (!sizes.empty()) {
    if (batches.empty()) usage("--sizes needs --batches");
    if (batches.size() != 1 && batches.size() != sizes.size())
      usage("--batches takes one value or one per size");
    grid.clear();
    for (std::size_t k = 0; k < sizes.size(); ++k)
      grid.emplace_back(sizes[k], batches.size() == 1 ? batches[0] : batches[k]);
  } else if (!batches.empty()) {
    usage("--batches needs --sizes");
  }
  if (rounds < 1 || warmup < 0 || total_mb <= 0 || base.nr_cpus < 1) usage("bad --rounds/--warmup/--total-mb/--cpus");
  base.total_bytes = static_cast<std::size_t>(total_mb * 1024 * 1024);

  // Keep freed slab memory mapped in this process: otherwise glibc gives it back to the OS
  // after every round and each round pays page faults on first touch (the kernel does not).
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_MMAP_THRESHOLD, 1 << 30);

  nlohmann::ordered_json doc;
  doc["mode"] = "native";
  doc["kernel"] = base.kernel;
  doc["freelist_random"] = base.freelist_random;
  doc["nr_cpus"] = base.nr_cpus;
  doc["rounds"] = rounds;
  doc["warmup"] = warmup;
  doc["total_bytes"] = base.total_bytes;
  doc["results"] = nlohmann::ordered_json::array();

  if (!json_out) {
    fmt::print("slub_bulk_bench (native): host time of the model's kmem_cache_alloc_bulk/free_bulk, no contention\n");
    fmt::print("kernel {} without / with skip-freelist, CONFIG_SLAB_FREELIST_RANDOM={}, {} CPUs present (one runs)\n",
               base.kernel, base.freelist_random ? "y" : "n", base.nr_cpus);
    fmt::print("Rounds: {} (+{} warm-up), Total: {} MB allocated then freed per round, ns/object = mean ± stddev over rounds\n\n",
               rounds, warmup, total_mb);
    fmt::print("{:>8} {:>5} {:>9} {:>7} | {:>17} {:>17} {:>7} | {:>17} {:>17} {:>7}\n", "obj_size", "batch",
               "objs/slab", "refill%", "alloc before", "alloc after", "delta", "free before", "free after",
               "delta");
    std::fflush(stdout);
  }

  try {
    for (auto [size, batch] : grid) {
      BulkConfig off = base, on = base;
      off.obj_size = on.obj_size = size;
      off.batch = on.batch = batch;
      off.skip_freelist = false;
      on.skip_freelist = true;
      BulkBench before(off), after(on);
      for (int w = 0; w < warmup; ++w) {
        before.round();
        after.round();
      }
      before.mark();
      after.mark();
      std::vector<BulkRound> rb, ra;
      for (int r = 0; r < rounds; ++r) {
        if (r % 2 == 0) {
          rb.push_back(before.round());
          ra.push_back(after.round());
        } else {
          ra.push_back(after.round());
          rb.push_back(before.round());
        }
      }
      BulkResult b = before.finish(rb), a = after.finish(ra);
      double ab = mean_of(b.alloc_ns()), aa = mean_of(a.alloc_ns());
      double fb = mean_of(b.free_ns()), fa = mean_of(a.free_ns());
      // Share of allocated objects that came from refill_objects (partial or new slabs) rather
      // than from sheaves: ALLOC_SLOWPATH counts them in 7.0.
      double refill = 100.0 * static_cast<double>(a.stat(slub::Stat::ALLOC_SLOWPATH)) /
                      (static_cast<double>(a.objects) * rounds);
      if (json_out) {
        auto one = [](const BulkResult& r) {
          nlohmann::ordered_json j;
          j["alloc_ns_per_object_mean"] = mean_of(r.alloc_ns());
          j["alloc_ns_per_object_stddev"] = stddev_of(r.alloc_ns());
          j["free_ns_per_object_mean"] = mean_of(r.free_ns());
          j["free_ns_per_object_stddev"] = stddev_of(r.free_ns());
          j["alloc_ns_per_object_rounds"] = r.alloc_ns();
          j["free_ns_per_object_rounds"] = r.free_ns();
          j["model_alloc_ns_per_object"] = r.model_alloc_ns();
          j["model_free_ns_per_object"] = r.model_free_ns();
          nlohmann::ordered_json st;
          for (int i = 0; i < slub::kNrStats; ++i)
            if (r.stats[i]) st[slub::stat_name(static_cast<slub::Stat>(i))] = r.stats[i];
          j["stats"] = st;
          j["pages_total"] = r.pages_total;
          j["pages_returned"] = r.pages_returned;
          return j;
        };
        nlohmann::ordered_json row;
        row["obj_size"] = size;
        row["batch"] = batch;
        row["objects_per_round"] = a.objects;
        row["order"] = a.order;
        row["objects_per_slab"] = a.objects_per_slab;
        row["sheaf_capacity"] = a.sheaf_capacity;
        row["refill_percent"] = refill;
        row["before"] = one(b);
        row["after"] = one(a);
        row["alloc_delta_percent"] = 100.0 * (aa - ab) / ab;
        row["free_delta_percent"] = 100.0 * (fa - fb) / fb;
        doc["results"].push_back(row);
      } else {
        fmt::print("{:>8} {:>5} {:>9} {:>6.1f}% | {:>17} {:>17} {:>+6.1f}% | {:>17} {:>17} {:>+6.1f}%\n", size, batch,
                   a.objects_per_slab, refill, pm(ab, stddev_of(b.alloc_ns())), pm(aa, stddev_of(a.alloc_ns())),
                   100.0 * (aa - ab) / ab, pm(fb, stddev_of(b.free_ns())), pm(fa, stddev_of(a.free_ns())),
                   100.0 * (fa - fb) / fb);
        std::fflush(stdout);
      }
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "slub_bulk_bench: {}\n", e.what());
    return 2;
  }
  if (json_out) fmt::print("{}\n", doc.dump(2));
  else
    fmt::print("\nalloc = the kmem_cache_alloc_bulk phase (the seed's figure, as we read it); free = the "
               "kmem_cache_free_bulk phase.\nrefill% = objects from refill_objects rather than sheaves. Host "
               "time of a model, not kernel time: compare the deltas, not the ns.\n");
  return 0;
}
