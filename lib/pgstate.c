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
 * Every function of vigil runs with this search_path whoever calls it
 * and whatever the session's: an object someone else planted in public
 * or in a schema named after the role is never found instead of
 * PostgreSQL's own (pg_temp last: never searched for functions and
 * operators).
 */
#define PG_PIN "SET search_path = pg_catalog, pg_temp"

/*
 * The schema at version PG_SCHEMA_VERSION, applied in one transaction
 * under a transaction-scoped advisory lock: several vigild starting at
 * once against an empty database give one schema.  Every statement is
 * idempotent and runs at each start (a database at an older version gets
 * the current functions and grants); later versions append steps and
 * raise schema_version.  Answer: (schema_version, the roles
 * vigil_enqueue and vigil_monitor that are missing, or NULL).
 */
const char pg_schema[] =
    "BEGIN;\n"
    "SET LOCAL statement_timeout = '10s';\n"
    "SELECT pg_advisory_xact_lock(" PG_LOCK_NS ", 0);\n"
    /*
     * The schema's owner (or a member of its role) makes and upgrades
     * it; a node whose role is only vigil_node finds it made, at this
     * version, and changes nothing (it may not).
     */
    "DO $setup$ DECLARE v int; BEGIN\n"
    "IF to_regnamespace('vigil') IS NULL OR pg_has_role((SELECT nspowner\n"
    "    FROM pg_namespace WHERE nspname = 'vigil'), 'MEMBER') THEN\n"
    "EXECUTE $ddl$\n"
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
    /*
     * An index or column is only made where it is missing: CREATE INDEX
     * and ALTER TABLE lock their table even when there is nothing to do,
     * and the renews and claims of the other nodes would wait for this
     * transaction's end.
     */
    "DO $d$ BEGIN\n"
    "  IF to_regclass('vigil.run_by_job') IS NULL THEN\n"
    "    CREATE INDEX run_by_job ON vigil.run (job_id, id DESC);\n"
    "  END IF;\n"
    /* version 2: the queue */
    "  IF NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid =\n"
    "      'vigil.job'::regclass AND attname = 'max_attempts') THEN\n"
    "    ALTER TABLE vigil.job ADD COLUMN max_attempts int NOT NULL\n"
    "      DEFAULT 5;\n"
    "  END IF;\n"
    /* version 4, placement: may the node run the job (cluster_nodes) */
    "  IF NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid =\n"
    "      'vigil.node_job'::regclass AND attname = 'placed') THEN\n"
    "    ALTER TABLE vigil.node_job ADD COLUMN placed boolean NOT NULL\n"
    "      DEFAULT true;\n"
    "  END IF;\n"
    /* version 5: since when no live node has had the job */
    "  IF NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid =\n"
    "      'vigil.job'::regclass AND attname = 'gone_since') THEN\n"
    "    ALTER TABLE vigil.job ADD COLUMN gone_since timestamptz;\n"
    "  END IF;\n"
    /* version 4, maintenance: a drained node takes no cluster work */
    "  IF NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid =\n"
    "      'vigil.node'::regclass AND attname = 'drained') THEN\n"
    "    ALTER TABLE vigil.node ADD COLUMN drained boolean NOT NULL\n"
    "      DEFAULT false;\n"
    "  END IF;\n"
    "END $d$;\n"
    "CREATE TABLE IF NOT EXISTS vigil.message (\n"
    "  id bigint GENERATED ALWAYS AS IDENTITY (START WITH " PG_MSG_ID_MIN
    ") PRIMARY KEY,\n"
    "  job_id int NOT NULL REFERENCES vigil.job(id) ON DELETE CASCADE,\n"
    "  state smallint NOT NULL DEFAULT 0 CHECK (state IN (0, 1, 2)),\n"
    "  priority int NOT NULL DEFAULT 0,\n"
    "  due timestamptz NOT NULL DEFAULT now(),\n"
    "  attempts int NOT NULL DEFAULT 0,\n"
    "  unique_key text,\n"
    "  payload bytea NOT NULL CHECK (length(payload) <= 1048576),\n"
    "  holder text,\n"
    "  lease_until timestamptz,\n"
    "  created_at timestamptz NOT NULL DEFAULT now(),\n"
    "  updated_at timestamptz NOT NULL DEFAULT now(),\n"
    "  last_exit int,\n"
    "  last_signal int,\n"
    "  last_error text,\n"
    "  output bytea)\n"
    "  WITH (fillfactor = 90, autovacuum_vacuum_scale_factor = 0.02,\n"
    "        autovacuum_vacuum_cost_delay = 1);\n"
    "DO $d$ BEGIN\n"
    "  IF to_regclass('vigil.message_unique') IS NULL THEN\n"
    "    CREATE INDEX IF NOT EXISTS message_claim ON vigil.message\n"
    "      (job_id, priority DESC, due, id) WHERE state = 0;\n"
    "    CREATE INDEX IF NOT EXISTS message_running ON vigil.message\n"
    "      (job_id, lease_until) WHERE state = 1;\n"
    "    CREATE INDEX IF NOT EXISTS message_dead ON vigil.message\n"
    "      (job_id, id) WHERE state = 2;\n"
    "    CREATE UNIQUE INDEX message_unique ON vigil.message\n"
    "      (job_id, unique_key) WHERE unique_key IS NOT NULL\n"
    "      AND state < 2;\n"
    "  END IF;\n"
    "END $d$;\n"
    /*
     * The enqueue of applications, inside their own transactions: the
     * message exists exactly when their data does.  One NOTIFY per job
     * and transaction (PostgreSQL folds identical ones), delayed or
     * not: a node's claim tells it when the next message is due, for
     * its timer.
     */
    "CREATE OR REPLACE FUNCTION vigil.enqueue_message(p_job text,\n"
    "    p_payload bytea, p_delay interval, p_unique text, p_priority int,\n"
    "    OUT id bigint, OUT created boolean)\n"
    "LANGUAGE plpgsql " PG_PIN " AS $f$\n"
    "DECLARE j int;\n"
    "BEGIN\n"
    "  SELECT vigil.job.id INTO j FROM vigil.job\n"
    "   WHERE name = p_job AND kind = 'queue';\n"
    "  IF j IS NULL THEN\n"
    "    RAISE EXCEPTION 'vigil.enqueue: no cluster queue job named %',\n"
    "      p_job USING ERRCODE = 'undefined_object';\n"
    "  END IF;\n"
    "  IF p_delay < interval '0' THEN\n"
    "    RAISE EXCEPTION 'vigil.enqueue: delay % is negative', p_delay\n"
    "      USING ERRCODE = 'invalid_parameter_value';\n"
    "  END IF;\n"
    "  IF p_unique = '' OR octet_length(p_unique) > 1024 THEN\n"
    "    RAISE EXCEPTION 'vigil.enqueue: the unique key is empty or longer '\n"
    "      'than 1024 bytes' USING ERRCODE = 'invalid_parameter_value';\n"
    "  END IF;\n"
    "  INSERT INTO vigil.message AS m (job_id, payload, unique_key,\n"
    "      priority, due)\n"
    "  VALUES (j, coalesce(p_payload, ''), p_unique, coalesce(p_priority, "
    "0),\n"
    "      now() + coalesce(p_delay, interval '0'))\n"
    "  ON CONFLICT (job_id, unique_key)\n"
    "    WHERE unique_key IS NOT NULL AND state < 2 DO NOTHING\n"
    "  RETURNING m.id INTO id;\n"
    "  created := id IS NOT NULL;\n"
    "  IF NOT created THEN\n"
    "    SELECT m.id INTO id FROM vigil.message m WHERE m.job_id = j\n"
    "       AND m.unique_key = p_unique AND m.state < 2;\n"
    "  ELSE\n"
    "    PERFORM pg_notify('vigil', 'q ' || j);\n"
    "  END IF;\n"
    "END $f$;\n"
    "CREATE OR REPLACE FUNCTION vigil.enqueue(job text, payload bytea,\n"
    "    delay interval DEFAULT '0', unique_key text DEFAULT NULL,\n"
    "    priority int DEFAULT 0) RETURNS bigint\n"
    "LANGUAGE sql SECURITY DEFINER " PG_PIN " AS $f$\n"
    "  SELECT id FROM vigil.enqueue_message(job, payload, delay,\n"
    "    unique_key, priority) $f$;\n"
    "CREATE OR REPLACE FUNCTION vigil.enqueue(job text, payload text "
    "DEFAULT '',\n"
    "    delay interval DEFAULT '0', unique_key text DEFAULT NULL,\n"
    "    priority int DEFAULT 0) RETURNS bigint\n"
    "LANGUAGE sql SECURITY DEFINER " PG_PIN " AS $f$\n"
    "  SELECT id FROM vigil.enqueue_message(job, convert_to(payload, "
    "'UTF8'),\n"
    "    delay, unique_key, priority) $f$;\n"
    /*
     * A node's claim, for at most p_free messages, batched.  With a
     * cluster-wide cap the claims of a job queue up on a transaction
     * lock, and the count of running messages is read after it (each
     * statement of a function takes a new snapshot).
     */
    "CREATE OR REPLACE FUNCTION vigil.claim(p_job int, p_free int,\n"
    "    p_node text, p_ms bigint, p_cap int)\n"
    "RETURNS TABLE (mid bigint, mattempts int, mpayload bytea, mdue "
    "bigint)\n"
    "LANGUAGE plpgsql " PG_PIN " AS $f$\n"
    "DECLARE n int := p_free; got int;\n"
    "BEGIN\n"
    /* A claim lost in a crash only runs its messages again. */
    "  PERFORM set_config('synchronous_commit', 'off', true);\n"
    "  IF p_cap > 0 THEN\n"
    "    PERFORM pg_advisory_xact_lock(" PG_LOCK_JOB_NS ", p_job);\n"
    "    SELECT least(p_free, p_cap - count(*)) INTO n FROM vigil.message\n"
    "     WHERE job_id = p_job AND state = 1;\n"
    "    IF n <= 0 THEN\n"
    "      RETURN QUERY SELECT NULL::bigint, NULL::int, NULL::bytea,\n"
    "        NULL::bigint;\n"
    "      RETURN;\n"
    "    END IF;\n"
    "  END IF;\n"
    "  RETURN QUERY\n"
    "  WITH c AS (SELECT id FROM vigil.message\n"
    "              WHERE job_id = p_job AND state = 0 AND due <= now()\n"
    "              ORDER BY priority DESC, due, id LIMIT n\n"
    "              FOR UPDATE SKIP LOCKED)\n"
    "  UPDATE vigil.message m SET state = 1, attempts = m.attempts + 1,\n"
    "         holder = p_node, lease_until = now() + p_ms * interval '1 "
    "ms',\n"
    "         updated_at = now()\n"
    "    FROM c WHERE m.id = c.id\n"
    "  RETURNING m.id, m.attempts, m.payload, NULL::bigint;\n"
    "  GET DIAGNOSTICS got = ROW_COUNT;\n"
    "  IF got < n THEN\n"
    "    RETURN QUERY SELECT NULL::bigint, NULL::int, NULL::bytea,\n"
    "      ceil(extract(epoch FROM min(due) - now()) * 1000)::bigint\n"
    "      FROM vigil.message WHERE job_id = p_job AND state = 0;\n"
    "  END IF;\n"
    "END $f$;\n"
    /*
     * version 3: every function pins its search_path (above), and what
     * the work connection sends (perhaps through a pooler, where no
     * session setting holds) is a call of one: nothing it parses is
     * looked up in a schema that others may write.
     */
    "CREATE OR REPLACE FUNCTION vigil.rescue(p_grace bigint)\n"
    "RETURNS TABLE (r_job int, r_id bigint, r_state smallint, r_n boolean)\n"
    "LANGUAGE sql " PG_PIN " AS $f$\n"
    "  WITH g AS (SELECT pg_try_advisory_xact_lock(" PG_LOCK_NS ", 1) AS ok),\n"
    "  r AS (UPDATE vigil.message m SET\n"
    "    state = CASE WHEN m.attempts >= j.max_attempts THEN 2 ELSE 0 END,\n"
    "    due = now() + least(3600, 2 ^ greatest(m.attempts - 1, 0))\n"
    "      * interval '1 s',\n"
    "    last_error = 'lost: ' || m.holder || ' stopped renewing',\n"
    "    holder = NULL, lease_until = NULL, updated_at = now()\n"
    "    FROM vigil.job j, g WHERE g.ok AND j.id = m.job_id AND m.state = 1\n"
    "    AND m.lease_until < now() - p_grace * interval '1 ms'\n"
    "    RETURNING m.job_id, m.id, m.state)\n"
    "  SELECT job_id, id, state, pg_notify('vigil', 'q ' || job_id)\n"
    "    IS NULL FROM r $f$;\n"
    "CREATE OR REPLACE FUNCTION vigil.retry(p_id bigint)\n"
    "RETURNS TABLE (r_job int, r_n boolean)\n"
    "LANGUAGE sql " PG_PIN " AS $f$\n"
    "  WITH r AS (UPDATE vigil.message SET state = 0, attempts = 0,\n"
    "    due = now(), updated_at = now() WHERE id = p_id AND state <> 1\n"
    "    RETURNING job_id)\n"
    "  SELECT job_id, pg_notify('vigil', 'q ' || job_id) IS NULL FROM r $f$;\n"
    "CREATE OR REPLACE FUNCTION vigil.kick(p_job int) RETURNS void\n"
    "LANGUAGE sql " PG_PIN " AS $f$\n"
    "  SELECT pg_notify('vigil', 'q ' || p_job) $f$;\n"
    /* version 4 added r_drained: its type changed */
    "DO $d$ BEGIN\n"
    "  IF EXISTS (SELECT FROM pg_proc WHERE proname = 'cluster_nodes'\n"
    "      AND pronamespace = 'vigil'::regnamespace\n"
    "      AND NOT 'r_drained' = ANY(proargnames)) THEN\n"
    "    DROP FUNCTION vigil.cluster_nodes();\n"
    "  END IF;\n"
    "END $d$;\n"
    "CREATE OR REPLACE FUNCTION vigil.cluster_nodes()\n"
    "RETURNS TABLE (r_name text, r_version text, r_age bigint,\n"
    "    r_alive boolean, r_leases bigint, r_drift text, r_msgs bigint,\n"
    "    r_drained boolean)\n"
    "LANGUAGE sql STABLE " PG_PIN " AS $f$\n"
    "  SELECT n.name, n.version,\n"
    "    (extract(epoch FROM now() - n.heartbeat_at) * 1000)::bigint,\n"
    "    n.expires_at > now(),\n"
    "    (SELECT count(*) FROM vigil.lease l WHERE l.holder = n.name\n"
    "      AND l.expires_at > now()),\n"
    "    (SELECT string_agg(j.name, ',' ORDER BY j.name)\n"
    "      FROM vigil.node_job nj JOIN vigil.job j ON j.id = nj.job_id\n"
    "      WHERE nj.node = n.name AND EXISTS (SELECT 1\n"
    "        FROM vigil.node_job o JOIN vigil.node m\n"
    "        ON m.name = o.node AND m.expires_at > now()\n"
    "        WHERE o.job_id = nj.job_id AND o.spec_hash <> nj.spec_hash)),\n"
    "    (SELECT count(*) FROM vigil.message m WHERE m.holder = n.name\n"
    "      AND m.state = 1), n.drained\n"
    "  FROM vigil.node n ORDER BY n.name $f$;\n"
    /* version 4 added r_nodes: its type changed */
    "DO $d$ BEGIN\n"
    "  IF EXISTS (SELECT FROM pg_proc WHERE proname = 'cluster_leases'\n"
    "      AND pronamespace = 'vigil'::regnamespace\n"
    "      AND NOT 'r_nodes' = ANY(proargnames)) THEN\n"
    "    DROP FUNCTION vigil.cluster_leases();\n"
    "  END IF;\n"
    "END $d$;\n"
    "CREATE OR REPLACE FUNCTION vigil.cluster_leases()\n"
    "RETURNS TABLE (r_job text, r_instance int, r_holder text,\n"
    "    r_epoch bigint, r_ms bigint, r_pid int, r_state text,\n"
    "    r_held boolean, r_held_by text, r_nodes bigint)\n"
    "LANGUAGE sql STABLE " PG_PIN " AS $f$\n"
    "  SELECT j.name, l.instance, l.holder, l.epoch,\n"
    "    CASE WHEN l.expires_at > now() THEN\n"
    "    (extract(epoch FROM l.expires_at - now()) * 1000)::bigint END,\n"
    "    l.pid, l.state, l.held, l.held_by,\n"
    /* the live undrained nodes that may run it */
    "    (SELECT count(*) FROM vigil.node_job p JOIN vigil.node n\n"
    "      ON n.name = p.node WHERE p.job_id = l.job_id AND p.placed\n"
    "      AND n.expires_at > now() AND NOT n.drained)\n"
    "  FROM vigil.lease l JOIN vigil.job j ON j.id = l.job_id\n"
    "  ORDER BY j.name, l.instance $f$;\n"
    "CREATE OR REPLACE FUNCTION vigil.dead(p_job int, p_max int)\n"
    "RETURNS TABLE (r_id bigint, r_attempts int, r_exit int, r_signal int,\n"
    "    r_error text, r_created bigint, r_updated bigint, r_priority int,\n"
    "    r_bytes int, r_output bytea)\n"
    "LANGUAGE sql STABLE " PG_PIN " AS $f$\n"
    "  SELECT id, attempts, coalesce(last_exit, -1),\n"
    "    coalesce(last_signal, -1), last_error,\n"
    "    (extract(epoch FROM created_at) * 1e6)::bigint,\n"
    "    (extract(epoch FROM updated_at) * 1e6)::bigint, priority,\n"
    "    length(payload), output FROM vigil.message\n"
    "  WHERE job_id = p_job AND state = 2 ORDER BY id LIMIT p_max $f$;\n"
    "CREATE OR REPLACE FUNCTION vigil.counts(p_jobs int[])\n"
    "RETURNS TABLE (r_job int, r_available bigint, r_delayed bigint,\n"
    "    r_running bigint, r_dead bigint, r_holders text)\n"
    "LANGUAGE sql STABLE " PG_PIN " AS $f$\n"
    "  SELECT k.id,\n"
    "    count(m.id) FILTER (WHERE m.state = 0 AND m.due <= now()),\n"
    "    count(m.id) FILTER (WHERE m.state = 0 AND m.due > now()),\n"
    "    count(m.id) FILTER (WHERE m.state = 1),\n"
    "    count(m.id) FILTER (WHERE m.state = 2),\n"
    "    (SELECT string_agg(h.holder || '=' || h.n, ',' ORDER BY h.holder)\n"
    "      FROM (SELECT holder, count(*) AS n FROM vigil.message\n"
    "      WHERE job_id = k.id AND state = 1 GROUP BY holder) h)\n"
    "  FROM unnest(p_jobs) AS k(id)\n"
    "  LEFT JOIN vigil.message m ON m.job_id = k.id GROUP BY k.id $f$;\n"
    /*
     * version 4: never off (a cluster service that fails on its holder
     * moves on).  A failed start's release records the node and why in
     * vigil.lease_failure; a node that failed the instance in the current
     * round bids after those that have not (for one lease_ttl after the
     * release), and when every live node has failed it the next round
     * begins only at retry_at, after the job's capped backoff (rounds
     * counts them).  A run that lasts min_uptime ends the streak.
     */
    "DO $d$ BEGIN\n"
    "  IF NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid =\n"
    "      'vigil.lease'::regclass AND attname = 'rounds') THEN\n"
    "    ALTER TABLE vigil.lease\n"
    "      ADD COLUMN IF NOT EXISTS released_at timestamptz,\n"
    "      ADD COLUMN IF NOT EXISTS round_at timestamptz NOT NULL\n"
    "        DEFAULT '-infinity',\n"
    "      ADD COLUMN IF NOT EXISTS streak_at timestamptz NOT NULL\n"
    "        DEFAULT '-infinity',\n"
    "      ADD COLUMN IF NOT EXISTS retry_at timestamptz NOT NULL\n"
    "        DEFAULT '-infinity',\n"
    "      ADD COLUMN rounds int NOT NULL DEFAULT 0;\n"
    "  END IF;\n"
    "END $d$;\n"
    "CREATE TABLE IF NOT EXISTS vigil.lease_failure (\n"
    "  job_id int NOT NULL,\n"
    "  instance int NOT NULL,\n"
    "  node text NOT NULL,\n"
    "  failed_at timestamptz NOT NULL,\n"
    "  why text NOT NULL,\n"
    "  PRIMARY KEY (job_id, instance, node),\n"
    "  FOREIGN KEY (job_id, instance) REFERENCES vigil.lease\n"
    "    ON DELETE CASCADE);\n"
    /*
     * version 5: the operator's verbs from any node, acted on by the
     * holder (restart, stop, start, signal), each answered in its row.
     */
    "CREATE TABLE IF NOT EXISTS vigil.request (\n"
    "  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,\n"
    "  job_id int NOT NULL REFERENCES vigil.job(id) ON DELETE CASCADE,\n"
    "  instance int NOT NULL,\n"
    "  verb text NOT NULL CHECK (verb IN ('start', 'stop', 'restart', "
    "'signal')),\n"
    "  signo int,\n"
    "  asked_by text NOT NULL,\n"
    "  asked_at timestamptz NOT NULL DEFAULT now(),\n"
    "  taken_on text,\n"
    "  taken_at timestamptz,\n"
    "  done_at timestamptz,\n"
    "  ok boolean,\n"
    "  reply text);\n"
    "DO $d$ BEGIN\n"
    "  IF to_regclass('vigil.request_open') IS NULL THEN\n"
    "    CREATE INDEX request_open ON vigil.request (job_id, instance)\n"
    "      WHERE done_at IS NULL;\n"
    "  END IF;\n"
    "END $d$;\n"
    /* Has p_node failed the instance in its current round? */
    "CREATE OR REPLACE FUNCTION vigil.failed_here(p_job int, p_inst int,\n"
    "    p_node text) RETURNS boolean\n"
    "LANGUAGE sql STABLE " PG_PIN " AS $f$\n"
    "  SELECT EXISTS (SELECT FROM vigil.lease_failure f JOIN vigil.lease l\n"
    "    USING (job_id, instance) WHERE f.job_id = p_job\n"
    "    AND f.instance = p_inst AND f.node = p_node\n"
    "    AND f.failed_at >= l.round_at) $f$;\n"
    /* Is a live node with the job, other than p_node, yet to fail it? */
    "CREATE OR REPLACE FUNCTION vigil.untried(p_job int, p_inst int,\n"
    "    p_node text) RETURNS boolean\n"
    "LANGUAGE sql STABLE " PG_PIN " AS $f$\n"
    "  SELECT EXISTS (SELECT FROM vigil.node_job nj JOIN vigil.node n\n"
    "    ON n.name = nj.node WHERE nj.job_id = p_job AND nj.node <> p_node\n"
    "    AND n.expires_at > now() AND NOT n.drained AND nj.placed\n"
    "    AND NOT vigil.failed_here(p_job, p_inst, nj.node)) $f$;\n"
    /* From when p_node may take the free lease of the instance. */
    "CREATE OR REPLACE FUNCTION vigil.bid_at(p_job int, p_inst int,\n"
    "    p_node text, p_ttl bigint) RETURNS timestamptz\n"
    "LANGUAGE sql STABLE " PG_PIN " AS $f$\n"
    "  SELECT coalesce((SELECT CASE\n"
    "    WHEN vigil.failed_here(p_job, p_inst, p_node)\n"
    "      AND vigil.untried(p_job, p_inst, p_node)\n"
    "    THEN greatest(l.retry_at, coalesce(l.released_at, '-infinity')\n"
    "      + p_ttl * interval '1 ms')\n"
    "    ELSE l.retry_at END\n"
    "  FROM vigil.lease l WHERE l.job_id = p_job AND l.instance = p_inst),\n"
    "  '-infinity') $f$;\n"
    /* The streak of failures: "n1 (exit 3), n2 (exit 3)", or NULL. */
    "CREATE OR REPLACE FUNCTION vigil.failing(p_job int, p_inst int)\n"
    "RETURNS text\n"
    "LANGUAGE sql STABLE " PG_PIN " AS $f$\n"
    "  SELECT string_agg(f.node || ' (' || f.why || ')', ', '\n"
    "    ORDER BY f.failed_at)\n"
    "  FROM vigil.lease_failure f JOIN vigil.lease l USING (job_id, "
    "instance)\n"
    "  WHERE f.job_id = p_job AND f.instance = p_inst\n"
    "    AND f.failed_at >= l.streak_at $f$;\n"
    /*
     * The roles an application is given (docs/cluster.md): vigil_enqueue
     * may only call vigil.enqueue (SECURITY DEFINER: no table grant);
     * vigil_monitor reads the rows but no payload nor output.  Roles are
     * the server's, not the database's: made once, if this role may
     * (CREATEROLE); else vigild logs the manual step and carries on.
     * No function of vigil is anyone's but these roles' and the owner's.
     */
    "DO $r$ DECLARE r text; BEGIN\n"
    "  FOREACH r IN ARRAY ARRAY['vigil_enqueue', 'vigil_monitor',\n"
    "      'vigil_node'] LOOP\n"
    "    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = r) THEN\n"
    "      BEGIN EXECUTE format('CREATE ROLE %I NOLOGIN', r);\n"
    "      EXCEPTION WHEN insufficient_privilege OR duplicate_object\n"
    "        OR unique_violation THEN NULL;\n"
    "      END;\n"
    "    END IF;\n"
    "  END LOOP;\n"
    "END $r$;\n"
    "REVOKE ALL ON ALL FUNCTIONS IN SCHEMA vigil FROM PUBLIC;\n"
    "DO $g$ BEGIN\n"
    "  IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'vigil_enqueue') THEN\n"
    "    GRANT USAGE ON SCHEMA vigil TO vigil_enqueue;\n"
    "    GRANT EXECUTE ON FUNCTION\n"
    "      vigil.enqueue(text, bytea, interval, text, int),\n"
    "      vigil.enqueue(text, text, interval, text, int) TO vigil_enqueue;\n"
    "  END IF;\n"
    "  IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'vigil_monitor') THEN\n"
    "    GRANT USAGE ON SCHEMA vigil TO vigil_monitor;\n"
    "    GRANT SELECT ON vigil.cluster, vigil.node, vigil.job,\n"
    "      vigil.node_job, vigil.lease, vigil.periodic, vigil.run,\n"
    "      vigil.lease_failure, vigil.request\n"
    "      TO vigil_monitor;\n"
    "    GRANT SELECT (id, job_id, state, priority, due, attempts, holder,\n"
    "      lease_until, created_at, updated_at, last_exit, last_signal,\n"
    "      last_error) ON vigil.message TO vigil_monitor;\n"
    "    GRANT EXECUTE ON FUNCTION vigil.counts(int[]),\n"
    "      vigil.cluster_nodes(), vigil.cluster_leases(),\n"
    "      vigil.failing(int, int) TO vigil_monitor;\n"
    "  END IF;\n"
    /*
     * What a node needs and no more: the rows and the functions, not
     * the schema (no DDL: it cannot redefine what other roles run).
     */
    "  IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'vigil_node') THEN\n"
    "    GRANT USAGE ON SCHEMA vigil TO vigil_node;\n"
    "    GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA\n"
    "      vigil TO vigil_node;\n"
    "    GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA vigil TO\n"
    "      vigil_node;\n"
    "    GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA vigil TO vigil_node;\n"
    "  END IF;\n"
    "END $g$;\n"
    "UPDATE vigil.cluster SET schema_version = 5 WHERE schema_version < 5;\n"
    "$ddl$;\n"
    "ELSE\n"
    "  EXECUTE 'SELECT schema_version FROM vigil.cluster' INTO v;\n"
    "  IF v IS NULL OR v < 5 THEN\n"
    "    RAISE EXCEPTION 'schema vigil is at version %, older than this "
    "vigild''s 5, and role % may not upgrade it (it is not a member of "
    "the role that owns it): start a vigild whose role owns it once', "
    "v, current_user USING ERRCODE = 'insufficient_privilege';\n"
    "  END IF;\n"
    "END IF;\n"
    "END $setup$;\n"
    "COMMIT;\n"
    "SELECT schema_version, (SELECT string_agg(r, ', ') FROM\n"
    "  unnest(ARRAY['vigil_enqueue', 'vigil_monitor', 'vigil_node']) AS r\n"
    "  WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = r))\n"
    "  FROM vigil.cluster;\n";

/*
 * Each session: its search_path pinned (nothing vigild sends finds an
 * object someone else planted in public or in "$user"); lease statements
 * commit durably whatever the database's
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
	    "SET search_path = pg_catalog, pg_temp; "
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
    "RETURNING name, drained";

/*
 * $1 node, $2 drained (true/false): maintenance.  A drained node hands
 * over every cluster instance it holds and takes no cluster work (no
 * bid, no slot, no message) until undrained; it stays drained across its
 * restarts.  The node is told by its next renew ("drain NODE" is a hint
 * to renew now).  Answer: (name) if the node exists.
 */
const char pg_node_drain[] =
    "WITH u AS (UPDATE vigil.node SET drained = $2 WHERE name = $1 "
    "RETURNING name) "
    "SELECT name FROM u, pg_notify('vigil', 'drain ' || $1)";

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

/*
 * $1 names, $2 kinds, $3 max attempts (arrays): no setup step, no race.
 * The kind and max_attempts follow the job files (the last node to start
 * or reload says; vigilctl cluster shows files that differ).
 */
const char pg_job_seed[] =
    "INSERT INTO vigil.job AS j (name, kind, max_attempts) "
    "SELECT * FROM unnest($1::text[], $2::text[], $3::int[]) "
    "ON CONFLICT (name) DO UPDATE SET kind = excluded.kind, "
    "max_attempts = excluded.max_attempts "
    "WHERE (j.kind, j.max_attempts) IS DISTINCT FROM "
    "(excluded.kind, excluded.max_attempts)";

/*
 * $1 node, $2 names, $3 spec hashes, $4 placed (whether its
 * cluster_nodes let this node run it) (arrays): which node has which job
 * file (drift) and may run it, and the jobs' ids.  Answer: (id, name, the instances
 * the operator stopped cluster-wide as an array, or NULL) per job.
 */
const char pg_node_jobs[] =
    "WITH h AS (SELECT * FROM unnest($2::text[], $3::text[], "
    "$4::boolean[]) AS h(name, hash, placed)), "
    "d AS (DELETE FROM vigil.node_job nj WHERE nj.node = $1 AND "
    "nj.job_id NOT IN (SELECT j.id FROM vigil.job j JOIN h USING (name))), "
    "s AS (INSERT INTO vigil.node_job (node, job_id, spec_hash, placed) "
    "SELECT $1, j.id, h.hash, h.placed FROM h JOIN vigil.job j "
    "USING (name) ON CONFLICT (node, job_id) DO UPDATE SET spec_hash = "
    "excluded.spec_hash, placed = excluded.placed RETURNING job_id) "
    "SELECT j.id, j.name, (SELECT array_agg(l.instance ORDER BY "
    "l.instance) FROM vigil.lease l WHERE l.job_id = j.id AND l.held) "
    "FROM vigil.job j "
    "WHERE j.name = ANY($2::text[])";

/*
 * $1 job id, $2 instance, $3 node, $4 ttl ms.  Always one row: (the new
 * epoch or NULL, the holder, its ms left or NULL, quarantine ms left,
 * whether the operator stopped the instance cluster-wide, ms before this
 * node may bid (vigil.bid_at: it failed the instance, or every node did),
 * the failures of the streak or NULL, the rounds every node failed, the
 * live undrained nodes that may run it).
 * The same node may take its own lease again (a restarted vigild, after
 * reclaiming its leftovers through the local lock): a new epoch.
 * The epoch is the first fencing token of the holding; its runs take
 * epoch, epoch + 1, ...  A new epoch is above the last one by
 * PG_EPOCH_STRIDE (room for the runs of a short holding) and at least the
 * database's clock in seconds times PG_EPOCH_PER_SEC (no instance starts
 * a million runs a second), and at least (T - 1) * 2^40 on WAL timeline
 * T: a token never goes back, across a failover or a schema dropped and
 * made again.
 */
const char pg_lease_acquire[] =
    "WITH a AS ("
    "INSERT INTO vigil.lease AS l (job_id, instance, holder, epoch, "
    "acquired_at, renewed_at, expires_at) "
    /* a drained or unplaced node makes the row, without holder */
    "SELECT $1, $2, CASE WHEN k.ok THEN $3 END, "
    "greatest(greatest(c.timeline - 1, 0)::bigint << 40, "
    "floor(extract(epoch FROM now()))::bigint * " PG_EPOCH_PER_SEC_S ") + 1, "
    "now(), now(), CASE WHEN k.ok THEN now() + $4 * interval '1 ms' "
    "ELSE '-infinity' END "
    "FROM vigil.cluster c, (SELECT NOT EXISTS (SELECT FROM vigil.node d "
    "WHERE d.name = $3 AND d.drained) AND NOT EXISTS (SELECT FROM "
    "vigil.node_job p WHERE p.node = $3 AND p.job_id = $1 "
    "AND NOT p.placed) AS ok) k "
    "WHERE now() >= c.quarantine_until "
    "ON CONFLICT (job_id, instance) DO UPDATE "
    "SET holder = excluded.holder, "
    "epoch = greatest(l.epoch + " PG_EPOCH_STRIDE_S ", excluded.epoch), "
    "acquired_at = now(), "
    "renewed_at = now(), expires_at = excluded.expires_at, pid = NULL, "
    "state = NULL "
    "WHERE NOT l.held AND NOT EXISTS (SELECT FROM vigil.node d "
    "WHERE d.name = $3 AND d.drained) AND NOT EXISTS (SELECT FROM "
    "vigil.node_job p WHERE p.node = $3 AND p.job_id = $1 "
    "AND NOT p.placed) AND (l.holder = excluded.holder OR "
    "((l.expires_at < now() OR l.holder IS NULL) "
    "AND vigil.bid_at($1, $2, $3, $4::bigint) <= now())) "
    "RETURNING CASE WHEN l.holder IS NOT NULL THEN l.epoch END AS epoch) "
    "SELECT (SELECT epoch FROM a), l.holder, "
    "CASE WHEN l.expires_at > now() THEN "
    "(extract(epoch FROM l.expires_at - now()) * 1000)::bigint END, "
    "(extract(epoch FROM greatest(c.quarantine_until, now()) - now()) "
    "* 1000)::bigint, l.held, "
    "(extract(epoch FROM greatest(vigil.bid_at($1, $2, $3, $4::bigint), now()) "
    "- now()) * 1000)::bigint, vigil.failing($1, $2), l.rounds, "
    "(SELECT count(*) FROM vigil.node_job p JOIN vigil.node n "
    "ON n.name = p.node WHERE p.job_id = $1 AND p.placed "
    "AND n.expires_at > now() AND NOT n.drained) "
    "FROM vigil.cluster c LEFT JOIN vigil.lease l "
    "ON l.job_id = $1 AND l.instance = $2";

/*
 * $1 node, $2 job ids, $3 instances, $4 epochs, $5 pids (0: no run) of
 * the leases (arrays), $6 ttl ms, $7 ids and $8 attempts of the
 * messages it runs (arrays), $9 per lease 1 when its run has lasted
 * min_uptime after failures (the streak ends), else 0: everything a node
 * holds, in one round trip.  Answer: ('l', job id, instance, held) per
 * lease renewed, ('m', id, attempts, false) per message, ('n', 1 or 0,
 * 0, drained) for the node row.  A lease missing from the answer is
 * lost: someone else holds it now; a held one is to be stopped (the
 * operator's stop elsewhere).
 */
const char pg_lease_renew_all[] =
    "WITH n AS (UPDATE vigil.node SET heartbeat_at = now(), "
    "expires_at = now() + $6 * interval '1 ms' WHERE name = $1 "
    "RETURNING drained), "
    "l AS (UPDATE vigil.lease t SET renewed_at = now(), "
    "expires_at = now() + $6 * interval '1 ms', "
    "pid = nullif(k.p, 0), state = CASE WHEN k.p > 0 THEN 'RUNNING' END, "
    "rounds = CASE WHEN k.g = 1 THEN 0 ELSE t.rounds END, "
    "round_at = CASE WHEN k.g = 1 THEN now() ELSE t.round_at END, "
    "streak_at = CASE WHEN k.g = 1 THEN now() ELSE t.streak_at END "
    "FROM unnest($2::int[], $3::int[], $4::bigint[], $5::int[], "
    "$9::int[]) AS k(j, i, e, p, g) "
    "WHERE t.job_id = k.j AND t.instance = k.i AND t.epoch = k.e "
    "AND t.holder = $1 "
    "RETURNING 'l'::text AS kind, t.job_id::bigint AS a, t.instance AS b, "
    "t.held AS c), "
    "m AS (UPDATE vigil.message t SET "
    "lease_until = now() + $6 * interval '1 ms' "
    "FROM unnest($7::bigint[], $8::int[]) AS k(id, a) "
    "WHERE t.id = k.id AND t.attempts = k.a AND t.state = 1 "
    "AND t.holder = $1 "
    "RETURNING 'm'::text, t.id, t.attempts, false) "
    "SELECT * FROM l UNION ALL SELECT * FROM m "
    "UNION ALL SELECT 'n', count(*), 0, coalesce(bool_or(drained), false) "
    "FROM n";

/*
 * $1 ms: the jobs no live node has in its jobs.d are marked (gone_since;
 * the mark goes when a node has it again), and those marked longer than
 * $1 are forgotten with their leases, runs and requests (ON DELETE
 * CASCADE), unless a lease of theirs is still held or a message of
 * theirs is still in the queue.  Answer: (name) per job forgotten.
 */
const char pg_job_gc[] =
    "WITH live AS (SELECT DISTINCT nj.job_id FROM vigil.node_job nj "
    "JOIN vigil.node n ON n.name = nj.node WHERE n.expires_at > now()), "
    "m AS (UPDATE vigil.job j SET gone_since = CASE WHEN j.id IN "
    "(SELECT job_id FROM live) THEN NULL ELSE now() END "
    "WHERE (j.gone_since IS NULL) = (j.id NOT IN (SELECT job_id FROM live))), "
    "d AS (DELETE FROM vigil.job j WHERE j.gone_since < now() - $1 * "
    "interval '1 ms' AND j.id NOT IN (SELECT job_id FROM live) "
    "AND NOT EXISTS (SELECT FROM vigil.message q WHERE q.job_id = j.id) "
    "AND NOT EXISTS (SELECT FROM vigil.lease l WHERE l.job_id = j.id "
    "AND l.holder IS NOT NULL AND l.expires_at > now()) RETURNING j.name) "
    "SELECT name FROM d";

/*
 * $1 job ids, $2 instances (arrays): a look at the leases that standbys
 * wait for, all in one statement, at the time they could expire (their
 * holders renew them all at once, so they come due together).  Answer:
 * (job id, instance, holder, ms left or NULL when expired, held) per
 * instance.
 */
const char pg_lease_peek[] =
    "SELECT k.j, k.i, l.holder, CASE WHEN l.expires_at > now() THEN "
    "(extract(epoch FROM l.expires_at - now()) * 1000)::bigint END, "
    "coalesce(l.held, false) FROM unnest($1::int[], $2::int[]) AS k(j, i) "
    "LEFT JOIN vigil.lease l ON l.job_id = k.j AND l.instance = k.i";

/* $1 job id, $2 instance, $3 node, $4 epoch, $5 pid, $6 state: status. */
const char pg_lease_state[] =
    "UPDATE vigil.lease SET pid = $5, state = $6 "
    "WHERE job_id = $1 AND instance = $2 AND holder = $3 AND epoch = $4";

/*
 * $1 job id, $2 instance, $3 node, $4 epoch: only once the run's group is
 * gone.  The row and its epoch stay; standbys are woken.  The stops asked
 * of this holder are done: their nodes are told.
 */
const char pg_lease_release[] =
    "WITH r AS (UPDATE vigil.lease SET holder = NULL, "
    "expires_at = '-infinity', pid = NULL, state = NULL "
    "WHERE job_id = $1 AND instance = $2 AND holder = $3 AND epoch = $4 "
    "RETURNING job_id, instance), "
    "q AS (UPDATE vigil.request x SET done_at = now(), ok = true, "
    "reply = 'stopped on ' || $3 FROM r WHERE x.job_id = r.job_id "
    "AND x.instance = r.instance AND x.verb = 'stop' "
    "AND x.done_at IS NULL RETURNING x.id) "
    "SELECT pg_notify('vigil', 'lease ' || job_id || ' ' || instance) "
    "FROM r UNION ALL SELECT pg_notify('vigil', 'answer ' || id) FROM q";

/*
 * $1 job id, $2 instance, $3 node, $4 epoch, $5 why, $6 and $7 the job's
 * backoff (first and longest delay, ms): a failed start handed over.  The
 * failure is recorded; when no live node with the job is left to try it
 * this round, the next round begins after the backoff (rounds doubles
 * it).  Answer: (whether every node failed it, ms before the next round).
 */
const char pg_lease_fail[] =
    "WITH f AS (INSERT INTO vigil.lease_failure AS x (job_id, instance, "
    "node, failed_at, why) SELECT l.job_id, l.instance, $3, now(), $5 "
    "FROM vigil.lease l WHERE l.job_id = $1 AND l.instance = $2 "
    "AND l.holder = $3 AND l.epoch = $4 "
    "ON CONFLICT (job_id, instance, node) DO UPDATE "
    "SET failed_at = now(), why = excluded.why RETURNING x.job_id), "
    "a AS (SELECT NOT vigil.untried($1, $2, $3) AS every), "
    "r AS (UPDATE vigil.lease l SET holder = NULL, "
    "expires_at = '-infinity', pid = NULL, state = NULL, "
    "released_at = now(), rounds = l.rounds + a.every::int, "
    "round_at = CASE WHEN a.every THEN now() + least($7::bigint, "
    "$6::bigint * (2 ^ least(l.rounds, 30))::bigint) * interval '1 ms' "
    "ELSE l.round_at END, "
    "retry_at = CASE WHEN a.every THEN now() + least($7::bigint, "
    "$6::bigint * (2 ^ least(l.rounds, 30))::bigint) * interval '1 ms' "
    "ELSE l.retry_at END "
    "FROM a WHERE l.job_id = $1 AND l.instance = $2 AND l.holder = $3 "
    "AND l.epoch = $4 RETURNING l.job_id, l.instance, a.every, l.retry_at) "
    "SELECT pg_notify('vigil', 'lease ' || job_id || ' ' || instance), "
    "every, (extract(epoch FROM greatest(retry_at, now()) - now()) "
    "* 1000)::bigint FROM r";

/*
 * $1 job id, $2 instance, $3 held (true/false), $4 who and where: the
 * operator's stop (or start) of an instance, cluster-wide, numbered (a
 * node ignores a notice older than what it knows).  Every node is told:
 * "held JOB_ID INSTANCE 1|0 SEQ WHO".  A start of a periodic job moves
 * its last slot to now: the slots while it was stopped were not missed.
 * Answer: (seq).
 */
const char pg_lease_hold[] =
    "WITH u AS (INSERT INTO vigil.lease AS l (job_id, instance, held, "
    "held_by, held_seq) VALUES ($1, $2, $3, $4 || ' at ' || "
    "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), 1) "
    "ON CONFLICT (job_id, instance) DO UPDATE SET held = excluded.held, "
    "held_by = excluded.held_by, held_seq = l.held_seq + 1 "
    "RETURNING job_id, instance, held, held_seq), "
    /* the slots of a stop are not slots no node ran */
    "p AS (UPDATE vigil.periodic x SET last_slot = greatest(x.last_slot, "
    "now()) FROM u WHERE NOT u.held AND x.job_id = u.job_id "
    "AND x.instance = u.instance), "
    "n AS (SELECT pg_notify('vigil', 'held ' || job_id || ' ' || instance "
    "|| ' ' || held::int || ' ' || held_seq || ' ' || $4) FROM u) "
    "SELECT held_seq FROM u, n";

/*
 * $1 job ids, $2 instances (arrays): the operator's stops and starts of
 * these instances as vigil's role recorded them (a notice is a hint to
 * read them, never news in itself).  Answer: (job id, instance, held,
 * seq, who and where) per row.
 */
const char pg_lease_held[] =
    "SELECT l.job_id, l.instance, l.held, l.held_seq, l.held_by "
    "FROM vigil.lease l JOIN unnest($1::int[], $2::int[]) AS k(j, i) "
    "ON l.job_id = k.j AND l.instance = k.i";

/*
 * $1 job id, $2 instance, $3 verb, $4 signal, $5 who and where: the
 * operator's verb of an instance asked on some node, for its holder to
 * act on.  With no live holder a stop is done and a signal fails at once;
 * otherwise the holder (or the node that next wins the lease) is told
 * "ask JOB_ID INSTANCE" and answers in the row.  Rows a day old go.  Answer: (id, done, ok, reply, holder).
 */
const char pg_request_ask[] =
    "WITH l AS (SELECT (SELECT holder FROM vigil.lease WHERE job_id = $1 "
    "AND instance = $2 AND expires_at > now()) AS holder), "
    "g AS (DELETE FROM vigil.request WHERE asked_at < now() - "
    "interval '1 day'), "
    "i AS (INSERT INTO vigil.request (job_id, instance, verb, signo, "
    "asked_by, done_at, ok, reply) "
    "SELECT $1, $2, $3, $4, $5, "
    "CASE WHEN a.reply IS NOT NULL THEN now() END, a.ok, a.reply "
    "FROM l, LATERAL (SELECT CASE "
    "WHEN l.holder IS NULL AND $3 = 'stop' THEN coalesce('stopped on ' || "
    "(SELECT node FROM vigil.run WHERE job_id = $1 AND instance = $2 "
    "ORDER BY id DESC LIMIT 1), 'stopped (no node ran it)') "
    "WHEN l.holder IS NULL AND $3 = 'signal' THEN 'not running on any node' "
    "END AS reply, $3 <> 'signal' AS ok) a "
    "RETURNING id, done_at IS NOT NULL AS done, ok, reply), "
    "n AS (SELECT pg_notify('vigil', 'ask ' || $1 || ' ' || $2) FROM i "
    "WHERE NOT i.done) "
    "SELECT i.id, i.done, i.ok, i.reply, (SELECT count(*) FROM n) FROM i";

/*
 * $1 node: the requests this node now answers, the open ones of the
 * instances whose live lease it holds (another node may have taken one
 * and lost the lease before it answered; this node skips those it has
 * taken already).  Answer: (id, job id, instance, verb, signal, ms since
 * asked) per row.
 */
const char pg_request_take[] =
    "UPDATE vigil.request r SET taken_on = $1, taken_at = now() "
    "FROM vigil.lease l WHERE r.done_at IS NULL AND l.job_id = r.job_id "
    "AND l.instance = r.instance AND l.holder = $1 "
    "AND l.expires_at > now() "
    "RETURNING r.id, r.job_id, r.instance, r.verb, r.signo, "
    "(extract(epoch FROM now() - r.asked_at) * 1000)::bigint";

/*
 * $1 id, $2 ok, $3 reply: a request answered; the asking node is told
 * "answer ID".
 */
const char pg_request_done[] =
    "WITH u AS (UPDATE vigil.request SET done_at = now(), ok = $2, "
    "reply = $3 WHERE id = $1 AND done_at IS NULL RETURNING id) "
    "SELECT pg_notify('vigil', 'answer ' || id) FROM u";

/*
 * $1 ids: those answered.  A stop whose instance no live node holds any
 * more is done (its holder gave the lease back before the request was
 * written, or died: its lease expired).  Answer: (id, ok, reply) per row.
 */
const char pg_request_answers[] =
    "WITH s AS (UPDATE vigil.request x SET done_at = now(), ok = true, "
    "reply = CASE WHEN l.holder IS NULL THEN 'stopped' ELSE 'stopped: the "
    "lease of ' || l.holder || ' expired' END "
    "FROM vigil.lease l WHERE x.id = ANY($1::bigint[]) "
    "AND x.done_at IS NULL AND x.verb = 'stop' AND l.job_id = x.job_id "
    "AND l.instance = x.instance "
    "AND (l.holder IS NULL OR l.expires_at <= now()) "
    "RETURNING x.id, x.ok, x.reply) "
    "SELECT id, ok, reply FROM s UNION ALL "
    "SELECT id, ok, reply FROM vigil.request "
    "WHERE id = ANY($1::bigint[]) AND done_at IS NOT NULL";

/*
 * $1 job id, $2 instance, $3 the slot (Unix usec), $4 node, $5 clock
 * tolerance ms: one run per slot cluster-wide.  The first node to commit
 * the slot wins (a row); an older slot never fires again, and a node
 * whose clock runs ahead cannot fire a slot early.  Answer to the
 * winner: (the slot, the slot fired before it in Unix usec or NULL),
 * the row locked first so that the one before is the latest.
 */
const char pg_periodic_fire[] =
    "WITH o AS MATERIALIZED (SELECT last_slot FROM vigil.periodic "
    "WHERE job_id = $1 AND instance = $2 FOR UPDATE), "
    "i AS (INSERT INTO vigil.periodic AS p (job_id, instance, last_slot, "
    "last_node) "
    "SELECT $1, $2, to_timestamp($3::bigint / 1e6), $4 "
    "WHERE to_timestamp($3::bigint / 1e6) <= now() + $5 * interval '1 ms' "
    /* o is read (and the row locked) before the row changes */
    "AND (SELECT count(*) FROM o) >= 0 "
    "ON CONFLICT (job_id, instance) DO UPDATE "
    "SET last_slot = excluded.last_slot, last_node = excluded.last_node "
    "WHERE p.last_slot < excluded.last_slot RETURNING last_slot) "
    "SELECT i.last_slot, (SELECT CASE WHEN isfinite(o.last_slot) THEN "
    "(extract(epoch FROM o.last_slot) * 1e6)::bigint END FROM o) FROM i";

/*
 * $1 job id, $2 instance, $3 node, $4 the (first) slot (Unix usec), $5
 * why, $6 how many: slots that did not run, counted, and a row of the
 * run history (no pid, ended as it began).
 */
const char pg_periodic_skipped[] =
    "WITH s AS (UPDATE vigil.periodic SET skipped = skipped + $6::int "
    "WHERE job_id = $1 AND instance = $2) "
    "INSERT INTO vigil.run (job_id, instance, node, started_at, ended_at, "
    "reason) VALUES ($1, $2, $3, to_timestamp($4::bigint / 1e6), "
    "to_timestamp($4::bigint / 1e6), $5)";

/*
 * vigilctl cluster: every node with its version, the age of its last
 * heartbeat in ms, whether it is alive, the leases it holds, the cluster
 * jobs whose spec differs from another node's (config drift), and the
 * queue messages it runs.
 */
const char pg_cluster_nodes[] = "SELECT * FROM vigil.cluster_nodes()";

/*
 * vigilctl cluster: every lease: job, instance, holder (NULL: free),
 * epoch, ms left (NULL: expired), pid and state as the holder wrote them,
 * held by the operator, by whom.
 */
const char pg_cluster_leases[] = "SELECT * FROM vigil.cluster_leases()";

/*
 * $1 job id, $2 instance, $3 node, $4 epoch, $5 pid, $6 runs kept per
 * job: a cluster run began (history cluster-wide, pruned like state.db's).
 * An earlier run of the instance still open is closed as lost: only one
 * runs at a time, and its node recorded no end (it died, was fenced
 * while the database was out of reach, or lost its lease).  Answer: (id).
 */
const char pg_run_begin[] =
    "WITH i AS (INSERT INTO vigil.run (job_id, instance, node, epoch, pid, "
    "started_at) VALUES ($1, $2, $3, $4, $5, now()) RETURNING id), "
    "d AS (DELETE FROM vigil.run r WHERE r.job_id = $1 AND r.id <= "
    "(SELECT id FROM vigil.run WHERE job_id = $1 ORDER BY id DESC "
    "OFFSET greatest($6::int - 1, 0) LIMIT 1)), "
    "l AS (UPDATE vigil.run r SET ended_at = now(), reason = 'lost: ' || "
    "r.node || ' recorded no end (a new run began on ' || $3 || ')' "
    "WHERE r.job_id = $1 AND r.instance = $2 AND r.ended_at IS NULL "
    "AND r.message_id IS NULL AND r.id < (SELECT id FROM i)) "
    "SELECT id FROM i";

/*
 * $1 job id, $2 instance (-1: every one), $3 how many: the last runs of a
 * cluster job on every node, oldest first.  Answer: (instance, id, node,
 * epoch, pid, started, ended (Unix usec), exit code, signal, reason,
 * message id) per row.
 */
const char pg_run_history[] =
    "SELECT instance, id, node, epoch, pid, "
    "(extract(epoch FROM started_at) * 1e6)::bigint, "
    "(extract(epoch FROM ended_at) * 1e6)::bigint, exit_code, signal, "
    "reason, message_id FROM (SELECT * FROM vigil.run WHERE job_id = $1 "
    "AND ($2 < 0 OR instance = $2) ORDER BY id DESC LIMIT $3) r "
    "ORDER BY id";

/*
 * $1 job ids, $2 instances: what status shows of each on every node.
 * Answer per pair: (job id, instance, the holder of its live lease or
 * NULL, the pid of the holder's open run or NULL, usec since that run
 * began, then the last ended run's node, exit code, signal, reason and
 * end (Unix usec), NULL without one; then, with an open run, the
 * restarts of the holding: the runs the holder began since it took the
 * lease, less one).
 */
const char pg_status_view[] =
    "SELECT k.j, k.i, l.holder, r.pid, "
    "(extract(epoch FROM now() - r.started_at) * 1e6)::bigint, "
    "e.node, e.exit_code, e.signal, e.reason, "
    "(extract(epoch FROM e.ended_at) * 1e6)::bigint, "
    "(SELECT greatest(count(*) - 1, 0) FROM vigil.run x "
    "WHERE r.pid IS NOT NULL AND x.job_id = k.j AND x.instance = k.i "
    "AND x.node = l.holder AND x.message_id IS NULL "
    "AND x.started_at >= l.acquired_at) "
    "FROM unnest($1::int[], $2::int[]) AS k(j, i) "
    "LEFT JOIN vigil.lease l ON l.job_id = k.j AND l.instance = k.i "
    "AND l.holder IS NOT NULL AND l.expires_at > now() "
    "LEFT JOIN LATERAL (SELECT x.pid, x.started_at FROM vigil.run x "
    "WHERE x.job_id = k.j AND x.instance = k.i AND x.node = l.holder "
    "AND x.ended_at IS NULL AND x.message_id IS NULL "
    "ORDER BY x.id DESC LIMIT 1) r ON true "
    "LEFT JOIN LATERAL (SELECT x.node, x.exit_code, x.signal, x.reason, "
    "x.ended_at FROM vigil.run x WHERE x.job_id = k.j AND x.instance = k.i "
    "AND x.ended_at IS NOT NULL ORDER BY x.id DESC LIMIT 1) e ON true";

/* $1 run id, $2 exit code, $3 signal, $4 how it ended: the run ended. */
const char pg_run_end[] =
    "UPDATE vigil.run SET ended_at = now(), exit_code = $2, signal = $3, "
    "reason = $4 WHERE id = $1";

const char pg_listen[] = "LISTEN vigil";

/* ---- the queue ---- */

/*
 * $1 job id, $2 free slots, $3 node, $4 ttl ms, $5 cluster-wide cap (0:
 * none).  Answer: (id, attempts, payload, NULL) per message claimed,
 * committed before any run starts; (id, attempts) is the claim's token.
 * Fewer than $2: a last row (NULL, NULL, NULL, ms until the next
 * available message is due, NULL if none or the cap is reached).  The
 * claim commits without waiting for the disk: one lost in a crash of the
 * database only means its messages run again (at least once).
 */
const char pg_q_claim[] = "SELECT mid, mattempts, mpayload, mdue "
                          "FROM vigil.claim($1, $2, $3, $4, $5)";

/*
 * $1 node, then arrays of the outcomes: $2 ids, $3 attempts (the claim
 * tokens), $4 what ('d' done, 'f' failed, 'r' given back), $5 delay ms
 * before the retry, $6 max attempts, $7 exit codes, $8 signals (-1:
 * none), $9 errors, $10 output tails (bytea), $11 wake the others at
 * a done (the job has a cluster-wide cap).  Each applies only while
 * the message is still this node's claim of that attempt.  Answer: (id,
 * state after: -1 deleted) per outcome applied; the others were stale
 * (rescued or deleted meanwhile).  Messages available again wake every
 * node.  Committed without waiting for the disk (synchronous_commit off
 * for this transaction only), as claims are: an outcome lost in a crash
 * of the database leaves its message running under this node's claim,
 * which expires and is rescued: it runs again, as at least once allows.
 */
const char pg_q_outcomes[] =
    "WITH s AS (SELECT set_config('synchronous_commit', 'off', true)), "
    "k AS (SELECT k.* FROM s, unnest($2::bigint[], $3::int[], "
    "$4::text[], $5::bigint[], $6::int[], $7::int[], $8::int[], "
    "$9::text[], $10::bytea[], $11::boolean[]) AS k(id, a, op, delay, "
    "maxa, ex, sig, err, tail, wake)), "
    "d AS (DELETE FROM vigil.message m USING k WHERE k.op = 'd' "
    "AND m.id = k.id AND m.attempts = k.a AND m.state = 1 "
    "AND m.holder = $1 RETURNING m.id, -1 AS st, m.job_id, k.wake), "
    "u AS (UPDATE vigil.message m SET "
    "state = CASE WHEN k.op = 'f' AND m.attempts >= k.maxa THEN 2 ELSE 0 "
    "END, "
    "attempts = CASE WHEN k.op = 'r' THEN greatest(m.attempts - 1, 0) "
    "ELSE m.attempts END, "
    "due = now() + k.delay * interval '1 ms', holder = NULL, "
    "lease_until = NULL, updated_at = now(), "
    "last_exit = CASE WHEN k.op = 'f' THEN nullif(k.ex, -1) "
    "ELSE m.last_exit END, "
    "last_signal = CASE WHEN k.op = 'f' THEN nullif(k.sig, -1) "
    "ELSE m.last_signal END, "
    "last_error = CASE WHEN k.op = 'f' THEN nullif(k.err, '') "
    "ELSE m.last_error END, "
    "output = CASE WHEN k.op = 'f' THEN k.tail ELSE m.output END "
    "FROM k WHERE k.op <> 'd' AND m.id = k.id AND m.attempts = k.a "
    "AND m.state = 1 AND m.holder = $1 "
    "RETURNING m.id, m.state::int AS st, m.job_id) "
    "SELECT id, st, CASE WHEN wake THEN "
    "pg_notify('vigil', 'q ' || job_id) END IS NULL FROM d UNION ALL "
    "SELECT id, st, CASE WHEN st = 0 THEN "
    "pg_notify('vigil', 'q ' || job_id) END IS NULL FROM u";

/*
 * $1 grace ms.  Messages whose holder stopped renewing (its runs are
 * fenced by then): available again after a backoff, their attempt
 * counted (a message that takes its host down still runs out of
 * attempts), or dead.  By one node per tick: the others find the lock
 * taken.  Answer: (job id, id, state) per message rescued.
 */
const char pg_q_rescue[] = "SELECT * FROM vigil.rescue($1)";

/*
 * vigilctl enqueue: $1 job, $2 payload (bytea), $3 delay (an interval's
 * text, "N milliseconds": no operator to look up), $4 unique
 * key (NULL: none), $5 priority.  Answer: (id, created): created false
 * is the live message that holds the key.
 */
const char pg_q_enqueue[] =
    "SELECT id, created FROM vigil.enqueue_message($1, $2, $3::interval, "
    "$4, $5)";

/*
 * vigilctl queue: $1 job ids.  Answer per job: (job id, available,
 * delayed, running, dead, "node=count,..." of the running ones).
 */
const char pg_q_counts[] = "SELECT * FROM vigil.counts($1)";

/*
 * vigilctl queue --dead: $1 job id, $2 at most.  Answer: (id, attempts,
 * last exit, last signal, last error, created us, updated us, priority,
 * payload bytes, output tail), oldest first.
 */
const char pg_q_dead[] = "SELECT * FROM vigil.dead($1, $2)";

/*
 * vigilctl retry: $1 id.  A dead or delayed message, available now with
 * its attempts back to 0.  Answer: (job id) when it was.
 */
const char pg_q_retry[] = "SELECT * FROM vigil.retry($1)";

/* vigilctl delete: $1 id.  Answer: (state) when there was one. */
const char pg_q_delete[] =
    "DELETE FROM vigil.message WHERE id = $1 RETURNING state";

/*
 * vigilctl purge: $1 job id, $2 dead only.  Answer: (count) of the
 * waiting and dead messages deleted (not the running ones).
 */
const char pg_q_purge[] =
    "WITH d AS (DELETE FROM vigil.message WHERE job_id = $1 "
    "AND (state = 2 OR (NOT $2::boolean AND state = 0)) RETURNING 1) "
    "SELECT count(*) FROM d";

/* vigilctl kick: $1 job id: every node looks for its messages. */
const char pg_q_kick[] = "SELECT vigil.kick($1)";

/* A bytea as PostgreSQL's text input reads it: "\\x" and hex. */
char *
pg_bytea(const void *p, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *b = p;
	char *s = xmalloc(3 + 2 * len);
	size_t i;

	s[0] = '\\';
	s[1] = 'x';
	for (i = 0; i < len; i++) {
		s[2 + 2 * i] = hex[b[i] >> 4];
		s[3 + 2 * i] = hex[b[i] & 0xf];
	}
	s[2 + 2 * len] = '\0';
	return (s);
}

static int
pg_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return (c - '0');
	if (c >= 'a' && c <= 'f')
		return (c - 'a' + 10);
	if (c >= 'A' && c <= 'F')
		return (c - 'A' + 10);
	return (-1);
}

/*
 * A bytea of an answer (text, hex format) decoded into a new buffer with
 * a NUL after its *len bytes; NULL when s is not one.
 */
void *
pg_bytea_decode(const char *s, size_t *len)
{
	size_t n, i;
	unsigned char *b;
	int hi, lo;

	if (s == NULL || s[0] != '\\' || s[1] != 'x')
		return (NULL);
	s += 2;
	n = strlen(s);
	if (n % 2 != 0)
		return (NULL);
	b = xmalloc(n / 2 + 1);
	for (i = 0; i < n / 2; i++) {
		if ((hi = pg_hexval(s[2 * i])) == -1 ||
		    (lo = pg_hexval(s[2 * i + 1])) == -1) {
			free(b);
			return (NULL);
		}
		b[i] = (unsigned char)(hi << 4 | lo);
	}
	b[n / 2] = '\0';
	*len = n / 2;
	return (b);
}

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
