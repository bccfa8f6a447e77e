/* tr2_view.c: processes, threads, open regions and children, for the
 * targets that keep state (see tr2_view.h). */
#include <stdlib.h>
#include <string.h>
#include "tr2_buf.h"
#include "tr2_mem.h"
#include "tr2_view.h"

static void *xreallocarray(void *p, size_t n, size_t size)
{
	p = reallocarray(p, n, size);
	if (!p)
		abort();
	return p;
}

struct tr2_view *tr2_view_new(void)
{
	struct tr2_view *v = xcalloc(1, sizeof(*v));

	v->nslots = 64;
	v->slots = xcalloc(v->nslots, sizeof(*v->slots));
	v->next_id = TR2_VIEW_ID_BASE;
	return v;
}

static void free_thread(struct tr2_view_thread *t)
{
	free(t->name);
	free(t->frames);
	tr2_buf_free(&t->names);
	free(t);
}

void tr2_view_free(struct tr2_view *v)
{
	if (!v)
		return;
	for (int i = 0; i < v->nprocs; i++) {
		struct tr2_view_proc *p = v->procs[i];

		for (int j = 0; j < p->nthreads; j++)
			free_thread(p->threads[j]);
		for (int j = 0; j < p->nchildren; j++)
			free(p->children[j].name);
		free(p->threads);
		free(p->children);
		free(p->sid);
		free(p->name);
		free(p);
	}
	free(v->procs);
	free(v->slots);
	free(v);
}

size_t tr2_view_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return (size_t)h;
}

/* The slot holding process (sid, stream), or the empty one where it goes. */
static size_t find_slot(struct tr2_view_proc **slots, size_t nslots, const char *sid, uint64_t stream)
{
	size_t i = (tr2_view_hash(sid) ^ (size_t)stream) & (nslots - 1);

	while (slots[i] && (slots[i]->stream != stream || strcmp(slots[i]->sid, sid)))
		i = (i + 1) & (nslots - 1);
	return i;
}

/* The pid in a sid's last component, "...-P<8 hex>"; 0 when there is none. */
static uint32_t sid_pid(const char *sid)
{
	const char *last = strrchr(sid, '/'), *p;
	uint32_t pid = 0;
	int n = 0;

	p = strstr(last ? last + 1 : sid, "-P");
	if (!p)
		return 0;
	for (p += 2; *p && n < 8; p++, n++) {
		int d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;

		if (d < 0)
			return 0;
		pid = pid << 4 | (uint32_t)d;
	}
	return n == 8 && !*p && pid < TR2_VIEW_ID_BASE ? pid : 0;
}

struct tr2_view_proc *tr2_view_find(const struct tr2_view *v, const char *sid, uint64_t stream)
{
	return v->nslots ? v->slots[find_slot(v->slots, v->nslots, sid ? sid : "", stream)] : NULL;
}

struct tr2_view_proc *tr2_view_proc(struct tr2_view *v, const char *sid, uint64_t stream, int64_t now_ns,
				    bool *is_new)
{
	struct tr2_view_proc *p, *same;
	size_t i;

	if (!sid)
		sid = "";
	*is_new = false;
	if (v->last && v->last->stream == stream && !strcmp(v->last->sid, sid)) {
		if (now_ns > v->last->last_ns)
			v->last->last_ns = now_ns;
		return v->last;
	}
	i = find_slot(v->slots, v->nslots, sid, stream);
	if (!v->slots[i]) {
		if (2 * (size_t)(v->nprocs + 1) > v->nslots) {
			struct tr2_view_proc **old = v->slots;
			size_t n = v->nslots;

			v->nslots *= 2;
			v->slots = xcalloc(v->nslots, sizeof(*v->slots));
			for (size_t j = 0; j < n; j++)
				if (old[j])
					v->slots[find_slot(v->slots, v->nslots, old[j]->sid, old[j]->stream)] = old[j];
			free(old);
			i = find_slot(v->slots, v->nslots, sid, stream);
		}
		p = xcalloc(1, sizeof(*p));
		p->sid = xstrdup(sid);
		p->stream = stream;
		p->pid = sid_pid(sid);
		same = p->pid ? tr2_view_proc_by_pid(v, p->pid) : NULL;
		if (!p->pid || (same && !same->ended))
			p->pid = v->next_id++;
		p->index = v->nprocs;
		p->first_ns = now_ns;
		v->procs = xreallocarray(v->procs, (size_t)v->nprocs + 1, sizeof(*v->procs));
		v->procs[v->nprocs++] = p;
		v->slots[i] = p;
		*is_new = true;
	}
	p = v->slots[i];
	if (*is_new || now_ns > p->last_ns)
		p->last_ns = now_ns;
	v->last = p;
	return p;
}

struct tr2_view_thread *tr2_view_thread(struct tr2_view *v, struct tr2_view_proc *p, const char *name,
					int64_t now_ns, bool *is_new)
{
	struct tr2_view_thread *t;

	if (!name)
		name = "main";
	*is_new = false;
	if (p->nthreads && !strcmp(p->threads[p->last_thread]->name, name))
		return p->threads[p->last_thread];
	for (int i = 0; i < p->nthreads; i++)
		if (!strcmp(p->threads[i]->name, name)) {
			p->last_thread = i;
			return p->threads[i];
		}
	t = xcalloc(1, sizeof(*t));
	t->name = xstrdup(name);
	t->tid = !strcmp(name, "main") ? p->pid : v->next_id++;
	t->first_ns = now_ns;
	p->threads = xreallocarray(p->threads, (size_t)p->nthreads + 1, sizeof(*p->threads));
	p->last_thread = p->nthreads;
	p->threads[p->nthreads++] = t;
	*is_new = true;
	return t;
}

struct tr2_view_frame *tr2_view_push(struct tr2_view_thread *t, const char *category, const char *label,
				     int64_t now_ns)
{
	struct tr2_view_frame *f;

	if (t->depth == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 8;
		t->frames = xreallocarray(t->frames, (size_t)t->cap, sizeof(*t->frames));
	}
	f = &t->frames[t->depth++];
	f->name_off = t->names.len;
	f->start_ns = now_ns;
	f->child_ns = 0;
	f->extra_len = 0;
	tr2_buf_adds(&t->names, category ? category : "");
	tr2_buf_putc(&t->names, ':');
	tr2_buf_adds(&t->names, label ? label : "");
	tr2_buf_putc(&t->names, '\0');
	return f;
}

void tr2_view_keep(struct tr2_view_thread *t, const char *text, size_t n)
{
	t->frames[t->depth - 1].extra_len += n;
	tr2_buf_put(&t->names, text, n);
}

void tr2_view_pop(struct tr2_view_thread *t, int64_t now_ns)
{
	struct tr2_view_frame *f = &t->frames[--t->depth];

	if (t->depth)
		f[-1].child_ns = tr2_view_add(f[-1].child_ns, tr2_view_sub(now_ns, f->start_ns));
	t->names.len = f->name_off;
}

void tr2_view_child_start(struct tr2_view_proc *p, int child_id, int64_t now_ns, uint32_t tid, const char *name)
{
	struct tr2_view_child *c;

	p->children = xreallocarray(p->children, (size_t)p->nchildren + 1, sizeof(*p->children));
	c = &p->children[p->nchildren++];
	c->child_id = child_id;
	c->start_ns = now_ns;
	c->tid = tid;
	c->name = xstrdup(name);
}

bool tr2_view_child_take(struct tr2_view_proc *p, int child_id, struct tr2_view_child *out)
{
	for (int i = p->nchildren - 1; i >= 0; i--)
		if (p->children[i].child_id == child_id) {
			*out = p->children[i];
			p->children[i] = p->children[--p->nchildren];
			return true;
		}
	return false;
}

struct tr2_view_proc *tr2_view_proc_by_pid(const struct tr2_view *v, uint32_t pid)
{
	for (int i = v->nprocs - 1; i >= 0; i--)
		if (v->procs[i]->pid == pid)
			return v->procs[i];
	return NULL;
}

void tr2_view_name_proc(struct tr2_view_proc *p, const struct tr2_ev *ev)
{
	const char *name = NULL;

	if (ev->kind == TR2_EV_CMD_NAME && ev->name && *ev->name) {
		name = ev->name;
		p->named_by_cmd = true;
	} else if (ev->kind == TR2_EV_START && !p->named_by_cmd && ev->argv && ev->argv[0]) {
		const char *slash = strrchr(ev->argv[0], '/');

		name = slash ? slash + 1 : ev->argv[0];
	}
	if (name) {
		free(p->name);
		p->name = xstrdup(name);
	}
}
