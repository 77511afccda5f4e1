// SPDX-License-Identifier: MIT
/* Connection management for applications, in the manner of rdma_cm: requests to iwxd. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "opts.h"

static int param_of(const struct iwx_conn_param *p, struct iwx_ipc_cm_param *out)
{
	memset(out, 0, sizeof(*out));
	if (!p)
		return 0;
	if (p->private_data_len > IWX_IPC_PRIVDATA || (p->private_data_len && !p->private_data) ||
	    p->mpa_rev > 2 || p->settle_ms < IWX_SETTLE_NONE || p->settle_ms > IWX_SETTLE_MAX ||
	    p->transport > IWX_TRANSPORT_SCTP)
		return -EINVAL;
	out->transport = p->transport;
	out->ird = p->ird;
	out->ord = p->ord;
	out->mpa_rev = p->mpa_rev;
	out->crc = p->crc;
	out->markers = p->markers;
	out->p2p = p->p2p;
	out->settle_ms = p->settle_ms;
	out->pd_len = p->private_data_len;
	if (p->private_data_len)
		memcpy(out->pd, p->private_data, p->private_data_len);
	return 0;
}

static int addr_in(const struct sockaddr *addr, socklen_t len, struct sockaddr_storage *out)
{
	if (!addr || len > sizeof(*out) ||
	    (addr->sa_family != AF_INET && addr->sa_family != AF_INET6))
		return -EAFNOSUPPORT;
	memset(out, 0, sizeof(*out));
	memcpy(out, addr, len);
	return 0;
}

int iwx_connect(struct iwx_qp *qp, const struct sockaddr *addr, socklen_t len,
		const struct iwx_conn_param *param)
{
	struct iwx_ipc_connect req = { .qp = qp->num };
	int err = addr_in(addr, len, &req.addr);

	if (!err)
		err = param_of(param, &req.param);
	if (!err)
		err = client_call(qp->dev, IWX_IPC_CONNECT, &req, sizeof(req), NULL, 0, NULL, NULL);
	return err;
}

struct iwx_listener *iwx_listen(struct iwx_device *dev, const struct sockaddr *addr,
				socklen_t len, int backlog)
{
	IWX_OPTS(iwx_listen_opts, o, .backlog = backlog);

	return iwx_listen_with(dev, addr, len, &o);
}

struct iwx_listener *iwx_listen_with(struct iwx_device *dev, const struct sockaddr *addr,
				     socklen_t len, const struct iwx_listen_opts *opts)
{
	struct iwx_ipc_listen req = { 0 };
	struct iwx_listener *l;
	int backlog, err;

	if (!opts_valid(opts, sizeof(*opts))) {
		errno = EINVAL;
		return NULL;
	}
	backlog = OPT(opts, backlog, 0);
	req.backlog = backlog > 0 ? backlog : 0;
	req.transport = OPT(opts, transport, IWX_TRANSPORT_TCP);
	err = req.transport > IWX_TRANSPORT_SCTP ? -EINVAL : addr_in(addr, len, &req.addr);
	if (err) {
		errno = -err;
		return NULL;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	err = client_call(dev, IWX_IPC_LISTEN, &req, sizeof(req), &req, sizeof(req), NULL, NULL);
	if (err) {
		free(l);
		errno = -err;
		return NULL;
	}
	l->dev = dev;
	l->id = req.listener;
	l->addr = req.addr;
	l->next = dev->listeners;
	dev->listeners = l;
	return l;
}

int iwx_listener_addr(const struct iwx_listener *l, struct sockaddr_storage *addr)
{
	*addr = l->addr;
	return 0;
}

int iwx_listener_destroy(struct iwx_listener *l)
{
	struct iwx_device *dev = l->dev;
	struct iwx_ipc_id req = { l->id };
	int err = client_call(dev, IWX_IPC_LISTEN_CLOSE, &req, sizeof(req), NULL, 0, NULL, NULL);

	if (err && err != -ESHUTDOWN)
		return err;
	IWX_LIST_UNLINK(&dev->listeners, l);
	free(l);
	return 0;
}

int iwx_accept(struct iwx_qp *qp, uint32_t conn_id, const struct iwx_conn_param *param)
{
	struct iwx_ipc_answer req = { .conn_id = conn_id, .qp = qp->num };
	int err = param_of(param, &req.param);

	return err ? err : client_call(qp->dev, IWX_IPC_ACCEPT, &req, sizeof(req), NULL, 0, NULL,
				       NULL);
}

int iwx_reject(struct iwx_device *dev, uint32_t conn_id, const void *private_data,
	       uint16_t private_data_len)
{
	struct iwx_conn_param p = { .private_data = private_data,
				    .private_data_len = private_data_len };
	struct iwx_ipc_answer req = { .conn_id = conn_id };
	int err = param_of(&p, &req.param);

	return err ? err : client_call(dev, IWX_IPC_REJECT, &req, sizeof(req), NULL, 0, NULL, NULL);
}

int iwx_disconnect(struct iwx_qp *qp)
{
	struct iwx_ipc_id req = { qp->num };

	return client_call(qp->dev, IWX_IPC_DISCONNECT, &req, sizeof(req), NULL, 0, NULL, NULL);
}
