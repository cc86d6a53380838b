/* Desk native PTY helpers: spawn in a PTY with fork/exec done entirely in C, plus the few
 * calls the PTY host needs on the master side. See desk_pty.h for the contract. */
#define _GNU_SOURCE
#include "desk_pty.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

struct spawn_report {
    int stage;
    int err;
};

/* Child side after fork: only async-signal-safe calls from here on, because the parent
 * may have other threads (malloc or stdio locks could be held by a thread that no longer
 * exists in the child). Never returns. */
static void child_exec(int slave, int report_fd, char *const paths[], char *const argv[],
                       char *const envp[], const char *cwd)
{
    struct spawn_report report = {DESK_STAGE_SETUP, 0};
    struct sigaction dfl;
    int sig, i, last_err = ENOENT, saw_eacces = 0;

    /* Handlers do not survive exec, but ignored signals do (Python ignores SIGPIPE, for one),
     * so reset every disposition while all signals are still blocked, then unblock. */
    dfl.sa_handler = SIG_DFL;
    dfl.sa_flags = 0;
    sigemptyset(&dfl.sa_mask);
    for (sig = 1; sig < NSIG; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, &dfl, NULL) == 0)
            continue;
        /* glibc refuses its internal real-time signals (32, 33), yet an ignore of them
         * inherited from our parent would survive exec: reset them with the raw syscall.
         * An all-zero kernel sigaction is SIG_DFL, no flags, empty mask on every ABI. */
        {
            unsigned long kernel_action[4] = {0, 0, 0, 0};
            syscall(SYS_rt_sigaction, sig, kernel_action, NULL, sizeof(unsigned long));
        }
    }
    {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
    }

    /* slave and report_fd are >= 3 (see above_stdio), so the dup2 calls cannot clobber them.
     * New session, then make the slave our controlling terminal: pgid == sid == pid. */
    if (setsid() < 0 || ioctl(slave, TIOCSCTTY, 0) < 0)
        goto fail;
    if (dup2(slave, 0) < 0 || dup2(slave, 1) < 0 || dup2(slave, 2) < 0)
        goto fail;

    report.stage = DESK_STAGE_CHDIR;
    if (chdir(cwd) < 0)
        goto fail;

    /* Close every inherited fd except stdio and the report pipe (which is CLOEXEC and so
     * closes itself on a successful exec). close_range needs Linux 5.9; loop otherwise. */
    {
        int closed = -1;
#ifdef SYS_close_range
        closed = 0;
        if (report_fd > 3 && syscall(SYS_close_range, 3u, (unsigned)report_fd - 1, 0u) < 0)
            closed = -1;
        if (closed == 0 && syscall(SYS_close_range, (unsigned)report_fd + 1, ~0u, 0u) < 0)
            closed = -1;
#endif
        if (closed < 0) {
            struct rlimit lim;
            int fd, max_fd = 1 << 16;
            if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
                max_fd = lim.rlim_cur < (1u << 20) ? (int)lim.rlim_cur : 1 << 20;
            for (fd = 3; fd < max_fd; fd++)
                if (fd != report_fd)
                    close(fd);
        }
    }

    /* execvpe-style search over the candidates the parent resolved from env["PATH"]
     * (glibc's execvpe would search the parent's PATH, not the child's). */
    report.stage = DESK_STAGE_EXEC;
    for (i = 0; paths[i] != NULL; i++) {
        execve(paths[i], argv, envp);
        last_err = errno;
        if (errno == EACCES)
            saw_eacces = 1;
        else if (errno != ENOENT && errno != ENOTDIR && errno != ESTALE && errno != ENODEV &&
                 errno != ETIMEDOUT)
            break; /* a real error for an existing file: report it, as execvp does */
    }
    if (paths[0] != NULL && paths[1] != NULL && paths[i] == NULL)
        last_err = saw_eacces ? EACCES : ENOENT;
    errno = last_err;

fail:
    report.err = errno;
    while (write(report_fd, &report, sizeof report) < 0 && errno == EINTR)
        ;
    _exit(127);
}

/* fd moved to a number >= 3 (still CLOEXEC), or -1. The child dup2s onto 0..2, so the fds
 * it still needs afterwards must not live there (possible when the parent closed stdio). */
static int above_stdio(int fd)
{
    int moved, err;

    if (fd < 0 || fd >= 3)
        return fd;
    moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    err = errno;
    close(fd);
    errno = err;
    return moved;
}

/* Master and slave of a new PTY, both close-on-exec so no other fork in this process
 * (another thread) can inherit them; the master is also non-blocking from the start. */
static int open_pty_pair(int *master, int *slave, unsigned short cols, unsigned short rows)
{
    char name[128];
    struct winsize ws = {.ws_row = rows, .ws_col = cols};
    int m, s;

    m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
    if (m < 0)
        return errno;
    if (grantpt(m) < 0 || unlockpt(m) < 0 || ptsname_r(m, name, sizeof name) != 0)
        goto fail;
    s = above_stdio(open(name, O_RDWR | O_NOCTTY | O_CLOEXEC));
    if (s < 0)
        goto fail;
    /* Size set before the child exists, so its first ioctl(TIOCGWINSZ) is already right. */
    if (ioctl(s, TIOCSWINSZ, &ws) < 0) {
        int err = errno;
        close(s);
        close(m);
        return err;
    }
    *master = m;
    *slave = s;
    return 0;
fail: {
    int err = errno;
    close(m);
    return err;
}
}

int desk_pty_spawn(char *const paths[], char *const argv[], char *const envp[],
                   const char *cwd, unsigned short cols, unsigned short rows, int *master_fd,
                   int *pid, int *fail_stage)
{
    int master = -1, slave = -1, pipefd[2], err;
    sigset_t all, saved;
    pid_t child;
    struct spawn_report report;
    ssize_t n;

    *fail_stage = DESK_STAGE_PARENT;
    err = open_pty_pair(&master, &slave, cols, rows);
    if (err != 0)
        return err;
    /* The child reports setup/chdir/exec failures here; CLOEXEC makes a successful exec
     * close it, so EOF on the read end means "exec succeeded". */
    if (pipe2(pipefd, O_CLOEXEC) < 0) {
        err = errno;
        close(slave);
        close(master);
        return err;
    }
    if ((pipefd[1] = above_stdio(pipefd[1])) < 0) {
        err = errno;
        close(pipefd[0]);
        close(slave);
        close(master);
        return err;
    }

    /* Block signals across fork so no parent handler (e.g. Python's C-level handler that
     * writes to its wakeup fd) runs in the child before it resets dispositions. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &saved);
    child = fork();
    if (child == 0)
        child_exec(slave, pipefd[1], paths, argv, envp, cwd);
    err = errno;
    pthread_sigmask(SIG_SETMASK, &saved, NULL);

    close(slave);
    close(pipefd[1]);
    if (child < 0) {
        close(pipefd[0]);
        close(master);
        return err;
    }

    do
        n = read(pipefd[0], &report, sizeof report);
    while (n < 0 && errno == EINTR);
    close(pipefd[0]);
    if (n == 0) {
        *master_fd = master;
        *pid = child;
        return 0;
    }

    if (n < 0) {
        /* Cannot tell whether it exec'd: make sure it is not left running unsupervised. */
        err = errno;
        kill(child, SIGKILL);
    } else {
        /* It failed before exec and is exiting (an 8-byte pipe write is never partial). */
        err = n == (ssize_t)sizeof report && report.err != 0 ? report.err : EIO;
        if (n == (ssize_t)sizeof report)
            *fail_stage = report.stage;
    }
    while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
        ; /* reap now, so no zombie is left behind */
    close(master);
    return err;
}

ssize_t desk_pty_read(int fd, char *buf, size_t len)
{
    size_t total = 0;
    ssize_t n;

    /* The tty layer hands out at most ~4 KiB per read(2), so keep reading here while data
     * is there: one call from Python drains up to len bytes instead of one 4 KiB chunk. */
    while (total < len) {
        n = read(fd, buf + total, len - total);
        if (n > 0) {
            total += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (total > 0)
            break; /* report EAGAIN/EIO on the next call, after these bytes are consumed */
        return n == 0 ? -EIO : -errno;
    }
    return (ssize_t)total;
}

ssize_t desk_pty_write(int fd, const char *buf, size_t len)
{
    ssize_t n;

    do
        n = write(fd, buf, len);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return errno == EAGAIN ? 0 : -errno;
    return n;
}

int desk_pty_resize(int fd, unsigned short cols, unsigned short rows)
{
    struct winsize ws = {.ws_row = rows, .ws_col = cols};

    return ioctl(fd, TIOCSWINSZ, &ws) < 0 ? errno : 0;
}

int desk_pty_foreground_pgid(int fd)
{
    pid_t pgid = tcgetpgrp(fd);

    return pgid < 0 ? -errno : (int)pgid;
}

/* ----- printable ASCII scans ----------------------------------------------------------- */

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the word scans below take the lowest byte of a loaded word as the first"
#endif

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* High bit set in each byte of v that is outside 0x20-0x7e, counting from the lowest byte:
 * b - 0x20 has it for b < 0x20 (and b >= 0xa0), b + 1 for b >= 0x7f, b itself for b >= 0x80.
 * A borrow or carry between bytes starts only at a flagged byte and only moves up, so the
 * lowest flagged byte is exact (higher ones may be false: callers look at the lowest only). */
static inline uint64_t non_printable_bits(uint64_t v)
{
    return ((v - 0x20 * ONES) | (v + ONES) | v) & HIGHS;
}

static inline int printable(unsigned char b)
{
    return b >= 0x20 && b <= 0x7e;
}

size_t desk_printable_end(const unsigned char *buf, size_t start, size_t end)
{
    size_t i = start;
    uint64_t word, bits;

    while (i + 8 <= end) {
        memcpy(&word, buf + i, 8); /* an unaligned load */
        bits = non_printable_bits(word);
        if (bits)
            return i + (size_t)(__builtin_ctzll(bits) >> 3);
        i += 8;
    }
    while (i < end && printable(buf[i]))
        i++;
    return i;
}

size_t desk_printable_start(const unsigned char *buf, size_t start, size_t end)
{
    size_t i = end;
    uint64_t word;

    while (i >= start + 8) {
        memcpy(&word, buf + i - 8, 8);
        if (non_printable_bits(word))
            break; /* the flags above the lowest may be false: finish byte by byte */
        i -= 8;
    }
    while (i > start && printable(buf[i - 1]))
        i--;
    return i;
}
