#include "sim/machine/probe.h"

#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <new>
#include <stdexcept>
#include <thread>

namespace slubsim {

namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Pin the calling thread to `cpu`; false where affinity is not allowed (a container, a cpuset).
bool pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

struct NotPinned : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct Stopped : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One fresh page, first touched by a thread pinned to `home`: its node holds the page.
struct Page {
  void* p = nullptr;
  explicit Page(int home) {
    p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("probe: mmap failed");
    bool ok = true;
    std::thread t([&] {
      ok = pin(home);
      if (ok) static_cast<volatile char*>(p)[0] = 0;
    });
    t.join();
    if (!ok) {
      munmap(p, 4096);
      throw NotPinned(fmt::format("could not pin a thread to CPU {}", home));
    }
  }
  ~Page() { munmap(p, 4096); }
  Page(const Page&) = delete;
  Page& operator=(const Page&) = delete;
};

struct alignas(64) Line {
  std::atomic<std::uint64_t> v{0};
};

// One-way transfer in ns: A and B pass the line `round_trips` times by compare-and-swap.
double ping_pong(int a, int b, int home, int round_trips) {
  Page page(home);
  Line* line = new (page.p) Line;
  std::atomic<int> ready{0};
  std::atomic<bool> failed{false};
  double ns = 0;
  std::thread tb([&] {
    if (!pin(b)) failed = true;
    ready.fetch_add(1);
    while (ready.load() < 2) cpu_relax();
    if (failed) return;
    for (std::uint64_t i = 0; i < static_cast<std::uint64_t>(round_trips); ++i) {
      std::uint64_t want = 2 * i + 1;
      while (!line->v.compare_exchange_weak(want, 2 * i + 2, std::memory_order_acq_rel)) {
        want = 2 * i + 1;
        cpu_relax();
      }
    }
  });
  std::thread ta([&] {
    if (!pin(a)) failed = true;
    ready.fetch_add(1);
    while (ready.load() < 2) cpu_relax();
    if (failed) return;
    const auto t0 = std::chrono::steady_clock::now();
    for (std::uint64_t i = 0; i < static_cast<std::uint64_t>(round_trips); ++i) {
      std::uint64_t want = 2 * i;
      while (!line->v.compare_exchange_weak(want, 2 * i + 1, std::memory_order_acq_rel)) {
        want = 2 * i;
        cpu_relax();
      }
    }
    // The last round trip ends when B has taken the line back.
    while (line->v.load(std::memory_order_acquire) != 2 * static_cast<std::uint64_t>(round_trips)) cpu_relax();
    const auto t1 = std::chrono::steady_clock::now();
    ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / (2.0 * round_trips);
  });
  ta.join();
  tb.join();
  line->~Line();
  if (failed) throw NotPinned(fmt::format("could not pin threads to CPUs {} and {}", a, b));
  return ns;
}

// An MCS queued lock: waiters spin on their own node, as qspinlock's queue does.
struct alignas(64) QNode {
  std::atomic<QNode*> next{nullptr};
  std::atomic<bool> locked{false};
};
struct alignas(64) Mcs {
  std::atomic<QNode*> tail{nullptr};
};
void mcs_lock(Mcs& l, QNode& me) {
  me.next.store(nullptr, std::memory_order_relaxed);
  me.locked.store(true, std::memory_order_relaxed);
  QNode* prev = l.tail.exchange(&me, std::memory_order_acq_rel);
  if (!prev) return;
  prev->next.store(&me, std::memory_order_release);
  while (me.locked.load(std::memory_order_acquire)) cpu_relax();
}
void mcs_unlock(Mcs& l, QNode& me) {
  QNode* next = me.next.load(std::memory_order_acquire);
  if (!next) {
    QNode* expected = &me;
    if (l.tail.compare_exchange_strong(expected, nullptr, std::memory_order_release)) return;
    while (!(next = me.next.load(std::memory_order_acquire))) cpu_relax();
  }
  next->locked.store(false, std::memory_order_release);
}

// ns per acquisition with every CPU of `cpus` taking the lock in a loop for `ms`, the critical
// section an increment of a counter on the lock's data line.
double handoff(const std::vector<int>& cpus, double ms) {
  Page page(cpus.front());
  struct Shared {
    Mcs lock;
    Line counter;
  };
  Shared* s = new (page.p) Shared;
  std::atomic<int> ready{0};
  std::atomic<bool> failed{false}, stop{false};
  std::vector<std::uint64_t> taken(cpus.size(), 0);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < cpus.size(); ++i)
    threads.emplace_back([&, i] {
      if (!pin(cpus[i])) failed = true;
      auto* me = new QNode;
      ready.fetch_add(1);
      while (ready.load() < static_cast<int>(cpus.size())) cpu_relax();
      std::uint64_t n = 0;
      while (!failed && !stop.load(std::memory_order_relaxed)) {
        mcs_lock(s->lock, *me);
        s->counter.v.store(s->counter.v.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        mcs_unlock(s->lock, *me);
        ++n;
      }
      taken[i] = n;
      delete me;
    });
  while (ready.load() < static_cast<int>(cpus.size())) cpu_relax();
  const auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
  stop = true;
  for (auto& t : threads) t.join();
  const auto t1 = std::chrono::steady_clock::now();
  s->~Shared();
  if (failed) throw NotPinned("could not pin the waiters' threads");
  std::uint64_t total = 0;
  for (auto n : taken) total += n;
  return total ? std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(total) : 0.0;
}

ProbeFigure figure(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[static_cast<std::size_t>(std::lround(q * static_cast<double>(v.size() - 1)))]; };
  return {at(0.5), at(0.05), at(0.95), v.size()};
}

// Up to k of the candidates, spread evenly in their order.
template <class T>
std::vector<T> spread(const std::vector<T>& c, int k) {
  if (static_cast<int>(c.size()) <= k) return c;
  std::vector<T> out;
  for (int i = 0; i < k; ++i)
    out.push_back(c[static_cast<std::size_t>(std::lround(static_cast<double>(i) * static_cast<double>(c.size() - 1) / (k - 1)))]);
  return out;
}

}  // namespace

std::vector<ProbeClassPlan> probe_plan(const Machine& m, int per_class) {
  std::vector<ProbeClassPlan> out(kDistanceClasses);
  for (int c = 0; c < kDistanceClasses; ++c) out[static_cast<std::size_t>(c)].cls = static_cast<Distance>(c);
  auto plan = [&](Distance d) -> ProbeClassPlan& { return out[static_cast<std::size_t>(d)]; };
  // The first CPU of each core, and of each LLC domain, by socket, in CPU order.
  std::vector<std::vector<int>> llc_cores(static_cast<std::size_t>(m.nr_llcs));
  for (const auto& core : m.core_cpus) llc_cores[static_cast<std::size_t>(m.cpu_llc[static_cast<std::size_t>(core[0])])].push_back(core[0]);
  std::vector<std::vector<int>> socket_llcs(static_cast<std::size_t>(m.nr_sockets));
  for (const auto& cores : llc_cores)
    if (!cores.empty()) socket_llcs[static_cast<std::size_t>(m.cpu_socket[static_cast<std::size_t>(cores.front())])].push_back(cores.front());
  std::vector<ProbePair> smt, llc, local, remote, cross;
  for (const auto& core : m.core_cpus)
    if (core.size() >= 2) smt.push_back({core[0], core[1], core[0]});
  for (const auto& cores : llc_cores)
    for (std::size_t i = 0; i + 1 < cores.size(); i += 2) llc.push_back({cores[i], cores[i + 1], cores[i]});
  for (std::size_t s = 0; s < socket_llcs.size(); ++s) {
    const auto& l = socket_llcs[s];
    const auto& other = socket_llcs[(s + 1) % socket_llcs.size()];
    for (std::size_t i = 0; i + 1 < l.size(); i += 2) {
      local.push_back({l[i], l[i + 1], l[i]});
      if (socket_llcs.size() > 1 && !other.empty()) remote.push_back({l[i], l[i + 1], other.front()});
    }
  }
  if (socket_llcs.size() > 1)
    for (std::size_t i = 0; i < socket_llcs[0].size() && i < socket_llcs[1].size(); ++i)
      cross.push_back({socket_llcs[0][i], socket_llcs[1][i], socket_llcs[0][i]});
  plan(Distance::Smt).pairs = spread(smt, per_class);
  plan(Distance::Llc).pairs = spread(llc, per_class);
  plan(Distance::SocketLocalHome).pairs = spread(local, per_class);
  plan(Distance::SocketRemoteHome).pairs = spread(remote, per_class);
  plan(Distance::CrossSocket).pairs = spread(cross, per_class);
  plan(Distance::CrossSocketReaderHome).pairs = plan(Distance::CrossSocket).pairs;
  // Every pair really is of its class, both ways (the ping-pong moves the line both ways).
  auto home_socket = [&](const ProbePair& p) { return m.cpu_socket[static_cast<std::size_t>(p.home)]; };
  for (auto* d : {&plan(Distance::Smt), &plan(Distance::Llc), &plan(Distance::SocketLocalHome), &plan(Distance::SocketRemoteHome)})
    for (const auto& p : d->pairs)
      if (m.distance(p.b, p.a, home_socket(p)) != d->cls || m.distance(p.a, p.b, home_socket(p)) != d->cls)
        throw std::logic_error(fmt::format("probe: pair {}-{} is not of class {}", p.a, p.b, distance_name(d->cls)));
  // Waiter sets of 2, 4, 8, 16 CPUs inside each class's grouping.
  auto sets = [&](const std::vector<int>& cpus) {
    std::vector<std::vector<int>> s;
    for (std::size_t n = 2; n <= 16 && n <= cpus.size(); n *= 2) s.emplace_back(cpus.begin(), cpus.begin() + static_cast<std::ptrdiff_t>(n));
    return s;
  };
  if (!smt.empty()) plan(Distance::Smt).waiter_sets = sets(m.core_cpus[static_cast<std::size_t>(m.cpu_core[static_cast<std::size_t>(smt.front().a)])]);
  std::size_t widest = 0;
  for (std::size_t i = 0; i < llc_cores.size(); ++i)
    if (llc_cores[i].size() > llc_cores[widest].size()) widest = i;
  plan(Distance::Llc).waiter_sets = sets(llc_cores[widest]);
  plan(Distance::SocketLocalHome).waiter_sets = sets(socket_llcs[0]);
  if (!cross.empty()) {
    std::vector<int> alternate;
    for (const auto& p : cross) alternate.push_back(p.a), alternate.push_back(p.b);
    plan(Distance::CrossSocket).waiter_sets = sets(alternate);
  }
  // Why a class has nothing to measure here.
  auto none = [&](Distance d, const char* why) {
    if (plan(d).pairs.empty()) plan(d).why_none = why;
  };
  none(Distance::Smt, "no core has two hardware threads");
  none(Distance::Llc, "no LLC domain has two cores");
  none(Distance::SocketLocalHome, "no socket has two LLC domains");
  none(Distance::SocketRemoteHome, "one socket, or no socket with two LLC domains");
  none(Distance::CrossSocket, "one socket");
  none(Distance::CrossSocketReaderHome, "one socket");
  plan(Distance::DramLocal).why_none = "memory latency: the probe measures transfers between caches";
  plan(Distance::DramRemote).why_none = "memory latency: the probe measures transfers between caches";
  return out;
}

std::vector<ProbeClassResult> run_probe(const Machine& m, const std::vector<ProbeClassPlan>& plan,
                                        const ProbeOptions& o) {
  (void)m;
  std::vector<ProbeClassResult> out;
  auto check_stop = [&] {
    if (o.stop && o.stop->load()) throw Stopped("stopped");
  };
  for (const auto& p : plan) {
    ProbeClassResult r;
    r.cls = p.cls;
    r.pairs = static_cast<int>(p.pairs.size());
    if (p.pairs.empty()) {
      r.not_measured = p.why_none;
      out.push_back(r);
      continue;
    }
    if (p.cls == Distance::CrossSocketReaderHome) {  // measured with cross_socket (see probe.h)
      r = out[static_cast<std::size_t>(Distance::CrossSocket)];
      r.cls = p.cls;
      out.push_back(r);
      continue;
    }
    try {
      std::vector<double> v;
      for (const auto& pair : p.pairs)
        for (int s = 0; s < o.samples; ++s) {
          check_stop();
          v.push_back(ping_pong(pair.a, pair.b, pair.home, o.round_trips));
        }
      r.transfer = figure(v);
      for (const auto& set : p.waiter_sets) {
        std::vector<double> h;
        for (int s = 0; s < 5; ++s) {
          check_stop();
          h.push_back(handoff(set, o.handoff_ms));
        }
        r.handoff.emplace_back(static_cast<int>(set.size()), figure(h));
      }
      if (p.cls == Distance::CrossSocket)
        r.note = "a round trip across sockets is one transfer homed on the owner's socket and one on the "
                 "requester's: cross_socket and cross_socket_reader_home are its half, together";
    } catch (const NotPinned& e) {
      r.transfer.reset();
      r.handoff.clear();
      r.not_measured = fmt::format("{} (affinity not allowed here: a container or cpuset?)", e.what());
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace slubsim
