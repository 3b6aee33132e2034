#include "models/slub/geometry.h"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace slubsim::slub {

namespace {

constexpr std::uint32_t kWordSize = sizeof(void*);

std::uint32_t align_up(std::uint32_t v, std::uint32_t a) { return (v + a - 1) / a * a; }

int fls(unsigned v) { return v ? 32 - std::countl_zero(v) : 0; }
int ilog2(unsigned v) { return fls(v) - 1; }

// calculate_alignment: SLAB_HWCACHE_ALIGN aligns to the cache line, halved while the object
// still fits twice (small objects share lines); at least the word size.
std::uint32_t calculate_alignment(const CacheSpec& s) {
  std::uint32_t a = s.align;
  if (s.hwcache_align) {
    std::uint32_t ralign = kCacheLine;
    while (s.object_size <= ralign / 2) ralign /= 2;
    a = std::max(a, ralign);
  }
  return align_up(std::max(a, kWordSize), kWordSize);
}

// calc_slab_order: the smallest order in [min_order, max_order] whose leftover is at most
// 1/fract of the slab; max_order + 1 if none.
int calc_slab_order(std::uint32_t size, int min_order, int max_order, unsigned fract) {
  int order = min_order;
  for (; order <= max_order; ++order) {
    std::size_t slab = kPageSize << order;
    if (slab % size <= slab / fract) break;
  }
  return order;
}

}  // namespace

int get_order(std::size_t bytes) {
  int order = 0;
  while ((kPageSize << order) < bytes) ++order;
  return order;
}

int calculate_order(std::uint32_t size, const Features& f, int nr_cpus) {
  unsigned min_objects = static_cast<unsigned>(f.slub_min_objects);
  if (min_objects == 0) {
    // The kernel uses nr_cpu_ids when only one CPU is present.
    min_objects = 4 * (static_cast<unsigned>(fls(static_cast<unsigned>(nr_cpus))) + 1);
  }
  unsigned max_objects = static_cast<unsigned>((kPageSize << f.slub_max_order) / size);
  min_objects = std::min(min_objects, std::max(max_objects, 1u));
  int min_order = get_order(static_cast<std::size_t>(min_objects) * size);
  for (unsigned fraction = 16; fraction > 1; fraction /= 2) {
    int order = calc_slab_order(size, min_order, f.slub_max_order, fraction);
    if (order <= f.slub_max_order) return order;
  }
  return get_order(size);
}

Geometry compute_geometry(const CacheSpec& spec, const Features& f, int nr_cpus) {
  if (spec.object_size == 0) throw std::invalid_argument("object_size must be positive");
  Geometry g;
  g.align = calculate_alignment(spec);
  std::uint32_t size = align_up(spec.object_size, kWordSize);
  if (spec.freeptr_outside) {
    g.offset = size;
    size += kWordSize;
  } else {
    // Mid-object, so that a small overflow from the previous object does not hit it.
    g.offset = (spec.object_size / 2) / kWordSize * kWordSize;
  }
  g.size = align_up(size, g.align);
  g.order = spec.order ? *spec.order : calculate_order(g.size, f, nr_cpus);
  g.objects = static_cast<std::uint32_t>(g.slab_bytes() / g.size);
  if (g.objects == 0) throw std::invalid_argument("the slab order holds no object");
  g.min_partial = spec.min_partial
                      ? *spec.min_partial
                      : static_cast<std::uint32_t>(std::clamp(ilog2(g.size) / 2, 5, 10));
  const auto& t = f.cpu_partial_targets;
  std::uint32_t cp = g.size >= kPageSize ? t[0] : g.size >= 1024 ? t[1] : g.size >= 256 ? t[2] : t[3];
  if (!f.cpu_partial) cp = 0;
  g.cpu_partial = spec.cpu_partial ? *spec.cpu_partial : cp;
  g.cpu_partial_slabs = (2 * g.cpu_partial + g.objects - 1) / g.objects;
  return g;
}

std::size_t kmalloc_size_roundup(std::size_t bytes) {
  static constexpr std::size_t buckets[] = {8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192};
  for (std::size_t b : buckets)
    if (bytes <= b) return b;
  // Larger kmallocs come from the page allocator: whole pages.
  return (bytes + kPageSize - 1) / kPageSize * kPageSize;
}

constexpr std::size_t kSheafHeader = 32;

std::size_t sheaf_struct_bytes(std::uint32_t capacity) {
  return kmalloc_size_roundup(kSheafHeader + sizeof(void*) * capacity);
}

std::uint32_t sheaf_capacity_auto(std::uint32_t size, std::uint32_t explicit_minimum) {
  std::uint32_t base = size >= kPageSize ? 4 : size >= 1024 ? 12 : size >= 256 ? 26 : 60;
  auto bytes = sheaf_struct_bytes(base);
  auto capacity = static_cast<std::uint32_t>((bytes - kSheafHeader) / sizeof(void*));
  return std::max(capacity, explicit_minimum);
}

std::uint32_t effective_sheaf_capacity(FrontendKind f, const Geometry& geo, std::uint32_t configured) {
  switch (f) {
    case FrontendKind::SheavesOnCpuPartial: return configured;
    case FrontendKind::Sheaves: return sheaf_capacity_auto(geo.size, configured);
    default: return 0;
  }
}

}  // namespace slubsim::slub
