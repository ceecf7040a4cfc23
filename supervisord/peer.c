/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * A peer's control rights (the control socket's clients, http.c's unix
 * listener): root, vigild's own user, or a member of vigil.conf's
 * socket_group; anyone else may only read (see peer.h).
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "peer.h"
#include "vigild.h"
#include "xmalloc.h"

/* The supplementary groups of fd's peer, into p. */
void
peer_groups(int fd, struct peer *p)
{
	socklen_t len = 64 * sizeof(gid_t);

	for (;;) {
		p->groups = xreallocarray(p->groups, len, 1);
		if (getsockopt(
		        fd, SOL_SOCKET, SO_PEERGROUPS, p->groups, &len) == 0) {
			p->ngroups = (int)(len / sizeof(gid_t));
			return;
		}
		if (errno != ERANGE) {
			p->ngroups = 0;
			return;
		}
	}
}

/* Return 1 if the peer had group gid when it connected. */
int
peer_in_group(const struct peer *p, gid_t gid)
{
	int i;

	if (p->gid == gid)
		return (1);
	for (i = 0; i < p->ngroups; i++) {
		if (p->groups[i] == gid)
			return (1);
	}
	return (0);
}

/* Control rights of a peer. */
int
peer_may_act(const struct peer *p)
{
	if (p->uid == 0 || p->uid == geteuid())
		return (1);
	return (vigild.conf->has_socket_gid &&
	    peer_in_group(p, vigild.conf->socket_gid));
}

/*
 * The control rights of the peer of fd, a connected unix socket that is
 * not the control socket's (http.c's unix listener), by the same rule
 * as the control socket's clients; its uid in *uid.  Return 1 or 0, or
 * -1 if the kernel does not say who the peer is.
 */
int
peer_rights(int fd, uid_t *uid)
{
	struct peer p;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int r;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1)
		return (-1);
	memset(&p, 0, sizeof(p));
	p.uid = cred.uid;
	p.gid = cred.gid;
	peer_groups(fd, &p);
	r = peer_may_act(&p);
	peer_clear(&p);
	*uid = p.uid;
	return (r);
}

/* Forget what was read of the peer. */
void
peer_clear(struct peer *p)
{
	free(p->groups);
	p->groups = NULL;
	p->ngroups = 0;
}
