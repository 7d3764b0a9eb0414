// How gec's intra-op threads behave: how many there are by default and how
// idle ones wait.
//
// gec runs its kernels and oneDNN's on the OpenMP runtime (Debian's oneDNN
// is built with OpenMP, so oneDNN's primitives cannot run on a pool of our
// own). GNU OpenMP (libgomp) reads its wait policy from the environment once,
// when it starts, for the whole process: by default an idle thread spins for
// about 300,000 iterations (a few milliseconds) before it sleeps. Measured on
// the shared models (2 cores), that default is the fastest on a quiet machine
// and, once SessionOptions::adapt_threads drops to fewer threads while other
// processes keep cores busy, also under load; a bounded spin (GOMP_SPINCOUNT
// 5,000-100,000) was slower under load than both the default and PASSIVE.
// PASSIVE (no spin) costs 2-3x on small models on a quiet machine but uses
// the least CPU: `--spin off` in the tool, or OMP_WAIT_POLICY=PASSIVE.
//
// Where the threads run: a one-stream run on several threads whose
// thread's last parallel step ended more than 1 ms before (always, under
// OMP_WAIT_POLICY=passive or GOMP_SPINCOUNT) keeps that thread's OpenMP
// workers off the CPU the thread is on (the thread itself is never
// restricted; the workers get its mask back when the run ends), so that a
// worker woken at a parallel region is not queued behind the thread that
// waits for it. Tuned for GNU libgomp. Setting OMP_PROC_BIND (even to
// false), OMP_PLACES or GOMP_CPU_AFFINITY leaves placement to OpenMP.
#pragma once

#include <string>

namespace gec {

/// How idle OpenMP threads wait for the next parallel region.
enum class SpinPolicy {
  kOn,   ///< libgomp's default: spin a few milliseconds, then sleep
  kOff,  ///< sleep at once (OMP_WAIT_POLICY=PASSIVE): least CPU, a wake-up per region
};

/// Sets the environment OpenMP reads for `policy` (kOff: OMP_WAIT_POLICY=
/// PASSIVE; kOn: nothing, the default), unless the user has set
/// OMP_WAIT_POLICY or GOMP_SPINCOUNT (theirs wins). Returns true if it set a
/// variable. Effective only before the OpenMP runtime starts (before libgomp
/// is loaded; see openmp_started()): the `gec` tool calls it, then starts
/// itself over.
bool prepare_openmp_environment(SpinPolicy policy);

/// True when the OpenMP runtime (libgomp) is already loaded in this process,
/// so its wait policy is fixed.
bool openmp_started();

/// The wait policy the environment asks for, as OpenMP reads it: "libgomp
/// default (spin 300000)", "passive", "bounded spin (GOMP_SPINCOUNT=N)",
/// "active (libgomp spins for minutes)". For reports; says nothing about whether OpenMP started
/// before the environment was set.
std::string openmp_wait_policy();

/// Cores this process may use: the CPUs in its affinity mask (taskset,
/// cpusets), capped by its cgroup's CPU quota rounded up (Kubernetes CPU
/// limits: cgroup v2 cpu.max, v1 cpu.cfs_quota_us / cpu.cfs_period_us);
/// at least 1. The default for SessionOptions::num_threads.
int available_cores();

/// The most threads SessionOptions::num_threads (and `gec --threads`) takes:
/// kMaxThreadsPerCore (gec/runtime.h) x the cores the machine has
/// (std::thread::hardware_concurrency, at least 1); more only oversubscribes.
int max_num_threads();

}  // namespace gec
