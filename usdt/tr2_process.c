/*
 * Process lifetime: trace2_initialize()'s atexit and signal handlers, and the
 * exit code trace2_cmd_exit() stores for the "atexit" event.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>

#include "tr2_runtime.h"

/* Signals that kill a process by default and that a program commonly dies of
 * while being watched. */
static const int fatal_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE };

/* The action each fatal signal had before trace2_initialize(), to chain to. */
static struct sigaction previous_action[NSIG];

static int stored_exit_code;

int trace2__set_exit_code(int exit_code)
{
	__atomic_store_n(&stored_exit_code, exit_code, __ATOMIC_RELAXED);
	return exit_code;
}

static void emit_atexit(void)
{
	if (TRACE2__ON(atexit))
		trace2__atexit(TRACE2__SITE, __atomic_load_n(&stored_exit_code, __ATOMIC_RELAXED));
}

static void on_fatal_signal(int signo, siginfo_t *info, void *context)
{
	const struct sigaction *previous = &previous_action[signo];
	int saved_errno = errno;

	if (TRACE2__ON(signal))
		trace2__signal(TRACE2__SITE, signo);

	if (previous->sa_handler == SIG_DFL) {
		/* Die of the signal as if we had never been here: the signal
		 * is blocked while we run, so it lands as soon as we return. */
		sigaction(signo, previous, NULL);
		raise(signo);
	} else if (previous->sa_flags & SA_SIGINFO) {
		previous->sa_sigaction(signo, info, context);
	} else {
		previous->sa_handler(signo);
	}
	errno = saved_errno;
}

static void install_signal_handler(int signo)
{
	struct sigaction action = { 0 };

	if (sigaction(signo, NULL, &previous_action[signo]) != 0)
		return;
	/* An ignored signal kills nobody; catching it would change the program. */
	if (previous_action[signo].sa_handler == SIG_IGN)
		return;
	action.sa_sigaction = on_fatal_signal;
	action.sa_mask = previous_action[signo].sa_mask;
	action.sa_flags = SA_SIGINFO | SA_RESTART |
			  (previous_action[signo].sa_flags & SA_ONSTACK);
	sigaction(signo, &action, NULL);
}

int trace2__initialize(void)
{
	static int initialized;
	size_t i;

	/* Once: a second round would chain our handler to itself. */
	if (__atomic_exchange_n(&initialized, 1, __ATOMIC_ACQ_REL))
		return 0;
	tr2_inproc_init();
	atexit(emit_atexit);
	for (i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++)
		install_signal_handler(fatal_signals[i]);
	return 1;
}
