// SPDX-License-Identifier: MIT
/*
 * The drop-in libibverbs' one device, iwx0: an iWARP RNIC whose "hardware" is the iwxd
 * of this host or network namespace ($IWX_SOCKET, else the default socket). Opening it
 * opens a libiwx device; its attributes are iwxd's limits for a client.
 */
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netpacket/packet.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/client.h"	/* client_watch, client_why_shown: libiwx, built into this library */
#include "iwx_config.h"	/* made by the Makefile */
#include "iwxv.h"

static struct ibv_device iwx0 = {
	.node_type = IBV_NODE_RNIC,
	.transport_type = IBV_TRANSPORT_IWARP,
	.name = IWXV_DEVICE_NAME,
	.dev_name = "iwxd",
};

void *iwxv_fail(int err)
{
	errno = err;
	return NULL;
}

/* The first Ethernet interface of this namespace: its MAC names the port (as siw's GID). */
static int first_ether(uint8_t mac[6])
{
	struct ifaddrs *ifs, *i;
	int index = 0;

	memset(mac, 0, 6);
	if (getifaddrs(&ifs))
		return 0;
	for (i = ifs; i && !index; i = i->ifa_next) {
		const struct sockaddr_ll *ll = (const struct sockaddr_ll *)i->ifa_addr;

		if (!ll || ll->sll_family != AF_PACKET || (i->ifa_flags & IFF_LOOPBACK) ||
		    ll->sll_halen != 6)
			continue;
		memcpy(mac, ll->sll_addr, 6);
		index = ll->sll_ifindex;
	}
	freeifaddrs(ifs);
	return index;
}

/* EUI-64 from the MAC, as an iWARP RNIC's node GUID (big-endian). */
static __be64 node_guid(void)
{
	uint8_t m[6], g[8];
	uint64_t v = 0;

	first_ether(m);
	g[0] = m[0] ^ 2, g[1] = m[1], g[2] = m[2], g[3] = 0xff, g[4] = 0xfe;
	g[5] = m[3], g[6] = m[4], g[7] = m[5];
	memcpy(&v, g, 8);
	return v;
}

struct ibv_device **ibv_get_device_list(int *num)
{
	struct ibv_device **list = calloc(2, sizeof(*list));
	const char *path = iwx_socket_path(NULL);
	struct stat st;

	if (!list)
		return NULL;
	/* a device while an iwxd serves here; rdma-core lists none without hardware */
	if (stat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		list[0] = &iwx0;
	else if (getenv("IWX_DEBUG"))
		fprintf(stderr, "libibverbs (iwx): no iwxd at %s (set IWX_SOCKET)\n", path);
	if (num)
		*num = list[0] ? 1 : 0;
	return list;
}

void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

const char *ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

__be64 ibv_get_device_guid(struct ibv_device *device)
{
	(void)device;
	return node_guid();
}

int ibv_get_device_index(struct ibv_device *device)
{
	return device == &iwx0 ? 0 : -1;
}

static int query_port_ex(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *a,
			 size_t len);
static int query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *in,
			   struct ibv_device_attr_ex *a, size_t len);

/* A program that knows nothing of iwx sees the first refusal's cause (client.h). */
static void show_why(const char *why)
{
	fprintf(stderr, "libibverbs (iwx): iwxd refused a request: %s (the first said; iwxd's log "
		"and `iwx status` have the rest)\n", why);
}

struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	IWX_OPTS(iwx_open_opts, o, .arena_size = IWXV_ARENA);
	struct iwxv_context *c;
	struct ibv_context *ctx;
	int err;

	if (device != &iwx0)
		return iwxv_fail(ENODEV);
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->dev = iwx_open(&o);
	if (!c->dev) {
		err = errno;
		fprintf(stderr, "libibverbs (iwx): %s: %s\n", iwx_socket_path(NULL), iwx_strerror(err));
		free(c);
		return iwxv_fail(err);
	}
	client_why_shown = show_why;	/* where opening failed, iwx_strerror said why */
	iwx_device_limits(c->dev, &c->lim);
	pthread_mutex_init(&c->lock, NULL);
	c->vctx.sz = sizeof(c->vctx);
	c->vctx.query_port = query_port_ex;
	c->vctx.query_device_ex = query_device_ex;
	c->vctx.create_qp_ex = iwxv_create_qp_ex;
	ctx = &c->vctx.context;
	ctx->device = device;
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
	ctx->ops.poll_cq = iwxv_poll_cq;
	ctx->ops.req_notify_cq = iwxv_req_notify_cq;
	ctx->ops.post_send = iwxv_post_send;
	ctx->ops.post_recv = iwxv_post_recv;
	ctx->ops.post_srq_recv = iwxv_post_srq_recv;
	ctx->cmd_fd = iwx_event_fd(c->dev);
	ctx->async_fd = iwx_async_fd(c->dev);	/* libiwx's: iwx_close closes it */
	ctx->num_comp_vectors = 1;
	pthread_mutex_init(&ctx->mutex, NULL);
	return ctx;
}

int ibv_close_device(struct ibv_context *ctx)
{
	struct iwxv_context *c = iwxv_ctx(ctx);

	/* iwx_close destroys what is left; our wrappers of it go with the process */
	iwx_close(c->dev);
	pthread_mutex_destroy(&c->lock);
	free(c);
	return 0;
}

void iwxv_device_attr(struct iwxv_context *c, struct ibv_device_attr *a)
{
	const struct iwx_device_limits *l = &c->lim;

	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "iwx %s", IWX_VERSION);
	a->node_guid = a->sys_image_guid = node_guid();
	a->max_mr_size = l->max_shared;
	a->page_size_cap = (uint64_t)sysconf(_SC_PAGESIZE);
	a->vendor_id = 0;
	a->hw_ver = 1;
	a->max_qp = (int)l->max_qps;
	a->max_qp_wr = (int)l->max_qp_depth;
	a->device_cap_flags = IBV_DEVICE_MEM_MGT_EXTENSIONS;	/* local invalidation */
	a->max_sge = (int)l->max_sge;
	a->max_sge_rd = 1;		/* a Read's sink is one buffer */
	a->max_cq = (int)l->max_cqs;
	a->max_cqe = (int)l->max_cq_entries;
	a->max_mr = (int)l->max_mrs;
	a->max_pd = (int)l->max_pds;
	a->max_srq = (int)l->max_srqs;
	a->max_srq_wr = (int)l->max_qp_depth;
	a->max_srq_sge = (int)l->max_sge;
	a->max_qp_rd_atom = a->max_qp_init_rd_atom = (int)l->max_rd_atomic;
	a->max_res_rd_atom = (int)(l->max_rd_atomic * l->max_qps);
	/* RFC 7306's atomics run in iwxd, atomic among themselves and with the CPU's (docs/rfc7306.md) */
	a->atomic_cap = iwx_device_rfc7306(c->dev) ? IBV_ATOMIC_HCA : IBV_ATOMIC_NONE;
	a->max_pkeys = 1;
	a->phys_port_cnt = 1;
}

int ibv_query_device(struct ibv_context *ctx, struct ibv_device_attr *a)
{
	iwxv_device_attr(iwxv_ctx(ctx), a);
	return 0;
}

static int query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *in,
			   struct ibv_device_attr_ex *a, size_t len)
{
	(void)in;
	if (len < sizeof(a->orig_attr))
		return EINVAL;
	memset(a, 0, len);
	iwxv_device_attr(iwxv_ctx(ctx), &a->orig_attr);
	if (len >= offsetof(struct ibv_device_attr_ex, phys_port_cnt_ex) + sizeof(a->phys_port_cnt_ex))
		a->phys_port_cnt_ex = 1;
	return 0;
}

/* ibv_query_device_ex is an inline of verbs.h that reaches query_device_ex above. */

/* The MTU of an iWARP port is its interface's, as an IB enum (siw does the same). */
static enum ibv_mtu ib_mtu(void)
{
	return IBV_MTU_1024;	/* Ethernet's 1500: the largest IB MTU it holds */
}

static int query_port_ex(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *a, size_t len)
{
	struct iwxv_context *c = iwxv_ctx(ctx);
	struct ibv_port_attr p = {
		.state = IBV_PORT_ACTIVE,
		.max_mtu = IBV_MTU_4096,
		.active_mtu = ib_mtu(),
		.gid_tbl_len = 1,
		.max_msg_sz = (uint32_t)(c->lim.max_shared > UINT32_MAX ? UINT32_MAX : c->lim.max_shared),
		.pkey_tbl_len = 1,
		.active_width = 1,	/* 1X */
		.active_speed = 4,	/* 10 Gb/s a lane: a veth has no speed of its own */
		.max_vl_num = 1,
		.phys_state = 5,	/* LinkUp */
		.link_layer = IBV_LINK_LAYER_ETHERNET,
	};

	if (port != 1)
		return EINVAL;
	memset(a, 0, len);
	memcpy(a, &p, len < sizeof(p) ? len : sizeof(p));
	return 0;
}

#undef ibv_query_port
int ibv_query_port(struct ibv_context *ctx, uint8_t port, struct _compat_ibv_port_attr *a)
{
	/* the old struct (opaque in verbs.h) is the new one up to its flags */
	return query_port_ex(ctx, port, (struct ibv_port_attr *)a,
			     offsetof(struct ibv_port_attr, port_cap_flags2));
}

int ibv_query_gid(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid)
{
	uint8_t m[6];

	(void)ctx;
	if (port != 1 || index != 0) {
		errno = EINVAL;
		return -1;
	}
	memset(gid, 0, sizeof(*gid));
	first_ether(m);
	memcpy(gid->raw, m, 6);		/* siw's GID: the MAC, then zeros */
	return 0;
}

int _ibv_query_gid_ex(struct ibv_context *ctx, uint32_t port, uint32_t index,
		      struct ibv_gid_entry *entry, uint32_t flags, size_t len)
{
	struct ibv_gid_entry e = { .gid_index = index, .port_num = port, .gid_type = IBV_GID_TYPE_IB };
	uint8_t m[6];

	if (flags || len < sizeof(e))
		return EINVAL;
	if (ibv_query_gid(ctx, (uint8_t)port, (int)index, &e.gid))
		return errno;
	e.ndev_ifindex = (uint32_t)first_ether(m);
	memcpy(entry, &e, sizeof(e));
	return 0;
}

ssize_t _ibv_query_gid_table(struct ibv_context *ctx, struct ibv_gid_entry *entries,
			     size_t max, uint32_t flags, size_t len)
{
	int err;

	if (max < 1)
		return -EINVAL;
	err = _ibv_query_gid_ex(ctx, 1, 0, entries, flags, len);
	return err ? -err : 1;
}

/* rdma-core's private call (infiniband/driver.h, not installed), for ibv_devinfo */
enum gid_type_sysfs { GID_TYPE_SYSFS_IB_ROCE_V1, GID_TYPE_SYSFS_ROCE_V2 };
int ibv_query_gid_type(struct ibv_context *ctx, uint8_t port, unsigned int index,
		       enum gid_type_sysfs *type);

int ibv_query_gid_type(struct ibv_context *ctx, uint8_t port, unsigned int index,
		       enum gid_type_sysfs *type)
{
	(void)ctx;
	if (port != 1 || index != 0)
		return -1;
	*type = GID_TYPE_SYSFS_IB_ROCE_V1;	/* what the kernel reports for an iWARP GID */
	return 0;
}

int ibv_query_pkey(struct ibv_context *ctx, uint8_t port, int index, __be16 *pkey)
{
	(void)ctx;
	if (port != 1 || index != 0) {
		errno = EINVAL;
		return -1;
	}
	*pkey = 0xffff;		/* the default partition: iWARP has none */
	return 0;
}

int ibv_get_pkey_index(struct ibv_context *ctx, uint8_t port, __be16 pkey)
{
	(void)ctx;
	return port == 1 && pkey == 0xffff ? 0 : -1;
}

/* No sysfs behind this device: its files are not there. */
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	(void)dir, (void)file, (void)buf, (void)size;
	errno = ENOENT;
	return -1;
}

const char *ibv_get_sysfs_path(void)
{
	return "/sys";
}

/*
 * libiwx's event as the provider's, into event: false when its QP or SRQ is none of this
 * context's wrappers (the lock held).
 */
static bool async_of(struct iwxv_context *c, const struct iwx_async_event *e,
		     struct ibv_async_event *event)
{
	struct iwxv_srq *s = NULL;
	struct iwxv_qp *q = NULL;

	memset(event, 0, sizeof(*event));
	switch (e->type) {
	case IWX_ASYNC_QP_FATAL:
	case IWX_ASYNC_QP_LAST_WQE:
		for (q = c->qps; q && q->iqp != e->qp; q = q->next)
			;
		event->event_type = e->type == IWX_ASYNC_QP_FATAL ? IBV_EVENT_QP_FATAL :
				    IBV_EVENT_QP_LAST_WQE_REACHED;
		event->element.qp = q ? &q->qpx.qp_base : NULL;
		return q;
	case IWX_ASYNC_SRQ_LIMIT:
		for (s = c->srqs; s && s->isrq != e->srq; s = s->next)
			;
		event->event_type = IBV_EVENT_SRQ_LIMIT_REACHED;
		event->element.srq = s ? &s->srq : NULL;
		return s;
	default:
		event->event_type = IBV_EVENT_DEVICE_FATAL;
		return true;
	}
}

/*
 * libiwx's asynchronous events as a provider's: the device's loss (iwxd went away) as
 * IBV_EVENT_DEVICE_FATAL, a queue pair's stream ended by a Terminate as IBV_EVENT_QP_FATAL
 * (its cause shows in iwx conns), an SRQ's limit reached, and a queue pair on an SRQ that
 * takes no more from it. The wait blocks as rdma-core's does (or EAGAIN when the fd was
 * made non-blocking), outside the context's lock: it is another thread's, as a rule.
 */
int ibv_get_async_event(struct ibv_context *ctx, struct ibv_async_event *event)
{
	struct iwxv_context *c = iwxv_ctx(ctx);
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	struct iwx_async_event e;
	int err;

	for (;;) {
		iwxv_lock(c);
		err = iwx_get_async_event(c->dev, &e, 0);
		if (!err && !async_of(c, &e, event))
			err = -EAGAIN;	/* not an object of this context's wrappers */
		iwxv_unlock(c);
		if (!err)
			break;
		if (err != -EAGAIN || (fcntl(ctx->async_fd, F_GETFL) & O_NONBLOCK)) {
			errno = -err;
			return -1;
		}
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			return -1;
	}
	return 0;
}

void ibv_ack_async_event(struct ibv_async_event *event)
{
	(void)event;
}

/*
 * Registered memory is shared with iwxd (iwx_reg_mr): after fork the child shares it
 * rather than copies it, which is what ibv_fork_init protects against on hardware.
 */
int ibv_fork_init(void)
{
	return 0;
}

enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

int ibv_dontfork_range(void *base, size_t size)
{
	(void)base, (void)size;
	return 0;
}

int ibv_dofork_range(void *base, size_t size)
{
	(void)base, (void)size;
	return 0;
}

/* ------------------------------------------------------ for the drop-in librdmacm */

struct ibv_context *iwxv_open_default(void)
{
	return ibv_open_device(&iwx0);
}

struct iwx_device *iwxv_device(struct ibv_context *ctx)
{
	return iwxv_ctx(ctx)->dev;
}

int iwxv_watch(struct ibv_context *ctx, int epfd, bool async)
{
	return client_watch(iwxv_ctx(ctx)->dev, epfd, async);
}

void iwxv_ctx_lock(struct ibv_context *ctx)
{
	iwxv_lock(iwxv_ctx(ctx));
}

void iwxv_ctx_unlock(struct ibv_context *ctx)
{
	iwxv_unlock(iwxv_ctx(ctx));
}
