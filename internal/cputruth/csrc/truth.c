// truth: programs whose true CPU per function is known, for checking what
// a sampler says against it. Each function that does work measures its
// own CPU time and adds it to a counter in a shared file, so that a reader
// can take the counters at the start and the end of a sampling window and
// get the CPU each function used in it.
//
//	truth FILE SCENARIO [ARGS...]
//
// Scenarios (microseconds):
//	steady                two threads that never block: work_a 1000 and
//	                      work_b 3000 in one, work_b 2000 in the other
//	bursty BURST SLEEP    one thread: after_wakeup BURST, before_sleep
//	                      BURST, then sleeps SLEEP (0: no sleep)
//	bursty-jitter BURST SLEEP
//	                      the same, each burst and sleep drawn from
//	                      0.5 to 1.5 times BURST and SLEEP
//	syscalls              one thread: work_a 100 in user code, then
//	                      syswork 100 in system calls
//	syscalls-jitter       the same, each drawn from 50 to 150
//	pingpong A B          two threads hand work through pipes:
//	                      produce A in one, consume B in the other, each
//	                      waits for the other's byte
//
// The file holds a header ("TRUTH3", the number of counters, the cost of
// one thread clock read in nanoseconds) and, per counter, a 32-byte
// NUL-padded function name, the nanoseconds and the calls (little-endian
// uint64). Each function has two counters: its own name (the time on the
// CPU from its entry to its exit, calls counted) and NAME@thread (the
// thread clock's figure, calls 0); see account. The program prints
// "ready" once its threads run, and runs until killed.
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { F_WORK_A, F_WORK_B, F_AFTER_WAKEUP, F_BEFORE_SLEEP, F_PRODUCE, F_CONSUME, F_SYSWORK, NFUNCS };
static const char *names[NFUNCS] = {"work_a", "work_b", "after_wakeup", "before_sleep", "produce", "consume", "syswork"};

struct counter {
	char name[32];
	uint64_t ns, calls;
};
struct shared {
	char magic[8];
	uint64_t n;
	// clock_ns is what one thread_ns() call costs as its own clock sees
	// it, warm: a function's thread clock interval starts inside its
	// first read and ends inside its last, so it misses about one read,
	// while samples in both reads are the function's (see account).
	uint64_t clock_ns;
	struct counter c[2 * NFUNCS];
};
static struct shared *sh;
static double iters_per_ns;
static double syscalls_per_ns; // getppid calls per nanosecond (calibrate)
volatile uint64_t sink;

static uint64_t thread_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

// spin burns about ns nanoseconds of CPU without a call or a syscall, so
// that every sample inside it has the caller as its leaf's parent.
__attribute__((noinline)) static void spin(uint64_t ns) {
	uint64_t n = (uint64_t)(ns * iters_per_ns);
	for (uint64_t i = 0; i < n; i++)
		sink += i;
}

static uint64_t mono_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

// account adds a call of function f to its counters: t0 is the thread
// clock (CLOCK_THREAD_CPUTIME_ID) and m0 CLOCK_MONOTONIC at the call's
// start.
//
// The thread clock's interval starts inside its first read and ends inside
// its last, so it misses about one read of the call's own time, and it
// adds the read's usual cost (clock_ns, calibrated warm). That is short of
// the truth after a wake-up: the first read of a thread clock whose caches
// went cold costs 0.2-0.4 us more than the calibration (on these VMs,
// more when other processes ran meanwhile), 1-2% of a 20 us burst. So the
// function's counter takes CLOCK_MONOTONIC from before the first read to
// after the last (its own reads cost 30 ns, in user space): the time on
// the CPU inside the call, as long as the thread stayed on the CPU. When
// it did not (more than 5 us past the thread clock's figure: preempted,
// or a sample's interrupt), the thread clock's figure stands. NAME@thread
// keeps the thread clock's figure of every call, for comparison
// (cputruth's TestClocksAgree).
static void account(int f, uint64_t t0, uint64_t m0) {
	uint64_t d = thread_ns() - t0 + sh->clock_ns;
	uint64_t w = mono_ns() - m0;
	if (w > d + 5000)
		w = d;
	__atomic_add_fetch(&sh->c[f].ns, w, __ATOMIC_RELAXED);
	__atomic_add_fetch(&sh->c[f].calls, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&sh->c[NFUNCS + f].ns, d, __ATOMIC_RELAXED);
}

#define WORKFN(fn, id)                           \
	__attribute__((noinline)) void fn(uint64_t ns) { \
		uint64_t m0 = mono_ns();                 \
		uint64_t t0 = thread_ns();               \
		spin(ns);                                \
		account(id, t0, m0);                     \
	}
WORKFN(work_a, F_WORK_A)
WORKFN(work_b, F_WORK_B)
WORKFN(after_wakeup, F_AFTER_WAKEUP)
WORKFN(before_sleep, F_BEFORE_SLEEP)
WORKFN(produce, F_PRODUCE)
WORKFN(consume, F_CONSUME)

static void calibrate(void) {
	iters_per_ns = 1;
	uint64_t best = UINT64_MAX;
	for (int r = 0; r < 5; r++) {
		uint64_t t0 = thread_ns();
		spin(20000000); // 20M iterations
		uint64_t d = thread_ns() - t0;
		if (d < best)
			best = d;
	}
	iters_per_ns = 20000000.0 / (double)best;
	best = UINT64_MAX;
	for (int r = 0; r < 5; r++) {
		uint64_t t0 = thread_ns();
		for (int i = 0; i < 20000; i++)
			syscall(SYS_getppid);
		uint64_t d = thread_ns() - t0;
		if (d < best)
			best = d;
	}
	syscalls_per_ns = 20000.0 / (double)best;
	// The median of back-to-back reads: one call each.
	enum { N = 2001 };
	static uint64_t d[N];
	for (int i = 0; i < N; i++) {
		uint64_t a = thread_ns();
		d[i] = thread_ns() - a;
	}
	for (int i = 1; i < N; i++)
		for (int j = i; j > 0 && d[j - 1] > d[j]; j--) {
			uint64_t t = d[j];
			d[j] = d[j - 1];
			d[j - 1] = t;
		}
	sh->clock_ns = d[N / 2];
}

static void sleep_us(uint64_t us) {
	struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000};
	while (nanosleep(&ts, &ts) != 0)
		;
}

static uint64_t arg1, arg2;
static int ping[2], pong[2];

static void *steady1(void *x) {
	for (;;) {
		work_a(1000 * 1000);
		work_b(3000 * 1000);
	}
	return x;
}
static void *steady2(void *x) {
	for (;;)
		work_b(2000 * 1000);
	return x;
}
static void *bursty(void *x) {
	for (;;) {
		after_wakeup(arg1 * 1000);
		before_sleep(arg1 * 1000);
		if (arg2)
			sleep_us(arg2);
	}
	return x;
}
// jitter returns n scaled by a factor drawn uniformly from [0.5, 1.5),
// from a per-thread xorshift state: bursts and sleeps that vary, so that a
// sampler's fixed period cannot keep meeting the same phase of the loop.
static uint64_t jitter(uint64_t *st, uint64_t n) {
	*st ^= *st << 13;
	*st ^= *st >> 7;
	*st ^= *st << 17;
	return n / 2 + (*st % 1000) * n / 1000;
}
static void *bursty_jitter(void *x) {
	uint64_t st = 88172645463325252ull;
	for (;;) {
		after_wakeup(jitter(&st, arg1 * 1000));
		before_sleep(jitter(&st, arg1 * 1000));
		if (arg2)
			sleep_us(jitter(&st, arg2));
	}
	return x;
}
// syswork spends about ns nanoseconds of CPU in system calls (getppid),
// as a number of calls calibrated at start (syscalls_per_ns), like spin's
// iterations. (It ran until the thread clock said ns: the clock counts the
// sampler's interrupts in the call, so a sample in syswork cost the loop
// nothing and one in work_a cost it the interrupt's time, and a 99 Hz
// sampler's phase in the loop drifted at two speeds; docs/fidelity.md,
// "Aliasing".)
__attribute__((noinline)) void syswork(uint64_t ns) {
	uint64_t m0 = mono_ns();
	uint64_t t0 = thread_ns();
	for (uint64_t i = 0, n = (uint64_t)(ns * syscalls_per_ns); i < n; i++)
		syscall(SYS_getppid);
	account(F_SYSWORK, t0, m0);
}
static void *syscalls(void *x) {
	for (;;) {
		work_a(100 * 1000);
		syswork(100 * 1000);
	}
	return x;
}
static void *syscalls_jitter(void *x) {
	uint64_t st = 88172645463325252ull;
	for (;;) {
		work_a(jitter(&st, 100 * 1000));
		syswork(jitter(&st, 100 * 1000));
	}
	return x;
}
static void *producer(void *x) {
	char b = 0;
	for (;;) {
		produce(arg1 * 1000);
		if (write(ping[1], &b, 1) != 1 || read(pong[0], &b, 1) != 1)
			exit(3);
	}
	return x;
}
static void *consumer(void *x) {
	char b = 0;
	for (;;) {
		if (read(ping[0], &b, 1) != 1)
			exit(3);
		consume(arg2 * 1000);
		if (write(pong[1], &b, 1) != 1)
			exit(3);
	}
	return x;
}

static void start(void *(*fn)(void *), const char *name) {
	pthread_t t;
	if (pthread_create(&t, 0, fn, 0) != 0) {
		perror("pthread_create");
		exit(1);
	}
	pthread_setname_np(t, name);
}

int main(int argc, char **argv) {
	if (argc < 3) {
		fprintf(stderr, "usage: truth FILE steady | bursty[-jitter] BURST_US SLEEP_US | pingpong A_US B_US | syscalls[-jitter]\n");
		return 2;
	}
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, sizeof(struct shared)) != 0) {
		perror(argv[1]);
		return 1;
	}
	sh = mmap(0, sizeof(struct shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (sh == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memcpy(sh->magic, "TRUTH3", 7);
	sh->n = 2 * NFUNCS;
	for (int i = 0; i < NFUNCS; i++) {
		strncpy(sh->c[i].name, names[i], sizeof sh->c[i].name - 1);
		snprintf(sh->c[NFUNCS + i].name, sizeof sh->c[i].name, "%s@thread", names[i]);
	}
	calibrate();
	const char *sc = argv[2];
	if (argc > 3)
		arg1 = strtoull(argv[3], 0, 10);
	if (argc > 4)
		arg2 = strtoull(argv[4], 0, 10);
	if (strcmp(sc, "steady") == 0) {
		start(steady1, "steady1");
		start(steady2, "steady2");
	} else if (strcmp(sc, "bursty") == 0 && argc == 5) {
		start(bursty, "bursty");
	} else if (strcmp(sc, "bursty-jitter") == 0 && argc == 5) {
		start(bursty_jitter, "bursty");
	} else if (strcmp(sc, "syscalls") == 0) {
		start(syscalls, "syscalls");
	} else if (strcmp(sc, "syscalls-jitter") == 0) {
		start(syscalls_jitter, "syscalls");
	} else if (strcmp(sc, "pingpong") == 0 && argc == 5) {
		if (pipe(ping) != 0 || pipe(pong) != 0) {
			perror("pipe");
			return 1;
		}
		start(producer, "producer");
		start(consumer, "consumer");
	} else {
		fprintf(stderr, "truth: unknown scenario or arguments: %s\n", sc);
		return 2;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
