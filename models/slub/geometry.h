// Slab geometry as kmem_cache_open computes it (mm/slub.c calculate_sizes, calculate_order,
// set_min_partial, set_cpu_partial; slub-algorithms.md §1.2, §1.4, §2.7).
#pragma once
#include <cstdint>

#include "models/slub/params.h"

namespace slubsim::slub {

constexpr std::uint32_t kCacheLine = 64;  // L1_CACHE_BYTES on x86-64

struct Geometry {
  std::uint32_t size = 0;      // stride: object plus metadata, aligned
  std::uint32_t offset = 0;    // where the free pointer lives inside a free object
  std::uint32_t align = 0;
  int order = 0;               // pages per slab = 1 << order
  std::uint32_t objects = 0;   // objects per slab
  std::uint32_t min_partial = 0;
  std::uint32_t cpu_partial = 0;        // objects (sysfs cpu_partial)
  std::uint32_t cpu_partial_slabs = 0;  // slabs a cpu partial list may hold
  std::size_t slab_bytes() const { return kPageSize << order; }
};

// nr_cpus: present CPUs. Per-cache knobs in spec override the computed values.
Geometry compute_geometry(const CacheSpec& spec, const Features& f, int nr_cpus);

// calculate_sheaf_capacity (7.0): 60/26/12/4 by object size, raised so that the sheaf struct
// (32-byte header + 8 bytes per pointer) exactly fills its kmalloc bucket; an explicit
// capacity is a minimum (slub-algorithms.md §4.2).
std::uint32_t sheaf_capacity_auto(std::uint32_t size, std::uint32_t explicit_minimum);
// The sheaf capacity a cache runs with: the configured one where sheaves are stacked on cpu
// slabs (6.18, 6.19: only caches given one have sheaves), calculate_sheaf_capacity's for every
// cache where sheaves are all (7.0), none under cpu partial. The one rule Slub and the job's
// reports share.
std::uint32_t effective_sheaf_capacity(FrontendKind f, const Geometry& geo, std::uint32_t configured);
// kmalloc_size_roundup: the kmalloc bucket an allocation of `bytes` lands in.
std::size_t kmalloc_size_roundup(std::size_t bytes);
// Bytes of a sheaf struct of `capacity` pointers, as kmalloc'd.
std::size_t sheaf_struct_bytes(std::uint32_t capacity);

// Pieces, exposed for tests.
int get_order(std::size_t bytes);
int calculate_order(std::uint32_t size, const Features& f, int nr_cpus);

}  // namespace slubsim::slub
