/*
 * tr2_allapi: calls every trace2.h API with fixed arguments, for the
 * end-to-end tests of tr2-bpf. Every run emits the same events in the same
 * order; only times, pids and the values of trace2_is_enabled() and of the
 * helper child's own events differ.
 *
 *   tr2_allapi [--wait-stdin]                    every API; exits 3 through
 *                                                trace2_cmd_exit(3)
 *   tr2_allapi --hostile [--wait-stdin] [-- ARG...]
 *                                                hostile strings: quotes,
 *                                                backslashes, control bytes,
 *                                                invalid UTF-8, a message
 *                                                longer than TRACE2_MSG_MAX,
 *                                                a thread name cut inside a
 *                                                UTF-8 sequence; exits 0
 *   tr2_allapi --child                           the helper the first mode
 *                                                spawns: version, start,
 *                                                cmd_name, exit 0, atexit
 *
 * --wait-stdin: after def_repo, prints "waiting\n" on stdout and blocks until
 * a line (or EOF) arrives on stdin, so a test can attach with -p PID and then
 * let the program continue. Ids assigned before the wait (repo_id 1) must
 * still match what the tracer sees after it.
 */
#define TRACE2_EXE_VERSION "allapi-1.0"
#include <trace2.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

TRACE2_DEFINE_TIMER(main_timer, "test", "timer1", 0);
TRACE2_DEFINE_TIMER(thread_timer, "test", "th_timer1", 1);
TRACE2_DEFINE_COUNTER(shared_counter, "test", "counter1", 1);

/* Hostile strings. Hex escapes end where a literal ends: "\x7f" " end". */
static const char hostile_quotes[] = "quotes: \"double\" 'single' `back`";
static const char hostile_backslash[] = "backslash: \\ \\\\ \\n \\u0000 C:\\dir\\";
static const char hostile_control[] =
	"control: \x01\x02\x03 tab\t nl\n cr\r esc\x1b[31m del\x7f" " end";
static const char hostile_bad_utf8[] =
	"bad utf8: \xff\xfe | \xc3\x28 | \xe2\x82 | \xf0\x9f\x98 | \xc0\xaf | \xed\xa0\x80 | \x80" " end";
static const char hostile_good_utf8[] = "good utf8: \xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80";
static const char hostile_percent[] = "percent: %s %d %n %%";
/* 30 ASCII bytes, then a 2-byte character that the 31-byte limit cuts. */
static const char hostile_thread_name[] =
	"q\"b\\t\tc\x01" "......................" "\xc3\xa9 tail";

TRACE2_DEFINE_TIMER(hostile_timer, "cat \"q\" \\", "name\t\x01", 0);
TRACE2_DEFINE_COUNTER(hostile_counter, "cat \"q\" \\", "name\t\x01", 1);

static void pause_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&t, NULL);
}

static void wait_for_stdin(void)
{
	char line[64];

	printf("waiting\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		line[0] = '\0';
}

/* Spawns child running exe_path with exec_argv, reaps it, returns its status. */
static int run_child(struct trace2_child *child, const char *exe_path,
		     const char **exec_argv, int report_ready)
{
	int status = -1;

	trace2_child_start(child);
	child->pid = fork();
	if (child->pid == 0) {
		if (child->cd && chdir(child->cd) != 0)
			_exit(126);
		execv(exe_path, (char **)exec_argv);
		_exit(127);
	}
	if (child->pid < 0) {
		perror("tr2_allapi: fork");
		exit(1);
	}
	if (report_ready)
		trace2_child_ready(child, "ready");
	if (waitpid(child->pid, &status, 0) == child->pid)
		status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	trace2_child_exit(child, status);
	return status;
}

/* Announces an exec of a program that does not exist, and its failure. */
static void failing_exec(const char *exe, const char **argv)
{
	int exec_id = trace2_exec(exe, argv);

	execv("/nonexistent/tr2-no-such-program", (char **)argv);
	trace2_exec_result(exec_id, -1);
}

static void *worker_thread(void *arg)
{
	int repo_id = *(int *)arg;
	int i;

	trace2_thread_start("worker");
	trace2_region_enter("test", "thread_work", repo_id);
	for (i = 0; i < 2; i++) {
		trace2_timer_start(thread_timer);
		pause_ms(1);
		trace2_timer_stop(thread_timer);
		trace2_counter_add(shared_counter, 7);
	}
	trace2_data_intmax("test", repo_id, "thread_items", 2);
	trace2_region_leave("test", "thread_work", repo_id);
	trace2_thread_exit();
	return NULL;
}

static void *hostile_thread(void *arg)
{
	trace2_thread_start(hostile_thread_name);
	trace2_region_enter(hostile_quotes, hostile_bad_utf8, 0);
	trace2_counter_add(hostile_counter, -1);
	trace2_region_leave(hostile_quotes, hostile_bad_utf8, 0);
	trace2_thread_exit();
	return arg;
}

static int run_all(char **argv, int wait_stdin)
{
	static const char *ancestry[] = { "bash", "tmux: server", "systemd", NULL };
	static const char *alias_argv[] = { "allapi", "--all", NULL };
	static const char *helper_argv[] = { "tr2_allapi", "--child", NULL };
	static const char *hook_argv[] = { "exit 2", NULL };
	static const char *hook_exec_argv[] = { "sh", "-c", "exit 2", NULL };
	static const char *exec_argv[] = { "tr2-no-such-program", "arg1", NULL };
	struct trace2_child helper = { .argv = helper_argv };
	struct trace2_child hook = {
		.child_class = "hook", .hook_name = "post-test", .cd = "/",
		.argv = hook_argv, .use_shell = 1,
	};
	pthread_t worker;
	int repo_id, i;

	trace2_initialize_clock();
	trace2_initialize();
	trace2_cmd_start((const char **)argv);
	trace2_cmd_path("/test/bin/tr2_allapi");
	trace2_cmd_ancestry(ancestry);
	trace2_cmd_name("allapi");
	trace2_cmd_mode("all");
	trace2_cmd_alias("aa", alias_argv);
	trace2_def_param("test.param", "value1");
	trace2_def_param_scope("test.scoped", "value2", "global");
	repo_id = trace2_def_repo("/test/worktree");

	if (wait_stdin)
		wait_for_stdin();

	trace2_data_intmax("test", 0, "is_enabled", trace2_is_enabled());

	/* Regions nested three deep, with every kind of data inside. */
	trace2_region_enter("test", "outer", repo_id);
	trace2_region_enter_printf("test", "middle", repo_id, "depth %d of %s", 2, "three");
	trace2_region_enter("test", "inner", 0);
	trace2_data_string("test", repo_id, "string_key", "string value");
	trace2_data_intmax("test", repo_id, "int_key", 42);
	trace2_data_intmax("test", 0, "intmax_max", INTMAX_MAX);
	trace2_data_intmax("test", 0, "intmax_min", INTMAX_MIN);
	trace2_data_json("test", repo_id, "json_key", "{\"a\":1,\"b\":[true,false,null],\"c\":\"x\"}");
	trace2_printf("printf %s %d %05.1f", "message", -7, 2.5);
	trace2_region_leave("test", "inner", 0);
	trace2_region_leave_printf("test", "middle", repo_id, "left %d", 2);
	trace2_region_leave("test", "outer", repo_id);

	/* timer1: 3 intervals on the main thread; counter1: 5 here + 2 * 7 on
	 * the worker; th_timer1: 2 intervals on the worker. */
	for (i = 0; i < 3; i++) {
		trace2_timer_start(main_timer);
		pause_ms(1);
		trace2_timer_stop(main_timer);
	}
	trace2_counter_add(shared_counter, 5);
	if (pthread_create(&worker, NULL, worker_thread, &repo_id) != 0) {
		perror("tr2_allapi: pthread_create");
		return 1;
	}
	pthread_join(worker, NULL);

	/* Child 0: this program as a helper, class unset ("?"), reported ready.
	 * Child 1: a hook run through the shell in "/", exiting 2. */
	run_child(&helper, "/proc/self/exe", helper_argv, 1);
	run_child(&hook, "/bin/sh", hook_exec_argv, 0);

	failing_exec("/nonexistent/tr2-no-such-program", exec_argv);

	trace2_cmd_error("simulated error: %s (%d)", "disk full", 28);
	return trace2_cmd_exit(3);
}

static int run_hostile(char **argv, int wait_stdin)
{
	static const char *ancestry[] = { hostile_quotes, hostile_bad_utf8, NULL };
	static const char *alias_argv[] = { hostile_quotes, hostile_control, "", NULL };
	static const char *child_argv[] = { hostile_bad_utf8, hostile_quotes, hostile_control, NULL };
	static const char *exec_argv[] = { hostile_control, hostile_backslash, NULL };
	struct trace2_child child = {
		.child_class = hostile_quotes, .hook_name = hostile_control,
		.cd = hostile_bad_utf8, .argv = child_argv,
	};
	static char long_message[TRACE2_MSG_MAX + 1000];
	static char huge_label[1 << 20];
	pthread_t thread;
	int repo_id;

	memset(long_message, 'x', sizeof(long_message) - 1);
	memset(huge_label, 'y', sizeof(huge_label) - 1);
	memcpy(long_message + sizeof(long_message) - 5, "END", 4);

	trace2_initialize();
	trace2_cmd_start((const char **)argv);
	trace2_cmd_path(hostile_control);
	trace2_cmd_ancestry(ancestry);
	trace2_cmd_name(hostile_quotes);
	trace2_cmd_mode(hostile_backslash);
	trace2_cmd_alias(hostile_bad_utf8, alias_argv);
	trace2_def_param(hostile_backslash, hostile_control);
	trace2_def_param_scope(hostile_quotes, hostile_bad_utf8, hostile_good_utf8);
	repo_id = trace2_def_repo(hostile_bad_utf8);

	if (wait_stdin)
		wait_for_stdin();

	trace2_region_enter(hostile_quotes, hostile_backslash, repo_id);
	trace2_region_enter_printf(hostile_control, hostile_bad_utf8, 0, "%s|%s",
				   hostile_percent, hostile_good_utf8);
	trace2_data_string(hostile_quotes, 0, hostile_control, hostile_bad_utf8);
	trace2_data_string("test", 0, "empty", "");
	trace2_data_string("test", 0, "null", NULL);
	trace2_data_intmax(hostile_backslash, 0, hostile_good_utf8, -1);
	trace2_data_json("test", 0, hostile_quotes,
			 "{\"s\":\"q\\\"b\\\\c\\u0001\\n\",\"u\":\"\xc3\xa9\",\"e\":\"\"}");
	trace2_printf("%s", hostile_control);
	trace2_printf("100%% done");
	trace2_printf("%s", long_message);
	/* A megabyte label, straight to the probe: the tracer cuts it. */
	trace2_region_enter("test", huge_label, 0);
	trace2_region_leave("test", huge_label, 0);
	trace2_timer_start(hostile_timer);
	trace2_timer_stop(hostile_timer);
	trace2_region_leave_printf(hostile_control, hostile_bad_utf8, 0, "%s", hostile_quotes);
	trace2_region_leave(hostile_quotes, hostile_backslash, repo_id);

	if (pthread_create(&thread, NULL, hostile_thread, NULL) != 0) {
		perror("tr2_allapi: pthread_create");
		return 1;
	}
	pthread_join(thread, NULL);

	/* The hostile cd is reported, not used: /bin/true runs from here. */
	trace2_child_start(&child);
	child.pid = fork();
	if (child.pid == 0) {
		execv("/bin/true", (char **)child_argv);
		_exit(127);
	}
	if (child.pid > 0) {
		int status = -1;

		waitpid(child.pid, &status, 0);
		trace2_child_ready(&child, "error");
		trace2_child_exit(&child, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}

	failing_exec(hostile_bad_utf8, exec_argv);

	trace2_cmd_error("%s", hostile_control);
	trace2_cmd_error("error \"%s\" \\ %d", hostile_bad_utf8, 1);
	return trace2_cmd_exit(0);
}

int main(int argc, char **argv)
{
	int wait_stdin = 0, hostile = 0;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--child")) {
			trace2_initialize();
			trace2_cmd_start((const char **)argv);
			trace2_cmd_name("allapi-child");
			return trace2_cmd_exit(0);
		} else if (!strcmp(argv[i], "--wait-stdin")) {
			wait_stdin = 1;
		} else if (!strcmp(argv[i], "--hostile")) {
			hostile = 1;
		} else if (!strcmp(argv[i], "--") && hostile) {
			break;
		} else {
			fprintf(stderr, "usage: tr2_allapi [--wait-stdin] [--hostile [-- ARG...]] | --child\n");
			return 2;
		}
	}
	return hostile ? run_hostile(argv, wait_stdin) : run_all(argv, wait_stdin);
}
