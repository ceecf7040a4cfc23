#!/usr/bin/python3
"""pg-enqueue.py DSN JOB N MODE: an application that enqueues in its own
transactions.

Connects to DSN (a libpq conninfo) with Debian's psycopg2, makes the table
public.app_order(id int primary key, note text) if it is not there (in a
transaction of its own; public, not the first schema of the search path,
which for the nodes' roles is vigil's), then for i in 1..N, in one
transaction each: INSERT INTO public.app_order VALUES (i, 'order-<i>') and
SELECT vigil.enqueue(JOB, 'order-<i>'::text); then COMMIT, or, in MODE half,
ROLLBACK when i is odd (MODE all: always COMMIT).  Prints "i id" for each
committed message (id: what vigil.enqueue returned), one a line, flushed
as it commits.  Exits 0 once all N are done, 1 on a database error (the
message on stderr; the lines printed so far are committed), 2 on bad
arguments.

vigil.enqueue(job text, payload text, delay interval DEFAULT '0',
unique_key text DEFAULT NULL, priority int DEFAULT 0) RETURNS bigint.
Run it as /usr/bin/python3 (Debian's psycopg2), from the source tree:
$TOP_SRCDIR/tests/helpers/pg-enqueue.py.
"""

import sys

import psycopg2

USAGE = "usage: pg-enqueue.py DSN JOB N half|all"


def main(argv):
    if len(argv) != 5:
        print(USAGE, file=sys.stderr)
        return 2
    dsn, job, count, mode = argv[1:]
    try:
        n = int(count)
    except ValueError:
        n = -1
    if n < 0 or mode not in ("half", "all"):
        print(USAGE, file=sys.stderr)
        return 2
    try:
        conn = psycopg2.connect(dsn)
    except psycopg2.Error as e:
        print("pg-enqueue: connect: %s" % str(e).strip(), file=sys.stderr)
        return 1
    i = 0
    try:
        with conn.cursor() as cur:
            cur.execute("CREATE TABLE IF NOT EXISTS public.app_order"
                        "(id int primary key, note text)")
        conn.commit()
        for i in range(1, n + 1):
            payload = "order-%d" % i
            with conn.cursor() as cur:
                cur.execute("INSERT INTO public.app_order VALUES (%s, %s)",
                            (i, payload))
                # ::text: the text overload, not vigil.enqueue(text, bytea).
                cur.execute("SELECT vigil.enqueue(%s, %s::text)",
                            (job, payload))
                msg_id = cur.fetchone()[0]
            if mode == "all" or i % 2 == 0:
                conn.commit()
                print("%d %d" % (i, msg_id), flush=True)
            else:
                conn.rollback()
    except psycopg2.Error as e:
        print("pg-enqueue: at %d: %s" % (i, str(e).strip()), file=sys.stderr)
        return 1
    finally:
        conn.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
