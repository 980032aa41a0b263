#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>
#include <stdlib.h>

static char buf[4096];

__attribute__((noinline)) void net_write(int fd) { send(fd, buf, 2048, 0); }
__attribute__((noinline)) void net_read(int fd) { recv(fd, buf, sizeof buf, 0); }
__attribute__((noinline)) void log_write(int fd) { pwrite(fd, buf, 512, 0); }
__attribute__((noinline)) void log_sync(int fd) { fdatasync(fd); }

static const char *path;

static void *worker(void *arg) {
	(void)arg;
	int s[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, s);
	int f = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0;; i++) {
		net_write(s[0]);
		net_read(s[1]);
		log_write(f);
		if (i % 64 == 0)
			log_sync(f);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec >= 2)
			break;
	}
	return NULL;
}

int main(int argc, char **argv) {
	pthread_t th;
	path = argc > 1 ? argv[1] : "f.dat";
	if (pthread_create(&th, NULL, worker, NULL) != 0)
		exit(1);
	pthread_join(th, NULL);
	return 0;
}
