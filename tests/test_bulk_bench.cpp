// slub_bulk_bench's core (bench/slub_bulk_bench.h) on a tiny total: it runs, counts what it
// should, gives every page back, and with skip-freelist the new slabs of a bulk refill get no
// freelist. Timing ratios are not asserted (machines are noisy).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "bench/slub_bulk_bench.h"
#include "sim/config/config.h"

using namespace slubsim;
using namespace slubsim::bench;
using slub::Stat;

namespace {

BulkConfig tiny(std::uint32_t size, std::uint32_t batch, bool skip, bool random) {
  BulkConfig c;
  c.obj_size = size;
  c.batch = batch;
  c.total_bytes = std::size_t{1} << 20;
  c.skip_freelist = skip;
  c.freelist_random = random;
  c.home = SLUBSIM_SOURCE_DIR;
  return c;
}

slub::PathCosts costs() {
  auto f = std::string(SLUBSIM_SOURCE_DIR) + "/configs/costs/default.json";
  return parse_slub_costs(load_json_file(f), f).costs;
}

}  // namespace

TEST_CASE("bulk bench: positive times, Total/size objects, all pages back, same paths either way") {
  for (bool random : {false, true})
    for (auto [size, batch] : {std::pair{16u, 256u}, {64u, 64u}, {512u, 32u}, {192u, 100u}}) {
      CAPTURE(random);
      CAPTURE(size);
      BulkResult off = run_bulk_bench(tiny(size, batch, false, random), 2, 1);
      BulkResult on = run_bulk_bench(tiny(size, batch, true, random), 2, 1);
      for (const BulkResult* r : {&off, &on}) {
        CHECK(r->objects == (std::size_t{1} << 20) / size);
        REQUIRE(r->rounds.size() == 2);
        for (const auto& rd : r->rounds) {
          CHECK(rd.alloc_ns > 0);
          CHECK(rd.free_ns > 0);
          CHECK(rd.model_alloc_ns > 0);
        }
        CHECK(r->failed_batches == 0);
        CHECK(r->stat(Stat::ALLOC_FAILED) == 0);
        // Every object allocated in the timed rounds came from sheaves or refill_objects.
        CHECK(r->stat(Stat::ALLOC_FASTPATH) + r->stat(Stat::ALLOC_SLOWPATH) == 2 * r->objects);
        CHECK(r->stat(Stat::ALLOC_SLAB) > 0);  // the refill reached new slabs
        // kmem_cache_shrink at the end returned every page.
        CHECK(r->pages_returned == r->pages_total);
      }
      // The patch changes how a new slab's objects are handed out, not which paths run.
      CHECK(off.stats == on.stats);
      // Model time: objects from new slabs cost build + walk per object without the patch, one
      // array store with it; everything else is the same.
      const slub::PathCosts c = costs();
      // (at most one cold line per object for the build)
      Time per_obj = c.freelist_build_per_object + c.freelist_walk_per_object - c.sheaf_array_store_per_object +
                     c.new_slab_cold_line;
      CHECK(on.model_alloc_ns() < off.model_alloc_ns());
      CHECK(off.model_free_ns() == doctest::Approx(on.model_free_ns()));
      double saved = (off.model_alloc_ns() - on.model_alloc_ns()) * static_cast<double>(off.objects);
      CHECK(saved <= to_ns(per_obj) * static_cast<double>(off.objects) + 1e-6);
    }
}

TEST_CASE("bulk bench: a fresh cache's whole-slab refills build no freelist with skip-freelist") {
  // First round on a fresh cache: sheaves empty, so each batch (== objects per slab) is one new
  // slab consumed whole. Without the patch, new_slab builds the freelist (one store per object)
  // and alloc_from_new_slab walks it (one load); with it, one pointer store per object and no
  // freelist at all. The model-time difference is exactly that, for every new-slab object.
  const slub::PathCosts c = costs();
  Time per_obj = c.freelist_build_per_object + c.freelist_walk_per_object - c.sheaf_array_store_per_object;
  REQUIRE(per_obj > 0);
  for (bool random : {false, true})
    for (auto [size, batch] : {std::pair{16u, 256u}, {32u, 128u}, {64u, 64u}, {128u, 32u}, {256u, 32u}, {512u, 32u}}) {
      CAPTURE(random);
      CAPTURE(size);
      BulkResult off = run_bulk_bench(tiny(size, batch, false, random), 1, 0);
      BulkResult on = run_bulk_bench(tiny(size, batch, true, random), 1, 0);
      // The seed's grid on 8 CPUs: a batch is exactly one slab.
      CHECK(on.objects_per_slab == batch);
      CHECK(on.stat(Stat::ALLOC_SLAB) == on.objects / batch);
      CHECK(on.stat(Stat::ALLOC_SLOWPATH) == on.objects);
      CHECK(off.stats == on.stats);
      double saved_ps = (off.model_alloc_ns() - on.model_alloc_ns()) * static_cast<double>(on.objects) * 1000.0;
      // Plus the first write to each cache line holding a free pointer of the fresh slab.
      double cold_lines_per_slab = std::ceil(static_cast<double>(on.objects_per_slab) * std::min(size, 64u) / 64.0);
      CHECK(saved_ps == doctest::Approx(static_cast<double>(on.stat(Stat::ALLOC_SLAB)) *
                                        (static_cast<double>(per_obj) * static_cast<double>(on.objects_per_slab) +
                                         static_cast<double>(c.new_slab_cold_line) * cold_lines_per_slab)));
    }
}
