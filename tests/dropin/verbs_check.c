// SPDX-License-Identifier: MIT
/*
 * What rping, qperf and perftest do not reach of the drop-in libibverbs and librdmacm,
 * checked through the real <infiniband/verbs.h> and <rdma/rdma_cma.h> (tests/dropin/run.sh):
 *   - unsupported verbs fail as rdma-core's do (EOPNOTSUPP, EINVAL), never crash; a QP's
 *     inline size rounded up; no RTR naming a peer without a connection (ENOTCONN);
 *   - a refused and a rejected connect (with the peer's private data), one whose QP the
 *     client destroys with ibv_destroy_qp (DISCONNECTED), then one accepted with private
 *     data both ways;
 *   - ibv_wr_* posting (RDMA Write, Send with inline data) into unaligned malloc memory,
 *     the data checked, and still there after deregistration;
 *   - completion channel events, blocking and non-blocking;
 *   - when the peer dies: DISCONNECTED, and the receive posted completes flushed;
 *   - rdma_getaddrinfo with the addresses in its hints, rdma_bind_addr's device,
 *     rdma_migrate_id to and from an id's own channel (libfabric's verbs provider);
 *   - rsockets' edges: no datagram rsocket (EOPNOTSUPP), a non-blocking rrecv with nothing
 *     there (EAGAIN), rpoll and rrecv once the peer has closed (POLLIN while its data is
 *     unread, then POLLHUP too; 0: end of stream);
 *   - a channel destroyed while a thread waits in rdma_get_cm_event (rping 44 does that as
 *     it exits): the thread waits on, as on rdma-core's, and never fails.
 *
 *   verbs_check -s          the server (listens on PORT)
 *   verbs_check -c ADDR     the client
 * Each prints "ok ..." per check and exits 0 when every one held.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rsocket.h>

#define PORT		7471
#define PORT_NOBODY	7472
#define PORT_RS		7473	/* the rsocket checks' */
#define LEN		20000	/* bytes written: spans pages, at an odd address */
#define HELLO		"iwx-hello"
#define REJECT_ME	"reject-me"
#define DESTROY_ME	"destroy-me"	/* accepted; the client destroys its QP with ibv_destroy_qp */
#define FATAL_ME	"fatal-me"	/* accepted with no receive posted; the client Sends */

static int failures;

#define CHECK(cond, ...) do {						\
	if (cond) {							\
		printf("ok ");						\
	} else {							\
		printf("FAIL ");					\
		failures++;						\
	}								\
	printf(__VA_ARGS__);						\
	printf("\n");							\
	fflush(stdout);							\
} while (0)

/* What the server tells the client in its accept's private data. */
struct welcome {
	char		word[12];	/* "iwx-welcome" */
	uint64_t	addr;
	uint32_t	rkey;
} __attribute__((packed));

static struct rdma_cm_event *expect(struct rdma_event_channel *ch, enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev;

	if (rdma_get_cm_event(ch, &ev)) {
		printf("FAIL rdma_get_cm_event: %s\n", strerror(errno));
		exit(1);
	}
	if (ev->event != want) {
		printf("FAIL event %s (status %d), expected %s\n", rdma_event_str(ev->event), ev->status,
		       rdma_event_str(want));
		exit(1);
	}
	return ev;
}

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

static int same(const uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (uint8_t)(seed + i * 7))
			return 0;
	return 1;
}

/* One completion through the channel: arm, wait on its fd, take the event, poll. */
static int wait_wc(struct ibv_comp_channel *ch, struct ibv_cq *cq, struct ibv_wc *wc)
{
	for (int tries = 0; tries < 100; tries++) {
		struct pollfd p = { .fd = ch->fd, .events = POLLIN };
		struct ibv_cq *got;
		void *ctx;

		if (ibv_poll_cq(cq, 1, wc) == 1)
			return 0;
		if (ibv_req_notify_cq(cq, 0))
			return -1;
		if (ibv_poll_cq(cq, 1, wc) == 1)
			return 0;
		if (poll(&p, 1, 10000) != 1)
			return -1;
		if (ibv_get_cq_event(ch, &got, &ctx) || got != cq)
			return -1;
		ibv_ack_cq_events(cq, 1);
	}
	return -1;
}

/*
 * A shared receive queue, and a QP on it, before any connection (the data: perftest --use-srq);
 * a second QP on it only where the program says it keeps the SRQ stocked (IWX_SHARED_SRQ=1).
 */
static void srq_checks(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 3, .max_sge = 1, .srq_limit = 99 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	struct ibv_recv_wr wr = { .wr_id = 1 }, *bad;
	struct ibv_srq_attr got;
	struct ibv_qp_init_attr qi;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr on_srq = { .send_cq = cq, .recv_cq = cq, .srq = srq,
		.qp_type = IBV_QPT_RC, .cap = { .max_send_wr = 1, .max_send_sge = 1 } };
	struct ibv_qp *qp, *qp2;

	CHECK(srq && sa.attr.max_wr >= 3 && sa.attr.max_sge >= 1,
	      "ibv_create_srq: max_wr %u, max_sge %u (srq_limit not looked at)", sa.attr.max_wr,
	      sa.attr.max_sge);
	if (!srq)
		return;
	CHECK(ibv_modify_srq(srq, &(struct ibv_srq_attr){ .srq_limit = 2 }, IBV_SRQ_LIMIT) == 0 &&
	      !ibv_query_srq(srq, &got) && got.srq_limit == 2 && got.max_wr == sa.attr.max_wr,
	      "ibv_modify_srq arms its limit: ibv_query_srq says %u", got.srq_limit);
	CHECK(ibv_modify_srq(srq, &(struct ibv_srq_attr){ .max_wr = 64 }, IBV_SRQ_MAX_WR) ==
	      EOPNOTSUPP, "ibv_modify_srq resizing: EOPNOTSUPP, as on siw");
	CHECK(ibv_post_srq_recv(srq, &wr, &bad) == 0, "ibv_post_srq_recv");
	qp = ibv_create_qp(pd, &on_srq);
	CHECK(qp && !ibv_query_qp(qp, &qa, 0, &qi) && qi.srq == srq && qa.cap.max_recv_wr == 0,
	      "ibv_create_qp on the SRQ: its receives are the SRQ's");
	CHECK(qp && ibv_post_recv(qp, &wr, &bad) == EINVAL && bad == &wr,
	      "ibv_post_recv to a QP on an SRQ: EINVAL");
	qp2 = ibv_create_qp(pd, &on_srq);
	CHECK(!qp2 && errno == EOPNOTSUPP, "a second QP on the SRQ: EOPNOTSUPP (no RNR retry)");
	if (qp2)
		ibv_destroy_qp(qp2);
	setenv("IWX_SHARED_SRQ", "1", 1);
	qp2 = ibv_create_qp(pd, &on_srq);
	unsetenv("IWX_SHARED_SRQ");
	CHECK(qp2, "a second QP on the SRQ with IWX_SHARED_SRQ=1");
	if (qp2)
		ibv_destroy_qp(qp2);
	CHECK(ibv_destroy_srq(srq) == EBUSY, "ibv_destroy_srq with a QP on it: EBUSY");
	if (qp)
		ibv_destroy_qp(qp);
	CHECK(ibv_destroy_srq(srq) == 0, "ibv_destroy_srq once its QP is gone");
}

/*
 * A channel for each of hundreds of CQs (librdmacm makes one for every id whose QP comes
 * without CQs: cmtime's), as the kernel's verbs allow, and as many rdma_cm event
 * channels: a channel watching a nested epoll stopped at 249 (EINVAL: the kernel bounds
 * wake-up paths through nested epolls). 400, two descriptors each, stay under a limit of
 * 1024 descriptors.
 */
#define CHANNELS	400

static void many_channels(struct ibv_context *ctx)
{
	static struct ibv_comp_channel *chs[CHANNELS];
	static struct ibv_cq *cqs[CHANNELS];
	int n = 0, err = 0, quiet = 0;

	for (; n < CHANNELS; n++) {
		chs[n] = ibv_create_comp_channel(ctx);
		cqs[n] = chs[n] ? ibv_create_cq(ctx, 1, NULL, chs[n], 0) : NULL;
		if (!cqs[n]) {
			err = errno;
			if (chs[n])
				ibv_destroy_comp_channel(chs[n]);
			break;
		}
		ibv_req_notify_cq(cqs[n], 0);
	}
	CHECK(n == CHANNELS, "%d completion channels, a CQ armed on each: %d made (%s)", CHANNELS,
	      n, err ? strerror(err) : "no error");
	for (int i = 0; i < n; i++)
		quiet += poll(&(struct pollfd){ .fd = chs[i]->fd, .events = POLLIN }, 1, 0) == 0;
	CHECK(quiet == n, "... none readable with no completion: %d of %d quiet", quiet, n);
	while (n--) {
		ibv_destroy_cq(cqs[n]);
		ibv_destroy_comp_channel(chs[n]);
	}
	/* rdma_cm's event channels alike: an id made without one makes one of its own */
	static struct rdma_event_channel *evs[CHANNELS];

	for (n = 0; n < CHANNELS && (evs[n] = rdma_create_event_channel()); n++)
		;
	CHECK(n == CHANNELS, "%d rdma_cm event channels: %d made (%s)", CHANNELS, n,
	      n < CHANNELS ? strerror(errno) : "no error");
	while (n--)
		rdma_destroy_event_channel(evs[n]);
}

static void local_checks(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ud = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
				       .cap = { .max_send_wr = 1, .max_recv_wr = 1 } };
	struct ibv_ah_attr ah = { .port_num = 1 };
	struct ibv_device_attr da;
	char buf[64];
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *cq2;
	struct ibv_cq *got;
	struct ibv_qp_init_attr qi;
	struct ibv_qp_attr qa;
	struct ibv_qp *rc;
	void *gctx;

	CHECK(!ibv_query_device(ctx, &da) && da.max_qp_wr > 0 && da.max_sge >= 1,
	      "ibv_query_device: max_qp_wr %d, max_sge %d", da.max_qp_wr, da.max_sge);
	CHECK(da.max_srq > 0 && da.max_srq_wr == da.max_qp_wr && da.max_srq_sge == da.max_sge,
	      "ibv_query_device: max_srq %d, max_srq_wr %d, max_srq_sge %d", da.max_srq,
	      da.max_srq_wr, da.max_srq_sge);
	srq_checks(pd, cq);
	errno = 0;
	CHECK(!ibv_create_ah(pd, &ah) && errno == EOPNOTSUPP, "ibv_create_ah: EOPNOTSUPP");
	errno = 0;
	CHECK(!ibv_create_qp(pd, &ud) && errno == EOPNOTSUPP, "ibv_create_qp of a UD QP: EOPNOTSUPP");
	errno = 0;
	CHECK(!ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_MW_BIND) && errno == EOPNOTSUPP,
	      "ibv_reg_mr with memory-window binding: EOPNOTSUPP");
	errno = 0;
	CHECK(!ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_WRITE) && errno == EINVAL,
	      "ibv_reg_mr with remote but not local write: EINVAL");
	errno = 0;
	CHECK(!ibv_reg_mr_iova2(pd, buf, sizeof(buf), 4096, IBV_ACCESS_LOCAL_WRITE) &&
		      errno == EOPNOTSUPP, "ibv_reg_mr_iova2 with an iova not the address: EOPNOTSUPP");
	CHECK(ibv_resize_cq(cq, 64) == EOPNOTSUPP, "ibv_resize_cq: EOPNOTSUPP");
	/* no asynchronous event while all is well: non-blocking, it says so at once */
	fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK);
	errno = 0;
	CHECK(ibv_get_async_event(ctx, &(struct ibv_async_event){ 0 }) == -1 && errno == EAGAIN,
	      "ibv_get_async_event with none, non-blocking: EAGAIN");
	fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) & ~O_NONBLOCK);
	/* no inline size asked for: some given all the same, as providers round it up */
	rc = ibv_create_qp(pd, &(struct ibv_qp_init_attr){ .send_cq = cq, .recv_cq = cq,
		.qp_type = IBV_QPT_RC, .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						.max_send_sge = 1, .max_recv_sge = 1 } });
	CHECK(rc && !ibv_query_qp(rc, &qa, 0, &qi) && qa.cap.max_inline_data >= 16,
	      "a QP asked for no inline data takes 16 bytes: %u", rc ? qa.cap.max_inline_data : 0);
	/*
	 * iWARP: rdma_cm connects a QP; a modify to RTR naming the peer (ibv_rc_pingpong's)
	 * says it cannot, one as rdma_init_qp_attr gives it (cmtime's, before accepting) is taken
	 */
	CHECK(rc && ibv_modify_qp(rc, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT },
				  IBV_QP_STATE) == 0, "ibv_modify_qp to INIT");
	CHECK(rc && ibv_modify_qp(rc, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR,
			.dest_qp_num = 7, .ah_attr = { .port_num = 1 } },
			IBV_QP_STATE | IBV_QP_AV | IBV_QP_DEST_QPN) == ENOTCONN,
	      "ibv_modify_qp to RTR with a peer's address, no connection: ENOTCONN");
	CHECK(rc && ibv_modify_qp(rc, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR },
				  IBV_QP_STATE) == 0, "ibv_modify_qp to RTR as rdma_init_qp_attr says");
	if (rc)
		ibv_destroy_qp(rc);
	/* a channel with nothing to give: non-blocking, it says so at once */
	cq2 = ch ? ibv_create_cq(ctx, 4, NULL, ch, 0) : NULL;
	fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
	errno = 0;
	CHECK(cq2 && ibv_get_cq_event(ch, &got, &gctx) == -1 && errno == EAGAIN,
	      "ibv_get_cq_event on a non-blocking channel with no event: EAGAIN");
	CHECK(ibv_destroy_comp_channel(ch) == EBUSY, "ibv_destroy_comp_channel with a CQ on it: EBUSY");
	ibv_destroy_cq(cq2);
	CHECK(ibv_destroy_comp_channel(ch) == 0, "ibv_destroy_comp_channel once the CQ is gone");
	many_channels(ctx);
}

static bool same_addr(const struct sockaddr *a, const struct sockaddr_in *b)
{
	return a && !memcmp(a, b, sizeof(*b));
}

/* No event waiting on ch: a non-blocking read says EAGAIN. */
static bool no_event(struct rdma_event_channel *ch)
{
	struct rdma_cm_event *ev;
	int fl = fcntl(ch->fd, F_GETFL), err = 0;

	fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK);
	if (!rdma_get_cm_event(ch, &ev))
		rdma_ack_cm_event(ev);
	else
		err = errno;
	fcntl(ch->fd, F_SETFL, fl);
	return err == EAGAIN;
}

/*
 * rdma_cm as libfabric's verbs provider uses it: rdma_getaddrinfo answering with the
 * hints' addresses, rdma_bind_addr giving a device only for an interface's address, and
 * rdma_migrate_id between an id's own channel and the application's. Towards server.
 */
static void cm_checks(struct ibv_context *ctx, const char *server)
{
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(PORT_NOBODY) };
	struct sockaddr_in src, any = { .sin_family = AF_INET }, lo = any;
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res = NULL;
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_event_channel *ch2 = rdma_create_event_channel();
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	char port[8];

	inet_pton(AF_INET, server, &dst.sin_addr);
	lo.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* an id of its own channel (rdma_create_id without one): its calls wait */
	if (rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000)) {
		printf("FAIL rdma_resolve_addr of an id without a channel: %s\n", strerror(errno));
		failures++;
		return;
	}
	memcpy(&src, &id->route.addr.src_addr, sizeof(src));
	CHECK(src.sin_family == AF_INET && src.sin_addr.s_addr,
	      "rdma_resolve_addr of an id without a channel: waits, finds the source");
	errno = 0;
	CHECK(rdma_migrate_id(id, NULL) == -1 && errno == EINVAL,
	      "rdma_migrate_id of an id of its own channel to none: EINVAL");
	CHECK(!rdma_migrate_id(id, ch) && id->channel == ch,
	      "rdma_migrate_id of an id of its own channel to the application's");
	ev = NULL;
	CHECK(!rdma_resolve_route(id, 2000) && (ev = expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED)) &&
		      ev->id == id, "... whose events then come on that channel");
	if (ev)
		rdma_ack_cm_event(ev);
	CHECK(!rdma_migrate_id(id, NULL) && id->channel != ch && !rdma_resolve_route(id, 2000) &&
		      no_event(ch), "rdma_migrate_id to none: a channel of its own, its calls wait");
	rdma_destroy_id(id);
	/* an event not yet read moves with its id */
	if (!rdma_create_id(ch, &id, NULL, RDMA_PS_TCP)) {
		ev = NULL;
		CHECK(!rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000) &&
			      !rdma_migrate_id(id, ch2) && no_event(ch) &&
			      (ev = expect(ch2, RDMA_CM_EVENT_ADDR_RESOLVED)) && ev->id == id,
		      "rdma_migrate_id: an event not yet read follows the id");
		if (ev)
			rdma_ack_cm_event(ev);
		rdma_destroy_id(id);
	}

	/* a bound id has the device for an interface's address only, as the kernel's rdma_cm */
	if (!rdma_create_id(ch, &id, NULL, RDMA_PS_TCP)) {
		CHECK(!rdma_bind_addr(id, (struct sockaddr *)&any) && !id->verbs,
		      "rdma_bind_addr to 0.0.0.0: no device");
		rdma_destroy_id(id);
	}
	if (!rdma_create_id(ch, &id, NULL, RDMA_PS_TCP)) {
		CHECK(!rdma_bind_addr(id, (struct sockaddr *)&lo) && !id->verbs,
		      "rdma_bind_addr to 127.0.0.1: no device");
		rdma_destroy_id(id);
	}
	if (!rdma_create_id(ch, &id, NULL, RDMA_PS_TCP)) {
		CHECK(!rdma_bind_addr(id, (struct sockaddr *)&src) && id->verbs == ctx,
		      "rdma_bind_addr to the interface's address: iwx0");
		rdma_destroy_id(id);
	}

	/* rdma_getaddrinfo without node or service: the hints' own addresses (rdma-core's) */
	errno = 0;
	CHECK(rdma_getaddrinfo(NULL, NULL, NULL, &res) == -1 && errno == EINVAL,
	      "rdma_getaddrinfo of nothing: EINVAL");
	hints.ai_flags = RAI_PASSIVE;
	hints.ai_src_addr = (struct sockaddr *)&src;
	hints.ai_src_len = sizeof(src);
	CHECK(!rdma_getaddrinfo(NULL, NULL, &hints, &res) && (res->ai_flags & RAI_PASSIVE) &&
		      same_addr(res->ai_src_addr, &src) && !res->ai_dst_addr,
	      "rdma_getaddrinfo, passive, the source in the hints: that source");
	rdma_freeaddrinfo(res);
	res = NULL;
	hints.ai_flags = 0;
	hints.ai_dst_addr = (struct sockaddr *)&dst;
	hints.ai_dst_len = sizeof(dst);
	CHECK(!rdma_getaddrinfo(NULL, NULL, &hints, &res) && same_addr(res->ai_dst_addr, &dst) &&
		      same_addr(res->ai_src_addr, &src), "rdma_getaddrinfo, both in the hints: both");
	rdma_freeaddrinfo(res);
	res = NULL;
	snprintf(port, sizeof(port), "%d", PORT_NOBODY);
	CHECK(!rdma_getaddrinfo(server, port, &hints, &res) && same_addr(res->ai_dst_addr, &dst) &&
		      same_addr(res->ai_src_addr, &src),
	      "rdma_getaddrinfo of a node: its address, the hints' source");
	rdma_freeaddrinfo(res);
	rdma_destroy_event_channel(ch2);
	rdma_destroy_event_channel(ch);
}

/*
 * id's QP ends with a Terminate: the context's next asynchronous event is its QP_FATAL.
 * On the client (send_first), a Send goes first, one the server has no receive for.
 */
static void expect_fatal(struct ibv_context *ctx, struct rdma_cm_id *id, bool send_first,
			 const char *what)
{
	struct ibv_sge sge = { (uintptr_t)"x", 1, 0 };
	struct ibv_send_wr wr = { .wr_id = 3, .opcode = IBV_WR_SEND, .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED }, *bad;
	struct ibv_async_event ae;

	if (send_first)
		CHECK(!ibv_post_send(id->qp, &wr, &bad), "a Send the server has no receive for");
	CHECK(!ibv_get_async_event(ctx, &ae) && ae.event_type == IBV_EVENT_QP_FATAL &&
		      ae.element.qp == id->qp, "%s", what);
	ibv_ack_async_event(&ae);
}

/* Connect id to addr:port with private data: the event that answers, taken (acked by the caller). */
static struct rdma_cm_event *connect_to(struct rdma_event_channel *ch, struct rdma_cm_id **idp,
					const char *addr, int port, const char *pd,
					struct ibv_qp_init_attr_ex *qa)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct rdma_conn_param p = { .private_data = pd, .private_data_len = strlen(pd) + 1,
				     .responder_resources = 1, .initiator_depth = 1 };
	struct rdma_cm_event *ev;

	inet_pton(AF_INET, addr, &sin.sin_addr);
	if (rdma_create_id(ch, idp, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(*idp, NULL, (struct sockaddr *)&sin, 2000))
		return NULL;
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED));
	if (rdma_resolve_route(*idp, 2000))
		return NULL;
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	if (rdma_create_qp_ex(*idp, qa) || rdma_connect(*idp, &p))
		return NULL;
	if (rdma_get_cm_event(ch, &ev))
		return NULL;
	return ev;
}

/*
 * A connected rsocket's names are the connection's: the server's address and port on one
 * end (peer on the client, local on the server: ip INADDR_ANY stands for any of its own),
 * an address and a port of its own on the other.
 */
static void names_check(int rs, in_addr_t ip, uint16_t port, bool server)
{
	struct sockaddr_in local, peer;
	socklen_t ll = sizeof(local), pl = sizeof(peer);
	const struct sockaddr_in *known = server ? &local : &peer, *other = server ? &peer : &local;

	CHECK(!rgetsockname(rs, (struct sockaddr *)&local, &ll) &&
		      !rgetpeername(rs, (struct sockaddr *)&peer, &pl) && ll == sizeof(local) &&
		      pl == sizeof(peer) && ntohs(known->sin_port) == port &&
		      (ip == htonl(INADDR_ANY) || known->sin_addr.s_addr == ip) &&
		      other->sin_port && other->sin_addr.s_addr,
	      "rgetsockname and rgetpeername of a connected rsocket: the connection's (%s)",
	      server ? "server" : "client");
}

/* rsockets' edges, the client's side: the server sends "hello" once it has our "go", and closes. */
static void rsocket_client(const char *addr)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(PORT_RS) };
	struct pollfd p;
	char buf[8] = "";
	int rs, i;

	CHECK(rsocket(AF_INET, SOCK_DGRAM, 0) == -1 && errno == EOPNOTSUPP,
	      "rsocket SOCK_DGRAM: EOPNOTSUPP (iWARP has no UD)");
	inet_pton(AF_INET, addr, &sin.sin_addr);
	rs = -1;
	for (i = 0; i < 50 && rs < 0; i++) {	/* until the server listens */
		rs = rsocket(AF_INET, SOCK_STREAM, 0);
		if (rs >= 0 && rconnect(rs, (struct sockaddr *)&sin, sizeof(sin))) {
			rclose(rs);
			rs = -1;
			usleep(100000);
		}
	}
	CHECK(rs >= 0, "rconnect to the rsocket server");
	if (rs < 0)
		return;
	names_check(rs, sin.sin_addr.s_addr, PORT_RS, false);
	CHECK(!rfcntl(rs, F_SETFL, O_NONBLOCK) && rrecv(rs, buf, sizeof(buf), 0) == -1 &&
		      errno == EAGAIN, "a non-blocking rrecv with nothing there: EAGAIN");
	CHECK(rsend(rs, "go", 3, 0) == 3, "rsend");
	rfcntl(rs, F_SETFL, 0);
	/* writable until the server's close arrives; its "hello" is read after that */
	p = (struct pollfd){ .fd = rs, .events = POLLIN | POLLOUT };
	for (i = 0; i < 2000 && rpoll(&p, 1, 0) == 1 && (p.revents & POLLOUT); i++)
		usleep(10000);
	CHECK(p.revents == POLLIN, "rpoll once the peer closed, before its data is read: POLLIN, "
	      "no hang-up yet (revents 0x%x)", p.revents);
	CHECK(rrecv(rs, buf, 6, MSG_WAITALL) == 6 && !strcmp(buf, "hello"), "rrecv: \"%s\"", buf);
	p = (struct pollfd){ .fd = rs, .events = POLLIN };
	CHECK(rpoll(&p, 1, 5000) == 1 && p.revents == (POLLIN | POLLHUP),
	      "rpoll once that is read: POLLIN and POLLHUP (revents 0x%x)", p.revents);
	CHECK(rrecv(rs, buf, sizeof(buf), 0) == 0, "rrecv after the peer's rclose: 0, end of stream");
	CHECK(!rclose(rs), "rclose");
}

/* ... the server's. */
static void rsocket_server(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(PORT_RS) };
	int one = 1, lrs = rsocket(AF_INET, SOCK_STREAM, 0), rs;
	char buf[4] = "";

	CHECK(lrs >= 0 && !rsetsockopt(lrs, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) &&
		      !rbind(lrs, (struct sockaddr *)&sin, sizeof(sin)) && !rlisten(lrs, 1),
	      "an rsocket listening");
	rs = raccept(lrs, NULL, NULL);
	CHECK(rs >= 0 && rrecv(rs, buf, 3, MSG_WAITALL) == 3 && !strcmp(buf, "go"),
	      "raccept, and the client's \"%s\"", buf);
	if (rs >= 0)
		names_check(rs, htonl(INADDR_ANY), PORT_RS, true);
	CHECK(rsend(rs, "hello", 6, 0) == 6 && !rclose(rs) && !rclose(lrs), "rsend, rclose");
}

/* glibc's blocking calls as the kernel sees them (/proc/.../syscall) */
#ifdef SYS_epoll_wait
#define SYS_WAITING	SYS_epoll_wait
#else
#define SYS_WAITING	SYS_epoll_pwait
#endif
#ifdef SYS_pause
#define SYS_PAUSED	SYS_pause
#else
#define SYS_PAUSED	SYS_ppoll
#endif

struct waiter {
	struct rdma_event_channel *ch;
	pid_t		tid;		/* set before it waits */
	int		got, err;	/* what rdma_get_cm_event said, once returned is set */
	int		returned;
};

static void *wait_event(void *arg)
{
	struct waiter *w = arg;
	struct rdma_cm_event *ev;

	__atomic_store_n(&w->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	w->got = rdma_get_cm_event(w->ch, &ev);
	w->err = errno;
	__atomic_store_n(&w->returned, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* The system call tid is blocked in (-1: running, or none), read from /proc. */
static long blocked_in(pid_t tid)
{
	char path[64], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	if (!(f = fopen(path, "r")))
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return buf[0] >= '0' && buf[0] <= '9' ? strtol(buf, NULL, 10) : -1;
}

/*
 * A thread waits in rdma_get_cm_event; the channel and its id are destroyed under it, and
 * iwxd's replies to this process come (registrations) until the thread has woken: it must
 * wait on, not fail. Each wait ends on an event, bounded against a hang (20 s).
 */
static void destroyed_under_a_waiter(struct ibv_pd *pd)
{
	struct waiter w = { .ch = rdma_create_event_channel() };
	struct rdma_cm_id *id = NULL;
	pthread_t t;
	uint8_t b[64];
	long in = -1;
	int n;

	if (!w.ch || rdma_create_id(w.ch, &id, NULL, RDMA_PS_TCP) ||
	    pthread_create(&t, NULL, wait_event, &w)) {
		CHECK(0, "a waiter on a channel: %s", strerror(errno));
		return;
	}
	pthread_detach(t);	/* it never returns, when all is well: exit ends it */
	for (n = 0; n < 20000 && (!__atomic_load_n(&w.tid, __ATOMIC_ACQUIRE) ||
				  blocked_in(w.tid) != SYS_WAITING); n++)
		usleep(1000);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(w.ch);
	for (n = 0; n < 20000 && !__atomic_load_n(&w.returned, __ATOMIC_ACQUIRE) &&
		    (in = blocked_in(w.tid)) != SYS_PAUSED; n++) {
		struct ibv_mr *mr = ibv_reg_mr(pd, b, sizeof(b), IBV_ACCESS_LOCAL_WRITE);

		if (mr)
			ibv_dereg_mr(mr);
		usleep(1000);
	}
	if (__atomic_load_n(&w.returned, __ATOMIC_ACQUIRE))
		CHECK(0, "a waiter on a channel destroyed under it returned %d: %s", w.got,
		      strerror(w.err));
	else
		CHECK(in == SYS_PAUSED, "a waiter on a channel destroyed under it waits on (%s)",
		      in == SYS_PAUSED ? "woken, then paused" : "never woken");
}

static int client(const char *addr)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cch;
	struct ibv_cq *cq;
	struct rdma_cm_event *ev;
	struct ibv_qp_init_attr_ex qa;
	struct ibv_qp_ex *qx;
	struct ibv_mr *mr, *rmr;
	struct ibv_wc wc;
	struct ibv_sge sge;
	struct ibv_recv_wr rwr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1 }, *bad;
	struct welcome w;
	char done[] = "done";
	uint8_t *raw, *buf, rbuf[64];
	int err;

	if (!ch) {
		printf("FAIL rdma_create_event_channel: %s\n", strerror(errno));
		return 1;
	}
	/* the context every id gets, for PD and CQ (as perftest and rping use it) */
	{
		struct ibv_context **devs = rdma_get_devices(NULL);

		ctx = devs ? devs[0] : NULL;
		rdma_free_devices(devs);
	}
	if (!ctx)
		return 1;
	pd = ibv_alloc_pd(ctx);
	cch = ibv_create_comp_channel(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, cch, 0);
	local_checks(ctx, pd, cq);
	cm_checks(ctx, addr);
	qa = (struct ibv_qp_init_attr_ex){
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .sq_sig_all = 1,
		.cap = { .max_send_wr = 8, .max_recv_wr = 4, .max_send_sge = 2, .max_recv_sge = 1,
			 .max_inline_data = 64 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, .pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND,
	};

	/* nobody listens: refused (after the drop-in's grace for a listener about to come) */
	ev = connect_to(ch, &id, addr, PORT_NOBODY, "x", &qa);
	CHECK(ev && ev->event == RDMA_CM_EVENT_REJECTED && ev->status == -ECONNREFUSED,
	      "connect where nobody listens: REJECTED, -ECONNREFUSED");
	rdma_ack_cm_event(ev);
	rdma_destroy_qp(id);
	rdma_destroy_id(id);

	/* the server rejects this one, saying "no" */
	ev = connect_to(ch, &id, addr, PORT, REJECT_ME, &qa);
	CHECK(ev && ev->event == RDMA_CM_EVENT_REJECTED && ev->param.conn.private_data_len >= 3 &&
		      !strcmp(ev->param.conn.private_data, "no"),
	      "rejected by the server, with its private data");
	rdma_ack_cm_event(ev);
	rdma_destroy_qp(id);
	rdma_destroy_id(id);

	/*
	 * accepted, then the QP destroyed with ibv_destroy_qp, not rdma_destroy_qp: an iwx
	 * QP is its connection, so the id is disconnected, as the kernel's rdma_cm says so
	 */
	ev = connect_to(ch, &id, addr, PORT, DESTROY_ME, &qa);
	CHECK(ev && ev->event == RDMA_CM_EVENT_ESTABLISHED, "established: %s",
	      ev ? rdma_event_str(ev->event) : strerror(errno));
	rdma_ack_cm_event(ev);
	CHECK(!ibv_destroy_qp(id->qp), "ibv_destroy_qp of a connected QP");
	id->qp = NULL;
	ev = expect(ch, RDMA_CM_EVENT_DISCONNECTED);
	CHECK(ev && ev->id == id, "DISCONNECTED for its id, once its QP is gone");
	rdma_ack_cm_event(ev);
	rdma_destroy_id(id);

	/* a Send the server has no receive for: its Terminate ends the QP on both sides */
	ev = connect_to(ch, &id, addr, PORT, FATAL_ME, &qa);
	CHECK(ev && ev->event == RDMA_CM_EVENT_ESTABLISHED, "established: %s",
	      ev ? rdma_event_str(ev->event) : strerror(errno));
	rdma_ack_cm_event(ev);
	expect_fatal(ctx, id, true, "the client: IBV_EVENT_QP_FATAL, the server's Terminate received");
	ev = expect(ch, RDMA_CM_EVENT_DISCONNECTED);
	CHECK(ev && ev->id == id, "and DISCONNECTED");
	rdma_ack_cm_event(ev);
	CHECK(!wait_wc(cch, cq, &wc) && wc.wr_id == 3, "the Send completed (%s)",
	      ibv_wc_status_str(wc.status));
	rdma_destroy_qp(id);
	rdma_destroy_id(id);

	rsocket_client(addr);

	/* accepted: the server's private data names its buffer */
	ev = connect_to(ch, &id, addr, PORT, HELLO, &qa);
	CHECK(ev && ev->event == RDMA_CM_EVENT_ESTABLISHED &&
		      ev->param.conn.private_data_len >= sizeof(w),
	      "established, with the server's private data");
	if (!ev || ev->event != RDMA_CM_EVENT_ESTABLISHED)
		return 1;
	memcpy(&w, ev->param.conn.private_data, sizeof(w));
	rdma_ack_cm_event(ev);
	CHECK(!strcmp(w.word, "iwx-welcome"), "the server's private data: %s", w.word);

	/* unaligned malloc memory, written to the server with ibv_wr_* */
	raw = malloc(LEN + 64);
	buf = raw + 3;
	fill(buf, LEN, 11);
	mr = ibv_reg_mr(pd, buf, LEN, IBV_ACCESS_LOCAL_WRITE);
	rmr = ibv_reg_mr(pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	sge = (struct ibv_sge){ (uintptr_t)rbuf, sizeof(rbuf), rmr ? rmr->lkey : 0 };
	CHECK(mr && rmr && !ibv_post_recv(id->qp, &rwr, &bad), "registered unaligned heap memory");
	qx = ibv_qp_to_qp_ex(id->qp);
	CHECK(qx != NULL, "ibv_qp_to_qp_ex of a QP made with send ops");
	if (!qx || !mr)
		return 1;
	ibv_wr_start(qx);
	qx->wr_id = 1;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qx, w.rkey, w.addr);
	ibv_wr_set_sge(qx, mr->lkey, (uintptr_t)buf, LEN);
	qx->wr_id = 2;
	ibv_wr_send(qx);
	ibv_wr_set_inline_data(qx, done, sizeof(done));
	err = ibv_wr_complete(qx);
	CHECK(!err, "ibv_wr_complete of an RDMA Write and an inline Send: %s", strerror(err));
	CHECK(!wait_wc(cch, cq, &wc) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 1 &&
		      wc.opcode == IBV_WC_RDMA_WRITE, "the Write completed (through the channel)");
	CHECK(!wait_wc(cch, cq, &wc) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 2 &&
		      wc.opcode == IBV_WC_SEND, "the Send completed");
	/* a Send with Immediate is no iWARP operation (RFC 7306 has none): the batch fails */
	ibv_wr_start(qx);
	ibv_wr_send_imm(qx, htonl(1));
	ibv_wr_set_inline_data(qx, done, sizeof(done));
	CHECK(ibv_wr_complete(qx) == EOPNOTSUPP, "ibv_wr_send_imm: EOPNOTSUPP");

	/* the server dies without a word: DISCONNECTED, and our receive flushed */
	ev = expect(ch, RDMA_CM_EVENT_DISCONNECTED);
	rdma_ack_cm_event(ev);
	CHECK(1, "DISCONNECTED after the server died");
	CHECK(!wait_wc(cch, cq, &wc) && wc.status == IBV_WC_WR_FLUSH_ERR && wc.wr_id == 7,
	      "the posted receive completed flushed");
	CHECK(!ibv_dereg_mr(mr) && same(buf, LEN, 11), "deregistered: the buffer keeps its data");
	buf[0] = 1;	/* and is still ordinary, writable memory */
	free(raw);
	destroyed_under_a_waiter(pd);
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	return failures ? 1 : 0;
}

static int server(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *lid, *id;
	struct rdma_cm_event *ev;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cch;
	struct ibv_cq *cq;
	struct ibv_qp_init_attr qa;
	struct ibv_mr *mr, *rmr;
	struct ibv_sge sge;
	struct ibv_recv_wr rwr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_wc wc;
	struct welcome w = { .word = "iwx-welcome" };
	struct rdma_conn_param p = { .private_data = &w, .private_data_len = sizeof(w),
				     .responder_resources = 1, .initiator_depth = 1 };
	uint8_t *raw, *buf, rbuf[64];

	if (!ch || rdma_create_id(ch, &lid, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(lid, (struct sockaddr *)&sin) || rdma_listen(lid, 4)) {
		printf("FAIL listen: %s\n", strerror(errno));
		return 1;
	}
	CHECK(ntohs(rdma_get_src_port(lid)) == PORT, "rdma_get_src_port of the listener");
	ev = expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	CHECK(ev->listen_id == lid && !strcmp(ev->param.conn.private_data, REJECT_ME),
	      "a connect request, with the client's private data");
	CHECK(!rdma_reject(ev->id, "no", 3), "rdma_reject with private data");
	rdma_destroy_id(ev->id);
	rdma_ack_cm_event(ev);

	/* accepted, and ended by the client's destroying its QP */
	ev = expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	id = ev->id;
	CHECK(!strcmp(ev->param.conn.private_data, DESTROY_ME), "the second request: %s",
	      (const char *)ev->param.conn.private_data);
	rdma_ack_cm_event(ev);
	qa = (struct ibv_qp_init_attr){ .qp_type = IBV_QPT_RC,
					.cap = { .max_send_wr = 1, .max_recv_wr = 1,
						 .max_send_sge = 1, .max_recv_sge = 1 } };
	CHECK(!rdma_create_qp(id, NULL, &qa) && !rdma_accept(id, NULL), "accepted");
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ESTABLISHED));
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_DISCONNECTED));
	rdma_destroy_qp(id);
	rdma_destroy_id(id);

	/* accepted with no receive posted: the client's Send finds none (RFC 5040 §7.2) */
	ev = expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	id = ev->id;
	CHECK(!strcmp(ev->param.conn.private_data, FATAL_ME), "the third request: %s",
	      (const char *)ev->param.conn.private_data);
	rdma_ack_cm_event(ev);
	CHECK(!rdma_create_qp(id, NULL, &qa) && !rdma_accept(id, NULL), "accepted, no receive posted");
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ESTABLISHED));
	expect_fatal(id->verbs, id, false, "the server: IBV_EVENT_QP_FATAL, its Terminate sent");
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_DISCONNECTED));
	rdma_destroy_qp(id);
	rdma_destroy_id(id);

	rsocket_server();

	ev = expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	id = ev->id;
	CHECK(!strcmp(ev->param.conn.private_data, HELLO), "the fourth request: %s",
	      (const char *)ev->param.conn.private_data);
	rdma_ack_cm_event(ev);
	pd = ibv_alloc_pd(id->verbs);
	cch = ibv_create_comp_channel(id->verbs);
	cq = ibv_create_cq(id->verbs, 8, NULL, cch, 0);
	qa = (struct ibv_qp_init_attr){ .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
					.cap = { .max_send_wr = 4, .max_recv_wr = 4,
						 .max_send_sge = 1, .max_recv_sge = 1 } };
	raw = malloc(LEN + 64);
	buf = raw + 5;		/* unaligned, in the heap */
	memset(buf, 0, LEN);
	mr = ibv_reg_mr(pd, buf, LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	rmr = ibv_reg_mr(pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	if (!mr || !rmr || rdma_create_qp(id, pd, &qa)) {
		printf("FAIL set-up: %s\n", strerror(errno));
		return 1;
	}
	sge = (struct ibv_sge){ (uintptr_t)rbuf, sizeof(rbuf), rmr->lkey };
	CHECK(!ibv_post_recv(id->qp, &rwr, &bad), "a receive posted before accepting");
	w.addr = (uintptr_t)buf;
	w.rkey = mr->rkey;
	CHECK(!rdma_accept(id, &p), "rdma_accept with private data");
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ESTABLISHED));
	CHECK(!wait_wc(cch, cq, &wc) && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
		      wc.byte_len == 5 && !strcmp((char *)rbuf, "done"),
	      "the client's inline Send arrived: \"%s\"", (char *)rbuf);
	CHECK(same(buf, LEN, 11), "the client's RDMA Write is in the unaligned heap buffer");
	CHECK(!ibv_dereg_mr(mr) && same(buf, LEN, 11), "deregistered: the buffer keeps its data");
	fflush(stdout);
	_exit(failures ? 1 : 0);	/* die without disconnecting: the client sees it */
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "-s"))
		return server();
	if (argc == 3 && !strcmp(argv[1], "-c"))
		return client(argv[2]);
	fprintf(stderr, "usage: verbs_check -s | -c ADDR\n");
	return 2;
}
