// SPDX-License-Identifier: MIT
/* The MPA set-up exchange (RFC 5044 §7.1, RFC 6581), over a transport's operations. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "proto/mpa.h"

#include "conn.h"
#include "util/clock.h"

#define DEFAULT_TIMEOUT_MS	10000

/* docs/ddp-over-sctp.md Set-up 2, 4: what both ends of such a transport always agree */
static struct iwx_mpa_local local_of(const struct iwx_conn_ops *ops, const struct iwx_mpa_local *l)
{
	if (!ops->fixed_p2p)
		return *l;
	return (struct iwx_mpa_local){
		.rev = IWX_MPA_REV2, .ird = l->ird, .ord = l->ord,
		.p2p = true, .rtr = IWX_RTR_WRITE,
	};
}

/* Keep o as the options of what comes next (its private data is already encoded). */
static void keep_opts(struct iwx_conn *c, const struct iwx_conn_opts *o)
{
	c->opts = *o;
	c->opts.local = local_of(c->ops, &o->local);
	c->opts.pd = NULL;
	c->opts.pd_len = 0;
	if (c->opts.timeout_ms <= 0)
		c->opts.timeout_ms = DEFAULT_TIMEOUT_MS;
}

/* The frame p in out, behind the transport's headroom. */
static int encode(struct iwx_conn *c, const struct iwx_mpa_rr_params *p)
{
	ssize_t n = iwx_mpa_rr_encode(c->out + c->ops->headroom, sizeof(c->out) - c->ops->headroom, p);

	if (n < 0)
		return n == -ENOSPC ? -EINVAL : (int)n;
	c->out_len = c->ops->headroom + n;
	return 0;
}

int iwx_conn_init(struct iwx_conn *c, const struct iwx_conn_ops *ops, const struct iwx_conn_opts *o,
		  bool initiator)
{
	int err;

	memset(c, 0, sizeof(*c));
	c->ops = ops;
	c->initiator = initiator;
	c->state = IWX_CONN_FAILED;
	keep_opts(c, o);
	if (!initiator)
		return 0;
	iwx_mpa_setup_request(&c->opts.local, o->pd, o->pd_len, &c->request);
	err = encode(c, &c->request);
	if (err)
		return err;
	c->request.pd = NULL;
	c->request.pd_len = 0;
	return 0;
}

void iwx_conn_enter(struct iwx_conn *c, enum iwx_conn_state s)
{
	c->state = s;
	c->deadline_ms = iwx_now_ms() + (uint64_t)c->opts.timeout_ms;
}

/* Enter a final state (FAILED or REJECTED): the transport closes, gracefully where it can. */
static void finish(struct iwx_conn *c, enum iwx_conn_state s, int err)
{
	c->ops->finish(c);
	if (s == IWX_CONN_FAILED)
		c->failed_in = c->state;
	c->state = s;
	c->error = err;
}

int iwx_conn_fail(struct iwx_conn *c, int err)
{
	finish(c, IWX_CONN_FAILED, err);
	return err;
}

int iwx_conn_bad_frame(struct iwx_conn *c, uint8_t ecode)
{
	c->cause = IWX_CAUSE_MPA(ecode);
	return -EPROTO;
}

static void start_send(struct iwx_conn *c, enum iwx_conn_state s)
{
	c->out_done = 0;
	iwx_conn_enter(c, s);
}

static void keep_peer_pd(struct iwx_conn *c, struct iwx_mpa_rr_params *p)
{
	memcpy(c->peer_pd, p->pd, p->pd_len);
	c->peer_pd_len = p->pd_len;
	p->pd = c->peer_pd;
}

static int established(struct iwx_conn *c)
{
	int err = c->ops->established(c);

	if (err)
		return err;
	c->state = IWX_CONN_ESTABLISHED;
	return 0;
}

/* Initiator: the Reply is in. 0 with the state final, or -errno. */
static int take_reply(struct iwx_conn *c, struct iwx_mpa_rr_params *rep)
{
	int err;

	keep_peer_pd(c, rep);
	err = iwx_mpa_setup_accept(&c->opts.local, &c->request, rep, &c->agreed, &c->cause);
	if (err == -ECONNREFUSED) {
		finish(c, IWX_CONN_REJECTED, err);
		return 0;
	}
	if (err)
		return err;
	if (c->ops->fixed_p2p && (rep->rev != IWX_MPA_REV2 || !rep->enhanced))
		return iwx_conn_bad_frame(c, IWX_MPA_EC_INVALID_RR);
	if (c->ops->fixed_p2p && c->agreed.rtr != IWX_RTR_WRITE)
		return iwx_conn_bad_frame(c, IWX_MPA_EC_NO_MATCHING_RTR);
	return established(c);
}

/* Responder: the Request is in. 0 in REQUEST_IN, or -EPROTO. */
static int take_request(struct iwx_conn *c)
{
	keep_peer_pd(c, &c->request);
	/* RFC 6581 §5, §9: revision 2 with IRD/ORD; the RTR is settled by the answer */
	if (c->ops->fixed_p2p && (c->request.rev != IWX_MPA_REV2 || !c->request.enhanced))
		return iwx_conn_bad_frame(c, IWX_MPA_EC_INVALID_RR);
	c->state = IWX_CONN_REQUEST_IN;
	return 0;
}

/* Responder, bad Request: best effort, a Reply with R sent once without waiting. */
static void reject_invalid(struct iwx_conn *c)
{
	struct iwx_mpa_rr_params rep = { .reply = true, .reject = true, .rev = c->opts.local.rev };

	if (rep.rev != IWX_MPA_REV1 && rep.rev != IWX_MPA_REV2)
		rep.rev = IWX_MPA_REV2;
	if (encode(c, &rep) == 0)
		c->ops->reject(c);
}

/* One move: 1 when it entered a state with work to try at once, else 0, -EAGAIN or -errno. */
static int step_once(struct iwx_conn *c)
{
	struct iwx_mpa_rr_params rep;
	int err;

	switch (c->state) {
	case IWX_CONN_CONNECTING:
		err = c->ops->ready(c);
		if (err)
			return err;
		start_send(c, IWX_CONN_SEND_REQUEST);
		return 1;
	case IWX_CONN_SEND_REQUEST:
		err = c->ops->send(c);
		if (err)
			return err;
		iwx_conn_enter(c, IWX_CONN_WAIT_REPLY);
		return 1;
	case IWX_CONN_WAIT_REPLY:
		err = c->ops->recv(c, true, &rep);
		return err ? err : take_reply(c, &rep);
	case IWX_CONN_WAIT_REQUEST:
		err = c->ops->recv(c, false, &c->request);
		return err ? err : take_request(c);
	case IWX_CONN_REQUEST_IN:
		return c->ops->idle(c);
	case IWX_CONN_SEND_REPLY:
		err = c->ops->send(c);
		if (err)
			return err;
		if (c->out[c->ops->headroom + offsetof(struct iwx_mpa_rr, flags)] & IWX_MPA_FLAG_REJECT) {
			finish(c, IWX_CONN_REJECTED, c->error);
			return 0;
		}
		return established(c);
	default:
		return 0;
	}
}

int iwx_conn_step(struct iwx_conn *c, uint64_t now_ms)
{
	bool waits_on_peer;
	int err;

	while ((err = step_once(c)) == 1)
		;
	waits_on_peer = c->state != IWX_CONN_REQUEST_IN;
	if (err == -EAGAIN && waits_on_peer && now_ms >= c->deadline_ms)
		err = -ETIMEDOUT;
	if (err == -EAGAIN && waits_on_peer)
		return -EAGAIN;
	if (err && err != -EAGAIN) {
		if (err == -EPROTO && !c->initiator &&
		    (c->state == IWX_CONN_WAIT_REQUEST || c->state == IWX_CONN_REQUEST_IN))
			reject_invalid(c);
		finish(c, IWX_CONN_FAILED, err);
	}
	return 0;
}

int iwx_conn_answer(struct iwx_conn *c, const struct iwx_conn_opts *o, bool reject)
{
	struct iwx_mpa_local l = local_of(c->ops, &o->local);
	struct iwx_mpa_rr_params rep;
	struct iwx_mpa_agreed agreed;
	struct iwx_term_cause cause = { 0 };
	int ret, err;

	if (c->state != IWX_CONN_REQUEST_IN)
		return -EINVAL;
	/* what came while the application decided: the connection may be gone */
	iwx_conn_step(c, iwx_now_ms());
	if (c->state != IWX_CONN_REQUEST_IN)
		return c->error;
	ret = iwx_mpa_setup_reply(&l, &c->request, o->pd, o->pd_len, reject, &rep, &agreed, &cause);
	if (c->ops->fixed_p2p && !ret && !reject && !c->request.p2p) {
		/* RFC 6581 §6: peer-to-peer is what both ends always agree */
		cause = IWX_CAUSE_MPA(IWX_MPA_EC_NO_MATCHING_RTR);
		ret = -EPROTO;
		iwx_mpa_setup_reply(&l, &c->request, o->pd, o->pd_len, true, &rep, &agreed, &cause);
	}
	/* the Request is no longer needed: its private data is in peer_pd */
	err = encode(c, &rep);
	if (err)
		return err;
	keep_opts(c, o);
	if (!rep.reject)
		c->agreed = agreed;
	if (ret) {
		/* no matching RTR type (RFC 6581 §6): the Reply is a reject */
		c->cause = cause;
		c->error = ret;
	}
	start_send(c, IWX_CONN_SEND_REPLY);
	iwx_conn_step(c, iwx_now_ms());
	if (c->state == IWX_CONN_FAILED)
		return c->error;
	return ret;
}

struct iwx_llp *iwx_conn_llp_new(struct iwx_conn *c)
{
	return c->state == IWX_CONN_ESTABLISHED ? c->ops->llp_new(c) : NULL;
}

void iwx_conn_close(struct iwx_conn *c)
{
	if (c->ops)
		c->ops->close(c);
}
