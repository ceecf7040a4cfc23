/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <stdint.h>
#include <string.h>

#include "sendfd.h"

/*
 * Send len bytes of buf on sock as one datagram, with fd passed along
 * when it is not -1; flags as sendmsg(2)'s.  sendmsg's result.
 */
ssize_t
sendfd(int sock, const void *buf, size_t len, int fd, int flags)
{
	struct msghdr mh;
	struct iovec iov;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct cmsghdr *cm;

	memset(&mh, 0, sizeof(mh));
	iov.iov_base = (void *)(uintptr_t)buf;
	iov.iov_len = len;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (fd != -1) {
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	return (sendmsg(sock, &mh, flags));
}
