// SPDX-License-Identifier: MIT
/*
 * A hostile client of iwxd: a member of its group that is not root (iwxd -g nogroup, a
 * child as uid and gid nogroup). iwxd runs as root, and serves it with root's powers: the
 * client must reach only what it owns, and never stop iwxd from serving everyone else.
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <linux/sockios.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ipc/ipc.h"

#include "child.h"
#include "conn.h"
#include "iwxd_pair.h"
#include "util/clock.h"
#include "stall.h"

#define DAEMON_ARGS	"--settle-ms 0 -g nogroup"
/* waits for what must come, bounded against a hang (stall.h) */
#define DROP_MS		STALL_MS	/* iwxd hangs up on the attacker */
#define STOP_MS		STALL_MS	/* ... and stops on SIGTERM */
#define FILL_MS		STALL_MS	/* the lingering socket's data is stuck */

static struct iwxd_pair pair;
static int peer_listener = -1;	/* the lingering socket's peer, which never reads */
static int lingering = -1;	/* the test's copy of the socket */
static pid_t child = -1;

static void start(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root for namespaces");
	cr_assert_eq(iwxd_pair_start(&pair, DAEMON_ARGS), 0, "two daemons");
	cr_assert_eq(iwxd_pair_reachable(&pair), 0);
}

/* Daemons that take clients' descriptors, as on kernels before SO_PASSRIGHTS (6.16). */
static void up(void)
{
	setenv("IWX_PASSRIGHTS", "1", 1);
	start();
}

static void down(void)
{
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		child = -1;
	}
	if (pair.pid[0] > 0)
		kill(pair.pid[0], SIGCONT);	/* a test that failed while it was stopped */
	/* the listener first: it resets the connection, which ends a close lingering on it */
	if (peer_listener >= 0)
		close(peer_listener);
	if (lingering >= 0)
		close(lingering);
	peer_listener = lingering = -1;
	iwxd_pair_stop(&pair);
}

TestSuite(daemon_attack, .init = up, .fini = down, .timeout = HANG_S);
TestSuite(daemon_rights, .init = start, .fini = down, .timeout = HANG_S);

static struct iwx_device *open_dev(void)
{
	IWX_OPTS(iwx_open_opts, o, .socket = pair.sock[0], .arena_size = 1 << 20);

	return iwx_open(&o);
}

/* ------------------------------------------------- descriptors from clients */

/*
 * A TCP socket whose last close blocks: in namespace a, connected to a listener that
 * never accepts nor reads and has the smallest receive buffer, its send buffer full of
 * data the peer's shut window holds back, and SO_LINGER on for 2^30 s. close() then waits
 * for that data to leave (socket(7)): until the listener goes and resets the connection.
 */
static void make_lingering_socket(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	struct linger lg = { .l_onoff = 1, .l_linger = 1 << 30 };
	static const char junk[4096];
	int tiny = 1, unsent = 0;

	peer_listener = netns_socket(pair.ns.a, AF_INET, SOCK_STREAM);
	lingering = netns_socket(pair.ns.a, AF_INET, SOCK_STREAM);
	cr_assert(peer_listener >= 0 && lingering >= 0, "two sockets in namespace a");
	inet_pton(AF_INET, NETNS_A4, &sa.sin_addr);
	cr_assert_eq(setsockopt(peer_listener, SOL_SOCKET, SO_RCVBUF, &tiny, sizeof(tiny)), 0);
	cr_assert_eq(bind(peer_listener, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(listen(peer_listener, 1), 0);
	cr_assert_eq(getsockname(peer_listener, (struct sockaddr *)&sa, &len), 0);
	cr_assert_eq(setsockopt(lingering, SOL_SOCKET, SO_SNDBUF, &tiny, sizeof(tiny)), 0);
	cr_assert_eq(setsockopt(lingering, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
	cr_assert_eq(connect(lingering, (struct sockaddr *)&sa, sizeof(sa)), 0);
	for (uint64_t end = iwx_now_ms() + FILL_MS; !unsent && iwx_now_ms() < end;
	     poll(NULL, 0, 10)) {
		while (send(lingering, junk, sizeof(junk), MSG_DONTWAIT) > 0)
			;
		cr_assert_eq(errno, EAGAIN, "filling the send buffer: %s", strerror(errno));
		cr_assert_eq(ioctl(lingering, SIOCOUTQNSD, &unsent), 0);
	}
	cr_assert_gt(unsent, 0, "data that the peer's window holds back");
}

enum how {
	IN_A_REQUEST,		/* with a request, as a reply's descriptors come */
	TOO_LONG,		/* with a message longer than any request */
	UNREAD,			/* with a request queued behind garbage that gets it dropped */
};

struct attack {
	enum how	how;
	int		said;	/* a pipe: 'S' once the descriptor is iwxd's alone */
};

/* In a child: pass the lingering socket to iwxd a, then expect iwxd to hang up: 0, or errno. */
static int pass_lingering_socket(void *arg)
{
	const struct attack *at = arg;
	static char body[IWX_IPC_MAX - sizeof(struct iwx_ipc_hdr)];
	struct iwx_ipc_hdr h = { .op = IWX_IPC_PD_ALLOC, .seq = 1,
				 .len = at->how == TOO_LONG ? sizeof(body) : 0 };
	struct pollfd p = { .fd = iwx_ipc_connect(pair.sock[0], 0), .events = POLLIN };
	char c;

	close(peer_listener);	/* only the test's copy: the attacker's would keep it alive */
	if (p.fd < 0)
		return -p.fd;
	if ((at->how == UNREAD && send(p.fd, "bad", 3, 0) != 3) ||
	    iwx_ipc_send(p.fd, &h, body, &lingering, 1))
		return EPROTO;
	close(lingering);
	if (write(at->said, "S", 1) != 1)
		return EPIPE;
	/* dropped: no answer, the end of the stream (reset if iwxd left messages unread) */
	if (poll(&p, 1, DROP_MS) != 1)
		return ETIMEDOUT;
	return recv(p.fd, &c, 1, 0) == 0 || errno == ECONNRESET ? 0 : EPROTO;
}

/*
 * A child as uid nogroup passes the lingering socket to iwxd a. iwxd is stopped meanwhile,
 * so that when it takes the socket, the message holds the only reference left: whoever
 * closes it last runs the close that lingers, and that must be iwxd.
 */
static void attack(enum how how)
{
	struct attack at = { .how = how };
	struct pollfd p = { .events = POLLIN };
	int said[2], status;
	char c;

	make_lingering_socket();
	cr_assert_eq(pipe(said), 0);
	at.said = said[1];
	cr_assert_eq(kill(pair.pid[0], SIGSTOP), 0);
	cr_assert_eq(waitpid(pair.pid[0], &status, WUNTRACED), pair.pid[0]);
	cr_assert(WIFSTOPPED(status));
	child = child_as(NOBODY, NOBODY, pass_lingering_socket, &at);
	cr_assert_geq(child, 0);
	close(lingering);
	lingering = -1;
	p.fd = said[0];
	cr_assert_eq(poll(&p, 1, CHILD_MS), 1, "the child passed the socket");
	cr_assert_eq(read(said[0], &c, 1), 1, "the child passed the socket");
	close(said[0]);
	close(said[1]);
	cr_assert_eq(kill(pair.pid[0], SIGCONT), 0);
}

/*
 * Another client, on iwxd a: its device opens and it gets a PD. The close lingers for 2^30
 * s: had iwxd's loop run it, nobody would be served again.
 */
static void expect_others_served(void)
{
	struct iwx_device *dev = open_dev();
	struct iwx_pd *pd = dev ? iwx_alloc_pd(dev) : NULL;

	cr_assert_not_null(pd, "another client is served: %s", strerror(errno));
	iwx_close(dev);
}

/* The attacker was hung up on, and iwxd says why. */
static void expect_attacker_dropped(const char *why)
{
	int status = child_wait(child, CHILD_MS);

	child = -1;
	cr_assert(WIFEXITED(status), "the attacker ended (wait status %#x)", status);
	cr_assert_eq(WEXITSTATUS(status), 0, "iwxd hung up on the attacker: %s",
		     strerror(WEXITSTATUS(status)));
	cr_assert(iwxd_pair_logged(&pair, 0, why), "iwxd says why: %s", why);
}

Test(daemon_attack, lingering_socket_passed_in_a_request)
{
	attack(IN_A_REQUEST);
	expect_others_served();
	expect_attacker_dropped("sent a descriptor");
}

Test(daemon_attack, lingering_socket_passed_in_a_message_too_long)
{
	attack(TOO_LONG);
	expect_others_served();
	expect_attacker_dropped("sent a descriptor");
}

Test(daemon_attack, lingering_socket_left_unread_by_a_client_dropped)
{
	attack(UNREAD);
	expect_others_served();
	expect_attacker_dropped("Protocol error: closing it");
}

Test(daemon_attack, stops_while_the_close_of_a_passed_socket_hangs)
{
	int status;

	attack(IN_A_REQUEST);
	expect_attacker_dropped("sent a descriptor");
	cr_assert_eq(kill(pair.pid[0], SIGTERM), 0);
	status = child_wait(pair.pid[0], STOP_MS);
	pair.pid[0] = -1;
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "iwxd a stops on SIGTERM (wait status %#x)", status);
	cr_assert(iwxd_pair_logged(&pair, 0, "close hangs"), "and says it left a close behind");
}

/* In a child: try to pass the lingering socket to iwxd a. 0 if the kernel refused it. */
static int try_to_pass(void *arg)
{
	struct iwx_ipc_hdr h = { .op = IWX_IPC_PD_ALLOC, .seq = 1 };
	int sock = iwx_ipc_connect(pair.sock[0], 0);

	(void)arg;
	close(peer_listener);
	if (sock < 0)
		return -sock;
	return iwx_ipc_send(sock, &h, NULL, &lingering, 1) == -EPERM ? 0 : EPROTO;
}

/* Where the kernel has SO_PASSRIGHTS, a client's descriptor never reaches iwxd. */
Test(daemon_rights, the_kernel_refuses_a_clients_descriptor)
{
	int status;

	make_lingering_socket();
	child = child_as(NOBODY, NOBODY, try_to_pass, NULL);
	cr_assert_geq(child, 0);
	status = child_wait(child, CHILD_MS);
	child = -1;
	if (iwxd_pair_logged(&pair, 0, "this kernel passes clients' descriptors"))
		cr_skip_test("a kernel before SO_PASSRIGHTS: daemon_attack covers it");
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "sendmsg with a descriptor fails with EPERM (wait status %#x)", status);
	expect_others_served();
}

/* ------------------------------------------------------------------ ports */

struct where {
	const char	*addr;	/* an IPv4 or IPv6 address */
	uint16_t	port;
};

static struct iwx_listener *listen_at(struct iwx_device *dev, struct where w)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	bool v6 = strchr(w.addr, ':');

	if (v6) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(w.port);
		cr_assert_eq(inet_pton(AF_INET6, w.addr, &s6->sin6_addr), 1);
	} else {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(w.port);
		cr_assert_eq(inet_pton(AF_INET, w.addr, &s4->sin_addr), 1);
	}
	return iwx_listen(dev, (struct sockaddr *)&ss, v6 ? sizeof(*s6) : sizeof(*s4), 8);
}

/* In a child: open a device on iwxd a and listen at *arg: 0 or the errno. */
static int listen_in_child(void *arg)
{
	struct iwx_device *dev = open_dev();

	if (!dev)
		return errno;
	return listen_at(dev, *(const struct where *)arg) ? 0 : errno;
}

static int listen_as_member(const char *addr, uint16_t port)
{
	struct where w = { addr, port };

	return run_as(NOBODY, NOBODY, listen_in_child, &w);
}

static int set_unprivileged_port_start(void *value)
{
	FILE *f = fopen("/proc/sys/net/ipv4/ip_unprivileged_port_start", "w");
	int err = f && fputs(value, f) >= 0 ? 0 : -errno;

	if (f && fclose(f))
		err = -errno;
	return err;
}

Test(daemon_attack, member_may_not_listen_on_a_privileged_port)
{
	struct iwx_device *dev;
	char start[] = "2000";

	cr_assert_eq(listen_as_member("0.0.0.0", 23), EACCES, "telnet's port: refused");
	cr_assert_eq(listen_as_member("0.0.0.0", 1023), EACCES, "below 1024: refused");
	cr_assert_eq(listen_as_member(NETNS_A6, 1023), EACCES, "IPv6 as well");
	cr_assert_eq(listen_as_member("0.0.0.0", 1024), 0, "1024 and above: allowed");
	cr_assert_eq(listen_as_member("0.0.0.0", 0), 0, "an ephemeral port: allowed");

	/* the first unprivileged port as iwxd's namespace has it, not as this one does */
	cr_assert_eq(netns_call(pair.ns.a, set_unprivileged_port_start, start), 0);
	cr_assert_eq(listen_as_member("0.0.0.0", 1999), EACCES, "below the namespace's 2000");
	cr_assert_eq(listen_as_member("0.0.0.0", 2000), 0);

	dev = open_dev();
	cr_assert_not_null(dev);
	cr_assert_not_null(listen_at(dev, (struct where){ "0.0.0.0", 23 }), "root may: %s",
			   strerror(errno));
	iwx_close(dev);
}

Test(daemon_attack, no_client_may_listen_on_a_port_another_holds)
{
	struct iwx_device *dev = open_dev(), *other = open_dev();
	struct sockaddr_storage ss;
	struct iwx_listener *l;
	uint16_t port;

	cr_assert(dev && other);
	l = listen_at(dev, (struct where){ NETNS_A4, 0 });
	cr_assert_not_null(l);
	cr_assert_eq(iwx_listener_addr(l, &ss), 0);
	port = ntohs(((struct sockaddr_in *)&ss)->sin_port);

	/* another address, which the kernel would allow: still refused to other clients */
	cr_assert_eq(listen_as_member(NETNS_A6, port), EADDRINUSE, "a member, another address");
	cr_assert_eq(listen_as_member("0.0.0.0", port), EADDRINUSE, "a member, any address");
	cr_assert_null(listen_at(other, (struct where){ NETNS_A6, port }), "another root client");
	cr_assert_eq(errno, EADDRINUSE);

	/* the client that holds it gets what the kernel says */
	cr_assert_not_null(listen_at(dev, (struct where){ NETNS_A6, port }),
			   "its own port on another address: %s", strerror(errno));
	cr_assert_null(listen_at(dev, (struct where){ NETNS_A4, port }), "the same address twice");
	cr_assert_eq(errno, EADDRINUSE, "the kernel's answer: %s", strerror(errno));
	iwx_close(dev);
	iwx_close(other);
}
