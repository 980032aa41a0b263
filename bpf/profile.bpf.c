//go:build ignore

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
//
// profile.bpf.c: an on-CPU stack sampler for flamediff, attached to one
// cpu-clock perf event per CPU. Every sample of the target process is
// aggregated in the kernel: the user (and optionally kernel) stack is stored
// once in `stacks`, keyed by a 64-bit FNV-1a hash of its frames, and
// `counts` counts samples per {tgid, tid, comm, user hash, kernel hash}.
// `health` counts what happened to every sample, so user space can tell an
// empty profile from a broken one.
//
// With stack_copy (auto or always), a sample may instead be sent whole to
// user space through the `samples` ring buffer: the user registers (ip, sp,
// bp), the frame-pointer walk, and a copy of the user stack from the page of
// sp upwards, so that user space can unwind it with the objects' CFI. Such
// a sample is not counted in `counts`. See doc.go ("Stack copies").
//
// Only uapi headers are used (linux-libc-dev, libbpf-dev): no vmlinux.h.
// The sampling program reads one kernel structure, the task's user register
// frame (uapi struct pt_regs, x86-64 layout), found with bpf_task_pt_regs.
// The context-switch program (switch_fix, opt-in) reads a few fields of the
// scheduler's and perf's structures through CO-RE, declared below with only
// the fields it reads.

#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/errno.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

// Frames per stack: the kernel's default kernel.perf_event_max_stack.
#define MAX_DEPTH 127
// Errno buckets per stack kind: errno e < ERRNO_BUCKETS-1 is counted in
// bucket e, larger ones in the last bucket.
#define ERRNO_BUCKETS 64

// Stack copies: at most MAX_PAGES pages of PAGE_SIZE bytes (a struct sample
// must fit a per-CPU array value, at most 32 KiB), and filter ranges of at
// most MAX_RANGES entries.
#define PAGE_SIZE 4096
// The kernel stack's size (x86-64's THREAD_SIZE without KASAN): timer_balance
// looks for the thread's own timers in it.
#define THREAD_SIZE (16 * 1024)
#define MAX_PAGES 7
#define MAX_RANGES 32

// Values of stack_copy.
#define COPY_NEVER 0
#define COPY_AUTO 1
#define COPY_ALWAYS 2

// Flags of a copied sample.
#define SAMPLE_KERNEL_MODE 1 // taken in kernel mode: regs are the task's user regs
#define SAMPLE_WINDOW_FULL 2 // every page of the window copied, and the stack goes on
#define SAMPLE_LEAF_NOFP 4   // auto: the leaf ip is in a no-frame-pointer range
#define SAMPLE_NO_ROOT 8     // auto: the frame-pointer walk's last ip is in no root range

#define FNV_OFFSET 14695981039346656037ULL
#define FNV_PRIME 1099511628211ULL

// A stack as stored in `stacks`: depth frames, leaf first.
struct stack {
	__u32 depth;
	__u32 _pad;
	__u64 ips[MAX_DEPTH];
};

// Per-CPU scratch space, and the record sent to user space for a copied
// sample (its first offsetof(stack) + len bytes): stacks are 1 KiB each, too
// big for the 512-byte BPF stack. 30,800 bytes.
struct sample {
	__u32 tgid;
	__u32 tid;
	char comm[16];
	__u64 ip;   // user registers
	__u64 sp;
	__u64 bp;
	__u64 base; // address of stack[0]: sp rounded down to its page
	__u32 len;  // bytes copied into stack, a multiple of PAGE_SIZE
	__u32 flags;
	__u32 weight; // samples the record stands for: 1 but in profile_weighted
	__u32 _pad;
	struct stack user; // frame-pointer walk, as bpf_get_stack gives it
	struct stack kern; // empty unless kernel_stacks
	__u8 stack[MAX_PAGES * PAGE_SIZE];
};

// Address ranges [start, end) filled by user space, for stack_copy auto.
struct range {
	__u64 start;
	__u64 end;
};

struct ranges {
	__u32 n; // entries used
	__u32 _pad;
	struct range r[MAX_RANGES];
};

// Key of `counts`. 40 bytes, no padding (it is hashed byte for byte).
struct count_key {
	__u32 tgid;
	__u32 tid;
	char comm[16];
	__u64 user_hash;   // 0: no user stack (error or empty)
	__u64 kernel_hash; // 0: no kernel stack (not asked for, error or empty)
};

// Health counters, one copy per CPU (per-CPU array: no atomics needed, the
// kernel does not nest perf_event programs on one CPU). User space sums them.
struct health_counters {
	__u64 samples;        // invocations for the target (not idle)
	__u64 idle;           // skipped: the idle task (pid 0)
	__u64 map_full;       // samples dropped: an insert failed (all causes)
	__u64 stack_map_full; // of map_full: the stacks map was full (-E2BIG)
	__u64 stack_nomem;    // of map_full: no memory for a stack (-ENOMEM)
	__u64 truncated;      // stacks of MAX_DEPTH frames (possibly cut)
	__u64 collisions;     // hash equal, frames different
	__u64 user_err[ERRNO_BUCKETS];   // bpf_get_stack(user) by -errno
	__u64 kernel_err[ERRNO_BUCKETS]; // bpf_get_stack(kernel) by -errno
	__u64 copied;        // samples sent to user space with a stack copy
	__u64 ringbuf_full;  // samples dropped: no room in the samples ring buffer
	__u64 window_full;   // of copied: the stack goes on above the window
	__u64 user_regs_err; // no user registers: counted in `counts` instead
	__u64 switch_deferred; // switch_fix: samples taken at a switch-out whose timer had expired
	__u64 switch_owed;     // switch_fix: samples taken at a switch-out for CPU no timer sampled
	__u64 switch_skipped;  // switch_fix: timer samples skipped (deferred ones, and surplus)
	__u64 switch_surplus;  // switch_fix: of switch_skipped, samples beyond the accounted CPU
	__u64 switch_late;     // switch_fix: of switch_skipped, late timer samples of periods that ended in a switch-out after the check there
	__u64 switch_blind;    // switch_fix: samples taken at a switch-out for time spent programming the CPU's timer for the thread's own timer (see timer_balance)
	__u64 switch_blind_skipped; // switch_fix: of switch_skipped, the timer samples skipped for them
	__u64 switch_dense;    // switch_fix: timer samples counted twice for time the CPU's timer was not programmed at switch-ins (see timer_balance)
	__u64 weighted_extra;  // profile_weighted: samples added for run time no timer sample stood for
	__u64 weighted_zero;   // profile_weighted: timer samples with less than a period of run time since the last
	__u64 offcpu_dropped;  // offcpu: switches not counted: a map was full or a stack could not be stored
	__u64 offcpu_short;    // offcpu: switches back in after less than offcpu_min_ns, not counted
	__u64 offcpu_unended;  // offcpu: switch-outs of a thread whose previous one had no switch-in seen: that stretch is lost
	__u64 offcpu_charged_ns;     // offcpu with switch_fix: the program's run time the scheduler charged to target threads (left out of their owed samples)
	__u64 offcpu_timer_skipped;  // offcpu with switch_fix: timer samples skipped because their period ended while the program ran
	__u64 offcpu_user_err[ERRNO_BUCKETS];   // offcpu: bpf_get_stack(user) by -errno
	__u64 offcpu_kernel_err[ERRNO_BUCKETS]; // offcpu: bpf_get_stack(kernel) by -errno
	__u64 offcpu_cfi_walks;       // offcpu_cfi: user stacks walked by CFI rules (leaf without frame pointer)
	__u64 offcpu_cfi_missing;     // offcpu_cfi: of those, walks that stopped at a pc with no rule yet
	__u64 offcpu_cfi_unsupported; // offcpu_cfi: of those, walks that stopped at a rule the walk cannot follow
	__u64 offcpu_delete_err[ERRNO_BUCKETS]; // offcpu: bpf_map_delete_elem(offcpu_starts) at a switch-in by -errno (the entry stays: the next switch-out counts offcpu_unended)
};

// Set by the loader before loading.
const volatile __u32 target_tgid = 0;   // 0: every process
const volatile __u32 kernel_stacks = 0; // 1: also take kernel stacks
const volatile __u32 stack_copy = COPY_NEVER;
const volatile __u32 stack_pages = MAX_PAGES; // pages copied at most, <= MAX_PAGES
// 1: the kernel has bpf_get_current_task_btf and bpf_task_pt_regs (5.15 and
// BTF), so samples taken in kernel mode get user registers. With 0, the
// verifier never sees those calls (dead code on a read-only constant).
const volatile __u32 task_regs = 0;
// A copied sample wakes the reader up only when the ring buffer holds this
// many bytes; the reader also polls on a timer.
const volatile __u64 wakeup_bytes = 1 << 20;
// switch_fix (per-thread events only): the events' period in nanoseconds,
// and how close to expiry a thread's sample timer may be at its switch-out
// for its next sample to count as deferred (see switch_fix). 0: only a
// timer that has expired; one that expires later in the switch-out is
// found at the switch-in (switch_late). A slack of 5 us, used before that
// check existed, also took samples of the next run's first microseconds,
// which after a short wake-up path are the woken code's (docs/fidelity.md).
const volatile __u64 period_ns = 0;
const volatile __s64 defer_slack_ns = 0;
// switch_fix: what programming the CPU's timer device costs (measured by
// user space; a VM exit on a virtual machine), charged as blind time at
// each switch-out that followed such a programming for the thread's own
// timer, and as dense time at each switch-in that did not program it (see
// timer_balance). 0: no such correction.
const volatile __u64 timer_program_ns = 0;
// offcpu: stretches off the CPU shorter than this are not counted.
const volatile __u64 offcpu_min_ns = 0;
// offcpu: 1: a user stack whose leaf is in a no-frame-pointer range
// (nofp_ranges) is walked by the CFI rules user space puts in cfi_rules
// (see walk_cfi), not by bpf_get_stack's frame-pointer walk.
const volatile __u32 offcpu_cfi = 0;

// The fields switch_fix reads, for CO-RE (the kernel's BTF has the rest).
struct list_head {
	struct list_head *next;
} __attribute__((preserve_access_index));
struct timerqueue_node {
	__s64 expires;
} __attribute__((preserve_access_index));
struct hrtimer_cpu_base {
	__s64 expires_next;
	struct hrtimer *next_timer;
} __attribute__((preserve_access_index));
struct hrtimer_clock_base {
	struct hrtimer_cpu_base *cpu_base;
} __attribute__((preserve_access_index));
struct hrtimer {
	struct timerqueue_node node;
	struct hrtimer_clock_base *base;
} __attribute__((preserve_access_index));
// local64_t as the kernel nests it (x86-64), for hw.period_left.
typedef struct {
	__s64 counter;
} atomic64_t;
typedef atomic64_t atomic_long_t;
typedef struct {
	atomic_long_t a;
} local_t;
typedef struct {
	local_t a;
} local64_t;
struct hw_perf_event {
	struct hrtimer hrtimer;
	__u64 sample_period;
	local64_t period_left;
} __attribute__((preserve_access_index));
struct bpf_prog;
struct perf_event {
	struct list_head event_entry;
	struct hw_perf_event hw;
	struct bpf_prog *prog;
} __attribute__((preserve_access_index));
struct perf_event_context {
	struct list_head event_list;
	struct perf_event_context *parent_ctx;
} __attribute__((preserve_access_index));
struct sched_entity {
	__u64 sum_exec_runtime;
} __attribute__((preserve_access_index));
struct task_struct {
	int pid;
	char comm[16];
	int tgid;
	void *stack;
	struct sched_entity se;
	struct perf_event_context *perf_event_ctxp;
} __attribute__((preserve_access_index));

// A target thread's accounting for switch_fix and profile_weighted, and
// what they did to its samples (the thread's share of the health counters
// of the same names), which user space reads per thread.
struct thread_state {
	__u64 base;     // sum_exec_runtime when first seen
	__u64 taken;    // samples counted since (timer and switch-out ones)
	__u32 skip;     // timer samples to skip: a deferred one taken at the switch-out, or surplus
	__u32 deferred; // switch_deferred
	__u32 owed;     // switch_owed
	__u32 skipped;  // switch_skipped
	__u32 extra;    // weighted_extra
	__u32 zero;     // weighted_zero
	__u64 prog_ns;  // offcpu_charged_ns: the off-CPU program's run time charged to this thread, not counted as run time
	__u32 prog_skipped; // offcpu_timer_skipped
	__u32 blind;        // switch_blind
	__s64 blind_ns;     // timer_balance: blind time less dense time, not yet taken into account
	__u32 blind_skip;   // timer samples to skip for blind samples taken (not counted as taken: the blind sample was)
	__u32 blind_skipped; // switch_blind_skipped
	__u32 dense;        // timer samples to count twice (timer_balance)
	__u32 densed;       // switch_dense
	__u32 dense_debt;   // periods counted by dense samples beyond their own, not yet taken from the owed samples (not in taken)
	__u32 _pad;
	__u64 ev_ctx;       // thread_event's cache: the perf context it last looked in,
	__u64 ev_first;     // the first entry of that context's event list then,
	__u64 ev;           // and the event it found there
};

// At most this many periods counted by dense samples wait for owed samples
// to take them from; beyond it a dense sample counts once. A thread whose
// samples never fall behind its run time (no owed samples) would
// otherwise get a period more than its run time for each.
#define DENSE_DEBT_MAX 2

// run_time is the thread's run time since t->base, sum being its
// sum_exec_runtime now, less the off-CPU program's run time the scheduler
// charged to it (t->prog_ns): that is the profiler's CPU, not the
// program's, and no sample stands for it.
static __always_inline __u64 run_time(const struct thread_state *t, __u64 sum)
{
	__u64 ran = sum - t->base;

	return ran > t->prog_ns ? ran - t->prog_ns : 0;
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sample);
} scratch_space SEC(".maps");

// Copied samples. Its size is set by the loader (a power of two).
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} samples SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ranges);
} nofp_ranges SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ranges);
} root_ranges SEC(".maps");

// Not preallocated by default: a preallocated 65536 x 1 KiB map would pin
// 64 MiB for stacks that mostly never come. The price: an insert in
// interrupt context can find the kernel's per-CPU element cache empty and
// fail with -ENOMEM (seen on a CPU's first samples, when the user and the
// kernel stack are both new: the kernel starts the cache with one element
// of this size); that sample is dropped and counted. The loader fills the
// caches first (warmStackCache), and clears the flag on request
// (Options.PreallocStacks) and on kernels (< 6.1) that refuse
// non-preallocated maps in perf_event programs.
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, struct stack);
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct count_key);
	__type(value, __u64);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct health_counters);
} health SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct thread_state);
} threads SEC(".maps");

// FNV-1a over the bytes of the first depth frames. Never 0 (0 means "no
// stack" in count_key).
static __always_inline __u64 hash_stack(const struct stack *s, __u32 depth)
{
	__u64 h = FNV_OFFSET;

	for (__u32 i = 0; i < MAX_DEPTH; i++) {
		if (i >= depth)
			break;
		__u64 ip = s->ips[i];
#pragma unroll
		for (int b = 0; b < 8; b++) {
			h ^= (ip >> (b * 8)) & 0xff;
			h *= FNV_PRIME;
		}
	}
	return h ? h : 1;
}

static __always_inline int same_stack(const struct stack *a, const struct stack *b, __u32 depth)
{
	if (a->depth != depth)
		return 0;
	for (__u32 i = 0; i < MAX_DEPTH; i++) {
		if (i >= depth)
			break;
		if (a->ips[i] != b->ips[i])
			return 0;
	}
	return 1;
}

static __always_inline void count_errno(__u64 *buckets, long err)
{
	__u64 e = -err;

	if (e >= ERRNO_BUCKETS)
		e = ERRNO_BUCKETS - 1;
	buckets[e & (ERRNO_BUCKETS - 1)]++;
}

// walk_stack fills st with one stack (bpf_get_stack with flags) and returns
// its depth, 0 when there is none (failures are counted by errno in errs).
static __always_inline __u32 walk_stack(void *ctx, struct stack *st,
					__u64 flags, __u64 *errs, struct health_counters *h)
{
	long n = bpf_get_stack(ctx, st->ips, sizeof(st->ips), flags);

	st->depth = 0;
	if (n < 0) {
		count_errno(errs, n);
		return 0;
	}
	__u32 depth = (__u64)n / sizeof(__u64);
	if (depth >= MAX_DEPTH) {
		depth = MAX_DEPTH;
		h->truncated++;
	}
	st->depth = depth;
	return depth;
}

// store_stack stores the stack st of depth frames in `stacks`, setting *out
// to the stack's hash (0 when there is no stack). It returns 0, or the
// negative error of the stacks insert when the sample must be dropped.
static __always_inline long store_stack(struct stack *st, __u32 depth,
					struct health_counters *h, __u64 *out)
{
	*out = 0;
	if (depth == 0)
		return 0;

	__u64 hash = hash_stack(st, depth);
	struct stack *old = bpf_map_lookup_elem(&stacks, &hash);
	if (!old) {
		long err = bpf_map_update_elem(&stacks, &hash, st, BPF_NOEXIST);
		if (err == -EEXIST)
			old = bpf_map_lookup_elem(&stacks, &hash); // another CPU won
		else if (err)
			return err;
	}
	// A collision: the first stack stored under this hash keeps it and
	// this sample is counted under it (see doc.go).
	if (old && !same_stack(old, st, depth))
		h->collisions++;
	*out = hash;
	return 0;
}

// in_ranges says whether ip is in one of the ranges of map (nofp_ranges or
// root_ranges).
static __always_inline int in_ranges(void *map, __u64 ip)
{
	__u32 zero = 0;
	struct ranges *rs = bpf_map_lookup_elem(map, &zero);

	if (!rs)
		return 0;
	for (__u32 i = 0; i < MAX_RANGES; i++) {
		if (i >= rs->n)
			break;
		if (ip >= rs->r[i].start && ip < rs->r[i].end)
			return 1;
	}
	return 0;
}

// user_regs sets r's ip, sp and bp to the user registers of the sampled
// task: the interrupted registers for a sample taken in user mode, else the
// task's saved user frame (always when ctx is NULL: a switch-out). It returns 0, or -1 when there are none (kernel
// without bpf_task_pt_regs, a kernel thread, a failed read).
static __always_inline int user_regs(struct bpf_perf_event_data *ctx, struct sample *r)
{
	if (ctx && (ctx->regs.cs & 3) == 3) {
		r->ip = ctx->regs.rip;
		r->sp = ctx->regs.rsp;
		r->bp = ctx->regs.rbp;
		return 0;
	}
	r->flags |= SAMPLE_KERNEL_MODE;
	if (!task_regs)
		return -1;
	struct pt_regs *u = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	struct pt_regs ur;
	if (bpf_probe_read_kernel(&ur, sizeof(ur), u))
		return -1;
	if ((ur.cs & 3) != 3 || ur.rsp == 0)
		return -1; // no user context (a kernel thread)
	r->ip = ur.rip;
	r->sp = ur.rsp;
	r->bp = ur.rbp;
	return 0;
}

// copy_sample decides whether the sample, whose frame-pointer walk is in
// r->user (udepth frames), is copied; if so it copies the user stack and
// sends r to user space, and returns 1 (the sample is accounted for: copied
// or dropped). It returns 0 when the sample goes to `counts` as without
// stack copies.
static __always_inline int copy_sample(void *ctx, struct bpf_perf_event_data *pctx, struct sample *r,
				       struct health_counters *h, __u32 udepth)
{
	r->flags = 0;
	if (user_regs(pctx, r)) {
		h->user_regs_err++;
		return 0;
	}
	if (stack_copy == COPY_AUTO) {
		if (in_ranges(&nofp_ranges, r->ip))
			r->flags |= SAMPLE_LEAF_NOFP;
		__u32 last = udepth - 1; // udepth 0: last is out of range
		if (last >= MAX_DEPTH || !in_ranges(&root_ranges, r->user.ips[last]))
			r->flags |= SAMPLE_NO_ROOT;
		if (!(r->flags & (SAMPLE_LEAF_NOFP | SAMPLE_NO_ROOT)))
			return 0;
	}

	r->kern.depth = 0;
	if (kernel_stacks)
		walk_stack(ctx, &r->kern, 0, h->kernel_err, h);

	// Whole pages from sp's page upwards: a page read is all or nothing,
	// and page-aligned reads stop exactly at the end of the stack mapping
	// (the next one is a guard page or unmapped), or at a page never
	// touched (not in memory: no frames lie there or above).
	r->base = r->sp & ~(__u64)(PAGE_SIZE - 1);
	__u32 i;
	for (i = 0; i < MAX_PAGES && i < stack_pages; i++) {
		if (bpf_probe_read_user(&r->stack[i * PAGE_SIZE], PAGE_SIZE,
					(void *)(r->base + (__u64)i * PAGE_SIZE)))
			break;
	}
	r->len = i * PAGE_SIZE;
	if (i == stack_pages) {
		__u8 b;
		if (!bpf_probe_read_user(&b, 1, (void *)(r->base + (__u64)i * PAGE_SIZE)))
			r->flags |= SAMPLE_WINDOW_FULL;
	}

	__u64 len = __builtin_offsetof(struct sample, stack) + (__u64)i * PAGE_SIZE;
	if (len > sizeof(*r))
		len = sizeof(*r);
	__u64 wake = BPF_RB_NO_WAKEUP;
	if (bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) + len >= wakeup_bytes)
		wake = BPF_RB_FORCE_WAKEUP;
	if (bpf_ringbuf_output(&samples, r, len, wake)) {
		h->ringbuf_full++;
		return 1;
	}
	h->copied++;
	if (r->flags & SAMPLE_WINDOW_FULL)
		h->window_full++;
	return 1;
}

// take_sample takes one sample of the current task: its stacks counted in
// `counts`, or copied to user space. ctx is the program's context, pctx
// the perf event's (its interrupted registers), NULL at a switch-out.
static __always_inline int take_sample(void *ctx, struct bpf_perf_event_data *pctx,
				       struct health_counters *h, __u32 tgid, __u32 tid, __u64 n)
{
	__u32 zero = 0;
	struct sample *r = bpf_map_lookup_elem(&scratch_space, &zero);
	if (!r)
		return 0;

	struct count_key key = {};
	key.tgid = tgid;
	key.tid = tid;
	bpf_get_current_comm(key.comm, sizeof(key.comm));

	__u32 depth = walk_stack(ctx, &r->user, BPF_F_USER_STACK, h->user_err, h);
	if (stack_copy != COPY_NEVER) {
		r->weight = n;
		r->tgid = tgid;
		r->tid = tid;
		__builtin_memcpy(r->comm, key.comm, sizeof(r->comm));
		if (copy_sample(ctx, pctx, r, h, depth))
			return 0;
	}
	long err = store_stack(&r->user, depth, h, &key.user_hash);
	if (err)
		goto stack_dropped;
	if (kernel_stacks) {
		depth = walk_stack(ctx, &r->kern, 0, h->kernel_err, h);
		err = store_stack(&r->kern, depth, h, &key.kernel_hash);
		if (err)
			goto stack_dropped;
	}

	__u64 *c = bpf_map_lookup_elem(&counts, &key);
	if (!c) {
		err = bpf_map_update_elem(&counts, &key, &n, BPF_NOEXIST);
		if (!err)
			return 0;
		if (err != -EEXIST) {
			// -E2BIG (full) in practice; any failure drops the sample.
			h->map_full++;
			return 0;
		}
		c = bpf_map_lookup_elem(&counts, &key); // another CPU inserted it
		if (!c) {
			h->map_full++;
			return 0;
		}
	}
	__sync_fetch_and_add(c, n);
	return 0;

stack_dropped:
	h->map_full++;
	if (err == -E2BIG)
		h->stack_map_full++;
	else
		h->stack_nomem++;
	return 0;
}

// target_sample counts a timer sample of the current task in the health
// counters and returns them when the task is a thread of the target (its
// ids in *tgid and *tid), NULL otherwise (the idle task, another process).
static __always_inline struct health_counters *target_sample(__u32 *tgid, __u32 *tid)
{
	__u32 zero = 0;
	__u64 id = bpf_get_current_pid_tgid();
	*tgid = id >> 32;
	*tid = (__u32)id;

	struct health_counters *h = bpf_map_lookup_elem(&health, &zero);
	if (!h)
		return NULL;
	if (*tid == 0) {
		h->idle++;
		return NULL;
	}
	if (target_tgid && *tgid != target_tgid)
		return NULL;
	h->samples++;
	return h;
}

SEC("perf_event")
int profile(struct bpf_perf_event_data *ctx)
{
	__u32 tgid, tid;
	struct health_counters *h = target_sample(&tgid, &tid);
	if (!h)
		return 0;
	if (period_ns) {
		struct thread_state *t = bpf_map_lookup_elem(&threads, &tid);
		if (t) {
			if (t->skip) {
				t->skip--;
				t->skipped++;
				h->switch_skipped++;
				return 0;
			}
			if (t->blind_skip) {
				t->blind_skip--;
				t->skipped++;
				t->blind_skipped++;
				h->switch_skipped++;
				h->switch_blind_skipped++;
				return 0;
			}
			t->taken++;
			if (t->dense) {
				t->dense--;
				if (t->dense_debt < DENSE_DEBT_MAX) {
					// The second period waits in dense_debt, not
					// in taken: were it counted as taken, the
					// surplus rule would skip a timer sample
					// for it as often as an owed sample came
					// one fewer, and the two cancelled.
					t->dense_debt++;
					t->densed++;
					h->switch_dense++;
					return take_sample(ctx, ctx, h, tgid, tid, 2);
				}
			}
		}
	}
	return take_sample(ctx, ctx, h, tgid, tid, 1);
}

// profile_weighted (per-CPU events with the switch fix) counts each timer
// sample of a target thread as the thread's run time since its previous
// sample, in whole periods of the scheduler's sum_exec_runtime, carried
// over: the samples of every thread add up to its accounted CPU, also where
// a per-CPU timer missed some of it (docs/fidelity.md, "Per-CPU events").
// A sample that comes less than a period after the last is not counted;
// its time goes to the next. There is no program at context switches: the
// run time is read at the sample, which costs nothing when no sample comes.
SEC("perf_event")
int profile_weighted(struct bpf_perf_event_data *ctx)
{
	__u32 tgid, tid;
	struct health_counters *h = target_sample(&tgid, &tid);
	if (!h)
		return 0;
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 sum = task->se.sum_exec_runtime;
	struct thread_state *t = bpf_map_lookup_elem(&threads, &tid);
	if (!t) {
		// A thread's first sample stands for one period.
		struct thread_state init = {.base = sum - period_ns, .taken = 1};
		bpf_map_update_elem(&threads, &tid, &init, BPF_NOEXIST);
		return take_sample(ctx, ctx, h, tgid, tid, 1);
	}
	__u64 due = run_time(t, sum) / period_ns;
	if (due <= t->taken) {
		t->zero++;
		h->weighted_zero++;
		return 0;
	}
	__u64 n = due - t->taken;
	t->taken = due;
	t->extra += n - 1;
	h->weighted_extra += n - 1;
	return take_sample(ctx, ctx, h, tgid, tid, n);
}

// thread_event returns task's per-thread cpu-clock event that this program
// is attached to (one with a BPF program and period_ns), or NULL. With t
// (task's state) it remembers the event found, the perf context it was
// found in and the first entry of that context's event list, and while
// the thread has that context with that first entry it finds the event
// there again without a look. A thread's event stays in its context until
// the profiler closes it, and a context that perf swaps between two
// threads carries its event along; an event added to the context goes to
// the head of its list, and a context freed (its events closed) and
// allocated again at the same address for the thread has new events: the
// first entry differs then, unless that too came back at the same
// address. (A look is two or three reads of kernel memory through a
// helper, at every switch-in and switch-out of a target thread before the
// cache; the key costs two plain loads: see BenchmarkSwitchFixSwitch and
// docs/fidelity.md. A thread id reused for a new thread while sampling
// keeps the old thread's state, this cache with it.)
static __always_inline struct perf_event *thread_event(struct task_struct *task, struct thread_state *t)
{
	struct perf_event_context *ctx = task->perf_event_ctxp;
	if (!ctx)
		return NULL;
	struct list_head *head = &ctx->event_list;
	struct list_head *pos = ctx->event_list.next;
	if (t && t->ev_ctx == (__u64)ctx && t->ev_first == (__u64)pos)
		return (struct perf_event *)t->ev;
	__u64 first = (__u64)pos;
	for (int i = 0; i < 4 && pos && pos != head; i++) {
		struct perf_event *e = (void *)pos - bpf_core_field_offset(struct perf_event, event_entry);
		if (BPF_CORE_READ(e, prog) && BPF_CORE_READ(e, hw.sample_period) == period_ns) {
			if (t) {
				t->ev_ctx = (__u64)ctx;
				t->ev_first = first;
				t->ev = (__u64)e;
			}
			return e;
		}
		pos = BPF_CORE_READ(pos, next);
	}
	return NULL;
}

// event_timer_left returns how long the sample timer of event e has left
// at now, or a large value for no event.
static __always_inline __s64 event_timer_left(struct perf_event *e, __u64 now)
{
	if (!e)
		return 1LL << 62;
	return BPF_CORE_READ(e, hw.hrtimer.node.expires) - (__s64)now;
}

// sample_timer_left returns how long the sample timer of task's event
// (thread_event) has left at now, or a large value when none is found.
static __always_inline __s64 sample_timer_left(struct task_struct *task, __u64 now)
{
	return event_timer_left(thread_event(task, NULL), now);
}

// The CPU's hrtimer base, per CPU, learnt at switch-outs of target threads
// from their sample timer, which is queued on that CPU then (timer_base):
// the timer's clock base (struct hrtimer_clock_base *) and the CPU base it
// belongs to (struct hrtimer_cpu_base *).
struct timer_bases {
	__u64 clock;
	__u64 cpu;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct timer_bases);
} cpu_timer_base SEC(".maps");

// timer_base returns this CPU's hrtimer base, read from e (the sample
// timer of a target thread being switched out here) and remembered, or
// with e NULL the one remembered (NULL until a switch-out was seen here).
// The CPU base is read again only when the timer's clock base is not the
// one it was read from last (one read of kernel memory through a helper
// instead of two at a switch-out: BenchmarkSwitchFixSwitch).
static __always_inline struct hrtimer_cpu_base *timer_base(struct perf_event *e)
{
	__u32 zero = 0;
	struct timer_bases *slot = bpf_map_lookup_elem(&cpu_timer_base, &zero);
	if (!slot)
		return NULL;
	if (e) {
		__u64 clock = (__u64)BPF_CORE_READ(e, hw.hrtimer.base);
		if (clock != slot->clock) {
			slot->cpu = clock ? (__u64)BPF_CORE_READ((struct hrtimer_clock_base *)clock, cpu_base) : 0;
			slot->clock = clock;
		}
	}
	return (struct hrtimer_cpu_base *)slot->cpu;
}

// timer_balance is switch_fix's correction for time whose length depends
// on the sample timer (docs/fidelity.md, "Timer programming"): the kernel
// programs the CPU's timer device (timer_program_ns, a VM exit on a
// virtual machine) when a timer it arms fires before every other one.
//   - At a switch-out of a target thread whose CPU's next timer lies on
//     the thread's kernel stack (it armed a nanosleep's, a timed wait's,
//     a poll's timer on its way here, and the kernel programmed the
//     device for it), that time was spent only because the sample timer
//     was not about to fire: no sample can fall in it (blind time,
//     +timer_program_ns).
//   - At a switch-in where the restarted sample timer will not be the
//     CPU's next timer, perf's restart programs nothing, and the
//     thread's return path is that much shorter than where a sample
//     can fall in it, whose restarts all program the device (dense
//     time, -timer_program_ns).
// The thread's balance of the two (t->blind_ns): for each period of blind
// time a sample is taken at the switch-out, in the blocking call, and the
// thread's next timer sample skipped (blind time moves the samples it
// should hold to wherever the timer next fires); for each period of
// dense time the thread's next timer sample counts twice, and the owed
// samples (at switch-outs, in blocking calls) come one fewer (dense_debt,
// at most DENSE_DEBT_MAX periods waiting). At a
// switch-out (in 0) it returns 1 when a blind sample is due: the caller
// takes it with blind_take where it takes no other sample (one sample a
// switch-out, one copy a sample), else it waits for the next switch-out.
// At a switch-in, left is the event's period_left (what its timer is
// restarted with).
static __always_inline __u64 timer_balance(struct task_struct *task, struct perf_event *e,
					   struct thread_state *t, struct health_counters *h, int in,
					   __s64 left)
{
	if (!timer_program_ns || !e)
		return 0;
	struct hrtimer_cpu_base *cb = timer_base(in ? NULL : e);
	if (!cb)
		return 0;
	if (in) {
		__s64 start = left > 0 ? left : left < 0 ? 10000 : (__s64)period_ns;
		if ((__s64)bpf_ktime_get_ns() + start < BPF_CORE_READ(cb, expires_next))
			return 0; // the restart programs the device
		t->blind_ns -= timer_program_ns;
		if (t->blind_ns <= -(__s64)period_ns) {
			t->blind_ns += period_ns;
			t->dense++;
		}
		return 0;
	}
	__u64 next = (__u64)BPF_CORE_READ(cb, next_timer);
	__u64 stack = (__u64)task->stack;
	if (!stack || next < stack || next >= stack + THREAD_SIZE)
		return 0;
	t->blind_ns += timer_program_ns;
	return t->blind_ns >= (__s64)period_ns;
}

// blind_take accounts for a blind sample due (timer_balance) that the
// caller is about to take: a period of blind time, and a timer sample to
// skip for it.
static __always_inline void blind_take(struct thread_state *t, struct health_counters *h)
{
	t->blind_ns -= period_ns;
	t->taken++;
	t->blind++;
	t->blind_skip++;
	h->switch_blind++;
}

// switch_in is switch_fix at the switch-in of a target thread (see there):
// a negative remainder on its event's timer means that the timer's next
// expiry, 10 us in, is a late one.
static __always_inline void switch_in(struct task_struct *next, struct health_counters *h)
{
	__u32 tid = next->pid;
	struct thread_state *t = bpf_map_lookup_elem(&threads, &tid);
	if (!t)
		return; // unknown yet
	struct perf_event *e = thread_event(next, t);
	__s64 left = e ? BPF_CORE_READ(e, hw.period_left.a.a.counter) : 0;
	timer_balance(next, e, t, h, 1, left);
	if (t->skip)
		return; // a skip is due already (a deferred sample stands for it)
	if (e && left < 0) {
		t->skip = 1;
		h->switch_late++;
	}
}

// switch_fix (with per-thread events): at each switch-out of a target
// thread, where its per-thread cpu-clock event is stopped, it corrects
// three things the event cannot see (docs/fidelity.md):
//   - a sample timer that expired during the switch-out (interrupts off)
//     fires only about 10 us after the thread's next switch-in, wherever
//     the thread then is; when it has expired by this check, the sample
//     is taken here instead, in the blocking call where its period ended,
//     and the late one skipped;
//   - the scheduler charges the thread for time the event does not count
//     (the context switch itself): once its run time is a whole period
//     ahead of the samples taken, a sample is taken here, and when the
//     samples run a whole period ahead (event time the scheduler does not
//     charge, such as a hypervisor's steal time), a timer sample is
//     skipped;
//   - time the kernel spent programming the CPU's timer for a timer the
//     thread armed on its way out, which no sample can fall in
//     (timer_balance): a sample is taken here for each period of it, and
//     a timer sample skipped.
// At each switch-in of a target thread it looks at how the event was
// stopped: a timer that expired after the check at the switch-out, in the
// rest of it (the kernel runs perf's switch-out after this tracepoint),
// left a negative remainder, and the kernel fires it 10 us after the
// switch-in, wherever the thread then is: that late sample is skipped
// (switch_late), and the run time it stood for is taken as an owed sample
// at a later switch-out, in a blocking call. It also counts the switch-ins
// whose restart of the sample timer programs nothing (timer_balance).
// It does not apply when perf swaps the contexts of two threads of the
// target instead of stopping the event (contexts cloned from one parent).
SEC("tp_btf/sched_switch")
int switch_fix(__u64 *ctx)
{
	struct task_struct *prev = (void *)ctx[1], *next = (void *)ctx[2];

	if (!period_ns)
		return 0;
	// current is prev here: the cheapest test for the many switches of
	// other processes.
	int prev_target = bpf_get_current_pid_tgid() >> 32 == target_tgid;
	if (!prev_target && next->tgid != target_tgid)
		return 0;
	__u32 zero = 0;
	struct health_counters *h = bpf_map_lookup_elem(&health, &zero);
	if (!h)
		return 0;
	struct perf_event_context *pc = prev->perf_event_ctxp;
	struct perf_event_context *nc = next->perf_event_ctxp;
	if (pc && nc && pc->parent_ctx && pc->parent_ctx == nc->parent_ctx)
		return 0; // contexts swapped, the event keeps running
	if (next->tgid == target_tgid)
		switch_in(next, h);
	if (!prev_target)
		return 0;
	__u32 tid = prev->pid;
	__u64 sum = prev->se.sum_exec_runtime;
	struct thread_state *t = bpf_map_lookup_elem(&threads, &tid);
	if (!t) {
		struct thread_state init = {.base = sum};
		bpf_map_update_elem(&threads, &tid, &init, BPF_NOEXIST);
		return 0;
	}
	__u64 ran = run_time(t, sum);
	struct perf_event *e = thread_event(prev, t);
	__u64 blind = timer_balance(prev, e, t, h, 0, 0);
	// Blind samples wait for their skip: until then they are not ahead.
	__u64 taken = t->taken - t->blind_skip;
	if (event_timer_left(e, bpf_ktime_get_ns()) < defer_slack_ns && !t->skip) {
		t->skip = 1;
		t->taken++;
		t->deferred++;
		h->switch_deferred++;
		return take_sample(ctx, NULL, h, target_tgid, tid, 1);
	}
	if (ran >= (taken + 1) * period_ns) {
		t->taken++;
		if (!t->dense_debt) {
			t->owed++;
			h->switch_owed++;
			return take_sample(ctx, NULL, h, target_tgid, tid, 1);
		}
		t->dense_debt--; // a dense sample counted this period
	} else if (taken * period_ns > ran + period_ns && !t->skip) {
		t->skip = 1;
		h->switch_surplus++;
	}
	if (blind) {
		blind_take(t, h);
		return take_sample(ctx, NULL, h, target_tgid, tid, 1);
	}
	return 0;
}


// Key of `offcpu_counts`: a thread, the stacks it left the CPU with, and
// how it left. 48 bytes, no padding.
struct offcpu_key {
	__u32 tgid;
	__u32 tid;
	char comm[16];
	__u64 user_hash;   // 0: no user stack
	__u64 kernel_hash; // 0: no kernel stack (not asked for, error or empty)
	__u32 voluntary;   // 1: it blocked (nvcsw); 0: it was preempted (nivcsw)
	__u32 _pad;
};

struct offcpu_value {
	__u64 ns;       // time off the CPU: from each switch-out to the switch-in
	__u64 switches; // switch-outs
};

// A target thread off the CPU: when it left and how (the key it is
// counted under once it is back).
struct offcpu_start {
	__u64 ts;
	struct offcpu_key key;
};

// Sized by the loader (1 entry without Options.OffCPU).
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct offcpu_key);
	__type(value, struct offcpu_value);
} offcpu_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct offcpu_start);
} offcpu_starts SEC(".maps");

// How a CFI rule finds the caller's frame (struct cfi_rule's cfa).
#define CFA_SP 1          // CFA = rsp + cfa_off
#define CFA_BP 2          // CFA = rbp + cfa_off
#define CFA_ROOT 3        // no caller: the thread's root (DW_CFA_undefined rip)
#define CFA_UNSUPPORTED 4 // a rule walk_cfi cannot follow

// The CFI row of one pc, reduced to what an x86-64 walk needs: the return
// address is at CFA-8 (user space checks it), rbp is saved at CFA+bp_off
// when bp_saved, else unchanged.
struct cfi_rule {
	__u32 cfa;
	__s32 cfa_off;
	__u32 bp_saved;
	__s32 bp_off;
};

// cfi_rules: the rules of the pcs walk_cfi met, by pc (the leaf's ip, a
// caller's return address - 1), put there by user space (Profiler.SetCFIRules)
// from the objects' .eh_frame. cfi_wanted: the pcs a walk stopped at for
// want of a rule, which user space reads (Profiler.CFIWanted), answers and
// deletes. A walk that stops so is counted (offcpu_cfi_missing); the rules
// of a process's hot blocking paths are known after a few round trips.
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, __u64);
	__type(value, struct cfi_rule);
} cfi_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, __u8);
} cfi_wanted SEC(".maps");

// The state of one walk_cfi, its frames in scratch_space's user stack.
struct cfi_walk {
	__u64 ip, sp, bp;
	__u32 depth;
	__u32 end; // 0 while walking; CFI_END_*
};

#define CFI_END_DONE 1        // a root, a zero return address, a failed read
#define CFI_END_MISSING 2     // a pc with no rule yet
#define CFI_END_UNSUPPORTED 3 // a rule the walk cannot follow

// cfi_step adds frame w->ip and finds its caller: by the pc's CFI rule when
// it is in a no-frame-pointer range, else by the frame pointer (return
// address at rbp+8, the caller's rbp at rbp) as bpf_get_stack does. It
// returns 1 to stop (bpf_loop's callback).
static long cfi_step(__u64 i, void *vw)
{
	struct cfi_walk *w = vw;
	__u32 zero = 0;
	struct sample *r = bpf_map_lookup_elem(&scratch_space, &zero);
	__u32 d = w->depth;

	if (!r || d >= MAX_DEPTH)
		return 1;
	r->user.ips[d] = w->ip;
	w->depth = d + 1;
	__u64 ra, bp = w->bp, sp;
	if (in_ranges(&nofp_ranges, w->ip)) {
		__u64 pc = d ? w->ip - 1 : w->ip; // a return address: the call's pc
		struct cfi_rule *rule = bpf_map_lookup_elem(&cfi_rules, &pc);
		if (!rule) {
			__u8 one = 1;
			bpf_map_update_elem(&cfi_wanted, &pc, &one, BPF_NOEXIST);
			w->end = CFI_END_MISSING;
			return 1;
		}
		__u64 cfa;
		if (rule->cfa == CFA_SP)
			cfa = w->sp + (__s64)rule->cfa_off;
		else if (rule->cfa == CFA_BP)
			cfa = w->bp + (__s64)rule->cfa_off;
		else {
			w->end = rule->cfa == CFA_ROOT ? CFI_END_DONE : CFI_END_UNSUPPORTED;
			return 1;
		}
		if (cfa <= w->sp || bpf_probe_read_user(&ra, sizeof(ra), (void *)(cfa - 8)) ||
		    (rule->bp_saved && bpf_probe_read_user(&bp, sizeof(bp), (void *)(cfa + (__s64)rule->bp_off)))) {
			w->end = CFI_END_DONE;
			return 1;
		}
		sp = cfa;
	} else {
		__u64 fr[2];
		if (w->bp < w->sp || bpf_probe_read_user(fr, sizeof(fr), (void *)w->bp)) {
			w->end = CFI_END_DONE;
			return 1;
		}
		bp = fr[0];
		ra = fr[1];
		sp = w->bp + 16;
	}
	if (!ra) {
		w->end = CFI_END_DONE;
		return 1;
	}
	w->ip = ra;
	w->sp = sp;
	w->bp = bp;
	return 0;
}

// walk_cfi walks the current task's user stack from its saved user
// registers into r->user (offcpu_cfi): through code without frame pointers
// by cfi_rules, elsewhere by frame pointers. It returns the depth, 0 when
// the leaf has a frame pointer, there are no user registers, or a pc on
// the way has no rule yet (asked for in cfi_wanted): then bpf_get_stack
// walks it as before.
static __always_inline __u32 walk_cfi(struct sample *r, struct health_counters *h)
{
	if (user_regs(NULL, r) || !in_ranges(&nofp_ranges, r->ip))
		return 0;
	struct cfi_walk w = {.ip = r->ip, .sp = r->sp, .bp = r->bp};
	bpf_loop(MAX_DEPTH, cfi_step, &w, 0);
	h->offcpu_cfi_walks++;
	if (w.end == CFI_END_MISSING) {
		// Not learnt yet: the frame-pointer walk, as without rules.
		h->offcpu_cfi_missing++;
		return 0;
	}
	if (w.end == CFI_END_UNSUPPORTED)
		h->offcpu_cfi_unsupported++;
	if (w.depth >= MAX_DEPTH && !w.end)
		h->truncated++;
	r->user.depth = w.depth;
	return w.depth;
}

static __always_inline void offcpu_add(struct offcpu_key *key, __u64 ns, struct health_counters *h)
{
	struct offcpu_value *v = bpf_map_lookup_elem(&offcpu_counts, key);
	if (!v) {
		struct offcpu_value init = {.ns = ns, .switches = 1};
		long err = bpf_map_update_elem(&offcpu_counts, key, &init, BPF_NOEXIST);
		if (!err)
			return;
		if (err != -EEXIST || !(v = bpf_map_lookup_elem(&offcpu_counts, key))) {
			h->offcpu_dropped++;
			return;
		}
	}
	__sync_fetch_and_add(&v->ns, ns);
	__sync_fetch_and_add(&v->switches, 1);
}

// offcpu_cost (with the switch fix) keeps the off-CPU program's own cost
// out of the on-CPU samples (docs/fidelity.md, "The off-CPU program's
// cost"). The scheduler charges everything that runs in __schedule after
// its clock update, this program included, to the thread switched in
// (next): when next is a target thread, the program's run time since t0
// is added to its prog_ns, which run_time leaves out of what the switch
// fix owes samples for. prev's per-thread sample timer still runs while
// the program walks prev's stack with interrupts off: a period that ended
// in that walk (timer left >= defer_slack_ns at t0, < at the end) fires
// only after prev's next switch-in, wherever it then is, and stands for
// the program's time; it is skipped, and not counted as taken.
static __always_inline void offcpu_cost(struct task_struct *prev, struct task_struct *next,
					__u64 t0, __s64 left0, int prev_target,
					struct health_counters *h)
{
	if (!period_ns || !h)
		return;
	__u64 now = bpf_ktime_get_ns();
	if (prev_target && left0 >= defer_slack_ns && sample_timer_left(prev, now) < defer_slack_ns) {
		__u32 ptid = prev->pid;
		struct thread_state *t = bpf_map_lookup_elem(&threads, &ptid);
		if (t) {
			t->skip++;
			t->prog_skipped++;
			h->offcpu_timer_skipped++;
		}
	}
	if (next->tgid != target_tgid || next->pid == 0)
		return;
	__u32 ntid = next->pid;
	__u64 d = bpf_ktime_get_ns() - t0;
	struct thread_state *t = bpf_map_lookup_elem(&threads, &ntid);
	if (!t) {
		// First seen here: its run time from now on, d included.
		struct thread_state init = {.base = next->se.sum_exec_runtime, .prog_ns = d};
		bpf_map_update_elem(&threads, &ntid, &init, BPF_NOEXIST);
	} else {
		__sync_fetch_and_add(&t->prog_ns, d);
	}
	h->offcpu_charged_ns += d;
}

// offcpu (Options.OffCPU): at each switch-out of a target thread it keeps
// the time, the thread's user (and kernel) stack and whether it blocked
// (prev_state other than TASK_RUNNING, not preempted: what the kernel
// counts in nvcsw, /proc's voluntary_ctxt_switches) or was preempted
// (nivcsw); at the thread's next switch-in it adds the time it was off the
// CPU and one switch to `offcpu_counts` under those stacks. A thread still
// off the CPU when the program stops is counted by the loader
// (Profiler.OffCPU). Arguments of sched_switch (Linux 5.18): preempt,
// prev, next, prev_state.
SEC("tp_btf/sched_switch")
int offcpu(__u64 *ctx)
{
	struct task_struct *prev = (void *)ctx[1], *next = (void *)ctx[2];
	__u32 zero = 0;
	// current is prev here.
	int prev_target = bpf_get_current_pid_tgid() >> 32 == target_tgid && prev->pid != 0;
	int next_target = next->tgid == target_tgid;

	if (!prev_target && !next_target)
		return 0;
	__u64 t0 = bpf_ktime_get_ns();
	__s64 left0 = 0;
	struct health_counters *h = bpf_map_lookup_elem(&health, &zero);
	if (!h)
		return 0;
	if (next_target) {
		__u32 ntid = next->pid;
		struct offcpu_start *st = bpf_map_lookup_elem(&offcpu_starts, &ntid);
		if (st) {
			__u64 d = t0 - st->ts;
			if (d < offcpu_min_ns)
				h->offcpu_short++;
			else
				offcpu_add(&st->key, d, h);
			long err = bpf_map_delete_elem(&offcpu_starts, &ntid);
			if (err)
				count_errno(h->offcpu_delete_err, err);
		}
	}
	if (!prev_target)
		goto out;
	if (period_ns)
		left0 = sample_timer_left(prev, t0);
	struct sample *r = bpf_map_lookup_elem(&scratch_space, &zero);
	if (!r)
		goto out;
	struct offcpu_start st = {};
	st.key.tgid = target_tgid;
	st.key.tid = prev->pid;
	bpf_probe_read_kernel_str(st.key.comm, sizeof(st.key.comm), prev->comm);
	st.key.voluntary = !(__u8)ctx[0] && (__u32)ctx[3] != 0;
	__u32 depth = 0;
	if (offcpu_cfi)
		depth = walk_cfi(r, h);
	if (!depth)
		depth = walk_stack(ctx, &r->user, BPF_F_USER_STACK, h->offcpu_user_err, h);
	if (store_stack(&r->user, depth, h, &st.key.user_hash))
		goto dropped;
	if (kernel_stacks) {
		depth = walk_stack(ctx, &r->kern, 0, h->offcpu_kernel_err, h);
		if (store_stack(&r->kern, depth, h, &st.key.kernel_hash))
			goto dropped;
	}
	st.ts = t0;
	long err = bpf_map_update_elem(&offcpu_starts, &st.key.tid, &st, BPF_NOEXIST);
	if (err == -EEXIST) {
		h->offcpu_unended++;
		err = bpf_map_update_elem(&offcpu_starts, &st.key.tid, &st, BPF_ANY);
	}
	if (err)
		goto dropped;
	goto out;
dropped:
	h->offcpu_dropped++;
out:
	offcpu_cost(prev, next, t0, left0, prev_target, h);
	return 0;
}
