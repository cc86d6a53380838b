/* Desk native PTY helpers (Linux). Built by native/pty_build.py into desktop.native._pty.
 *
 * Every function reports failure through errno values instead of touching Python, so the
 * Python layer (desktop/native/native_backend.py) decides which exception to raise. */
#ifndef DESK_PTY_H
#define DESK_PTY_H

#include <sys/types.h>

/* Which step of desk_pty_spawn failed (written to *fail_stage). */
#define DESK_STAGE_PARENT 0 /* openpty/pipe/fork in the parent */
#define DESK_STAGE_SETUP 1  /* setsid / controlling terminal / stdio in the child */
#define DESK_STAGE_CHDIR 2  /* chdir(cwd) in the child */
#define DESK_STAGE_EXEC 3   /* execve of every candidate path failed */

/* Start a child in a new session whose controlling terminal is a fresh PTY.
 * paths: NULL-terminated candidate executables, tried in order like execvp does;
 * argv/envp: NULL-terminated, passed unchanged to execve.
 * Returns 0 and sets *master_fd (O_NONBLOCK | O_CLOEXEC) and *pid once the child has
 * exec'd, or an errno value with *fail_stage set; a failed child is already reaped. */
int desk_pty_spawn(char *const paths[], char *const argv[], char *const envp[],
                   const char *cwd, unsigned short cols, unsigned short rows, int *master_fd,
                   int *pid, int *fail_stage);

/* Read until buf is full or nothing more is available. Returns the bytes read (> 0),
 * or -errno when nothing was read (-EAGAIN: no data yet, -EIO: slave side gone). */
ssize_t desk_pty_read(int fd, char *buf, size_t len);

/* One non-blocking write. Returns bytes accepted (0 when the input queue is full), or -errno. */
ssize_t desk_pty_write(int fd, const char *buf, size_t len);

/* TIOCSWINSZ on the master; the kernel sends SIGWINCH to the foreground group. 0 or errno. */
int desk_pty_resize(int fd, unsigned short cols, unsigned short rows);

/* Foreground process group of the terminal (tcgetpgrp on the master), or -errno. */
int desk_pty_foreground_pgid(int fd);

/* Byte scans the PTY host's screen model runs over every output byte (C speed, 8 bytes per
 * step): printable ASCII means 0x20-0x7e. */

/* The index of the first byte of buf[start:end) that is not printable ASCII, or end. */
size_t desk_printable_end(const unsigned char *buf, size_t start, size_t end);

/* Where the printable ASCII bytes that end at buf[end - 1] begin (start at the earliest). */
size_t desk_printable_start(const unsigned char *buf, size_t start, size_t end);

#endif
