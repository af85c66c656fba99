/*
 * Faults inside one process, preloaded (LD_PRELOAD) into a node's JVM by the chaos harness, which
 * compiles this file with the machine's C compiler. What it does is what the control file
 * RATCHET_FAULTS_CONTROL says now (32 ASCII bytes, rewritten in place by the harness):
 *
 *   byte 0       '0'  the disk works: every call goes straight through
 *                'S'  a slow disk: fsync and fdatasync sleep the milliseconds in bytes 1..15 first
 *                'E'  a failing disk: fsync, fdatasync and writes fail with EIO
 *   bytes 16..31      the wall clock's step: a sign and 15 digits of seconds, added to what
 *                     clock_gettime(CLOCK_REALTIME...) and gettimeofday answer; the monotonic clock is
 *                     left alone, as a real step of the wall clock leaves it
 *
 * Disk faults touch only regular files under RATCHET_FAULTS_DIR (the node's storage), never sockets.
 * The control file is mapped, not read, so a call costs a byte load while nothing is wrong. Without
 * both variables, or when the control file cannot be mapped, the library does nothing.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define CONTROL_BYTES 32
#define CLOCK_AT 16

static volatile const char *control;
static char dir[PATH_MAX];
static size_t dir_len;

static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static int (*real_clock_gettime)(clockid_t, struct timespec *);
static int (*real_gettimeofday)(struct timeval *, void *);

__attribute__((constructor)) static void init(void) {
    real_fsync = dlsym(RTLD_NEXT, "fsync");
    real_fdatasync = dlsym(RTLD_NEXT, "fdatasync");
    real_write = dlsym(RTLD_NEXT, "write");
    real_pwrite = dlsym(RTLD_NEXT, "pwrite");
    real_pwrite64 = dlsym(RTLD_NEXT, "pwrite64");
    real_writev = dlsym(RTLD_NEXT, "writev");
    real_clock_gettime = dlsym(RTLD_NEXT, "clock_gettime");
    real_gettimeofday = dlsym(RTLD_NEXT, "gettimeofday");
    const char *path = getenv("RATCHET_FAULTS_CONTROL");
    const char *under = getenv("RATCHET_FAULTS_DIR");
    if (path == NULL || under == NULL || strlen(under) == 0 || strlen(under) >= sizeof dir) {
        return;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return;
    }
    void *mapped = mmap(NULL, CONTROL_BYTES, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (mapped == MAP_FAILED) {
        return;
    }
    strcpy(dir, under);
    dir_len = strlen(dir);
    control = mapped;
}

static char mode(void) {
    return control == NULL ? '0' : control[0];
}

/* Whether fd is a regular file under the faulty directory. */
static int under_dir(int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        return 0;
    }
    char link[64];
    char target[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n < (ssize_t) dir_len) {
        return 0;
    }
    target[n] = 0;
    return strncmp(target, dir, dir_len) == 0 && (target[dir_len] == '/' || target[dir_len] == 0);
}

/* The digits from byte `from` up to `to`. */
static long number(int from, int to) {
    long n = 0;
    for (int i = from; i < to && control[i] >= '0' && control[i] <= '9'; i++) {
        n = n * 10 + (control[i] - '0');
    }
    return n;
}

static void stall(void) {
    long ms = number(1, CLOCK_AT);
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {
    }
}

/* What a sync call on fd does now: 0 go on, -1 fail with EIO. */
static int sync_fault(int fd) {
    char m = mode();
    if (m == '0' || !under_dir(fd)) {
        return 0;
    }
    if (m == 'S') {
        stall();
        return 0;
    }
    if (m == 'E') {
        errno = EIO;
        return -1;
    }
    return 0;
}

static int write_fault(int fd) {
    if (mode() == 'E' && under_dir(fd)) {
        errno = EIO;
        return -1;
    }
    return 0;
}

int fsync(int fd) {
    return sync_fault(fd) != 0 ? -1 : real_fsync(fd);
}

int fdatasync(int fd) {
    return sync_fault(fd) != 0 ? -1 : real_fdatasync(fd);
}

ssize_t write(int fd, const void *buf, size_t count) {
    return write_fault(fd) != 0 ? -1 : real_write(fd, buf, count);
}

ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset) {
    return write_fault(fd) != 0 ? -1 : real_pwrite(fd, buf, count, offset);
}

ssize_t pwrite64(int fd, const void *buf, size_t count, off_t offset) {
    return write_fault(fd) != 0 ? -1 : real_pwrite64(fd, buf, count, offset);
}

ssize_t writev(int fd, const struct iovec *iov, int iovcnt) {
    return write_fault(fd) != 0 ? -1 : real_writev(fd, iov, iovcnt);
}

/* The wall clock's step now, in seconds. */
static long step(void) {
    if (control == NULL || (control[CLOCK_AT] != '+' && control[CLOCK_AT] != '-')) {
        return 0;
    }
    long s = number(CLOCK_AT + 1, CONTROL_BYTES);
    return control[CLOCK_AT] == '-' ? -s : s;
}

int clock_gettime(clockid_t id, struct timespec *t) {
    if (real_clock_gettime == NULL) {
        real_clock_gettime = dlsym(RTLD_NEXT, "clock_gettime");
    }
    int r = real_clock_gettime(id, t);
    if (r == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) {
        t->tv_sec += step();
    }
    return r;
}

int gettimeofday(struct timeval *t, void *zone) {
    if (real_gettimeofday == NULL) {
        real_gettimeofday = dlsym(RTLD_NEXT, "gettimeofday");
    }
    int r = real_gettimeofday(t, zone);
    if (r == 0) {
        t->tv_sec += step();
    }
    return r;
}
