// SPDX-License-Identifier: MIT
/* Passing descriptors over Unix sockets (control/fdpass.c). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fdpass.h"

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	cr_assert_not_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static int memfd_with(const char *text)
{
	int fd = memfd_create("fdpass-test", MFD_CLOEXEC);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	return fd;
}

static void pass_one(int type)
{
	int sv[2], fd = memfd_with("hello"), got;
	char msg[16] = { 0 }, back[8] = { 0 };

	cr_assert_eq(socketpair(AF_UNIX, type, 0, sv), 0);
	cr_assert_eq(iwx_fd_send(sv[0], fd, "arena", 5), 5);
	cr_assert_eq(iwx_fd_recv(sv[1], &got, msg, sizeof(msg)), 5);
	cr_assert_str_eq(msg, "arena");
	cr_assert_geq(got, 0);
	cr_assert_neq(got, fd);
	cr_assert(fcntl(got, F_GETFD) & FD_CLOEXEC);
	cr_assert_eq(pread(got, back, 5, 0), 5, "the same file through the new descriptor");
	cr_assert_str_eq(back, "hello");
	cr_assert_eq(pwrite(got, "J", 1, 0), 1);
	cr_assert_eq(pread(fd, back, 5, 0), 5);
	cr_assert_str_eq(back, "Jello");

	/* A message without a descriptor, then the end. */
	cr_assert_eq(iwx_fd_send(sv[0], -1, "x", 1), 1);
	cr_assert_eq(iwx_fd_recv(sv[1], &got, msg, sizeof(msg)), 1);
	cr_assert_eq(got, -1);
	close(sv[0]);
	cr_assert_eq(iwx_fd_recv(sv[1], &got, msg, sizeof(msg)), 0);
	cr_assert_eq(got, -1);
	cr_assert_eq(iwx_fd_send(sv[1], fd, "y", 1), -EPIPE, "no SIGPIPE");
	close(sv[1]);
	close(fd);
}

Test(fdpass, stream)
{
	pass_one(SOCK_STREAM);
}

Test(fdpass, seqpacket)
{
	pass_one(SOCK_SEQPACKET);
}

Test(fdpass, errors)
{
	int sv[2], fd = memfd_with("z"), got = 42;
	char buf[4];

	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	cr_assert_eq(iwx_fd_send(sv[0], fd, "", 0), -EINVAL, "no byte to carry the descriptor");
	cr_assert_eq(iwx_fd_send(sv[0], 9999, "a", 1), -EBADF);
	cr_assert_eq(iwx_fd_recv(-1, &got, buf, sizeof(buf)), -EBADF);
	cr_assert_eq(got, -1);

	int before = open_fds();

	cr_assert_eq(iwx_fd_send(sv[0], fd, "too long", 8), 8);
	cr_assert_eq(iwx_fd_recv(sv[1], &got, buf, sizeof(buf)), -EMSGSIZE, "datagram cut short");
	cr_assert_eq(got, -1);
	cr_assert_eq(open_fds(), before, "the descriptor of a refused message is closed");
	close(sv[0]);
	close(sv[1]);
	close(fd);
}

Test(fdpass, extra_descriptors_closed)
{
	int sv[2], fds[3] = { memfd_with("a"), memfd_with("b"), memfd_with("c") }, got;
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(sizeof(fds))];
	} ctl = { 0 };
	struct iovec iov = { .iov_base = "m", .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b,
			      .msg_controllen = sizeof(ctl.b) };
	char buf[4], c;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ctl.h.cmsg_level = SOL_SOCKET;
	ctl.h.cmsg_type = SCM_RIGHTS;
	ctl.h.cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(&ctl.h), fds, sizeof(fds));
	cr_assert_eq(sendmsg(sv[0], &msg, 0), 1);

	int before = open_fds();

	cr_assert_eq(iwx_fd_recv(sv[1], &got, buf, sizeof(buf)), 1);
	cr_assert_eq(open_fds(), before + 1, "only the first descriptor is kept");
	cr_assert_eq(pread(got, &c, 1, 0), 1);
	cr_assert_eq(c, 'a');
	close(got);
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	close(sv[0]);
	close(sv[1]);
}
