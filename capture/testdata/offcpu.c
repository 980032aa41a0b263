// offcpu.c: a program whose threads wait off the CPU for known times, the
// truth of capture's off-CPU test (TestOffCPUTruth). Each waiting function
// measures its own time off the CPU (CLOCK_MONOTONIC around the blocking
// call less the thread's CLOCK_THREAD_CPUTIME_ID over it) into a
// shared counter file: argv[1], nine uint64s (path_a ns and calls, path_b
// ns and calls, consume_wait ns and calls, then the CLOCK_MONOTONIC start
// of the call of path_a, path_b and consume_wait in progress, 0 when
// none: a reader counts a call in progress up to the time it chooses).
//
//   sleeper   alternates path_a (nanosleep 2 ms) and path_b (6 ms)
//   producer  sleeps 1 ms, then writes a byte to a pipe
//   consumer  waits in consume_wait for the byte (read on the pipe)
//   spinner   never blocks: it is preempted (involuntary switches)
//
// Every thread runs on one CPU (the last one the program may use), so
// that the spinner is preempted whenever another thread wakes.
// Built with gcc -O0 -fno-omit-frame-pointer: frame-pointer stacks.
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static uint64_t *counters;
static int pfd[2];

static uint64_t now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

// cpu is the calling thread's CPU time: a call's wall-clock time less it
// is its time off the CPU.
static uint64_t cpu(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void sleep_us(long us)
{
	struct timespec t = {us / 1000000, (us % 1000000) * 1000};
	while (nanosleep(&t, &t))
		;
}

// begin notes the start of a call of path i (0 path_a, 1 path_b, 2
// consume_wait) and returns it.
static uint64_t begin(int i)
{
	uint64_t t = now();
	__atomic_store_n(&counters[6 + i], t, __ATOMIC_RELEASE);
	return t;
}

// end counts a call of path i that began at t with the thread's CPU time
// at c: its time off the CPU. The thread's CPU time is read before the
// wall-clock time, and at the start after it, so that a preemption at the
// return of cpu()'s system call, common under load, falls inside the
// call's time off the CPU, as it falls inside the function for a sampler.
static void end(int i, uint64_t t, uint64_t c)
{
	uint64_t cc = cpu();
	uint64_t ns = (now() - t) - (cc - c);
	__atomic_add_fetch(&counters[2 * i], ns, __ATOMIC_RELAXED);
	__atomic_add_fetch(&counters[2 * i + 1], 1, __ATOMIC_RELAXED);
	__atomic_store_n(&counters[6 + i], 0, __ATOMIC_RELEASE);
}

__attribute__((noinline)) void path_a(void)
{
	uint64_t t = begin(0), c = cpu();
	sleep_us(2000);
	end(0, t, c);
}

__attribute__((noinline)) void path_b(void)
{
	uint64_t t = begin(1), c = cpu();
	sleep_us(6000);
	end(1, t, c);
}

// read_byte keeps a frame between libc's read, which has none, and
// consume_wait: a frame-pointer walk from read's system call skips the
// caller of read.
__attribute__((noinline)) static void read_byte(void)
{
	char c;
	if (read(pfd[0], &c, 1) != 1)
		exit(1);
}

__attribute__((noinline)) void consume_wait(void)
{
	uint64_t t = begin(2), c = cpu();
	read_byte();
	end(2, t, c);
}

__attribute__((noinline)) void produce(void)
{
	sleep_us(1000);
	if (write(pfd[1], "x", 1) != 1)
		exit(1);
}

static void *sleeper(void *arg)
{
	pthread_setname_np(pthread_self(), "sleeper");
	for (;;) {
		path_a();
		path_b();
	}
	return arg;
}

static void *consumer(void *arg)
{
	pthread_setname_np(pthread_self(), "consumer");
	for (;;)
		consume_wait();
	return arg;
}

static void *producer(void *arg)
{
	pthread_setname_np(pthread_self(), "producer");
	for (;;)
		produce();
	return arg;
}

__attribute__((noinline)) void spin(void)
{
	for (volatile uint64_t i = 0;; i++)
		;
}

static void *spinner(void *arg)
{
	pthread_setname_np(pthread_self(), "spinner");
	spin();
	return arg;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: offcpu COUNTER-FILE\n");
		return 2;
	}
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, 9 * sizeof(uint64_t)))
		return 1;
	counters = mmap(NULL, 9 * sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (counters == MAP_FAILED || pipe(pfd))
		return 1;
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	int last = -1;
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set))
			last = i;
	CPU_ZERO(&set);
	CPU_SET(last, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) // inherited by the threads
		return 1;
	pthread_t t;
	void *(*fns[])(void *) = {sleeper, consumer, producer, spinner};
	for (int i = 0; i < 4; i++)
		if (pthread_create(&t, NULL, fns[i], NULL))
			return 1;
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
