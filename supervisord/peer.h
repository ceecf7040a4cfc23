/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

#ifndef VIGIL_PEER_H
#define VIGIL_PEER_H

#include <sys/types.h>

/*
 * Who is at the other end of a unix socket, as the kernel saw it at
 * connect (SO_PEERCRED, SO_PEERGROUPS: no user database lookup in the
 * event loop), and whether it has control rights (peer.c).
 */
struct peer {
	uid_t uid;
	gid_t gid;
	gid_t *groups; /* supplementary groups */
	int ngroups;
};

void peer_groups(int, struct peer *);
int peer_in_group(const struct peer *, gid_t);
int peer_may_act(const struct peer *);
int peer_rights(int, uid_t *);
void peer_clear(struct peer *);

#endif
