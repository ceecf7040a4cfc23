/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/* libmicrohttpd opened on demand: see mhd.h. */

#include "config.h"

#include <dlfcn.h>
#include <stddef.h>

#include "mhd.h"
#include "xmalloc.h"

struct mhd_lib mhd;

/* Open libmicrohttpd and find its functions.  Return 0, or -1 with cause. */
int
mhd_load(char **cause)
{
	const char *name = "";

	if ((mhd.dl = dlopen(HTTP_MHD_SONAME, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		xasprintf(cause,
		    "http_listen: %s (the HTTP server needs libmicrohttpd: "
		    "apt install libmicrohttpd12)",
		    dlerror());
		return (-1);
	}
#define HTTP_MHD_LOAD(f)                                                       \
	if ((mhd.f = (__typeof__(f) *)dlsym(mhd.dl, #f)) == NULL)              \
		name = #f;
	HTTP_MHD_FUNCS(HTTP_MHD_LOAD)
#undef HTTP_MHD_LOAD
	if (*name != '\0') {
		xasprintf(
		    cause, "http_listen: %s: no %s", HTTP_MHD_SONAME, name);
		dlclose(mhd.dl);
		mhd.dl = NULL;
		return (-1);
	}
	return (0);
}
