/*
 * tr2_ancestry: a cmd_ancestry without names, for tests/e2e/cmd.sh.
 *
 *   tr2_ancestry       trace2_initialize(), trace2_cmd_start(),
 *                      trace2_cmd_ancestry(NULL) (tr2-bpf names the
 *                      ancestors; the in-process targets write no event),
 *                      exit 0.
 *   tr2_ancestry fork  the same in a child it forks, after the child's own
 *                      version, start and cmd_name; waits for it.
 */
#define TRACE2_EXE_VERSION "ancestry-1.0"
#include <trace2.h>

#include <stddef.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int run(char **argv)
{
	trace2_initialize();
	trace2_cmd_start((const char **)argv);
	trace2_cmd_ancestry(NULL);
	return trace2_cmd_exit(0);
}

int main(int argc, char **argv)
{
	pid_t pid;
	int status = 1;

	if (argc == 1)
		return run(argv);
	if (argc != 2 || strcmp(argv[1], "fork"))
		return 2;
	pid = fork();
	if (pid == 0)
		return run(argv);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
