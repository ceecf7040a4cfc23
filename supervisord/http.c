/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The HTTP server (vigil.conf http_listen): /metrics, /healthz, the JSON
 * API and the dashboard, on vigild's own event loop.  libmicrohttpd does
 * the HTTP: it runs in its external epoll mode, its epoll descriptor is an
 * sd-event I/O source that calls MHD_run(), and its next timeout is an
 * sd-event timer; without a client there is neither a wakeup nor a timer.
 *
 * Every API request becomes the words of a vigilctl command, run by the
 * command table's dispatcher for a sink client (server_client_attach()):
 * no verb is written twice, and a command that waits (start, stop) parks
 * its client as on the socket while the connection is suspended.  The
 * command's exit code becomes the HTTP status (http_status()).
 *
 * Host.  On a TCP listener, a request whose Host header is neither an
 * address, nor localhost, nor a name of http_allowed_hosts is answered
 * 421: a page of another site that a browser reaches vigild through (DNS
 * rebinding) gets nothing (listen_addr_host_allowed()).  A browser does
 * not reach a unix listener: any Host goes there (curl --unix-socket).
 *
 * Rights.  On a TCP listener, /metrics and /healthz answer anyone, and so
 * do the dashboard's static files once there is a token; every other path
 * needs "Authorization: Bearer TOKEN" with the token of
 * http_token_file (compared in constant time), which gives control
 * rights; without a token file they all get 401.  On a unix listener the
 * peer's credentials decide as on the control socket (read-only peers get
 * 403 for what changes state); a right token gives control rights too.
 *
 * Limits: connections are accepted by httpconn.c, which keeps slow
 * clients from holding the server (a deadline for each request, caps
 * per peer, room for prompt clients); a connection idle for
 * HTTP_IDLE_TIMEOUT is closed, headers within HTTP_MEMORY_LIMIT, a body
 * of at most QUEUE_PAYLOAD_MAX (else 413), replies not read yet within
 * HTTP_MAX_SENDING (else 503).
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <bsd/sys/queue.h>
#include <errno.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "cmd.h"
#include "conf.h"
#include "evloop.h"
#include "httplisten.h"
#include "json.h"
#include "listenaddr.h"
#include "log.h"
#include "mhd.h"
#include "peer.h"
#include "queue.h"
#include "server.h"
#include "spare.h"
#include "vigild.h"
#include "xmalloc.h"

/* libmicrohttpd's own cap: httpconn.c's, and those it closed meanwhile. */
#define HTTP_MAX_CONNECTIONS 512
#define HTTP_IDLE_TIMEOUT 10 /* seconds */
#define HTTP_MEMORY_LIMIT (64 * 1024)
#define HTTP_MAX_BODY QUEUE_PAYLOAD_MAX
/*
 * The bytes of replies libmicrohttpd holds for clients that have not read
 * them yet; past it, a request is answered 503 (a reader that never reads
 * keeps its reply until the idle timeout, or longer if it reads a byte
 * now and then).
 */
#define HTTP_MAX_SENDING (64 * 1024 * 1024)

/* Who may have a route on a TCP listener, without the token. */
#define HTTP_OPEN_ALL 1  /* anyone */
#define HTTP_OPEN_PAGE 2 /* anyone, once there is a token to log in with */

/* How a route's reply becomes a body. */
enum http_body {
	HTTP_BODY_JSON,    /* the command writes JSON (--json) */
	HTTP_BODY_TEXT,    /* lines of text, wrapped into JSON */
	HTTP_BODY_METRICS, /* OpenMetrics text as is */
};

struct http_req;

/* A query parameter of a route and the option it becomes. */
struct http_param {
	const char *name;
	const char *option; /* NULL: the first operand, before NAME */
};

struct http_route {
	const char *method;
	const char *path;  /* "*" is one segment: the job's name */
	const char *verb;  /* NULL: answered here (fn) */
	const char *fixed; /* an option always given, or NULL */
	enum http_body body;
	int created; /* success is 201 */
	int quiet3;  /* exit 3 (not running) is a success, as status's */
	int open;    /* on TCP: HTTP_OPEN_* (else it needs the token) */
	const struct http_param *params;
	int (*fn)(struct http_req *); /* answers the route itself */
};

struct http_req {
	struct MHD_Connection *conn;
	const struct http_route *route;
	char *name; /* the "*" of the path, or NULL */
	struct client *client;
	struct proto_buf body; /* the request's body */
	struct proto_buf out;  /* the command's standard output */
	struct proto_buf err;  /* its standard error */
	int may_act;
	uid_t uid;
	char who[64];
	int code;      /* the command's exit code, once finished */
	int finished;  /* the command ended */
	int suspended; /* the connection waits for the command */
	int too_big;   /* the body passed HTTP_MAX_BODY */
	int answered;  /* refused at once: a response is queued */
	TAILQ_ENTRY(http_req) entry;
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
	struct MHD_Daemon *d;
	sd_event_source *io;
	sd_event_source *timer;
	sd_event_source *kick; /* runs libmicrohttpd after a resume */
	server_command_fn command;
	int fd;
	int is_unix;
	char *unix_path;
	char *token; /* NULL: no token file */
	size_t tokenlen;
	size_t sending; /* bytes of replies held (HTTP_MAX_SENDING) */
	TAILQ_HEAD(, http_req) reqs;
} http = { .fd = -1 };

static void http_arm(void);
static struct httpconn *http_conn(struct MHD_Connection *);
static void http_kick(void);

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
static const struct http_route *
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

/* A reply's body that libmicrohttpd holds: counted in http.sending. */
struct http_held {
	void *data;
	size_t len;
};

static void
http_held_free(void *arg)
{
	struct http_held *h = arg;

	http.sending -= h->len;
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
	    len > HTTP_MAX_SENDING - http.sending) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(data);
		log_debug("http: %zu bytes of replies held, %zu more refused",
		    http.sending, len);
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
		http.sending += len;
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
static int __attribute__((format(printf, 3, 4)))
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
	json_bool(&jw, req->may_act || http.is_unix);
	json_key(&jw, "act");
	json_bool(&jw, req->may_act);
	json_key(&jw, "token");
	json_bool(&jw, http.token != NULL);
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
		TAILQ_REMOVE(&http.reqs, req, entry);
		mhd.MHD_resume_connection(req->conn);
		/* Outside MHD_run(): run it again soon, from the loop. */
		http_kick();
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
	http.command(req->client, PROTO_F_JSON, a.argc, a.argv, data,
	    proto_buf_pending(&req->body));
	http_args_free(&a);
	if (req->finished) {
		server_client_detach(req->client);
		req->client = NULL;
		return (http_reply(req));
	}
	req->suspended = 1;
	TAILQ_INSERT_TAIL(&http.reqs, req, entry);
	mhd.MHD_suspend_connection(req->conn);
	return (MHD_YES);
}

/*
 * Compare a token with http_token_file's in a time that depends on
 * neither's contents (nor on where they first differ).
 */
static int
http_token_equal(const char *t, size_t len)
{
	volatile unsigned char d = len != http.tokenlen;
	size_t i;

	for (i = 0; i < http.tokenlen; i++)
		d |= (unsigned char)((i < len ? t[i] : 0) ^ http.token[i]);
	return (d == 0);
}

/* Return 1 if the request carries the token of http_token_file. */
static int
http_has_token(struct MHD_Connection *conn)
{
	const char *h;
	size_t len;

	if (http.token == NULL)
		return (0);
	h = mhd.MHD_lookup_connection_value(
	    conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	if (h == NULL || strncasecmp(h, "Bearer ", 7) != 0)
		return (0);
	h += 7;
	while (*h == ' ')
		h++;
	len = strlen(h);
	return (http_token_equal(h, len));
}

/* Who the peer is and what it may do, from its socket and its token. */
static void
http_peer(struct http_req *req)
{
	const union MHD_ConnectionInfo *ci;
	char addr[56];
	int r;

	req->uid = geteuid();
	req->may_act = http_has_token(req->conn);
	if (http.is_unix) {
		ci = mhd.MHD_get_connection_info(
		    req->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		r = ci != NULL ? peer_rights(ci->connect_fd, &req->uid) : -1;
		if (r == 1)
			req->may_act = 1;
		snprintf(req->who, sizeof(req->who), "http uid %ld",
		    r == -1 ? -1L : (long)req->uid);
		return;
	}
	ci = mhd.MHD_get_connection_info(
	    req->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci != NULL && ci->client_addr != NULL)
		listen_addr_format(ci->client_addr,
		    (socklen_t)sizeof(struct sockaddr_in6), addr, sizeof(addr));
	else
		strlcpy(addr, "?", sizeof(addr));
	snprintf(req->who, sizeof(req->who), "http %s", addr);
}

/*
 * A new request, its headers read: route it and check its rights.
 * Return 0 to read on, or the status of the refusal (answered).
 */
static int
http_begin(struct http_req *req, const char *method, const char *url,
    enum MHD_Result *ret)
{
	const char *cl, *host;
	int status, open;

	host = mhd.MHD_lookup_connection_value(
	    req->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
	if (!http.is_unix &&
	    !listen_addr_host_allowed(host, vigild.conf->http_allowed_hosts)) {
		*ret = http_error(req->conn, 421,
		    "Host \"%.100s\" is not vigild's: an address, localhost "
		    "or a name of http_allowed_hosts is",
		    host);
		return (421);
	}
	req->route = http_route(method, url, &req->name, &status);
	if (req->route == NULL) {
		*ret = status == 405 ?
		    http_error(req->conn, 405, "%s: method %s not allowed", url,
		        method) :
		    http_error(req->conn, 404, "%s: no such path", url);
		return (status);
	}
	http_peer(req);
	open = req->route->open == HTTP_OPEN_ALL ||
	    (req->route->open == HTTP_OPEN_PAGE && http.token != NULL);
	if (!open && !req->may_act && !http.is_unix) {
		*ret = http_error(req->conn, 401,
		    http.token == NULL ? "%s: no http_token_file is set: only "
		                         "/metrics and /healthz answer" :
		                         "%s: a bearer token is needed",
		    url);
		return (401);
	}
	if (req->route->verb != NULL && !req->may_act &&
	    !cmd_is_readonly(req->route->verb)) {
		*ret = http_error(req->conn, 403,
		    "%s: permission denied (%s may only read)", url, req->who);
		return (403);
	}
	cl = mhd.MHD_lookup_connection_value(
	    req->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (cl != NULL && strtoull(cl, NULL, 10) > HTTP_MAX_BODY) {
		*ret = http_error(
		    req->conn, 413, "body larger than %d bytes", HTTP_MAX_BODY);
		return (413);
	}
	return (0);
}

static enum MHD_Result
http_access(void *cls, struct MHD_Connection *conn, const char *url,
    const char *method, const char *version, const char *upload,
    size_t *upload_size, void **con_cls)
{
	struct http_req *req = *con_cls;
	enum MHD_Result ret = MHD_YES;

	(void)cls;
	(void)version;
	if (req == NULL) {
		req = xcalloc(1, sizeof(*req));
		req->conn = conn;
		proto_buf_init(&req->body);
		proto_buf_init(&req->out);
		proto_buf_init(&req->err);
		*con_cls = req;
		if (http_begin(req, method, url, &ret) != 0)
			req->answered = 1;
		httpconn_request(http_conn(conn), req->may_act);
		return (ret);
	}
	if (req->answered) {
		*upload_size = 0;
		return (MHD_YES);
	}
	if (*upload_size > 0) {
		if (req->too_big ||
		    *upload_size >
		        HTTP_MAX_BODY - proto_buf_pending(&req->body)) {
			req->too_big = 1;
			proto_buf_clear(&req->body);
		} else
			proto_buf_add(&req->body, upload, *upload_size);
		*upload_size = 0;
		return (MHD_YES);
	}
	if (req->finished) {
		server_client_detach(req->client);
		req->client = NULL;
		return (http_reply(req));
	}
	if (req->too_big)
		return (http_error(
		    conn, 413, "body larger than %d bytes", HTTP_MAX_BODY));
	if (req->route->fn != NULL)
		return (req->route->fn(req));
	return (http_run_command(req));
}

/* The record of conn's connection (httpconn.c), or NULL. */
static struct httpconn *
http_conn(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci;

	ci = mhd.MHD_get_connection_info(
	    conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return (ci != NULL ? ci->socket_context : NULL);
}

/* A connection starts or ends: its record, from httpconn.c, goes too. */
static void
http_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
    enum MHD_ConnectionNotificationCode toe)
{
	(void)cls;
	(void)conn;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED)
		*socket_context = httpconn_adding();
	else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		httpconn_gone(*socket_context);
		*socket_context = NULL;
	}
}

/* Give an accepted connection to libmicrohttpd: 0, or -1 (fd closed). */
static int
http_add(int fd, const struct sockaddr *sa, socklen_t len)
{
	return (
	    mhd.MHD_add_connection(http.d, fd, sa, len) == MHD_YES ? 0 : -1);
}

/* Run libmicrohttpd soon, from the loop. */
static void
http_kick(void)
{
	if (http.kick != NULL)
		(void)sd_event_source_set_enabled(http.kick, SD_EVENT_ONESHOT);
}

static void
http_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct http_req *req = *con_cls;

	(void)cls;
	(void)toe;
	if (req == NULL)
		return;
	httpconn_idle(http_conn(conn));
	if (req->suspended)
		TAILQ_REMOVE(&http.reqs, req, entry);
	server_client_detach(req->client);
	proto_buf_clear(&req->body);
	proto_buf_clear(&req->out);
	proto_buf_clear(&req->err);
	free(req->name);
	free(req);
	*con_cls = NULL;
}

static void __attribute__((format(printf, 2, 0)))
http_log(void *cls, const char *fmt, va_list ap)
{
	char *s;

	(void)cls;
	if (vasprintf(&s, fmt, ap) == -1)
		return;
	s[strcspn(s, "\n")] = '\0';
	log_debug("http: %s", s);
	free(s);
}

static void
http_step(void)
{
	(void)mhd.MHD_run(http.d);
	/* A connection on the spare descriptor may have been closed. */
	spare_give();
	http_arm();
}

static int
http_io(sd_event_source *s, int fd, uint32_t revents, void *arg)
{
	(void)s;
	(void)fd;
	(void)revents;
	(void)arg;
	http_step();
	return (0);
}

static int
http_kicked(sd_event_source *s, void *arg)
{
	(void)s;
	(void)arg;
	http_step();
	return (0);
}

static int
http_timer(sd_event_source *s, uint64_t usec, void *arg)
{
	(void)s;
	(void)usec;
	(void)arg;
	http_step();
	return (0);
}

/* Set the timer to libmicrohttpd's next timeout, or turn it off. */
static void
http_arm(void)
{
	MHD_UNSIGNED_LONG_LONG ms;
	uint64_t now;

	if (mhd.MHD_get_timeout(http.d, &ms) != MHD_YES) {
		if (http.timer != NULL)
			(void)sd_event_source_set_enabled(
			    http.timer, SD_EVENT_OFF);
		return;
	}
	if (ms > 24ULL * 3600 * 1000)
		ms = 24ULL * 3600 * 1000;
	(void)sd_event_now(evloop_event(), CLOCK_MONOTONIC, &now);
	now += ms * 1000;
	evloop_timer_at(
	    &http.timer, CLOCK_MONOTONIC, now, 10000, http_timer, NULL);
}

/*
 * Start the HTTP server of vigil.conf's http_listen, if set; each command
 * goes to command.  Return 0, or -1 with *cause set.
 */
int
http_open(server_command_fn command, char **cause)
{
	const union MHD_DaemonInfo *di;
	struct listen_addr a;
	int r;

	TAILQ_INIT(&http.reqs);
	if (vigild.conf->http_listen == NULL)
		return (0);
	http.command = command;
	if (listen_addr_parse(vigild.conf->http_listen, &a, cause) == -1 ||
	    mhd_load(cause) == -1)
		return (-1);
	if (vigild.conf->http_token_file != NULL &&
	    http_token_read(vigild.conf->http_token_file, &http.token,
	        &http.tokenlen, cause) == -1)
		return (-1);
	http.is_unix = a.ss.ss_family == AF_UNIX;
	if ((http.fd = http_listen_open(
	         &a, HTTP_MAX_CONNECTIONS, &http.unix_path, cause)) == -1)
		return (-1);
	http.d = mhd.MHD_start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
	        MHD_USE_ERROR_LOG | MHD_USE_NO_LISTEN_SOCKET,
	    0, NULL, NULL, http_access, NULL, MHD_OPTION_EXTERNAL_LOGGER,
	    http_log, NULL, MHD_OPTION_CONNECTION_LIMIT,
	    (unsigned int)HTTP_MAX_CONNECTIONS, MHD_OPTION_NOTIFY_CONNECTION,
	    http_notify, NULL, MHD_OPTION_CONNECTION_TIMEOUT,
	    (unsigned int)HTTP_IDLE_TIMEOUT, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
	    (size_t)HTTP_MEMORY_LIMIT, MHD_OPTION_NOTIFY_COMPLETED,
	    http_completed, NULL, MHD_OPTION_END);
	if (http.d == NULL ||
	    (di = mhd.MHD_get_daemon_info(http.d, MHD_DAEMON_INFO_EPOLL_FD)) ==
	        NULL) {
		xasprintf(cause, "http_listen %s: libmicrohttpd did not start",
		    vigild.conf->http_listen);
		return (-1);
	}
	r = sd_event_add_io(
	    evloop_event(), &http.io, di->epoll_fd, EPOLLIN, http_io, NULL);
	if (r >= 0)
		r = sd_event_add_defer(
		    evloop_event(), &http.kick, http_kicked, NULL);
	if (r >= 0)
		r = sd_event_source_set_enabled(http.kick, SD_EVENT_OFF);
	if (r < 0) {
		xasprintf(cause, "http: sd-event: %s", strerror(-r));
		return (-1);
	}
	http_arm();
	return (
	    httpconn_open(http.fd, http.is_unix, http_add, http_kick, cause));
}

/*
 * Stop the HTTP server: a request still waiting for its command is
 * answered 503 (its wait is dropped), every connection is closed.
 */
void
http_close(void)
{
	struct http_req *req;

	httpconn_close();
	if (http.d != NULL) {
		while ((req = TAILQ_FIRST(&http.reqs)) != NULL) {
			server_client_detach(req->client);
			req->client = NULL;
			http_sink_finish(req, EX_UNAVAILABLE);
		}
		mhd.MHD_stop_daemon(http.d);
		http.d = NULL;
	}
	http.io = sd_event_source_disable_unref(http.io);
	http.kick = sd_event_source_disable_unref(http.kick);
	http.timer = sd_event_source_disable_unref(http.timer);
	if (http.fd != -1)
		close(http.fd);
	http.fd = -1;
	if (http.unix_path != NULL)
		(void)unlink(http.unix_path);
	free(http.unix_path);
	http.unix_path = NULL;
	if (http.token != NULL)
		explicit_bzero(http.token, http.tokenlen);
	free(http.token);
	http.token = NULL;
	/*
	 * libmicrohttpd (and gnutls, with its thread-local storage) stays
	 * loaded until the process ends: this runs only at vigild's exit,
	 * where unloading gains nothing, and LeakSanitizer's check after it
	 * crashed now and then (under load) walking what dlclose had freed.
	 */
}
