// Reading traces (docs/trace-format.md): slubsim's own per-CPU format and the text output of
// ftrace / trace-cmd report for the kmem events. Both become TraceText (records as the file
// says them), then build_trace matches frees to allocations, resolves caches against the
// configured ones and numbers the CPUs. Errors are ConfigError(file, "line N", ...).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "models/slub/params.h"
#include "workloads/trace.h"

namespace slubsim {

struct TraceRecord {
  int cpu = 0;
  Time time = 0;            // relative to the file's first record (may be negative if unsorted)
  TraceOp op = TraceOp::Alloc;
  int cache = -1;           // index into TraceText::names; -1 = by size (native "-")
  std::uint32_t size = 0;   // bytes
  std::uint64_t id = 0;     // object id
  int line = 0;
};

struct TraceText {
  std::string file;
  std::vector<std::string> names;  // cache names the records use
  std::vector<TraceRecord> records;
  TraceStats stats;
};

// slubsim's format: "cpu time_ns op cache size id" per line.
TraceText read_native_trace(const std::string& file);
// ftrace / trace-cmd report text. Names the caches config does not have become "by size".
TraceText import_ftrace(const std::string& file, const std::vector<slub::CacheSpec>& caches);
// The same parsers on text in memory (tests).
TraceText parse_native_trace(const std::string& text, const std::string& file);
TraceText parse_ftrace(const std::string& text, const std::string& file,
                       const std::vector<slub::CacheSpec>& caches);

// Match, resolve and number: the replayable trace.
Trace build_trace(const TraceText& text, const std::vector<slub::CacheSpec>& caches);

// The kmalloc cache an allocation of `size` bytes goes to: the smallest configured cache named
// kmalloc-* whose object_size is at least size; -1 if none is large enough.
int kmalloc_cache_for(std::uint32_t size, const std::vector<slub::CacheSpec>& caches);

// TraceText in slubsim's format (an imported ftrace file becomes editable).
void write_native_trace(const TraceText& text, std::ostream& out);

// "trace:FILE" or "ftrace:FILE": the kind and the file; false for a program workload.
bool is_trace_workload(const std::string& spec, std::string* kind = nullptr, std::string* file = nullptr);
// Read, import and build the trace a --workload trace:FILE / ftrace:FILE names.
Trace load_trace(const std::string& spec, const std::vector<slub::CacheSpec>& caches);

// One line for the user: events per op and CPU, and what was skipped.
std::string describe_trace(const Trace& t);

}  // namespace slubsim
