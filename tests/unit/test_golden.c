/* test_golden.c: whole lines of the three formats, and their BRIEF variants,
 * against what git 2.39.5 wrote for real commands (see unit.h).  Each test
 * names the command.  Lines git wrote with embedded newlines are the one
 * documented difference (tr2_quote.h): test_error_multiline. */
#include "unit.h"

/* git status */
#define SID_STATUS "20261121T202608.011966Z-H0a7c9cdf-P00000eef"
/* git -c alias.st=status st, and its child */
#define SID_ALIAS "20261121T202608.023796Z-H0a7c9cdf-P00000ef7"
#define SID_ALIAS_CHILD SID_ALIAS "/20261121T202608.025230Z-H0a7c9cdf-P00000ef8"

static const char *const argv_status[] = { "git", "status", NULL };

static void test_version(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_VERSION, SID_STATUS, "common-main.c", 50);

	ev.evt = "3";
	ev.exe = "2.39.5";
	NORMAL(ev, "20:26:08.012009",
	       "20:26:08.012009 common-main.c:50                  version 2.39.5\n");
	PERF(ev, "20:26:08.012028",
	     "20:26:08.012028 common-main.c:50             | d0 | main                     | version      |     |           |           |              | 2.39.5\n");
	EVENT(ev, "2026-11-21T20:26:08.012046Z",
	      "{\"event\":\"version\",\"sid\":\"20261121T202608.011966Z-H0a7c9cdf-P00000eef\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.012046Z\",\"file\":\"common-main.c\",\"line\":50,\"evt\":\"3\",\"exe\":\"2.39.5\"}\n");
}

static void test_start(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_START, SID_STATUS, "common-main.c", 51);

	ev.argv = argv_status;
	ev.has_t_abs = true;
	ev.t_abs_us = secs("0.000455");
	NORMAL(ev, "20:26:08.012057",
	       "20:26:08.012057 common-main.c:51                  start git status\n");
	PERF(ev, "20:26:08.012061",
	     "20:26:08.012061 common-main.c:51             | d0 | main                     | start        |     |  0.000455 |           |              | git status\n");
	EVENT(ev, "2026-11-21T20:26:08.012072Z",
	      "{\"event\":\"start\",\"sid\":\"20261121T202608.011966Z-H0a7c9cdf-P00000eef\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.012072Z\",\"file\":\"common-main.c\",\"line\":51,\"t_abs\":0.000455,\"argv\":[\"git\",\"status\"]}\n");
}

static void test_cmd_ancestry(void **state)
{
	static const char *const names[] = { "cap.sh", "bash", "bash", "bash", "memfd:sealed-91",
					     "process_api", NULL };
	struct tr2_ev ev = ev_new(TR2_EV_CMD_ANCESTRY, SID_STATUS, "compat/linux/procinfo.c", 170);

	ev.ancestry = names;
	NORMAL(ev, "20:26:08.012160",
	       "20:26:08.012160 compat/linux/procinfo.c:170       cmd_ancestry cap.sh <- bash <- bash <- bash <- memfd:sealed-91 <- process_api\n");
	PERF(ev, "20:26:08.012164",
	     "20:26:08.012164 compat/linux/procinfo.c:170  | d0 | main                     | cmd_ancestry |     |           |           |              | ancestry:[cap.sh bash bash bash memfd:sealed-91 process_api]\n");
	EVENT(ev, "2026-11-21T20:26:08.012169Z",
	      "{\"event\":\"cmd_ancestry\",\"sid\":\"20261121T202608.011966Z-H0a7c9cdf-P00000eef\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.012169Z\",\"file\":\"compat/linux/procinfo.c\",\"line\":170,\"ancestry\":[\"cap.sh\",\"bash\",\"bash\",\"bash\",\"memfd:sealed-91\",\"process_api\"]}\n");
}

static void test_def_repo(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_DEF_REPO, SID_STATUS, "repository.c", 136);

	ev.repo = 1;
	ev.worktree = "/tmp/o/r";
	NORMAL(ev, "20:26:08.012223",
	       "20:26:08.012223 repository.c:136                  worktree /tmp/o/r\n");
	PERF(ev, "20:26:08.012226",
	     "20:26:08.012226 repository.c:136             | d0 | main                     | def_repo     | r1  |           |           |              | worktree:/tmp/o/r\n");
	EVENT(ev, "2026-11-21T20:26:08.012231Z",
	      "{\"event\":\"def_repo\",\"sid\":\"20261121T202608.011966Z-H0a7c9cdf-P00000eef\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.012231Z\",\"file\":\"repository.c\",\"line\":136,\"repo\":1,\"worktree\":\"/tmp/o/r\"}\n");
}

static void test_cmd_name(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_CMD_NAME, SID_STATUS, "git.c", 461);

	ev.name = "status";
	ev.hierarchy = "status";
	NORMAL(ev, "20:26:08.012277",
	       "20:26:08.012277 git.c:461                         cmd_name status (status)\n");
	PERF(ev, "20:26:08.012280",
	     "20:26:08.012280 git.c:461                    | d0 | main                     | cmd_name     |     |           |           |              | status (status)\n");
	EVENT(ev, "2026-11-21T20:26:08.012284Z",
	      "{\"event\":\"cmd_name\",\"sid\":\"20261121T202608.011966Z-H0a7c9cdf-P00000eef\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.012284Z\",\"file\":\"git.c\",\"line\":461,\"name\":\"status\",\"hierarchy\":\"status\"}\n");
}

/* region_enter_printf at the top level, with a repository */
static void test_region_enter_msg(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_REGION_ENTER, SID_STATUS, "read-cache.c", 2443);

	ev.repo = 1;
	ev.category = "index";
	ev.label = "do_read_index";
	ev.msg = ".git/index";
	ev.has_t_abs = true;
	ev.t_abs_us = secs("0.000791");
	SKIPPED(tr2_tgt_normal, ev);
	PERF(ev, "20:26:08.012390",
	     "20:26:08.012390 read-cache.c:2443            | d0 | main                     | region_enter | r1  |  0.000791 |           | index        | label:do_read_index .git/index\n");
	EVENT(ev, "2026-11-21T20:26:08.012396Z",
	      "{\"event\":\"region_enter\",\"sid\":\"20261121T202608.011966Z-H0a7c9cdf-P00000eef\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.012396Z\",\"file\":\"read-cache.c\",\"line\":2443,\"repo\":1,\"nesting\":1,\"category\":\"index\",\"label\":\"do_read_index\",\"msg\":\".git/index\"}\n");
}

/* a nested region: 2 dots in PERF, "nesting":2 in EVENT */
static void test_region_nested(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_REGION_ENTER, SID_STATUS, "cache-tree.c", 628);

	ev.repo = 1;
	ev.category = "cache_tree";
	ev.label = "read";
	ev.nesting = 2;
	ev.has_t_abs = true;
	ev.t_abs_us = secs("0.000829");
	PERF(ev, "20:26:08.012427",
	     "20:26:08.012427 cache-tree.c:628             | d0 | main                     | region_enter | r1  |  0.000829 |           | cache_tree   | ..label:read\n");
	EVENT(ev, "2026-11-21T20:26:08.012433Z",
	      "{\"event\":\"region_enter\",\"sid\":\"20261121T202608.011966Z-H0a7c9cdf-P00000eef\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.012433Z\",\"file\":\"cache-tree.c\",\"line\":628,\"repo\":1,\"nesting\":2,\"category\":\"cache_tree\",\"label\":\"read\"}\n");

	ev = ev_new(TR2_EV_REGION_LEAVE, SID_STATUS, "cache-tree.c", 630);
	ev.repo = 1;
	ev.category = "cache_tree";
	ev.label = "read";
	ev.nesting = 2;
	ev.has_t_abs = ev.has_t_rel = true;
	ev.t_abs_us = secs("0.000839");
	ev.t_rel_us = secs("0.000010");
	SKIPPED(tr2_tgt_normal, ev);
	PERF(ev, "20:26:08.012437",
	     "20:26:08.012437 cache-tree.c:630             | d0 | main                     | region_leave | r1  |  0.000839 |  0.000010 | cache_tree   | ..label:read\n");
	EVENT(ev, "2026-11-21T20:26:08.012443Z",
	      "{\"event\":\"region_leave\",\"sid\":\"20261121T202608.011966Z-H0a7c9cdf-P00000eef\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.012443Z\",\"file\":\"cache-tree.c\",\"line\":630,\"repo\":1,\"t_rel\":0.000010,\"nesting\":2,\"category\":\"cache_tree\",\"label\":\"read\"}\n");
}

static void test_region_leave_msg(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_REGION_LEAVE, SID_STATUS, "read-cache.c", 2448);

	ev.repo = 1;
	ev.category = "index";
	ev.label = "do_read_index";
	ev.msg = ".git/index";
	ev.has_t_abs = ev.has_t_rel = true;
	ev.t_abs_us = secs("0.000881");
	ev.t_rel_us = secs("0.000090");
	PERF(ev, "20:26:08.012479",
	     "20:26:08.012479 read-cache.c:2448            | d0 | main                     | region_leave | r1  |  0.000881 |  0.000090 | index        | label:do_read_index .git/index\n");
	EVENT(ev, "2026-11-21T20:26:08.012485Z",
	      "{\"event\":\"region_leave\",\"sid\":\"20261121T202608.011966Z-H0a7c9cdf-P00000eef\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.012485Z\",\"file\":\"read-cache.c\",\"line\":2448,\"repo\":1,\"t_rel\":0.000090,\"nesting\":1,\"category\":\"index\",\"label\":\"do_read_index\",\"msg\":\".git/index\"}\n");
}

/* regions and data that name no repository: blank repo column, no "repo" */
static void test_region_data_no_repo(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_REGION_ENTER, SID_STATUS, "read-cache.c", 1605);

	ev.category = "index";
	ev.label = "refresh";
	ev.has_t_abs = true;
	ev.t_abs_us = secs("0.000895");
	PERF(ev, "20:26:08.012493",
	     "20:26:08.012493 read-cache.c:1605            | d0 | main                     | region_enter |     |  0.000895 |           | index        | label:refresh\n");
	EVENT(ev, "2026-11-21T20:26:08.012498Z",
	      "{\"event\":\"region_enter\",\"sid\":\"20261121T202608.011966Z-H0a7c9cdf-P00000eef\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.012498Z\",\"file\":\"read-cache.c\",\"line\":1605,\"nesting\":1,\"category\":\"index\",\"label\":\"refresh\"}\n");

	ev = ev_new(TR2_EV_DATA, SID_STATUS, "read-cache.c", 1687);
	ev.category = "index";
	ev.key = "refresh/sum_lstat";
	ev.value = "1";
	ev.nesting = 2;
	ev.has_t_abs = ev.has_t_rel = true;
	ev.t_abs_us = secs("0.000912");
	ev.t_rel_us = secs("0.000017");
	SKIPPED(tr2_tgt_normal, ev);
	PERF(ev, "20:26:08.012510",
	     "20:26:08.012510 read-cache.c:1687            | d0 | main                     | data         |     |  0.000912 |  0.000017 | index        | ..refresh/sum_lstat:1\n");
	EVENT(ev, "2026-11-21T20:26:08.012515Z",
	      "{\"event\":\"data\",\"sid\":\"20261121T202608.011966Z-H0a7c9cdf-P00000eef\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.012515Z\",\"file\":\"read-cache.c\",\"line\":1687,\"t_abs\":0.000912,\"t_rel\":0.000017,\"nesting\":2,\"category\":\"index\",\"key\":\"refresh/sum_lstat\",\"value\":\"1\"}\n");
}

/* trace2_data_intmax: the value is a JSON string */
static void test_data(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_DATA, SID_STATUS, "read-cache.c", 2389);

	ev.repo = 1;
	ev.category = "index";
	ev.key = "read/version";
	ev.value = "2";
	ev.nesting = 2;
	ev.has_t_abs = ev.has_t_rel = true;
	ev.t_abs_us = secs("0.000858");
	ev.t_rel_us = secs("0.000067");
	PERF(ev, "20:26:08.012456",
	     "20:26:08.012456 read-cache.c:2389            | d0 | main                     | data         | r1  |  0.000858 |  0.000067 | index        | ..read/version:2\n");
	EVENT(ev, "2026-11-21T20:26:08.012463Z",
	      "{\"event\":\"data\",\"sid\":\"20261121T202608.011966Z-H0a7c9cdf-P00000eef\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.012463Z\",\"file\":\"read-cache.c\",\"line\":2389,\"repo\":1,\"t_abs\":0.000858,\"t_rel\":0.000067,\"nesting\":2,\"category\":\"index\",\"key\":\"read/version\",\"value\":\"2\"}\n");
}

/* data_json: raw JSON in both; the category is cut to 12 bytes in PERF */
static void test_data_json(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_DATA_JSON, SID_STATUS, "tree-walk.c", 189);

	ev.repo = 1;
	ev.category = "traverse_trees";
	ev.key = "statistics";
	ev.value = "{\"traverse_trees_count\":1,\"traverse_trees_max_depth\":1}";
	ev.has_t_abs = ev.has_t_rel = true;
	ev.t_abs_us = ev.t_rel_us = secs("0.001630");
	SKIPPED(tr2_tgt_normal, ev);
	PERF(ev, "20:26:08.013229",
	     "20:26:08.013229 tree-walk.c:189              | d0 | main                     | data_json    | r1  |  0.001630 |  0.001630 | traverse_tre | statistics:{\"traverse_trees_count\":1,\"traverse_trees_max_depth\":1}\n");
	EVENT(ev, "2026-11-21T20:26:08.013235Z",
	      "{\"event\":\"data_json\",\"sid\":\"20261121T202608.011966Z-H0a7c9cdf-P00000eef\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.013235Z\",\"file\":\"tree-walk.c\",\"line\":189,\"repo\":1,\"t_abs\":0.001630,\"t_rel\":0.001630,\"nesting\":1,\"category\":\"traverse_trees\",\"key\":\"statistics\",\"value\":{\"traverse_trees_count\":1,\"traverse_trees_max_depth\":1}}\n");
}

static void test_exit(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_EXIT, SID_STATUS, "git.c", 721);

	ev.has_t_abs = true;
	ev.t_abs_us = secs("0.001615");
	NORMAL(ev, "20:26:08.013214",
	       "20:26:08.013214 git.c:721                         exit elapsed:0.001615 code:0\n");
	PERF(ev, "20:26:08.013217",
	     "20:26:08.013217 git.c:721                    | d0 | main                     | exit         |     |  0.001615 |           |              | code:0\n");
	EVENT(ev, "2026-11-21T20:26:08.013222Z",
	      "{\"event\":\"exit\",\"sid\":\"20261121T202608.011966Z-H0a7c9cdf-P00000eef\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.013222Z\",\"file\":\"git.c\",\"line\":721,\"t_abs\":0.001615,\"code\":0}\n");
}

/* git writes atexit from each target's own source file */
static void test_atexit(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_ATEXIT, SID_STATUS, "trace2/tr2_tgt_normal.c", 126);

	ev.has_t_abs = true;
	ev.t_abs_us = secs("0.001643");
	NORMAL(ev, "20:26:08.013243",
	       "20:26:08.013243 trace2/tr2_tgt_normal.c:126       atexit elapsed:0.001643 code:0\n");
	ev.file = "trace2/tr2_tgt_perf.c";
	ev.line = 216;
	PERF(ev, "20:26:08.013246",
	     "20:26:08.013246 trace2/tr2_tgt_perf.c:216    | d0 | main                     | atexit       |     |  0.001643 |           |              | code:0\n");
	ev.file = "trace2/tr2_tgt_event.c";
	ev.line = 204;
	EVENT(ev, "2026-11-21T20:26:08.013251Z",
	      "{\"event\":\"atexit\",\"sid\":\"20261121T202608.011966Z-H0a7c9cdf-P00000eef\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.013251Z\",\"file\":\"trace2/tr2_tgt_event.c\",\"line\":204,\"t_abs\":0.001643,\"code\":0}\n");
}

/* git -c alias.st=status st: the dashed attempt, the alias, the git child */
static void test_alias_and_children(void **state)
{
	static const char *const argv_start[] = { "git", "-c", "alias.st=status", "st", NULL };
	static const char *const argv_dashed[] = { "git-st", NULL };
	static const char *const argv_alias[] = { "status", NULL };
	struct tr2_ev ev = ev_new(TR2_EV_START, SID_ALIAS, "common-main.c", 51);

	ev.argv = argv_start;
	ev.has_t_abs = true;
	ev.t_abs_us = secs("0.000446");
	NORMAL(ev, "20:26:08.023908",
	       "20:26:08.023908 common-main.c:51                  start git -c alias.st=status st\n");
	PERF(ev, "20:26:08.023912",
	     "20:26:08.023912 common-main.c:51             | d0 | main                     | start        |     |  0.000446 |           |              | git -c alias.st=status st\n");
	EVENT(ev, "2026-11-21T20:26:08.023923Z",
	      "{\"event\":\"start\",\"sid\":\"20261121T202608.023796Z-H0a7c9cdf-P00000ef7\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.023923Z\",\"file\":\"common-main.c\",\"line\":51,\"t_abs\":0.000446,\"argv\":[\"git\",\"-c\",\"alias.st=status\",\"st\"]}\n");

	ev = ev_new(TR2_EV_CMD_NAME, SID_ALIAS, "git.c", 744);
	ev.name = "_run_dashed_";
	ev.hierarchy = "_run_dashed_";
	NORMAL(ev, "20:26:08.024099",
	       "20:26:08.024099 git.c:744                         cmd_name _run_dashed_ (_run_dashed_)\n");
	PERF(ev, "20:26:08.024103",
	     "20:26:08.024103 git.c:744                    | d0 | main                     | cmd_name     |     |           |           |              | _run_dashed_ (_run_dashed_)\n");
	EVENT(ev, "2026-11-21T20:26:08.024109Z",
	      "{\"event\":\"cmd_name\",\"sid\":\"20261121T202608.023796Z-H0a7c9cdf-P00000ef7\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.024109Z\",\"file\":\"git.c\",\"line\":744,\"name\":\"_run_dashed_\",\"hierarchy\":\"_run_dashed_\"}\n");

	ev = ev_new(TR2_EV_CHILD_START, SID_ALIAS, "run-command.c", 722);
	ev.child_id = 0;
	ev.child_class = "dashed";
	ev.argv = argv_dashed;
	ev.has_t_abs = true;
	ev.t_abs_us = secs("0.000656");
	NORMAL(ev, "20:26:08.024117",
	       "20:26:08.024117 run-command.c:722                 child_start[0] git-st\n");
	PERF(ev, "20:26:08.024120",
	     "20:26:08.024120 run-command.c:722            | d0 | main                     | child_start  |     |  0.000656 |           |              | [ch0] class:dashed argv:[git-st]\n");
	EVENT(ev, "2026-11-21T20:26:08.024126Z",
	      "{\"event\":\"child_start\",\"sid\":\"20261121T202608.023796Z-H0a7c9cdf-P00000ef7\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.024126Z\",\"file\":\"run-command.c\",\"line\":722,\"child_id\":0,\"child_class\":\"dashed\",\"use_shell\":false,\"argv\":[\"git-st\"]}\n");

	/* the dashed command could not be spawned: pid -1 */
	ev = ev_new(TR2_EV_CHILD_EXIT, SID_ALIAS, "run-command.c", 939);
	ev.child_id = 0;
	ev.pid = -1;
	ev.code = -1;
	ev.has_t_abs = ev.has_t_rel = true;
	ev.t_abs_us = secs("0.000690");
	ev.t_rel_us = secs("0.000034");
	NORMAL(ev, "20:26:08.024151",
	       "20:26:08.024151 run-command.c:939                 child_exit[0] pid:-1 code:-1 elapsed:0.000034\n");
	PERF(ev, "20:26:08.024154",
	     "20:26:08.024154 run-command.c:939            | d0 | main                     | child_exit   |     |  0.000690 |  0.000034 |              | [ch0] pid:-1 code:-1\n");
	EVENT(ev, "2026-11-21T20:26:08.024160Z",
	      "{\"event\":\"child_exit\",\"sid\":\"20261121T202608.023796Z-H0a7c9cdf-P00000ef7\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.024160Z\",\"file\":\"run-command.c\",\"line\":939,\"child_id\":0,\"pid\":-1,\"code\":-1,\"t_rel\":0.000034}\n");

	ev = ev_new(TR2_EV_ALIAS, SID_ALIAS, "git.c", 405);
	ev.alias = "st";
	ev.argv = argv_alias;
	NORMAL(ev, "20:26:08.024202",
	       "20:26:08.024202 git.c:405                         alias st -> status\n");
	PERF(ev, "20:26:08.024205",
	     "20:26:08.024205 git.c:405                    | d0 | main                     | alias        |     |           |           |              | alias:st argv:[status]\n");
	EVENT(ev, "2026-11-21T20:26:08.024210Z",
	      "{\"event\":\"alias\",\"sid\":\"20261121T202608.023796Z-H0a7c9cdf-P00000ef7\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.024210Z\",\"file\":\"git.c\",\"line\":405,\"alias\":\"st\",\"argv\":[\"status\"]}\n");

	/* a git command (git's git_cmd): "git" is part of the vector */
	ev = ev_new(TR2_EV_CHILD_START, SID_ALIAS, "run-command.c", 722);
	ev.child_id = 1;
	ev.child_class = "git_alias";
	ev.argv = argv_status;
	ev.has_t_abs = true;
	ev.t_abs_us = secs("0.000767");
	NORMAL(ev, "20:26:08.024228",
	       "20:26:08.024228 run-command.c:722                 child_start[1] git status\n");
	PERF(ev, "20:26:08.024230",
	     "20:26:08.024230 run-command.c:722            | d0 | main                     | child_start  |     |  0.000767 |           |              | [ch1] class:git_alias argv:[git status]\n");
	EVENT(ev, "2026-11-21T20:26:08.024235Z",
	      "{\"event\":\"child_start\",\"sid\":\"20261121T202608.023796Z-H0a7c9cdf-P00000ef7\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.024235Z\",\"file\":\"run-command.c\",\"line\":722,\"child_id\":1,\"child_class\":\"git_alias\",\"use_shell\":false,\"argv\":[\"git\",\"status\"]}\n");

	/* the child: depth d1, hierarchy */
	ev = ev_new(TR2_EV_VERSION, SID_ALIAS_CHILD, "common-main.c", 50);
	ev.evt = "3";
	ev.exe = "2.39.5";
	NORMAL(ev, "20:26:08.025259",
	       "20:26:08.025259 common-main.c:50                  version 2.39.5\n");
	PERF(ev, "20:26:08.025271",
	     "20:26:08.025271 common-main.c:50             | d1 | main                     | version      |     |           |           |              | 2.39.5\n");
	EVENT(ev, "2026-11-21T20:26:08.025279Z",
	      "{\"event\":\"version\",\"sid\":\"20261121T202608.023796Z-H0a7c9cdf-P00000ef7/20261121T202608.025230Z-H0a7c9cdf-P00000ef8\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.025279Z\",\"file\":\"common-main.c\",\"line\":50,\"evt\":\"3\",\"exe\":\"2.39.5\"}\n");

	ev = ev_new(TR2_EV_CMD_NAME, SID_ALIAS_CHILD, "git.c", 461);
	ev.name = "status";
	ev.hierarchy = "_run_dashed_/_run_git_alias_/status";
	NORMAL(ev, "20:26:08.025435",
	       "20:26:08.025435 git.c:461                         cmd_name status (_run_dashed_/_run_git_alias_/status)\n");
	PERF(ev, "20:26:08.025438",
	     "20:26:08.025438 git.c:461                    | d1 | main                     | cmd_name     |     |           |           |              | status (_run_dashed_/_run_git_alias_/status)\n");
	EVENT(ev, "2026-11-21T20:26:08.025441Z",
	      "{\"event\":\"cmd_name\",\"sid\":\"20261121T202608.023796Z-H0a7c9cdf-P00000ef7/20261121T202608.025230Z-H0a7c9cdf-P00000ef8\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.025441Z\",\"file\":\"git.c\",\"line\":461,\"name\":\"status\",\"hierarchy\":\"_run_dashed_/_run_git_alias_/status\"}\n");

	ev = ev_new(TR2_EV_CHILD_EXIT, SID_ALIAS, "run-command.c", 979);
	ev.child_id = 1;
	ev.pid = 3832;
	ev.code = 0;
	ev.has_t_abs = ev.has_t_rel = true;
	ev.t_abs_us = secs("0.002800");
	ev.t_rel_us = secs("0.002033");
	NORMAL(ev, "20:26:08.026266",
	       "20:26:08.026266 run-command.c:979                 child_exit[1] pid:3832 code:0 elapsed:0.002033\n");
	PERF(ev, "20:26:08.026284",
	     "20:26:08.026284 run-command.c:979            | d0 | main                     | child_exit   |     |  0.002800 |  0.002033 |              | [ch1] pid:3832 code:0\n");
	EVENT(ev, "2026-11-21T20:26:08.026294Z",
	      "{\"event\":\"child_exit\",\"sid\":\"20261121T202608.023796Z-H0a7c9cdf-P00000ef7\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.026294Z\",\"file\":\"run-command.c\",\"line\":979,\"child_id\":1,\"pid\":3832,\"code\":0,\"t_rel\":0.002033}\n");
}

/* git -c 'alias.sh=!echo hi' sh: a shell child, quoted */
static void test_child_start_shell(void **state)
{
	static const char *const argv[] = { "echo hi", NULL };
	struct tr2_ev ev = ev_new(TR2_EV_CHILD_START, "20261121T202608.031606Z-H0a7c9cdf-P00000efc",
				  "run-command.c", 722);

	ev.child_id = 1;
	ev.child_class = "shell_alias";
	ev.use_shell = true;
	ev.argv = argv;
	ev.has_t_abs = true;
	ev.t_abs_us = secs("0.000947");
	NORMAL(ev, "20:26:08.032210",
	       "20:26:08.032210 run-command.c:722                 child_start[1] 'echo hi'\n");
	PERF(ev, "20:26:08.032214",
	     "20:26:08.032214 run-command.c:722            | d0 | main                     | child_start  |     |  0.000947 |           |              | [ch1] class:shell_alias argv:['echo hi']\n");
	EVENT(ev, "2026-11-21T20:26:08.032219Z",
	      "{\"event\":\"child_start\",\"sid\":\"20261121T202608.031606Z-H0a7c9cdf-P00000efc\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.032219Z\",\"file\":\"run-command.c\",\"line\":722,\"child_id\":1,\"child_class\":\"shell_alias\",\"use_shell\":true,\"argv\":[\"echo hi\"]}\n");
}

/* git clone file:///tmp/o/r: quotes inside quotes ('\'') */
static void test_child_start_quotes(void **state)
{
	static const char *const argv[] = { "git-upload-pack '/tmp/o/r'", NULL };
	struct tr2_ev ev = ev_new(TR2_EV_CHILD_START, "20261121T202608.099274Z-H0a7c9cdf-P00000f2c",
				  "run-command.c", 722);

	ev.child_id = 0;
	ev.child_class = "transport/file";
	ev.use_shell = true;
	ev.argv = argv;
	ev.has_t_abs = true;
	ev.t_abs_us = secs("0.002636");
	NORMAL(ev, "20:26:08.101599",
	       "20:26:08.101599 run-command.c:722                 child_start[0] 'git-upload-pack '\\''/tmp/o/r'\\'''\n");
	PERF(ev, "20:26:08.101609",
	     "20:26:08.101609 run-command.c:722            | d0 | main                     | child_start  |     |  0.002636 |           |              | [ch0] class:transport/file argv:['git-upload-pack '\\''/tmp/o/r'\\''']\n");
	EVENT(ev, "2026-11-21T20:26:08.101621Z",
	      "{\"event\":\"child_start\",\"sid\":\"20261121T202608.099274Z-H0a7c9cdf-P00000f2c\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.101621Z\",\"file\":\"run-command.c\",\"line\":722,\"child_id\":0,\"child_class\":\"transport/file\",\"use_shell\":true,\"argv\":[\"git-upload-pack '/tmp/o/r'\"]}\n");
}

/* git commit with a post-commit hook: inside a region, so PERF indents */
static void test_child_hook(void **state)
{
	static const char *const argv[] = { ".git/hooks/post-commit", NULL };
	const char *sid = "20261121T204000.214709Z-H0a7c9cdf-P00003518";
	struct tr2_ev ev = ev_new(TR2_EV_REGION_ENTER, sid, "run-command.c", 1752);

	ev.category = "hook";
	ev.label = "post-commit";
	ev.msg = "max:1";
	ev.has_t_abs = true;
	ev.t_abs_us = secs("0.005178");
	PERF(ev, "20:40:00.219604",
	     "20:40:00.219604 run-command.c:1752           | d0 | main                     | region_enter |     |  0.005178 |           | hook         | label:post-commit max:1\n");
	EVENT(ev, "2026-11-21T20:40:00.219611Z",
	      "{\"event\":\"region_enter\",\"sid\":\"20261121T204000.214709Z-H0a7c9cdf-P00003518\",\"thread\":\"main\",\"time\":\"2026-11-21T20:40:00.219611Z\",\"file\":\"run-command.c\",\"line\":1752,\"nesting\":1,\"category\":\"hook\",\"label\":\"post-commit\",\"msg\":\"max:1\"}\n");

	ev = ev_new(TR2_EV_CHILD_START, sid, "run-command.c", 722);
	ev.nesting = 2;
	ev.child_id = 1;
	ev.child_class = "hook";
	ev.hook_name = "post-commit";
	ev.argv = argv;
	ev.has_t_abs = true;
	ev.t_abs_us = secs("0.005194");
	NORMAL(ev, "20:40:00.219620",
	       "20:40:00.219620 run-command.c:722                 child_start[1] .git/hooks/post-commit\n");
	PERF(ev, "20:40:00.219624",
	     "20:40:00.219624 run-command.c:722            | d0 | main                     | child_start  |     |  0.005194 |           |              | ..[ch1] class:hook hook:post-commit argv:[.git/hooks/post-commit]\n");
	EVENT(ev, "2026-11-21T20:40:00.219630Z",
	      "{\"event\":\"child_start\",\"sid\":\"20261121T204000.214709Z-H0a7c9cdf-P00003518\",\"thread\":\"main\",\"time\":\"2026-11-21T20:40:00.219630Z\",\"file\":\"run-command.c\",\"line\":722,\"child_id\":1,\"child_class\":\"hook\",\"hook_name\":\"post-commit\",\"use_shell\":false,\"argv\":[\".git/hooks/post-commit\"]}\n");

	ev = ev_new(TR2_EV_CHILD_EXIT, sid, "run-command.c", 979);
	ev.nesting = 2;
	ev.child_id = 1;
	ev.pid = 13594;
	ev.has_t_abs = ev.has_t_rel = true;
	ev.t_abs_us = secs("0.006184");
	ev.t_rel_us = secs("0.000990");
	NORMAL(ev, "20:40:00.220616",
	       "20:40:00.220616 run-command.c:979                 child_exit[1] pid:13594 code:0 elapsed:0.000990\n");
	PERF(ev, "20:40:00.220630",
	     "20:40:00.220630 run-command.c:979            | d0 | main                     | child_exit   |     |  0.006184 |  0.000990 |              | ..[ch1] pid:13594 code:0\n");
	EVENT(ev, "2026-11-21T20:40:00.220651Z",
	      "{\"event\":\"child_exit\",\"sid\":\"20261121T204000.214709Z-H0a7c9cdf-P00003518\",\"thread\":\"main\",\"time\":\"2026-11-21T20:40:00.220651Z\",\"file\":\"run-command.c\",\"line\":979,\"child_id\":1,\"pid\":13594,\"code\":0,\"t_rel\":0.000990}\n");
}

/* git submodule foreach: a child run in another directory (d1: git-submodule's child) */
static void test_child_start_cd(void **state)
{
	static const char *const argv[] = { "path='sub'; true", NULL };
	struct tr2_ev ev = ev_new(TR2_EV_CHILD_START,
				  "20261121T204000.274835Z-H0a7c9cdf-P00003546/20261121T204000.293367Z-H0a7c9cdf-P0000355f",
				  "run-command.c", 722);

	ev.child_id = 0;
	ev.child_class = "?";
	ev.cd = "sub";
	ev.use_shell = true;
	ev.argv = argv;
	ev.has_t_abs = true;
	ev.t_abs_us = secs("0.000718");
	NORMAL(ev, "20:40:00.293839",
	       "20:40:00.293839 run-command.c:722                 child_start[0] cd sub; 'path='\\''sub'\\''; true'\n");
	PERF(ev, "20:40:00.293844",
	     "20:40:00.293844 run-command.c:722            | d1 | main                     | child_start  |     |  0.000718 |           |              | [ch0] class:? cd:sub argv:['path='\\''sub'\\''; true']\n");
	EVENT(ev, "2026-11-21T20:40:00.293850Z",
	      "{\"event\":\"child_start\",\"sid\":\"20261121T204000.274835Z-H0a7c9cdf-P00003546/20261121T204000.293367Z-H0a7c9cdf-P0000355f\",\"thread\":\"main\",\"time\":\"2026-11-21T20:40:00.293850Z\",\"file\":\"run-command.c\",\"line\":722,\"child_id\":0,\"child_class\":\"?\",\"cd\":\"sub\",\"use_shell\":true,\"argv\":[\"path='sub'; true\"]}\n");
}

/* git -c trace2.configparams / GIT_TRACE2_CONFIG_PARAMS and GIT_TRACE2_ENV_VARS */
static void test_def_param(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_DEF_PARAM, "20261121T202608.038160Z-H0a7c9cdf-P00000f01",
				  "git.c", 462);

	ev.scope = "local";
	ev.param = "core.bare";
	ev.value = "false";
	NORMAL(ev, "20:26:08.038527",
	       "20:26:08.038527 git.c:462                         def_param scope:local core.bare=false\n");
	PERF(ev, "20:26:08.038530",
	     "20:26:08.038530 git.c:462                    | d0 | main                     | def_param    |     |           |           | scope:local  | core.bare:false\n");
	EVENT(ev, "2026-11-21T20:26:08.038534Z",
	      "{\"event\":\"def_param\",\"sid\":\"20261121T202608.038160Z-H0a7c9cdf-P00000f01\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.038534Z\",\"file\":\"git.c\",\"line\":462,\"scope\":\"local\",\"param\":\"core.bare\",\"value\":\"false\"}\n");

	/* "scope:unknown" is cut to 12 bytes in PERF */
	ev = ev_new(TR2_EV_DEF_PARAM, "20261121T202608.044739Z-H0a7c9cdf-P00000f05", "git.c", 463);
	ev.scope = "unknown";
	ev.param = "HOME";
	ev.value = "/root";
	NORMAL(ev, "20:26:08.044963",
	       "20:26:08.044963 git.c:463                         def_param scope:unknown HOME=/root\n");
	PERF(ev, "20:26:08.044966",
	     "20:26:08.044966 git.c:463                    | d0 | main                     | def_param    |     |           |           | scope:unknow | HOME:/root\n");
	EVENT(ev, "2026-11-21T20:26:08.044970Z",
	      "{\"event\":\"def_param\",\"sid\":\"20261121T202608.044739Z-H0a7c9cdf-P00000f05\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.044970Z\",\"file\":\"git.c\",\"line\":463,\"scope\":\"unknown\",\"param\":\"HOME\",\"value\":\"/root\"}\n");
}

/* git checkout -b: cmd_mode */
static void test_cmd_mode(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_CMD_MODE, "20261121T202616.045174Z-H0a7c9cdf-P00000ff0",
				  "builtin/checkout.c", 1107);

	ev.mode = "branch";
	NORMAL(ev, "20:26:16.045577",
	       "20:26:16.045577 builtin/checkout.c:1107           cmd_mode branch\n");
	PERF(ev, "20:26:16.045580",
	     "20:26:16.045580 builtin/checkout.c:1107      | d0 | main                     | cmd_mode     |     |           |           |              | branch\n");
	EVENT(ev, "2026-11-21T20:26:16.045585Z",
	      "{\"event\":\"cmd_mode\",\"sid\":\"20261121T202616.045174Z-H0a7c9cdf-P00000ff0\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:16.045585Z\",\"file\":\"builtin/checkout.c\",\"line\":1107,\"name\":\"branch\"}\n");
}

/* git fsck's child multi-pack-index: file:line longer than 28 bytes */
static void test_file_line_truncated(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_CMD_MODE,
				  "20261121T204528.603676Z-H0a7c9cdf-P00003e40/20261121T204528.607464Z-H0a7c9cdf-P00003e42",
				  "builtin/multi-pack-index.c", 183);

	ev.mode = "verify";
	NORMAL(ev, "20:45:28.607681",
	       "20:45:28.607681 builtin/multi-pack-index.c:183    cmd_mode verify\n");
	PERF(ev, "20:45:28.607683",
	     "20:45:28.607683 ...in/multi-pack-index.c:183 | d1 | main                     | cmd_mode     |     |           |           |              | verify\n");
	EVENT(ev, "2026-11-21T20:45:28.607687Z",
	      "{\"event\":\"cmd_mode\",\"sid\":\"20261121T204528.603676Z-H0a7c9cdf-P00003e40/20261121T204528.607464Z-H0a7c9cdf-P00003e42\",\"thread\":\"main\",\"time\":\"2026-11-21T20:45:28.607687Z\",\"file\":\"builtin/multi-pack-index.c\",\"line\":183,\"name\":\"verify\"}\n");
}

/* git checkout nosuchbranch */
static void test_error(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_ERROR, "20261121T204526.821684Z-H0a7c9cdf-P00003df8", "usage.c", 79);

	ev.msg = "pathspec 'nosuchbranch' did not match any file(s) known to git";
	ev.fmt = "pathspec '%s' did not match any file(s) known to git";
	NORMAL(ev, "20:45:26.822099",
	       "20:45:26.822099 usage.c:79                        error pathspec 'nosuchbranch' did not match any file(s) known to git\n");
	PERF(ev, "20:45:26.822101",
	     "20:45:26.822101 usage.c:79                   | d0 | main                     | error        |     |           |           |              | pathspec 'nosuchbranch' did not match any file(s) known to git\n");
	EVENT(ev, "2026-11-21T20:45:26.822104Z",
	      "{\"event\":\"error\",\"sid\":\"20261121T204526.821684Z-H0a7c9cdf-P00003df8\",\"thread\":\"main\",\"time\":\"2026-11-21T20:45:26.822104Z\",\"file\":\"usage.c\",\"line\":79,\"msg\":\"pathspec 'nosuchbranch' did not match any file(s) known to git\",\"fmt\":\"pathspec '%s' did not match any file(s) known to git\"}\n");
}

/*
 * git rev-parse nosuch: a message with newlines.  EVENT is git's line; git's
 * NORMAL and PERF lines spill over three lines, tr2 writes "\n" instead.
 */
static void test_error_multiline(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_ERROR, "20261121T202608.018306Z-H0a7c9cdf-P00000ef3", "usage.c", 60);

	ev.msg = "ambiguous argument 'nosuch': unknown revision or path not in the working tree.\n"
		 "Use '--' to separate paths from revisions, like this:\n"
		 "'git <command> [<revision>...] -- [<file>...]'";
	ev.fmt = "ambiguous argument '%s': unknown revision or path not in the working tree.\n"
		 "Use '--' to separate paths from revisions, like this:\n"
		 "'git <command> [<revision>...] -- [<file>...]'";
	EVENT(ev, "2026-11-21T20:26:08.018725Z",
	      "{\"event\":\"error\",\"sid\":\"20261121T202608.018306Z-H0a7c9cdf-P00000ef3\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.018725Z\",\"file\":\"usage.c\",\"line\":60,\"msg\":\"ambiguous argument 'nosuch': unknown revision or path not in the working tree.\\nUse '--' to separate paths from revisions, like this:\\n'git <command> [<revision>...] -- [<file>...]'\",\"fmt\":\"ambiguous argument '%s': unknown revision or path not in the working tree.\\nUse '--' to separate paths from revisions, like this:\\n'git <command> [<revision>...] -- [<file>...]'\"}\n");
	NORMAL(ev, "20:26:08.018700",
	       "20:26:08.018700 usage.c:60                        error ambiguous argument 'nosuch': unknown revision or path not in the working tree.\nUse '--' to separate paths from revisions, like this:\n'git <command> [<revision>...] -- [<file>...]'\n");
	PERF(ev, "20:26:08.018700",
	     "20:26:08.018700 usage.c:60                   | d0 | main                     | error        |     |           |           |              | ambiguous argument 'nosuch': unknown revision or path not in the working tree.\nUse '--' to separate paths from revisions, like this:\n'git <command> [<revision>...] -- [<file>...]'\n");
}

/* git-shell -c "git-upload-pack '/tmp/o/r'" with no git on PATH: exec fails */
static void test_exec(void **state)
{
	static const char *const argv[] = { "git", "upload-pack", "/tmp/o/r", NULL };
	const char *sid = "20261121T204012.740579Z-H0a7c9cdf-P000035bd";
	struct tr2_ev ev = ev_new(TR2_EV_EXEC, sid, "run-command.c", 235);

	ev.exec_id = 0;
	ev.exe = "git";
	ev.argv = argv;
	ev.has_t_abs = true;
	ev.t_abs_us = secs("0.000836");
	NORMAL(ev, "20:40:12.740899",
	       "20:40:12.740899 run-command.c:235                 exec[0] git git upload-pack /tmp/o/r\n");
	PERF(ev, "20:40:12.740903",
	     "20:40:12.740903 run-command.c:235            | d0 | main                     | exec         |     |  0.000836 |           |              | id:0 argv:[git git upload-pack /tmp/o/r]\n");
	EVENT(ev, "2026-11-21T20:40:12.740909Z",
	      "{\"event\":\"exec\",\"sid\":\"20261121T204012.740579Z-H0a7c9cdf-P000035bd\",\"thread\":\"main\",\"time\":\"2026-11-21T20:40:12.740909Z\",\"file\":\"run-command.c\",\"line\":235,\"exec_id\":0,\"exe\":\"git\",\"argv\":[\"git\",\"upload-pack\",\"/tmp/o/r\"]}\n");

	ev = ev_new(TR2_EV_EXEC_RESULT, sid, "run-command.c", 244);
	ev.exec_id = 0;
	ev.code = 2;
	ev.has_t_abs = true;
	ev.t_abs_us = secs("0.000859");
	NORMAL(ev, "20:40:12.740932",
	       "20:40:12.740932 run-command.c:244                 exec_result[0] code:2 err:No such file or directory\n");
	PERF(ev, "20:40:12.740937",
	     "20:40:12.740937 run-command.c:244            | d0 | main                     | exec_result  |     |  0.000859 |           |              | id:0 code:2 err:No such file or directory\n");
	EVENT(ev, "2026-11-21T20:40:12.740942Z",
	      "{\"event\":\"exec_result\",\"sid\":\"20261121T204012.740579Z-H0a7c9cdf-P000035bd\",\"thread\":\"main\",\"time\":\"2026-11-21T20:40:12.740942Z\",\"file\":\"run-command.c\",\"line\":244,\"exec_id\":0,\"code\":2}\n");
}

/* git hash-object --stdin killed by SIGPIPE */
static void test_signal(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_SIGNAL, "20261121T203844.824675Z-H0a7c9cdf-P00003469",
				  "trace2/tr2_tgt_normal.c", 116);

	ev.signo = 13;
	ev.has_t_abs = true;
	ev.t_abs_us = secs("0.301007");
	NORMAL(ev, "20:38:45.125453",
	       "20:38:45.125453 trace2/tr2_tgt_normal.c:116       signal elapsed:0.301007 code:13\n");
	ev.file = "trace2/tr2_tgt_perf.c";
	ev.line = 204;
	PERF(ev, "20:38:45.125483",
	     "20:38:45.125483 trace2/tr2_tgt_perf.c:204    | d0 | main                     | signal       |     |  0.301007 |           |              | signo:13\n");
	ev.file = "trace2/tr2_tgt_event.c";
	ev.line = 188;
	EVENT(ev, "2026-11-21T20:38:45.125497Z",
	      "{\"event\":\"signal\",\"sid\":\"20261121T203844.824675Z-H0a7c9cdf-P00003469\",\"thread\":\"main\",\"time\":\"2026-11-21T20:38:45.125497Z\",\"file\":\"trace2/tr2_tgt_event.c\",\"line\":188,\"t_abs\":0.301007,\"signo\":13}\n");

	/* the same, with GIT_TRACE2_BRIEF, GIT_TRACE2_PERF_BRIEF, GIT_TRACE2_EVENT_BRIEF */
	ev.sid = "20261121T203845.130070Z-H0a7c9cdf-P0000346d";
	ev.t_abs_us = secs("0.300738");
	NORMAL_BRIEF(ev, "signal elapsed:0.300738 code:13\n");
	PERF_BRIEF(ev, "d0 | main                     | signal       |     |  0.300738 |           |              | signo:13\n");
	EVENT_BRIEF(ev, "2026-11-21T20:38:45.430000Z",
		    "{\"event\":\"signal\",\"sid\":\"20261121T203845.130070Z-H0a7c9cdf-P0000346d\",\"thread\":\"main\",\"t_abs\":0.300738,\"signo\":13}\n");
}

/* ---- BRIEF variants: git status and git -c alias.st=status st with all three *_BRIEF ---- */

#define SID_B_STATUS "20261121T202608.074969Z-H0a7c9cdf-P00000f1a"
#define SID_B_ALIAS "20261121T202608.081216Z-H0a7c9cdf-P00000f1e"

/* EVENT BRIEF keeps "time" on version and atexit only, and drops file and line */
static void test_brief_version_atexit(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_VERSION, SID_B_STATUS, "common-main.c", 50);

	ev.evt = "3";
	ev.exe = "2.39.5";
	NORMAL_BRIEF(ev, "version 2.39.5\n");
	PERF_BRIEF(ev, "d0 | main                     | version      |     |           |           |              | 2.39.5\n");
	EVENT_BRIEF(ev, "2026-11-21T20:26:08.075022Z",
		    "{\"event\":\"version\",\"sid\":\"20261121T202608.074969Z-H0a7c9cdf-P00000f1a\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.075022Z\",\"evt\":\"3\",\"exe\":\"2.39.5\"}\n");

	ev = ev_new(TR2_EV_ATEXIT, SID_B_STATUS, "trace2/tr2_tgt_event.c", 204);
	ev.has_t_abs = true;
	ev.t_abs_us = secs("0.001571");
	NORMAL_BRIEF(ev, "atexit elapsed:0.001571 code:0\n");
	PERF_BRIEF(ev, "d0 | main                     | atexit       |     |  0.001571 |           |              | code:0\n");
	EVENT_BRIEF(ev, "2026-11-21T20:26:08.076308Z",
		    "{\"event\":\"atexit\",\"sid\":\"20261121T202608.074969Z-H0a7c9cdf-P00000f1a\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.076308Z\",\"t_abs\":0.001571,\"code\":0}\n");
}

static void test_brief_status(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_START, SID_B_STATUS, "common-main.c", 51);

	ev.argv = argv_status;
	ev.has_t_abs = true;
	ev.t_abs_us = secs("0.000298");
	EVENT_BRIEF(ev, "2026-11-21T20:26:08.075100Z",
		    "{\"event\":\"start\",\"sid\":\"20261121T202608.074969Z-H0a7c9cdf-P00000f1a\",\"thread\":\"main\",\"t_abs\":0.000298,\"argv\":[\"git\",\"status\"]}\n");

	ev = ev_new(TR2_EV_DEF_REPO, SID_B_STATUS, "repository.c", 136);
	ev.repo = 1;
	ev.worktree = "/tmp/o/r";
	NORMAL_BRIEF(ev, "worktree /tmp/o/r\n");
	PERF_BRIEF(ev, "d0 | main                     | def_repo     | r1  |           |           |              | worktree:/tmp/o/r\n");
	EVENT_BRIEF(ev, "2026-11-21T20:26:08.075200Z",
		    "{\"event\":\"def_repo\",\"sid\":\"20261121T202608.074969Z-H0a7c9cdf-P00000f1a\",\"thread\":\"main\",\"repo\":1,\"worktree\":\"/tmp/o/r\"}\n");

	ev = ev_new(TR2_EV_REGION_ENTER, SID_B_STATUS, "read-cache.c", 2443);
	ev.repo = 1;
	ev.category = "index";
	ev.label = "do_read_index";
	ev.msg = ".git/index";
	ev.has_t_abs = true;
	ev.t_abs_us = secs("0.000582");
	PERF_BRIEF(ev, "d0 | main                     | region_enter | r1  |  0.000582 |           | index        | label:do_read_index .git/index\n");
	EVENT_BRIEF(ev, "2026-11-21T20:26:08.075300Z",
		    "{\"event\":\"region_enter\",\"sid\":\"20261121T202608.074969Z-H0a7c9cdf-P00000f1a\",\"thread\":\"main\",\"repo\":1,\"nesting\":1,\"category\":\"index\",\"label\":\"do_read_index\",\"msg\":\".git/index\"}\n");

	ev = ev_new(TR2_EV_DATA, SID_B_STATUS, "read-cache.c", 2389);
	ev.repo = 1;
	ev.category = "index";
	ev.key = "read/version";
	ev.value = "2";
	ev.nesting = 2;
	ev.has_t_abs = ev.has_t_rel = true;
	ev.t_abs_us = secs("0.000637");
	ev.t_rel_us = secs("0.000055");
	PERF_BRIEF(ev, "d0 | main                     | data         | r1  |  0.000637 |  0.000055 | index        | ..read/version:2\n");
	EVENT_BRIEF(ev, "2026-11-21T20:26:08.075400Z",
		    "{\"event\":\"data\",\"sid\":\"20261121T202608.074969Z-H0a7c9cdf-P00000f1a\",\"thread\":\"main\",\"repo\":1,\"t_abs\":0.000637,\"t_rel\":0.000055,\"nesting\":2,\"category\":\"index\",\"key\":\"read/version\",\"value\":\"2\"}\n");

	ev = ev_new(TR2_EV_REGION_LEAVE, SID_B_STATUS, "wt-status.c", 819);
	ev.repo = 1;
	ev.category = "status";
	ev.label = "worktrees";
	ev.has_t_abs = ev.has_t_rel = true;
	ev.t_abs_us = secs("0.000814");
	ev.t_rel_us = secs("0.000063");
	PERF_BRIEF(ev, "d0 | main                     | region_leave | r1  |  0.000814 |  0.000063 | status       | label:worktrees\n");
	EVENT_BRIEF(ev, "2026-11-21T20:26:08.075500Z",
		    "{\"event\":\"region_leave\",\"sid\":\"20261121T202608.074969Z-H0a7c9cdf-P00000f1a\",\"thread\":\"main\",\"repo\":1,\"t_rel\":0.000063,\"nesting\":1,\"category\":\"status\",\"label\":\"worktrees\"}\n");

	ev = ev_new(TR2_EV_EXIT, SID_B_STATUS, "git.c", 721);
	ev.has_t_abs = true;
	ev.t_abs_us = secs("0.001548");
	NORMAL_BRIEF(ev, "exit elapsed:0.001548 code:0\n");
	EVENT_BRIEF(ev, "2026-11-21T20:26:08.075600Z",
		    "{\"event\":\"exit\",\"sid\":\"20261121T202608.074969Z-H0a7c9cdf-P00000f1a\",\"thread\":\"main\",\"t_abs\":0.001548,\"code\":0}\n");

	ev = ev_new(TR2_EV_DATA_JSON, SID_B_STATUS, "tree-walk.c", 189);
	ev.repo = 1;
	ev.category = "traverse_trees";
	ev.key = "statistics";
	ev.value = "{\"traverse_trees_count\":1,\"traverse_trees_max_depth\":1}";
	ev.has_t_abs = ev.has_t_rel = true;
	ev.t_abs_us = ev.t_rel_us = secs("0.001561");
	PERF_BRIEF(ev, "d0 | main                     | data_json    | r1  |  0.001561 |  0.001561 | traverse_tre | statistics:{\"traverse_trees_count\":1,\"traverse_trees_max_depth\":1}\n");
	EVENT_BRIEF(ev, "2026-11-21T20:26:08.075700Z",
		    "{\"event\":\"data_json\",\"sid\":\"20261121T202608.074969Z-H0a7c9cdf-P00000f1a\",\"thread\":\"main\",\"repo\":1,\"t_abs\":0.001561,\"t_rel\":0.001561,\"nesting\":1,\"category\":\"traverse_trees\",\"key\":\"statistics\",\"value\":{\"traverse_trees_count\":1,\"traverse_trees_max_depth\":1}}\n");
}

static void test_brief_alias(void **state)
{
	static const char *const argv_start[] = { "git", "-c", "alias.st=status", "st", NULL };
	static const char *const argv_dashed[] = { "git-st", NULL };
	static const char *const argv_alias[] = { "status", NULL };
	struct tr2_ev ev = ev_new(TR2_EV_START, SID_B_ALIAS, "common-main.c", 51);

	ev.argv = argv_start;
	ev.has_t_abs = true;
	ev.t_abs_us = secs("0.000360");
	NORMAL_BRIEF(ev, "start git -c alias.st=status st\n");
	PERF_BRIEF(ev, "d0 | main                     | start        |     |  0.000360 |           |              | git -c alias.st=status st\n");

	ev = ev_new(TR2_EV_CMD_NAME, SID_B_ALIAS, "git.c", 744);
	ev.name = "_run_dashed_";
	ev.hierarchy = "_run_dashed_";
	NORMAL_BRIEF(ev, "cmd_name _run_dashed_ (_run_dashed_)\n");

	ev = ev_new(TR2_EV_CHILD_START, SID_B_ALIAS, "run-command.c", 722);
	ev.child_class = "dashed";
	ev.argv = argv_dashed;
	ev.has_t_abs = true;
	ev.t_abs_us = secs("0.000541");
	NORMAL_BRIEF(ev, "child_start[0] git-st\n");
	PERF_BRIEF(ev, "d0 | main                     | child_start  |     |  0.000541 |           |              | [ch0] class:dashed argv:[git-st]\n");
	EVENT_BRIEF(ev, "2026-11-21T20:26:08.081500Z",
		    "{\"event\":\"child_start\",\"sid\":\"20261121T202608.081216Z-H0a7c9cdf-P00000f1e\",\"thread\":\"main\",\"child_id\":0,\"child_class\":\"dashed\",\"use_shell\":false,\"argv\":[\"git-st\"]}\n");

	ev = ev_new(TR2_EV_CHILD_EXIT, SID_B_ALIAS, "run-command.c", 939);
	ev.pid = -1;
	ev.code = -1;
	ev.has_t_abs = ev.has_t_rel = true;
	ev.t_abs_us = secs("0.000570");
	ev.t_rel_us = secs("0.000029");
	NORMAL_BRIEF(ev, "child_exit[0] pid:-1 code:-1 elapsed:0.000029\n");
	PERF_BRIEF(ev, "d0 | main                     | child_exit   |     |  0.000570 |  0.000029 |              | [ch0] pid:-1 code:-1\n");
	EVENT_BRIEF(ev, "2026-11-21T20:26:08.081600Z",
		    "{\"event\":\"child_exit\",\"sid\":\"20261121T202608.081216Z-H0a7c9cdf-P00000f1e\",\"thread\":\"main\",\"child_id\":0,\"pid\":-1,\"code\":-1,\"t_rel\":0.000029}\n");

	ev = ev_new(TR2_EV_ALIAS, SID_B_ALIAS, "git.c", 405);
	ev.alias = "st";
	ev.argv = argv_alias;
	NORMAL_BRIEF(ev, "alias st -> status\n");
	PERF_BRIEF(ev, "d0 | main                     | alias        |     |           |           |              | alias:st argv:[status]\n");
	EVENT_BRIEF(ev, "2026-11-21T20:26:08.081700Z",
		    "{\"event\":\"alias\",\"sid\":\"20261121T202608.081216Z-H0a7c9cdf-P00000f1e\",\"thread\":\"main\",\"alias\":\"st\",\"argv\":[\"status\"]}\n");

	ev = ev_new(TR2_EV_VERSION, SID_B_ALIAS "/20261121T202608.082496Z-H0a7c9cdf-P00000f1f", "common-main.c", 50);
	ev.evt = "3";
	ev.exe = "2.39.5";
	PERF_BRIEF(ev, "d1 | main                     | version      |     |           |           |              | 2.39.5\n");

	ev = ev_new(TR2_EV_CHILD_EXIT, SID_B_ALIAS, "run-command.c", 979);
	ev.child_id = 1;
	ev.pid = 3871;
	ev.has_t_rel = true;
	ev.t_rel_us = secs("0.002073");
	NORMAL_BRIEF(ev, "child_exit[1] pid:3871 code:0 elapsed:0.002073\n");
}

/* git rev-parse nosuch with EVENT BRIEF */
static void test_brief_error(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_ERROR, "20261121T202608.088159Z-H0a7c9cdf-P00000f23", "usage.c", 60);

	ev.msg = "ambiguous argument 'nosuch': unknown revision or path not in the working tree.\n"
		 "Use '--' to separate paths from revisions, like this:\n"
		 "'git <command> [<revision>...] -- [<file>...]'";
	ev.fmt = "ambiguous argument '%s': unknown revision or path not in the working tree.\n"
		 "Use '--' to separate paths from revisions, like this:\n"
		 "'git <command> [<revision>...] -- [<file>...]'";
	EVENT_BRIEF(ev, "2026-11-21T20:26:08.088500Z",
		    "{\"event\":\"error\",\"sid\":\"20261121T202608.088159Z-H0a7c9cdf-P00000f23\",\"thread\":\"main\",\"msg\":\"ambiguous argument 'nosuch': unknown revision or path not in the working tree.\\nUse '--' to separate paths from revisions, like this:\\n'git <command> [<revision>...] -- [<file>...]'\",\"fmt\":\"ambiguous argument '%s': unknown revision or path not in the working tree.\\nUse '--' to separate paths from revisions, like this:\\n'git <command> [<revision>...] -- [<file>...]'\"}\n");
}

/*
 * GIT_TRACE2_EVENT_NESTING: git status run with the default (2) has no
 * "nesting":3 line; run with 10 it has this one.  PERF shows it either way.
 */
static void test_event_nesting_limit(void **state)
{
	struct tr2_ev ev = ev_new(TR2_EV_REGION_ENTER, SID_STATUS, "unpack-trees.c", 1974);
	const char *line =
		"{\"event\":\"region_enter\",\"sid\":\"20261121T202608.011966Z-H0a7c9cdf-P00000eef\",\"thread\":\"main\",\"time\":\"2026-11-21T20:26:08.012913Z\",\"file\":\"unpack-trees.c\",\"line\":1974,\"repo\":1,\"nesting\":3,\"category\":\"unpack_trees\",\"label\":\"traverse_trees\"}\n";

	ev.repo = 1;
	ev.nesting = 3;
	ev.category = "unpack_trees";
	ev.label = "traverse_trees";
	ev.has_t_abs = true;
	ev.t_abs_us = secs("0.001310");
	ev.time_us = at("2026-11-21T20:26:08.012913Z");
	assert_string_equal(fmt_ev(&tr2_tgt_event, &ev, 0, 10), line);
	assert_string_equal(fmt_ev(&tr2_tgt_event, &ev, 0, 3), line);
	assert_string_equal(fmt_ev(&tr2_tgt_event, &ev, 0, 2), "");
	assert_string_equal(fmt_ev(&tr2_tgt_event, &ev, 0, 0), "");  /* 0: git's default, 2 */
	PERF(ev, "20:26:08.012908",
	     "20:26:08.012908 unpack-trees.c:1974          | d0 | main                     | region_enter | r1  |  0.001310 |           | unpack_trees | ....label:traverse_trees\n");
	assert_string_equal(fmt_ev(&tr2_tgt_perf, &ev, 0, 2), fmt_ev(&tr2_tgt_perf, &ev, 0, 10));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_start),
		cmocka_unit_test(test_cmd_ancestry),
		cmocka_unit_test(test_def_repo),
		cmocka_unit_test(test_cmd_name),
		cmocka_unit_test(test_region_enter_msg),
		cmocka_unit_test(test_region_nested),
		cmocka_unit_test(test_region_leave_msg),
		cmocka_unit_test(test_region_data_no_repo),
		cmocka_unit_test(test_data),
		cmocka_unit_test(test_data_json),
		cmocka_unit_test(test_exit),
		cmocka_unit_test(test_atexit),
		cmocka_unit_test(test_alias_and_children),
		cmocka_unit_test(test_child_start_shell),
		cmocka_unit_test(test_child_start_quotes),
		cmocka_unit_test(test_child_hook),
		cmocka_unit_test(test_child_start_cd),
		cmocka_unit_test(test_def_param),
		cmocka_unit_test(test_cmd_mode),
		cmocka_unit_test(test_file_line_truncated),
		cmocka_unit_test(test_error),
		cmocka_unit_test(test_error_multiline),
		cmocka_unit_test(test_exec),
		cmocka_unit_test(test_signal),
		cmocka_unit_test(test_brief_version_atexit),
		cmocka_unit_test(test_brief_status),
		cmocka_unit_test(test_brief_alias),
		cmocka_unit_test(test_brief_error),
		cmocka_unit_test(test_event_nesting_limit),
	};

	return cmocka_run_group_tests_name("golden lines from git 2.39.5", tests, NULL, NULL);
}
