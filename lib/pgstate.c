/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The SQL of cluster mode (pgstate.h).  The design, with the failure
 * timelines each statement was written against, is in docs/cluster.md.
 */

#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgstate.h"
#include "xmalloc.h"

/*
 * Schema version 1, applied in one transaction under a transaction-scoped
 * advisory lock: several vigild starting at once against an empty
 * database give one schema.  Every statement is idempotent; later
 * versions append guarded steps and raise schema_version.
 */
const char pg_schema[] =
    "BEGIN;\n"
    "SELECT pg_advisory_xact_lock(" PG_LOCK_NS ", 0);\n"
    "CREATE SCHEMA IF NOT EXISTS vigil;\n"
    "CREATE TABLE IF NOT EXISTS vigil.cluster (\n"
    "  id boolean PRIMARY KEY DEFAULT true CHECK (id),\n"
    "  schema_version int NOT NULL,\n"
    "  timeline int NOT NULL DEFAULT 0,\n"
    "  quarantine_until timestamptz NOT NULL DEFAULT '-infinity');\n"
    "INSERT INTO vigil.cluster (schema_version) VALUES (1)\n"
    "  ON CONFLICT DO NOTHING;\n"
    "CREATE TABLE IF NOT EXISTS vigil.node (\n"
    "  name text PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 128),\n"
    "  incarnation bigint NOT NULL,\n"
    "  boot_id text NOT NULL,\n"
    "  pid int NOT NULL,\n"
    "  version text NOT NULL,\n"
    "  started_at timestamptz NOT NULL,\n"
    "  heartbeat_at timestamptz NOT NULL,\n"
    "  expires_at timestamptz NOT NULL);\n"
    "CREATE TABLE IF NOT EXISTS vigil.job (\n"
    "  id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY,\n"
    "  name text UNIQUE NOT NULL,\n"
    "  kind text NOT NULL CHECK (kind IN ('service', 'periodic', "
    "'queue')),\n"
    "  created_at timestamptz NOT NULL DEFAULT now());\n"
    "CREATE TABLE IF NOT EXISTS vigil.node_job (\n"
    "  node text NOT NULL REFERENCES vigil.node(name) ON DELETE CASCADE,\n"
    "  job_id int NOT NULL REFERENCES vigil.job(id) ON DELETE CASCADE,\n"
    "  spec_hash text NOT NULL,\n"
    "  PRIMARY KEY (node, job_id));\n"
    "CREATE TABLE IF NOT EXISTS vigil.lease (\n"
    "  job_id int NOT NULL REFERENCES vigil.job(id) ON DELETE CASCADE,\n"
    "  instance int NOT NULL,\n"
    "  holder text,\n"
    "  epoch bigint NOT NULL DEFAULT 0,\n"
    "  acquired_at timestamptz,\n"
    "  renewed_at timestamptz,\n"
    "  expires_at timestamptz NOT NULL DEFAULT '-infinity',\n"
    "  pid int,\n"
    "  state text,\n"
    "  held boolean NOT NULL DEFAULT false,\n"
    "  held_by text,\n"
    "  held_seq bigint NOT NULL DEFAULT 0,\n"
    "  PRIMARY KEY (job_id, instance));\n"
    "CREATE TABLE IF NOT EXISTS vigil.periodic (\n"
    "  job_id int NOT NULL REFERENCES vigil.job(id) ON DELETE CASCADE,\n"
    "  instance int NOT NULL,\n"
    "  last_slot timestamptz NOT NULL DEFAULT '-infinity',\n"
    "  last_node text,\n"
    "  skipped bigint NOT NULL DEFAULT 0,\n"
    "  PRIMARY KEY (job_id, instance));\n"
    "CREATE TABLE IF NOT EXISTS vigil.run (\n"
    "  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,\n"
    "  job_id int NOT NULL REFERENCES vigil.job(id) ON DELETE CASCADE,\n"
    "  instance int NOT NULL,\n"
    "  node text NOT NULL,\n"
    "  epoch bigint,\n"
    "  message_id bigint,\n"
    "  pid int,\n"
    "  started_at timestamptz NOT NULL,\n"
    "  ended_at timestamptz,\n"
    "  exit_code int,\n"
    "  signal int,\n"
    "  reason text);\n"
    "CREATE INDEX IF NOT EXISTS run_by_job ON vigil.run (job_id, id DESC);\n"
    "COMMIT;\n"
    "SELECT schema_version FROM vigil.cluster;\n";

/*
 * Each session: lease statements commit durably whatever the database's
 * default (a lost renew commit would make the node's window longer than
 * the database's); no statement or open transaction outlives a query
 * timeout on the server either (sent as a simple query, the timeout in
 * milliseconds: pg_session_sql).
 */
char *
pg_session_sql(unsigned long long ms)
{
	char *s;

	xasprintf(&s,
	    "SET client_min_messages = warning; "
	    "SET synchronous_commit = on; SET statement_timeout = %llu; "
	    "SET idle_in_transaction_session_timeout = %llu",
	    ms, ms);
	return (s);
}

/*
 * $1 name, $2 incarnation, $3 boot_id, $4 pid, $5 version, $6 ttl ms.
 * A live vigild on another host (another boot_id) with the same
 * node_name: no row (refused).
 */
const char pg_node_register[] =
    "INSERT INTO vigil.node AS n (name, incarnation, boot_id, pid, "
    "version, started_at, heartbeat_at, expires_at) "
    "VALUES ($1, $2, $3, $4, $5, now(), now(), "
    "now() + $6 * interval '1 ms') "
    "ON CONFLICT (name) DO UPDATE "
    "SET incarnation = excluded.incarnation, boot_id = excluded.boot_id, "
    "pid = excluded.pid, version = excluded.version, started_at = now(), "
    "heartbeat_at = now(), expires_at = excluded.expires_at "
    "WHERE n.expires_at < now() OR n.boot_id = excluded.boot_id "
    "RETURNING name";

/*
 * $1 ttl ms.  Before any acquire on a new connection: a WAL timeline
 * newer than the one recorded means a failover; no lease changes hands
 * for one ttl (leases that survived are renewed meanwhile).  Answer:
 * (timeline, quarantine ms left) when it moved, no row otherwise.
 */
const char pg_failover_guard[] =
    "UPDATE vigil.cluster SET timeline = t.tl, "
    "quarantine_until = CASE WHEN timeline = 0 THEN quarantine_until "
    "ELSE greatest(quarantine_until, now() + $1 * interval '1 ms') END "
    "FROM (SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), "
    "1, 8))::bit(32)::int AS tl) t "
    "WHERE vigil.cluster.timeline < t.tl "
    "RETURNING t.tl, (extract(epoch FROM greatest(quarantine_until, now()) "
    "- now()) * 1000)::bigint";

/* $1 names, $2 kinds (arrays): no setup step, no race. */
const char pg_job_seed[] = "INSERT INTO vigil.job (name, kind) "
                           "SELECT * FROM unnest($1::text[], $2::text[]) "
                           "ON CONFLICT (name) DO NOTHING";

/*
 * $1 node, $2 names, $3 spec hashes (arrays): which node has which job
 * file (drift), and the jobs' ids.  Answer: (id, name, the instances
 * the operator stopped cluster-wide as an array, or NULL) per job.
 */
const char pg_node_jobs[] =
    "WITH h AS (SELECT * FROM unnest($2::text[], $3::text[]) "
    "AS h(name, hash)), "
    "d AS (DELETE FROM vigil.node_job nj WHERE nj.node = $1 AND "
    "nj.job_id NOT IN (SELECT j.id FROM vigil.job j JOIN h USING (name))), "
    "s AS (INSERT INTO vigil.node_job (node, job_id, spec_hash) "
    "SELECT $1, j.id, h.hash FROM h JOIN vigil.job j USING (name) "
    "ON CONFLICT (node, job_id) DO UPDATE SET spec_hash = "
    "excluded.spec_hash RETURNING job_id) "
    "SELECT j.id, j.name, (SELECT array_agg(l.instance ORDER BY "
    "l.instance) FROM vigil.lease l WHERE l.job_id = j.id AND l.held) "
    "FROM vigil.job j "
    "WHERE j.name = ANY($2::text[])";

/*
 * $1 job id, $2 instance, $3 node, $4 ttl ms.  Always one row: (the new
 * epoch or NULL, the holder, its ms left or NULL, quarantine ms left,
 * whether the operator stopped the instance cluster-wide).
 * The same node may take its own lease again (a restarted vigild, after
 * reclaiming its leftovers through the local lock): a new epoch.
 */
const char pg_lease_acquire[] =
    "WITH a AS ("
    "INSERT INTO vigil.lease AS l (job_id, instance, holder, epoch, "
    "acquired_at, renewed_at, expires_at) "
    "SELECT $1, $2, $3, (greatest(c.timeline - 1, 0)::bigint << 40) + 1, "
    "now(), now(), now() + $4 * interval '1 ms' "
    "FROM vigil.cluster c WHERE now() >= c.quarantine_until "
    "ON CONFLICT (job_id, instance) DO UPDATE "
    "SET holder = excluded.holder, "
    "epoch = greatest(l.epoch + 1, excluded.epoch), acquired_at = now(), "
    "renewed_at = now(), expires_at = excluded.expires_at, pid = NULL, "
    "state = NULL "
    "WHERE NOT l.held AND (l.expires_at < now() OR l.holder IS NULL "
    "OR l.holder = excluded.holder) "
    "RETURNING l.epoch) "
    "SELECT (SELECT epoch FROM a), l.holder, "
    "CASE WHEN l.expires_at > now() THEN "
    "(extract(epoch FROM l.expires_at - now()) * 1000)::bigint END, "
    "(extract(epoch FROM greatest(c.quarantine_until, now()) - now()) "
    "* 1000)::bigint, l.held "
    "FROM vigil.cluster c LEFT JOIN vigil.lease l "
    "ON l.job_id = $1 AND l.instance = $2";

/*
 * $1 node, $2 job ids, $3 instances, $4 epochs, $5 pids (0: no run) of
 * the leases (arrays), $6 ttl ms: everything a node holds, in one round
 * trip.  Answer: ('l', job id, instance, held) per lease renewed, ('n', 1
 * or 0, 0, false) for the node row.  A lease missing from the answer is
 * lost: someone else holds it now; a held one is to be stopped (the
 * operator's stop elsewhere).
 */
const char pg_lease_renew_all[] =
    "WITH n AS (UPDATE vigil.node SET heartbeat_at = now(), "
    "expires_at = now() + $6 * interval '1 ms' WHERE name = $1 "
    "RETURNING 1), "
    "l AS (UPDATE vigil.lease t SET renewed_at = now(), "
    "expires_at = now() + $6 * interval '1 ms', "
    "pid = nullif(k.p, 0), state = CASE WHEN k.p > 0 THEN 'RUNNING' END "
    "FROM unnest($2::int[], $3::int[], $4::bigint[], $5::int[]) "
    "AS k(j, i, e, p) "
    "WHERE t.job_id = k.j AND t.instance = k.i AND t.epoch = k.e "
    "AND t.holder = $1 "
    "RETURNING 'l'::text AS kind, t.job_id::bigint AS a, t.instance AS b, "
    "t.held AS c) "
    "SELECT * FROM l "
    "UNION ALL SELECT 'n', count(*), 0, false FROM n";

/* $1 job id, $2 instance, $3 node, $4 epoch, $5 pid, $6 state: status. */
const char pg_lease_state[] =
    "UPDATE vigil.lease SET pid = $5, state = $6 "
    "WHERE job_id = $1 AND instance = $2 AND holder = $3 AND epoch = $4";

/*
 * $1 job id, $2 instance, $3 node, $4 epoch: only once the run's group is
 * gone.  The row and its epoch stay; standbys are woken.
 */
const char pg_lease_release[] =
    "WITH r AS (UPDATE vigil.lease SET holder = NULL, "
    "expires_at = '-infinity', pid = NULL, state = NULL "
    "WHERE job_id = $1 AND instance = $2 AND holder = $3 AND epoch = $4 "
    "RETURNING job_id, instance) "
    "SELECT pg_notify('vigil', 'lease ' || job_id || ' ' || instance) "
    "FROM r";

/*
 * $1 job id, $2 instance, $3 held (true/false), $4 who and where: the
 * operator's stop (or start) of an instance, cluster-wide, numbered (a
 * node ignores a notice older than what it knows).  Every node is told:
 * "held JOB_ID INSTANCE 1|0 SEQ WHO".  Answer: (seq).
 */
const char pg_lease_hold[] =
    "WITH u AS (INSERT INTO vigil.lease AS l (job_id, instance, held, "
    "held_by, held_seq) VALUES ($1, $2, $3, $4 || ' at ' || "
    "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), 1) "
    "ON CONFLICT (job_id, instance) DO UPDATE SET held = excluded.held, "
    "held_by = excluded.held_by, held_seq = l.held_seq + 1 "
    "RETURNING job_id, instance, held, held_seq), "
    "n AS (SELECT pg_notify('vigil', 'held ' || job_id || ' ' || instance "
    "|| ' ' || held::int || ' ' || held_seq || ' ' || $4) FROM u) "
    "SELECT held_seq FROM u, n";

/*
 * $1 job id, $2 instance, $3 the slot (Unix usec), $4 node, $5 clock
 * tolerance ms: one run per slot cluster-wide.  The first node to commit
 * the slot wins (a row); an older slot never fires again, and a node
 * whose clock runs ahead cannot fire a slot early.
 */
const char pg_periodic_fire[] =
    "INSERT INTO vigil.periodic AS p (job_id, instance, last_slot, "
    "last_node) "
    "SELECT $1, $2, to_timestamp($3::bigint / 1e6), $4 "
    "WHERE to_timestamp($3::bigint / 1e6) <= now() + $5 * interval '1 ms' "
    "ON CONFLICT (job_id, instance) DO UPDATE "
    "SET last_slot = excluded.last_slot, last_node = excluded.last_node "
    "WHERE p.last_slot < excluded.last_slot "
    "RETURNING last_slot";

/* $1 job id, $2 instance: a slot won while the last run still went. */
const char pg_periodic_skipped[] =
    "UPDATE vigil.periodic SET skipped = skipped + 1 "
    "WHERE job_id = $1 AND instance = $2";

/*
 * vigilctl cluster: every node with its version, the age of its last
 * heartbeat in ms, whether it is alive, the leases it holds, and the
 * cluster jobs whose spec differs from another node's (config drift).
 */
const char pg_cluster_nodes[] =
    "SELECT n.name, n.version, "
    "(extract(epoch FROM now() - n.heartbeat_at) * 1000)::bigint, "
    "n.expires_at > now(), "
    "(SELECT count(*) FROM vigil.lease l WHERE l.holder = n.name "
    "AND l.expires_at > now()), "
    "(SELECT string_agg(j.name, ',' ORDER BY j.name) "
    "FROM vigil.node_job nj JOIN vigil.job j ON j.id = nj.job_id "
    "WHERE nj.node = n.name AND EXISTS (SELECT 1 FROM vigil.node_job o "
    "JOIN vigil.node m ON m.name = o.node AND m.expires_at > now() "
    "WHERE o.job_id = nj.job_id AND o.spec_hash <> nj.spec_hash)) "
    "FROM vigil.node n ORDER BY n.name";

/*
 * vigilctl cluster: every lease: job, instance, holder (NULL: free),
 * epoch, ms left (NULL: expired), pid and state as the holder wrote them,
 * held by the operator, by whom.
 */
const char pg_cluster_leases[] =
    "SELECT j.name, l.instance, l.holder, l.epoch, "
    "CASE WHEN l.expires_at > now() THEN "
    "(extract(epoch FROM l.expires_at - now()) * 1000)::bigint END, "
    "l.pid, l.state, l.held, l.held_by "
    "FROM vigil.lease l JOIN vigil.job j ON j.id = l.job_id "
    "ORDER BY j.name, l.instance";

/*
 * $1 job id, $2 instance, $3 node, $4 epoch, $5 pid, $6 runs kept per
 * job: a cluster run began (history cluster-wide, pruned like state.db's).
 * Answer: (id).
 */
const char pg_run_begin[] =
    "WITH i AS (INSERT INTO vigil.run (job_id, instance, node, epoch, pid, "
    "started_at) VALUES ($1, $2, $3, $4, $5, now()) RETURNING id), "
    "d AS (DELETE FROM vigil.run r WHERE r.job_id = $1 AND r.id <= "
    "(SELECT id FROM vigil.run WHERE job_id = $1 ORDER BY id DESC "
    "OFFSET greatest($6::int - 1, 0) LIMIT 1)) "
    "SELECT id FROM i";

/* $1 run id, $2 exit code, $3 signal, $4 how it ended: the run ended. */
const char pg_run_end[] =
    "UPDATE vigil.run SET ended_at = now(), exit_code = $2, signal = $3, "
    "reason = $4 WHERE id = $1";

const char pg_listen[] = "LISTEN vigil";

/* An int array as PostgreSQL reads it: "{1,2,3}". */
char *
pg_array_int(const int64_t *v, size_t n)
{
	size_t i, len = 0, cap = 2 + n * 21;
	char *s = xmalloc(cap + 1);

	s[len++] = '{';
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(s + len, cap + 1 - len, "%s%lld",
		    i > 0 ? "," : "", (long long)v[i]);
	s[len++] = '}';
	s[len] = '\0';
	return (s);
}

/* A text array, each element quoted: "{\"a\",\"b\\\"c\"}". */
char *
pg_array_text(const char *const *v, size_t n)
{
	size_t i, len = 0, cap = 2;
	const char *p;
	char *s;

	for (i = 0; i < n; i++)
		cap += 3 + 2 * strlen(v[i]);
	s = xmalloc(cap + 1);
	s[len++] = '{';
	for (i = 0; i < n; i++) {
		if (i > 0)
			s[len++] = ',';
		s[len++] = '"';
		for (p = v[i]; *p != '\0'; p++) {
			if (*p == '"' || *p == '\\')
				s[len++] = '\\';
			s[len++] = *p;
		}
		s[len++] = '"';
	}
	s[len++] = '}';
	s[len] = '\0';
	return (s);
}
