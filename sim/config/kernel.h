// Kernel presets (configs/kernels/NAME.json): which SLUB front-end and which patches.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/slub/params.h"
#include "sim/config/config.h"

namespace slubsim {

// The per-CPU layer a kernel runs: the model's own enum (models/slub/params.h), one name for it
// everywhere (slub::Frontend is the layer's class).
using slub::FrontendKind;

struct Kernel {
  std::string name;
  // The source tree it is built from ("tree"; default: the name, a release of its own): two
  // kernels of one tree differ only by the patches between them, two trees by everything else too.
  std::string tree;
  FrontendKind frontend = FrontendKind::CpuPartial;
  std::vector<std::string> patches;
  bool freelist_random = true;  // CONFIG_SLAB_FREELIST_RANDOM
  bool cpu_partial = true;      // CONFIG_SLUB_CPU_PARTIAL
  std::vector<std::pair<std::string, std::uint32_t>> sheaf_capacity;  // explicit, per cache
  std::uint32_t barn_max_full = 10, barn_max_empty = 10, pcs_batch_max = 32;
  int slub_max_order = 3;    // slub_max_order (PAGE_ALLOC_COSTLY_ORDER by default)
  int slub_min_objects = 0;  // slub_min_objects, 0 = 4 * (fls(nr_cpus) + 1)
  // The cpu partial list's limit (slub::Features): objects <= 5.15, slabs since 5.16; and
  // set_cpu_partial's targets by object size (>= PAGE_SIZE, >= 1024, >= 256, smaller).
  bool cpu_partial_objects = false;
  // Unset: the model's default (slub::Features, 5.16's 6 / 24 / 52 / 120).
  std::optional<std::array<std::uint32_t, 4>> cpu_partial_targets;
  // The scheduler (models/softirq.h, workloads/task.cpp run_roles): the slice a nice-0 task runs
  // when ksoftirqd is runnable too, and whether a task woken after sleeping (ksoftirqd, a reader
  // of a role program) preempts the running one at once (CFS) or waits for its slice (EEVDF).
  double sched_slice_us = 2800;
  bool wakeup_preempts = false;
  // EEVDF's PLACE_LAG (kernel/sched/features.h): a woken task keeps the lag it slept with, and
  // one with positive lag preempts at once (models/softirq.h; not the roles of network programs).
  bool place_lag = false;
  // EEVDF's DELAY_DEQUEUE (6.12 on): a task that blocks owing lag earns it back while it sleeps.
  bool delay_dequeue = false;
  bool has(const std::string& patch) const;
};

// The patches --patch can switch, as the kernel community names them.
const std::vector<std::string>& known_patches();
// Apply "+NAME" / "-NAME" (a bare NAME means +NAME). Throws ConfigError on an unknown name.
void apply_patches(Kernel& k, const std::vector<std::string>& changes);

Kernel parse_kernel(const json& doc, const std::string& file);
const char* frontend_name(FrontendKind f);

}  // namespace slubsim
