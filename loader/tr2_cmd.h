/* tr2_cmd.h: tr2-bpf's -- CMD, the command it runs and traces.
 *
 * CMD is forked first, before tr2-bpf opens a file descriptor (destinations,
 * BPF objects, the ring buffer) or changes any of its own state (signal
 * handlers, SIGPIPE ignored, the RLIMIT_MEMLOCK that libbpf may raise), and
 * held before its exec until tracing is ready.  So CMD inherits exactly what
 * tr2-bpf was started with, as it would from the shell: file descriptors,
 * signal mask and dispositions, environment, resource limits, umask, cwd,
 * process group and terminal, nice value and scheduling; with -u USER, its
 * ids and four environment variables are USER's (tr2_cmd_start).
 */
#ifndef TR2_CMD_H
#define TR2_CMD_H

#include <stddef.h>
#include <sys/types.h>

struct tr2_cmd;

/* Forks the process that will run CMD: argv[0] (searched in PATH, as
 * execvp(3)) with the arguments argv (NULL-terminated), held before its exec
 * until tr2_cmd_release().  Call it before anything CMD must not inherit is
 * opened or changed.  argv[0] and user must stay valid until tr2_cmd_free().
 *
 * user: NULL, or -u's USER: a user name, else a decimal uid.  CMD then runs
 * with USER's uid and gid (real, effective and saved), the supplementary
 * groups of initgroups(3), and HOME, USER and LOGNAME from USER's passwd
 * entry in its environment (replaced where present, else added), SHELL too
 * when USER's login shell is one that /etc/shells lists (a service account's
 * nologin is not: SHELL is left as it was).  A uid without a passwd entry:
 * gid the same number, no supplementary groups, HOME=/, USER and LOGNAME the
 * number.  Everything else stays as tr2-bpf was started with.
 *
 * stdout_to_stderr: CMD's standard output is its standard error (a dup),
 * so that its output does not mix with trace lines that tr2-bpf writes to
 * its own standard output.
 *
 * Makes sure that SIGCHLD is not ignored in tr2-bpf (CMD keeps the
 * disposition it inherited), so that tr2_cmd_reap() can reap CMD.
 *
 * Returns NULL with a one-line reason in err (errlen bytes, no "tr2-bpf: "
 * prefix): user given when tr2-bpf is not root, an unknown user, pipe or
 * fork failed. */
struct tr2_cmd *tr2_cmd_start(char *const argv[], const char *user, int stdout_to_stderr, char *err,
			      size_t errlen);

/* The pid of CMD's process (> 0), the same before and after its exec. */
pid_t tr2_cmd_pid(const struct tr2_cmd *c);

/* Lets CMD's process exec CMD (after taking USER's ids with -u).  Returns 0,
 * or -1 with errno set (EPIPE: the process has already gone). */
int tr2_cmd_release(struct tr2_cmd *c);

/* Waits up to timeout_ms milliseconds (0: does not wait; -1: until it ends)
 * for CMD to end, and reaps it.  Returns 1 once it has ended, with *status
 * its exit status, or 128 + the number of the signal that ended it (as a
 * shell's $?); again 1 and the same status on later calls.  Returns 0 while
 * CMD runs, -1 with errno on an error of waitpid(2). */
int tr2_cmd_reap(struct tr2_cmd *c, int timeout_ms, int *status);

/* After CMD's process has ended (tr2_cmd_reap() returned 1): whether CMD
 * could not be run, with the reason as one line in err ("cannot run 'CMD':
 * No such file or directory", "cannot run 'CMD' as USER: setgroups: ...").
 * Returns 1 then (its status was 127 when CMD was not found, else 126), 0
 * when CMD ran.  Once. */
int tr2_cmd_failed(struct tr2_cmd *c, char *err, size_t errlen);

/* Frees c (NULL allowed); a CMD still running is left running, a CMD still
 * held ends without running (exit status 127). */
void tr2_cmd_free(struct tr2_cmd *c);

#endif
