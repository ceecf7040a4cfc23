/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The JSON API of the HTTP server (http-int.h): what a request asks,
 * once http.c has let it in.  A route table turns each request into the
 * words of a vigilctl command, run by the command table's dispatcher for
 * a sink client (server_client_attach()): no verb is written twice, and
 * a command that waits (start, stop) parks its client as on the socket
 * while the connection is suspended; its sink's finish resumes the
 * connection and has http.c run libmicrohttpd again (the kick given to
 * http_api_open()).  The command's exit code becomes the HTTP status
 * (http_status()).  /healthz, whoami and the dashboard's embedded files
 * are answered here too, and every refusal ({"error": ...}).
 *
 * Limits: replies not read yet within HTTP_MAX_SENDING (else 503).  It
 * calls nothing of http.c.
 */

#include "config.h"

#include <sys/types.h>

#include <bsd/sys/queue.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "cmd.h"
#include "http-int.h"
#include "json.h"
#include "log.h"
#include "mhd.h"
#include "proto.h"
#include "server.h"
#include "xmalloc.h"

/*
 * The bytes of replies libmicrohttpd holds for clients that have not read
 * them yet; past it, a request is answered 503 (a reader that never reads
 * keeps its reply until the idle timeout, or longer if it reads a byte
 * now and then).
 */
#define HTTP_MAX_SENDING (64 * 1024 * 1024)

/* A query parameter of a route and the option it becomes. */
struct http_param {
	const char *name;
	const char *option; /* NULL: the first operand, before NAME */
};

static int http_healthz(struct http_req *);
static int http_static(struct http_req *);
static int http_whoami(struct http_req *);

static const struct http_param http_params_n[] = {
	{ "n", "-n" },
	{ NULL, NULL },
};
static const struct http_param http_params_signal[] = {
	{ "sig", NULL },
	{ NULL, NULL },
};
static const struct http_param http_params_enqueue[] = {
	{ "delay", "--delay" },
	{ "unique", "--unique" },
	{ "priority", "--priority" },
	{ NULL, NULL },
};

#define GET(p) .method = "GET", .path = (p)
#define POST(p) .method = "POST", .path = (p)
static const struct http_route http_routes[] = {
	{ GET("/healthz"), .open = HTTP_OPEN_ALL, .fn = http_healthz },
	{ GET("/metrics"), .verb = "metrics", .body = HTTP_BODY_METRICS,
	    .open = HTTP_OPEN_ALL },
	{ GET("/"), .open = HTTP_OPEN_PAGE, .fn = http_static },
	{ GET("/dashboard.css"), .open = HTTP_OPEN_PAGE, .fn = http_static },
	{ GET("/dashboard.js"), .open = HTTP_OPEN_PAGE, .fn = http_static },
	{ GET("/favicon.svg"), .open = HTTP_OPEN_PAGE, .fn = http_static },
	{ GET("/api/v1/whoami"), .open = HTTP_OPEN_ALL, .fn = http_whoami },
	{ GET("/api/v1/jobs"), .verb = "status", .quiet3 = 1 },
	{ GET("/api/v1/jobs/*"), .verb = "status", .quiet3 = 1 },
	{ POST("/api/v1/jobs/*/start"), .verb = "start",
	    .body = HTTP_BODY_TEXT },
	{ POST("/api/v1/jobs/*/stop"), .verb = "stop", .body = HTTP_BODY_TEXT },
	{ POST("/api/v1/jobs/*/restart"), .verb = "restart",
	    .body = HTTP_BODY_TEXT },
	{ POST("/api/v1/jobs/*/signal"), .verb = "signal",
	    .body = HTTP_BODY_TEXT, .params = http_params_signal },
	{ GET("/api/v1/jobs/*/history"), .verb = "history",
	    .params = http_params_n },
	{ GET("/api/v1/jobs/*/log"), .verb = "tail", .params = http_params_n },
	{ GET("/api/v1/queues"), .verb = "queue" },
	{ GET("/api/v1/queues/*"), .verb = "queue" },
	{ GET("/api/v1/queues/*/dead"), .verb = "queue", .fixed = "--dead",
	    .params = http_params_n },
	{ POST("/api/v1/queues/*/messages"), .verb = "enqueue", .created = 1,
	    .params = http_params_enqueue },
};
#undef GET
#undef POST

static struct {
	server_command_fn command;
	void (*kick)(void); /* runs libmicrohttpd soon, from the loop */
	int is_unix;
	int token;      /* there is a token file */
	size_t sending; /* bytes of replies held (HTTP_MAX_SENDING) */
	TAILQ_HEAD(, http_req) reqs; /* the suspended */
} api = { .reqs = TAILQ_HEAD_INITIALIZER(api.reqs) };

/* Match path against a route's pattern; the "*" segment goes to *name. */
static int
http_match(const char *pattern, const char *path, char **name)
{
	const char *star = strchr(pattern, '*'), *end;
	size_t pre;

	*name = NULL;
	if (star == NULL)
		return (strcmp(pattern, path) == 0);
	pre = (size_t)(star - pattern);
	if (strncmp(pattern, path, pre) != 0)
		return (0);
	path += pre;
	end = strchrnul(path, '/');
	if (end == path || strcmp(star + 1, end) != 0)
		return (0);
	*name = xstrndup(path, (size_t)(end - path));
	return (1);
}

/*
 * The route of method and path: the matching one, or NULL with *status
 * 404 (no path like it) or 405 (the path answers another method).
 */
const struct http_route *
http_route(const char *method, const char *path, char **name, int *status)
{
	const struct http_route *r;
	size_t i;

	*status = 404;
	for (i = 0; i < sizeof(http_routes) / sizeof(http_routes[0]); i++) {
		r = &http_routes[i];
		if (!http_match(r->path, path, name))
			continue;
		if (strcmp(r->method, method) == 0)
			return (r);
		free(*name);
		*name = NULL;
		*status = 405;
	}
	return (NULL);
}

/* A reply's body that libmicrohttpd holds: counted in api.sending. */
struct http_held {
	void *data;
	size_t len;
};

static void
http_held_free(void *arg)
{
	struct http_held *h = arg;

	api.sending -= h->len;
	free(h->data);
	free(h);
}

/* Queue a response with the headers every answer has; free it. */
static int
http_queue(struct MHD_Connection *conn, int status, const char *type,
    void *data, size_t len, enum MHD_ResponseMemoryMode mode)
{
	static char busy[] = "{\"error\":\"vigild holds too many replies that "
	                     "are not read yet; try again\"}\n";
	struct MHD_Response *resp;
	struct http_held *h;
	enum MHD_Result r;

	if (mode != MHD_RESPMEM_PERSISTENT &&
	    len > HTTP_MAX_SENDING - api.sending) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(data);
		log_debug("http: %zu bytes of replies held, %zu more refused",
		    api.sending, len);
		status = 503;
		data = busy;
		len = sizeof(busy) - 1;
		mode = MHD_RESPMEM_PERSISTENT;
		type = "application/json";
	}
	if (mode == MHD_RESPMEM_PERSISTENT)
		resp = mhd.MHD_create_response_from_buffer(len, data, mode);
	else {
		h = xmalloc(sizeof(*h));
		h->len = len;
		if (mode == MHD_RESPMEM_MUST_COPY) {
			h->data = xmalloc(len + 1);
			memcpy(h->data, data, len);
		} else
			h->data = data;
		api.sending += len;
		resp =
		    mhd.MHD_create_response_from_buffer_with_free_callback_cls(
		        len, h->data, http_held_free, h);
		if (resp == NULL)
			http_held_free(h);
	}
	if (resp == NULL)
		return (MHD_NO);
	(void)mhd.MHD_add_response_header(resp, "Content-Type", type);
	(void)mhd.MHD_add_response_header(resp, "Cache-Control", "no-store");
	(void)mhd.MHD_add_response_header(
	    resp, "X-Content-Type-Options", "nosniff");
	if (status == 401)
		(void)mhd.MHD_add_response_header(
		    resp, "WWW-Authenticate", "Bearer realm=\"vigil\"");
	if (status == 405)
		(void)mhd.MHD_add_response_header(resp, "Allow", "GET, POST");
	if (status == 503)
		(void)mhd.MHD_add_response_header(resp, "Retry-After", "1");
	r = mhd.MHD_queue_response(conn, (unsigned int)status, resp);
	mhd.MHD_destroy_response(resp);
	return (r);
}

static void
http_json_write(void *arg, const void *p, size_t n)
{
	proto_buf_add(arg, p, n);
}

/* Answer {"error": msg} with status. */
int
http_error(struct MHD_Connection *conn, int status, const char *fmt, ...)
{
	struct proto_buf b;
	struct json jw;
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) == -1)
		fatal("vasprintf");
	va_end(ap);
	proto_buf_init(&b);
	json_init(&jw, http_json_write, &b);
	json_object_begin(&jw);
	json_key(&jw, "error");
	json_string(&jw, msg);
	json_object_end(&jw);
	proto_buf_add(&b, "\n", 1);
	free(msg);
	/* The response takes the buffer (MUST_FREE). */
	return (http_queue(conn, status, "application/json", b.data, b.len,
	    MHD_RESPMEM_MUST_FREE));
}

static int
http_healthz(struct http_req *req)
{
	return (http_queue(req->conn, 200, "text/plain; charset=utf-8",
	    (void *)"ok\n", 3, MHD_RESPMEM_PERSISTENT));
}

/*
 * What the peer may do: {"read": bool, "act": bool, "who": "..."}.  The
 * dashboard asks first, so that it never provokes a 401 to find out.
 */
static int
http_whoami(struct http_req *req)
{
	struct proto_buf b;
	struct json jw;

	proto_buf_init(&b);
	json_init(&jw, http_json_write, &b);
	json_object_begin(&jw);
	json_key(&jw, "read");
	json_bool(&jw, req->may_act || api.is_unix);
	json_key(&jw, "act");
	json_bool(&jw, req->may_act);
	json_key(&jw, "token");
	json_bool(&jw, api.token);
	json_key(&jw, "who");
	json_string(&jw, req->who);
	json_object_end(&jw);
	proto_buf_add(&b, "\n", 1);
	return (http_queue(req->conn, 200, "application/json", b.data, b.len,
	    MHD_RESPMEM_MUST_FREE));
}

static int
http_static(struct http_req *req)
{
	struct MHD_Connection *conn = req->conn;
	const struct http_route *r = req->route;
	const struct http_file *f;
	struct MHD_Response *resp;
	enum MHD_Result ret;

	for (f = http_files; f->path != NULL; f++) {
		if (strcmp(f->path, r->path) == 0)
			break;
	}
	if (f->path == NULL)
		return (http_error(conn, 404, "no such file"));
	resp = mhd.MHD_create_response_from_buffer(
	    f->len, (void *)f->data, MHD_RESPMEM_PERSISTENT);
	if (resp == NULL)
		return (MHD_NO);
	(void)mhd.MHD_add_response_header(resp, "Content-Type", f->type);
	(void)mhd.MHD_add_response_header(resp, "Cache-Control", "no-cache");
	(void)mhd.MHD_add_response_header(
	    resp, "X-Content-Type-Options", "nosniff");
	(void)mhd.MHD_add_response_header(resp, "Content-Security-Policy",
	    "default-src 'self'; frame-ancestors 'none'; form-action 'none'");
	(void)mhd.MHD_add_response_header(
	    resp, "Referrer-Policy", "no-referrer");
	ret = mhd.MHD_queue_response(conn, 200, resp);
	mhd.MHD_destroy_response(resp);
	return (ret);
}

/* The HTTP status of a command's exit code. */
static int
http_status(const struct http_route *r, int code)
{
	if (code == CMD_EXIT_NOT_RUNNING && r->quiet3)
		return (200);
	switch (code) {
	case CMD_EXIT_OK:
		return (r->created ? 201 : 200);
	case CMD_EXIT_USAGE:
		return (400);
	case CMD_EXIT_NO_JOB:
		return (404);
	case CMD_EXIT_FAILED:
	case CMD_EXIT_NOT_RUNNING:
		return (409);
	case EX_UNAVAILABLE:
		return (503);
	default:
		return (500);
	}
}

/* The unread bytes of b ("" when it never held any). */
static const char *
http_bytes(const struct proto_buf *b)
{
	return (b->data != NULL ? (const char *)b->data + b->off : "");
}

/* Add the lines of b, each without its newline, as a JSON array. */
static void
http_json_lines(struct json *jw, const struct proto_buf *b)
{
	const char *p = http_bytes(b), *nl;
	size_t left = proto_buf_pending(b);

	json_array_begin(jw);
	while (left > 0) {
		nl = memchr(p, '\n', left);
		json_string_len(jw, p, nl != NULL ? (size_t)(nl - p) : left);
		if (nl == NULL)
			break;
		left -= (size_t)(nl - p) + 1;
		p = nl + 1;
	}
	json_array_end(jw);
}

/* Answer the ended command of req. */
static int
http_reply_body(struct http_req *req)
{
	const struct http_route *r = req->route;
	int status = http_status(r, req->code);
	struct proto_buf b;
	struct json jw;
	const char *out;
	size_t len;

	if (r->quiet3 && req->code == CMD_EXIT_NOT_RUNNING)
		req->code = 0;
	if (r->body == HTTP_BODY_METRICS && req->code == 0) {
		return (http_queue(req->conn, status,
		    "application/openmetrics-text; version=1.0.0; "
		    "charset=utf-8",
		    (void *)http_bytes(&req->out), proto_buf_pending(&req->out),
		    MHD_RESPMEM_MUST_COPY));
	}
	if (r->body == HTTP_BODY_JSON && req->code == 0) {
		return (http_queue(req->conn, status, "application/json",
		    (void *)http_bytes(&req->out), proto_buf_pending(&req->out),
		    MHD_RESPMEM_MUST_COPY));
	}
	proto_buf_init(&b);
	json_init(&jw, http_json_write, &b);
	json_object_begin(&jw);
	json_key(&jw, "exit_code");
	json_int(&jw, req->code);
	if (r->body == HTTP_BODY_TEXT) {
		json_key(&jw, "output");
		http_json_lines(&jw, &req->out);
	} else if ((len = proto_buf_pending(&req->out)) > 0) {
		/* The command's own JSON, a complete value. */
		out = http_bytes(&req->out);
		while (len > 0 && out[len - 1] == '\n')
			len--;
		json_key(&jw, "result");
		json_raw(&jw, out, len);
	}
	json_key(&jw, "errors");
	http_json_lines(&jw, &req->err);
	json_object_end(&jw);
	proto_buf_add(&b, "\n", 1);
	return (http_queue(req->conn, status, "application/json", b.data, b.len,
	    MHD_RESPMEM_MUST_FREE));
}

/*
 * Answer the ended command of req, and let go of its output at once: a
 * reader that does not read holds only the reply (HTTP_MAX_SENDING).
 */
static int
http_reply(struct http_req *req)
{
	int r = http_reply_body(req);

	proto_buf_clear(&req->out);
	proto_buf_clear(&req->err);
	proto_buf_clear(&req->body);
	return (r);
}

static void
http_sink_write(void *arg, enum proto_type type, const void *p, size_t n)
{
	struct http_req *req = arg;

	if (type == PROTO_STDOUT)
		proto_buf_add(&req->out, p, n);
	else if (type == PROTO_STDERR)
		proto_buf_add(&req->err, p, n);
}

static void
http_sink_finish(void *arg, int code)
{
	struct http_req *req = arg;

	req->code = code;
	req->finished = 1;
	if (req->suspended) {
		req->suspended = 0;
		TAILQ_REMOVE(&api.reqs, req, entry);
		mhd.MHD_resume_connection(req->conn);
		/* Outside MHD_run(): run it again soon, from the loop. */
		api.kick();
	}
}

static const struct server_sink http_sink = {
	.write = http_sink_write,
	.finish = http_sink_finish,
};

struct http_args {
	char *argv[16]; /* verb, fixed, 3 options and values, --, 2 operands */
	int argc;
	const struct http_route *route;
	char *bad;       /* a parameter the route does not take, or lacks */
	const char *why; /* "unknown", "missing" or "repeated" */
};

/* Is option among the words so far? */
static int
http_has_word(const struct http_args *a, const char *option)
{
	int i;

	for (i = 0; i < a->argc; i++) {
		if (strcmp(a->argv[i], option) == 0)
			return (1);
	}
	return (0);
}

static enum MHD_Result
http_arg(void *arg, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct http_args *a = arg;
	const struct http_param *p;

	(void)kind;
	if (a->bad != NULL)
		return (MHD_YES);
	for (p = a->route->params; p != NULL && p->name != NULL; p++) {
		if (strcmp(p->name, key) != 0)
			continue;
		if (p->option == NULL)
			return (MHD_YES); /* an operand: http_words() */
		if (http_has_word(a, p->option)) {
			a->bad = xstrdup(key);
			a->why = "repeated";
			return (MHD_YES);
		}
		a->argv[a->argc++] = xstrdup(p->option);
		a->argv[a->argc++] = xstrdup(value != NULL ? value : "");
		return (MHD_YES);
	}
	a->bad = xstrdup(key);
	a->why = "unknown";
	return (MHD_YES);
}

/*
 * The words of the route's command: the verb, the fixed option, the
 * options of the query, "--", the first operand (a query parameter
 * without option) and the name.  Return the count, or -1 with *bad set.
 */
static int
http_words(struct http_req *req, struct http_args *a)
{
	const struct http_route *r = req->route;
	const struct http_param *p;
	const char *v;

	memset(a, 0, sizeof(*a));
	a->route = r;
	a->argv[a->argc++] = xstrdup(r->verb);
	if (r->fixed != NULL)
		a->argv[a->argc++] = xstrdup(r->fixed);
	(void)mhd.MHD_get_connection_values(
	    req->conn, MHD_GET_ARGUMENT_KIND, http_arg, a);
	if (a->bad != NULL)
		return (-1);
	a->argv[a->argc++] = xstrdup("--");
	for (p = r->params; p != NULL && p->name != NULL; p++) {
		if (p->option != NULL)
			continue;
		v = mhd.MHD_lookup_connection_value(
		    req->conn, MHD_GET_ARGUMENT_KIND, p->name);
		if (v == NULL) {
			a->bad = xstrdup(p->name);
			a->why = "missing";
			return (-1);
		}
		a->argv[a->argc++] = xstrdup(v);
	}
	if (req->name != NULL)
		a->argv[a->argc++] = xstrdup(req->name);
	return (a->argc);
}

static void
http_args_free(struct http_args *a)
{
	int i;

	for (i = 0; i < a->argc; i++)
		free(a->argv[i]);
	free(a->bad);
}

/* Run the route's command; answer now, or suspend until it ends. */
static int
http_run_command(struct http_req *req)
{
	struct http_args a;
	const uint8_t *data = NULL;
	int r;

	if (http_words(req, &a) == -1) {
		r = http_error(
		    req->conn, 400, "%s parameter: %s", a.why, a.bad);
		http_args_free(&a);
		return (r);
	}
	if (strcmp(req->route->verb, "enqueue") == 0)
		data = (const uint8_t *)http_bytes(&req->body);
	req->client = server_client_attach(
	    &http_sink, req, req->may_act, req->uid, req->who);
	api.command(req->client, PROTO_F_JSON, a.argc, a.argv, data,
	    proto_buf_pending(&req->body));
	http_args_free(&a);
	if (req->finished) {
		server_client_detach(req->client);
		req->client = NULL;
		return (http_reply(req));
	}
	req->suspended = 1;
	TAILQ_INSERT_TAIL(&api.reqs, req, entry);
	mhd.MHD_suspend_connection(req->conn);
	return (MHD_YES);
}

/*
 * Be ready for requests: each command goes to command, kick runs
 * libmicrohttpd again (after a resume); is_unix (a unix listener) and
 * token (there is a token file) are what whoami tells.
 */
void
http_api_open(
    server_command_fn command, void (*kick)(void), int is_unix, int token)
{
	api.command = command;
	api.kick = kick;
	api.is_unix = is_unix;
	api.token = token;
}

/*
 * Answer 503 each request still waiting for its command (its wait is
 * dropped).
 */
void
http_api_close(void)
{
	struct http_req *req;

	while ((req = TAILQ_FIRST(&api.reqs)) != NULL) {
		server_client_detach(req->client);
		req->client = NULL;
		http_sink_finish(req, EX_UNAVAILABLE);
	}
}

/* A new request of conn, its headers read. */
struct http_req *
http_req_new(struct MHD_Connection *conn)
{
	struct http_req *req;

	req = xcalloc(1, sizeof(*req));
	req->conn = conn;
	proto_buf_init(&req->body);
	proto_buf_init(&req->out);
	proto_buf_init(&req->err);
	return (req);
}

/*
 * The request is read, its body too: answer it (its ended command, a body
 * too large, a route answered here), or run its command.
 */
int
http_answer(struct http_req *req)
{
	if (req->finished) {
		server_client_detach(req->client);
		req->client = NULL;
		return (http_reply(req));
	}
	if (req->too_big)
		return (http_error(req->conn, 413, "body larger than %d bytes",
		    HTTP_MAX_BODY));
	if (req->route->fn != NULL)
		return (req->route->fn(req));
	return (http_run_command(req));
}

/* The request is over: drop its wait, its client and its buffers. */
void
http_req_free(struct http_req *req)
{
	if (req->suspended)
		TAILQ_REMOVE(&api.reqs, req, entry);
	server_client_detach(req->client);
	proto_buf_clear(&req->body);
	proto_buf_clear(&req->out);
	proto_buf_clear(&req->err);
	free(req->name);
	free(req);
}
