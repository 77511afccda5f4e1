// SPDX-License-Identifier: MIT
/* Passing descriptors over Unix sockets (lib/ipc/fdpass.c). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipc/fdpass.h"

#include "testutil.h"

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
	unsigned n = 1;
	char msg[16] = { 0 }, back[8] = { 0 };

	cr_assert_eq(socketpair(AF_UNIX, type, 0, sv), 0);
	cr_assert_eq(iwx_fd_send(sv[0], &fd, 1, &IOV("arena", 5), 1), 5);
	cr_assert_eq(iwx_fd_recv(sv[1], &got, &n, &IOV(msg, sizeof(msg)), 1), 5);
	cr_assert_str_eq(msg, "arena");
	cr_assert_eq(n, 1);
	cr_assert_geq(got, 0);
	cr_assert_neq(got, fd);
	cr_assert(fcntl(got, F_GETFD) & FD_CLOEXEC);
	cr_assert_eq(pread(got, back, 5, 0), 5, "the same file through the new descriptor");
	cr_assert_str_eq(back, "hello");
	cr_assert_eq(pwrite(got, "J", 1, 0), 1);
	cr_assert_eq(pread(fd, back, 5, 0), 5);
	cr_assert_str_eq(back, "Jello");

	/* A message without a descriptor, then the end. */
	cr_assert_eq(iwx_fd_send(sv[0], NULL, 0, &IOV("x", 1), 1), 1);
	n = 1;
	cr_assert_eq(iwx_fd_recv(sv[1], &got, &n, &IOV(msg, sizeof(msg)), 1), 1);
	cr_assert_eq(n, 0);
	close(sv[0]);
	n = 1;
	cr_assert_eq(iwx_fd_recv(sv[1], &got, &n, &IOV(msg, sizeof(msg)), 1), 0);
	cr_assert_eq(n, 0);
	cr_assert_eq(iwx_fd_send(sv[1], &fd, 1, &IOV("y", 1), 1), -EPIPE, "no SIGPIPE");
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
	int sv[2], fd = memfd_with("z"), bad = 9999, got = 42;
	unsigned n = 1;
	char buf[4];

	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	cr_assert_eq(iwx_fd_send(sv[0], &fd, 1, &IOV("", 0), 1), -EINVAL, "no byte to carry the descriptor");
	cr_assert_eq(iwx_fd_send(sv[0], &fd, IWX_FDPASS_MAX + 1, &IOV("a", 1), 1), -EINVAL);
	cr_assert_eq(iwx_fd_send(sv[0], &bad, 1, &IOV("a", 1), 1), -EBADF);
	cr_assert_eq(iwx_fd_recv(-1, &got, &n, &IOV(buf, sizeof(buf)), 1), -EBADF);
	cr_assert_eq(n, 0);

	int before = open_fds();

	cr_assert_eq(iwx_fd_send(sv[0], &fd, 1, &IOV("too long", 8), 1), 8);
	n = 1;
	cr_assert_eq(iwx_fd_recv(sv[1], &got, &n, &IOV(buf, sizeof(buf)), 1), -EMSGSIZE, "datagram cut short");
	cr_assert_eq(n, 0);
	cr_assert_eq(open_fds(), before, "the descriptor of a refused message is closed");
	close(sv[0]);
	close(sv[1]);
	close(fd);
}

/* Several descriptors in one message, in order; those beyond the caller's room are closed. */
Test(fdpass, several_and_extra_closed)
{
	int sv[2], fds[3] = { memfd_with("a"), memfd_with("b"), memfd_with("c") }, got[2];
	unsigned n = 2;
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(sizeof(fds))];
	} ctl = { 0 };
	char m = 'm';
	struct iovec iov = { .iov_base = &m, .iov_len = 1 };
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

	cr_assert_eq(iwx_fd_recv(sv[1], got, &n, &IOV(buf, sizeof(buf)), 1), 1);
	cr_assert_eq(n, 2);
	cr_assert_eq(open_fds(), before + 2, "the third descriptor is closed");
	cr_assert_eq(pread(got[0], &c, 1, 0), 1);
	cr_assert_eq(c, 'a');
	cr_assert_eq(pread(got[1], &c, 1, 0), 1);
	cr_assert_eq(c, 'b');
	close(got[0]);
	close(got[1]);

	/* the same through iwx_fd_send */
	int three[3];

	n = 3;
	cr_assert_eq(iwx_fd_send(sv[0], fds, 3, &IOV("m", 1), 1), 1);
	cr_assert_eq(iwx_fd_recv(sv[1], three, &n, &IOV(buf, sizeof(buf)), 1), 1);
	cr_assert_eq(n, 3);
	cr_assert_eq(pread(three[2], &c, 1, 0), 1);
	cr_assert_eq(c, 'c');
	for (int i = 0; i < 3; i++)
		close(three[i]);
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	close(sv[0]);
	close(sv[1]);
}

/* A message gathered from pieces and scattered into pieces split elsewhere: the same bytes. */
Test(fdpass, pieces)
{
	int sv[2], fd = memfd_with("p"), got;
	unsigned n = 1;
	char a[4] = { 0 }, b[16] = { 0 };
	const struct iovec out[3] = { IOV("head", 4), IOV("er", 2), IOV("body", 5) };
	const struct iovec in[2] = { IOV(a, sizeof(a)), IOV(b, sizeof(b)) };

	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	cr_assert_eq(iwx_fd_send(sv[0], &fd, 1, out, 3), 11);
	cr_assert_eq(iwx_fd_recv(sv[1], &got, &n, in, 2), 11);
	cr_assert_eq(n, 1);
	cr_assert_arr_eq(a, "head", 4);
	cr_assert_str_eq(b, "erbody");
	close(got);
	/* a datagram longer than the pieces can hold is refused, not cut */
	cr_assert_eq(iwx_fd_send(sv[0], NULL, 0, out, 3), 11);
	n = 1;
	cr_assert_eq(iwx_fd_recv(sv[1], &got, &n, in, 1), -EMSGSIZE);
	close(sv[0]);
	close(sv[1]);
	close(fd);
}

/* Send fds (n of them, up to the kernel's most) with a message of len bytes, as anyone may. */
static void send_raw(int sock, const int *fds, unsigned n, const void *buf, size_t len)
{
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(IWX_FDPASS_ANY * sizeof(int))];
	} ctl = { 0 };
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b,
			      .msg_controllen = CMSG_SPACE(n * sizeof(int)) };

	ctl.h.cmsg_level = SOL_SOCKET;
	ctl.h.cmsg_type = SCM_RIGHTS;
	ctl.h.cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(&ctl.h), fds, n * sizeof(int));
	cr_assert_eq(sendmsg(sock, &msg, 0), (ssize_t)len);
}

/*
 * iwx_fd_recv_all hands over every descriptor, as many as a message can carry, even with
 * a message it refuses: none is closed (nor dropped by the kernel) in the receiver.
 */
Test(fdpass, recv_all_keeps_every_descriptor)
{
	int sv[2], fd = memfd_with("x"), many[IWX_FDPASS_ANY], got[IWX_FDPASS_ANY];
	unsigned n;
	char buf[4], c;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	for (int i = 0; i < IWX_FDPASS_ANY; i++)
		many[i] = fd;
	send_raw(sv[0], many, IWX_FDPASS_ANY, "m", 1);
	cr_assert_eq(iwx_fd_recv_all(sv[1], got, &n, &IOV(buf, sizeof(buf)), 1), 1);
	cr_assert_eq(n, IWX_FDPASS_ANY, "all %d descriptors", IWX_FDPASS_ANY);
	for (unsigned i = 0; i < n; i++) {
		cr_assert_eq(pread(got[i], &c, 1, 0), 1);
		cr_assert_eq(c, 'x');
		cr_assert(fcntl(got[i], F_GETFD) & FD_CLOEXEC);
		close(got[i]);
	}

	send_raw(sv[0], &fd, 1, "too long", 8);
	cr_assert_eq(iwx_fd_recv_all(sv[1], got, &n, &IOV(buf, sizeof(buf)), 1), -EMSGSIZE);
	cr_assert_eq(n, 1, "the descriptor of a refused message is the caller's");
	cr_assert_eq(pread(got[0], &c, 1, 0), 1);
	close(got[0]);
	close(sv[0]);
	close(sv[1]);
	close(fd);
}
