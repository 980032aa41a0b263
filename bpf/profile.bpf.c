//go:build ignore

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
//
// profile.bpf.c: an on-CPU stack sampler for flamediff, attached to one
// cpu-clock perf event per CPU. Every sample of the target process is
// aggregated in the kernel: the user (and optionally kernel) stack is stored
// once in `stacks`, keyed by a 64-bit FNV-1a hash of its frames, and
// `counts` counts samples per {tgid, tid, comm, user hash, kernel hash}.
// `health` counts what happened to every sample, so user space can tell an
// empty profile from a broken one. See doc.go for the design.
//
// Only uapi headers are used (linux-libc-dev, libbpf-dev): no vmlinux.h, no
// CO-RE; the program never reads kernel structures, it only passes its
// context to helpers.

#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/errno.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

// Frames per stack: the kernel's default kernel.perf_event_max_stack.
#define MAX_DEPTH 127
// Errno buckets per stack kind: errno e < ERRNO_BUCKETS-1 is counted in
// bucket e, larger ones in the last bucket.
#define ERRNO_BUCKETS 64

#define FNV_OFFSET 14695981039346656037ULL
#define FNV_PRIME 1099511628211ULL

// A stack as stored in `stacks`: depth frames, leaf first.
struct stack {
	__u32 depth;
	__u32 _pad;
	__u64 ips[MAX_DEPTH];
};

// Per-CPU scratch space: a stack is 1 KiB, too big for the 512-byte BPF
// stack.
struct scratch {
	struct stack user;
	struct stack kern;
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
};

// Set by the loader before loading.
const volatile __u32 target_tgid = 0;   // 0: every process
const volatile __u32 kernel_stacks = 0; // 1: also take kernel stacks

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch_space SEC(".maps");

// Not preallocated by default: a preallocated 65536 x 1 KiB map would pin
// 64 MiB for stacks that mostly never come. The price: an insert in
// interrupt context can find the kernel's per-CPU element cache empty and
// fail with -ENOMEM (seen on a CPU's first samples, when the user and the
// kernel stack are both new); that sample is dropped and counted. The loader
// clears the flag on request (Options.PreallocStacks) and on kernels (< 6.1)
// that refuse non-preallocated maps in perf_event programs.
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

// take_stack fills st with one stack and stores it in `stacks`, setting *out
// to the stack's hash (0 when there is no stack). It returns 0, or the
// negative error of the stacks insert when the sample must be dropped.
static __always_inline long take_stack(struct bpf_perf_event_data *ctx, struct stack *st,
				       __u64 flags, __u64 *errs, struct health_counters *h, __u64 *out)
{
	long n = bpf_get_stack(ctx, st->ips, sizeof(st->ips), flags);

	*out = 0;
	if (n < 0) {
		count_errno(errs, n);
		return 0;
	}
	__u32 depth = (__u64)n / sizeof(__u64);
	if (depth == 0)
		return 0;
	if (depth >= MAX_DEPTH) {
		depth = MAX_DEPTH;
		h->truncated++;
	}
	st->depth = depth;

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

SEC("perf_event")
int profile(struct bpf_perf_event_data *ctx)
{
	__u32 zero = 0;
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	__u32 tid = (__u32)id;

	struct health_counters *h = bpf_map_lookup_elem(&health, &zero);
	if (!h)
		return 0;
	if (tid == 0) {
		h->idle++;
		return 0;
	}
	if (target_tgid && tgid != target_tgid)
		return 0;
	h->samples++;

	struct scratch *s = bpf_map_lookup_elem(&scratch_space, &zero);
	if (!s)
		return 0;

	struct count_key key = {};
	key.tgid = tgid;
	key.tid = tid;
	bpf_get_current_comm(key.comm, sizeof(key.comm));

	long err = take_stack(ctx, &s->user, BPF_F_USER_STACK, h->user_err, h, &key.user_hash);
	if (err)
		goto stack_dropped;
	if (kernel_stacks) {
		err = take_stack(ctx, &s->kern, 0, h->kernel_err, h, &key.kernel_hash);
		if (err)
			goto stack_dropped;
	}

	__u64 *c = bpf_map_lookup_elem(&counts, &key);
	if (!c) {
		__u64 one = 1;
		err = bpf_map_update_elem(&counts, &key, &one, BPF_NOEXIST);
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
	__sync_fetch_and_add(c, 1);
	return 0;

stack_dropped:
	h->map_full++;
	if (err == -E2BIG)
		h->stack_map_full++;
	else
		h->stack_nomem++;
	return 0;
}
