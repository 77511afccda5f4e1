/* SPDX-License-Identifier: MIT */
/*
 * libiwx's options structs grow at their end (iwx.h, IWX_OPTS, as libbpf's): a field past
 * the caller's sz is not read, a byte past what libiwx knows must be 0, and a struct
 * not made as IWX_OPTS makes it is refused with EINVAL before anything is done.
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include <criterion/criterion.h>

#include <iwx/iwx.h>

#define NOWHERE	"/nonexistent/iwxd.sock"

/* an iwx_open_opts as a later iwx.h might have it: one more field */
struct later_open_opts {
	struct iwx_open_opts	now;
	uint64_t		more;
};

/* iwx_open(o) fails: its errno */
static int open_errno(const void *o)
{
	errno = 0;
	cr_assert_null(iwx_open(o));
	return errno;
}

Test(client_opts, made_by_iwx_opts_reaches_the_socket_it_names)
{
	IWX_OPTS(iwx_open_opts, o, .socket = NOWHERE);

	cr_assert_eq(o.sz, sizeof(struct iwx_open_opts));
	cr_assert_str_eq(iwx_socket_path(&o), NOWHERE);
	cr_assert_eq(open_errno(&o), ENOENT, "valid: it tried the socket");
}

Test(client_opts, without_sz_is_refused)
{
	struct iwx_open_opts o = { .socket = NOWHERE };

	cr_assert_eq(open_errno(&o), EINVAL);
	o.sz = sizeof(o.sz) - 1;
	cr_assert_eq(open_errno(&o), EINVAL);
	o.sz = 1 << 20;		/* no struct of any iwx.h: not read that far */
	cr_assert_eq(open_errno(&o), EINVAL);
}

Test(client_opts, a_later_field_unknown_here_must_be_zero)
{
	struct later_open_opts o = { .now = { .sz = sizeof(o), .socket = NOWHERE } };

	cr_assert_eq(open_errno(&o), ENOENT, "0 where libiwx knows nothing: the default");
	o.more = 1;
	cr_assert_eq(open_errno(&o), EINVAL, "asked for what this libiwx cannot do");
	cr_assert_str_eq(iwx_socket_path(&o.now), iwx_socket_path(NULL),
			 "refused by iwx_open: its socket field not read");
}

Test(client_opts, a_field_past_an_earlier_sz_is_not_read)
{
	struct iwx_open_opts o = { .sz = sizeof(o.sz), .socket = NOWHERE,
				   .arena_size = (size_t)1 << 62 };

	cr_assert_str_eq(iwx_socket_path(&o), iwx_socket_path(NULL), "socket: its default");
	o.sz = offsetof(struct iwx_open_opts, arena_size);
	cr_assert_str_eq(iwx_socket_path(&o), NOWHERE);
	cr_assert_eq(open_errno(&o), ENOENT, "arena_size past sz: neither read nor refused");
}

Test(client_opts, listen_opts_are_checked_alike)
{
	struct iwx_listen_opts bad = { .backlog = 1 };
	struct sockaddr_in a = { .sin_family = AF_INET };

	errno = 0;
	cr_assert_null(iwx_listen_with(NULL, (struct sockaddr *)&a, sizeof(a), &bad));
	cr_assert_eq(errno, EINVAL, "refused before the device is looked at");
}
