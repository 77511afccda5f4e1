// SPDX-License-Identifier: MIT
/*
 * Protection domains, memory regions, completion queues and queue pairs. Posting and
 * polling touch only the shared rings; a doorbell is written only when iwxd sleeps.
 */
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "util/clock.h"

_Static_assert((int)IWX_QPS_ERROR == IWX_SHQ_ERROR && (int)IWX_QPS_RTS == IWX_SHQ_RTS,
	       "queue pair states are shared with iwxd");

static void *fail_null(int err)
{
	errno = err < 0 ? -err : err;
	return NULL;
}

void *client_map_rings(int fd, size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

/* ------------------------------------------------------- protection domains */

struct iwx_pd *iwx_alloc_pd(struct iwx_device *dev)
{
	struct iwx_ipc_id rep;
	struct iwx_pd *pd = calloc(1, sizeof(*pd));
	int err;

	if (!pd)
		return NULL;
	err = client_call(dev, IWX_IPC_PD_ALLOC, NULL, 0, &rep, sizeof(rep), NULL, NULL);
	if (err) {
		free(pd);
		return fail_null(err);
	}
	pd->dev = dev;
	pd->id = rep.id;
	pd->next = dev->pds;
	dev->pds = pd;
	return pd;
}

int iwx_dealloc_pd(struct iwx_pd *pd)
{
	struct iwx_device *dev = pd->dev;
	struct iwx_ipc_id req = { pd->id };
	int err = client_call(dev, IWX_IPC_PD_FREE, &req, sizeof(req), NULL, 0, NULL, NULL);

	if (err)
		return err;
	IWX_LIST_UNLINK(&dev->pds, pd);
	free(pd);
	return 0;
}

/* ---------------------------------------------------------- memory regions */

struct iwx_mr *iwx_reg_mr(struct iwx_pd *pd, void *addr, size_t length, int access)
{
	struct iwx_device *dev = pd->dev;
	uint8_t *p = addr;
	struct iwx_ipc_mr_reg req = {
		.pd = pd->id, .access = access, .addr = (uintptr_t)addr, .len = length,
		.arena_off = IWX_IPC_NOT_ARENA,
	};
	struct mr_entry *e;
	int err = 0;

	if (!addr || !length || access < 0 || !iwx_access_valid((unsigned int)access))
		return fail_null(EINVAL);	/* before any page moves */
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	if (p >= dev->arena && p < dev->arena + dev->arena_size &&
	    length <= (size_t)(dev->arena + dev->arena_size - p))
		req.arena_off = p - dev->arena;
	else
		err = move_acquire(dev, (uintptr_t)addr, length, &req, e->held);
	e->nheld = req.npieces;
	if (!err)
		err = client_call(dev, IWX_IPC_MR_REG, &req, sizeof(req), &req, sizeof(req), NULL,
				  NULL);
	if (err) {
		move_release(dev, e->held, e->nheld, true);
		free(e);
		return fail_null(err);
	}
	e->mr = (struct iwx_mr){ .pd = pd, .addr = addr, .length = length, .lkey = req.stag,
				 .rkey = req.stag, .access = access };
	e->next = dev->mrs;
	dev->mrs = e;
	return &e->mr;
}

int iwx_dereg_mr(struct iwx_mr *mr)
{
	struct iwx_device *dev = mr->pd->dev;
	struct iwx_ipc_id req = { mr->lkey };
	int err = client_call(dev, IWX_IPC_MR_DEREG, &req, sizeof(req), NULL, 0, NULL, NULL);
	struct mr_entry *e = (struct mr_entry *)mr;	/* mr is its first member */

	if (err && err != -ESHUTDOWN)
		return err;
	move_release(dev, e->held, e->nheld, !err);
	IWX_LIST_UNLINK(&dev->mrs, e);
	free(e);
	return 0;
}

int iwx_invalidate_mr(struct iwx_mr *mr)
{
	struct iwx_ipc_id req = { mr->lkey };

	return client_call(mr->pd->dev, IWX_IPC_MR_INVALIDATE, &req, sizeof(req), NULL, 0, NULL,
			   NULL);
}

int iwx_revalidate_mr(struct iwx_mr *mr)
{
	struct iwx_ipc_id req = { mr->lkey };
	int err = client_call(mr->pd->dev, IWX_IPC_MR_REVALIDATE, &req, sizeof(req), &req,
			      sizeof(req), NULL, NULL);

	if (!err)
		mr->lkey = mr->rkey = req.id;
	return err;
}

/* --------------------------------------------------- outstanding requests */

static bool wq_full(const struct work_queue *w)
{
	return w->posted - w->retired >= w->depth;
}

/* Remember the application's wr_id; iwxd gets the request's sequence number instead. */
static uint64_t wq_post(struct work_queue *w, uint64_t wr_id)
{
	w->wr_id[w->posted & (w->depth - 1)] = wr_id;
	return w->posted++;
}

/* Give a completion the application's wr_id back, retiring it and what its queue posted before. */
static void retire(struct iwx_device *dev, struct iwx_wc *wc)
{
	struct iwx_qp *q = qp_of(dev, wc->qp_num);
	struct work_queue *w = !q ? NULL : iwx_wc_is_recv(wc->opcode) ? &q->rwq : &q->swq;
	uint32_t seq = (uint32_t)wc->wr_id;

	if (q && q->srq && iwx_wc_is_recv(wc->opcode)) {
		srq_retire(q->srq, wc);
		return;
	}

	if (w && seq - w->retired < w->posted - w->retired) {	/* else none of ours */
		wc->wr_id = w->wr_id[seq & (w->depth - 1)];
		w->retired = seq + 1;
	}
}

/* Does the completion i places from the head of cq still carry our sequence number? */
static bool untranslated(const struct iwx_cq *cq, uint32_t i)
{
	return (int32_t)(cq->ring.mine + i - cq->translated) >= 0;
}

/*
 * Translate every completion in cq's ring now, in place (iwxd no longer touches them):
 * once a queue pair is destroyed, nothing could give its completions their wr_id.
 */
static void retire_ready(struct iwx_cq *cq)
{
	uint32_t ready = iwx_ring_ready(&cq->ring);

	if (ready == UINT32_MAX)
		return;
	for (uint32_t i = 0; i < ready; i++)
		if (untranslated(cq, i))
			retire(cq->dev, iwx_ring_entry(&cq->ring, i));
	cq->translated = cq->ring.mine + ready;
}

/* ------------------------------------------------------- completion queues */

struct iwx_cq *iwx_create_cq(struct iwx_device *dev, int entries)
{
	struct iwx_ipc_cq_create req = { .entries = entries > 0 ? entries : 0 };
	struct iwx_cq *cq = calloc(1, sizeof(*cq));
	unsigned nfds = 1;
	int fd, err;

	if (!cq)
		return NULL;
	err = client_call(dev, IWX_IPC_CQ_CREATE, &req, sizeof(req), &req, sizeof(req), &fd, &nfds);
	if (!err && nfds != 1)
		err = -EPROTO;
	if (!err && !(cq->sh = client_map_rings(fd, req.map_size)))
		err = -errno;
	if (err) {
		free(cq);
		return fail_null(err);
	}
	cq->dev = dev;
	cq->id = req.cq;
	cq->bell = req.bell;
	cq->map_size = req.map_size;
	iwx_ring_init(&cq->ring, &cq->sh->ring, (uint8_t *)cq->sh + IWX_IPC_CQ_OFF, req.entries,
		      sizeof(struct iwx_wc));
	cq->next = dev->cqs;
	dev->cqs = cq;
	return cq;
}

int iwx_destroy_cq(struct iwx_cq *cq)
{
	struct iwx_device *dev = cq->dev;
	struct iwx_ipc_id req = { cq->id };
	int err = client_call(dev, IWX_IPC_CQ_DESTROY, &req, sizeof(req), NULL, 0, NULL, NULL);

	if (err && err != -ESHUTDOWN)
		return err;
	IWX_LIST_UNLINK(&dev->cqs, cq);
	munmap(cq->sh, cq->map_size);
	free(cq);
	return 0;
}

int iwx_poll_cq(struct iwx_cq *cq, int n, struct iwx_wc *wc)
{
	uint32_t ready = iwx_ring_ready(&cq->ring);
	int k = 0;

	if (ready == UINT32_MAX)
		return -EIO;	/* the daemon's index makes no sense: nothing to trust */
	for (; k < n && (uint32_t)k < ready; k++) {
		iwx_ring_read(&cq->ring, k, &wc[k]);
		if (untranslated(cq, k))
			retire(cq->dev, &wc[k]);
	}
	if (k) {
		iwx_ring_consume(&cq->ring, k);
		/* completions waited for this room: tell the daemon it is there */
		if (__atomic_exchange_n(&cq->sh->need_room, 0, __ATOMIC_SEQ_CST))
			client_ring(cq->dev, cq->bell);
	}
	/* none will come from a daemon that is gone: say so to a program polling in a loop */
	return k || !client_lost(cq->dev) ? k : -ESHUTDOWN;
}

/*
 * iwx_comp_fd is the daemon's eventfd, on which iwx_wait_cq sleeps too. For it to stay
 * readable from the wake-up of an application's arming until iwx_ack_comp, libiwx
 * remembers which arming of the application fired before it arms a CQ itself, and
 * gives back any wake-up of the application that its own wait took.
 */
static void arm(struct iwx_cq *cq)
{
	__atomic_store_n(&cq->sh->armed, 1, __ATOMIC_SEQ_CST);
}

/* Note whether the application's arming of cq fired: iwxd disarms as it wakes us. */
static bool app_fired(struct iwx_cq *cq)
{
	if (cq->app_armed && !__atomic_load_n(&cq->sh->armed, __ATOMIC_SEQ_CST))
		cq->app_fired = true;
	return cq->app_fired;
}

/* Take every wake-up waiting on the device's eventfd. */
static void take_wakeups(struct iwx_device *dev)
{
	uint64_t v;

	if (read(dev->notify_fd, &v, sizeof(v)) < 0) {
		/* nothing to take: EAGAIN */
	}
}

int iwx_req_notify_cq(struct iwx_cq *cq)
{
	cq->app_armed = true;
	cq->app_fired = false;
	arm(cq);
	return 0;
}

int iwx_comp_fd(struct iwx_device *dev)
{
	return dev->notify_fd;
}

int iwx_ack_comp_cqs(struct iwx_device *dev, struct iwx_cq **cqs, int n)
{
	uint64_t one = 1;
	bool more = false;
	int k = 0;

	take_wakeups(dev);
	for (struct iwx_cq *cq = dev->cqs; cq; cq = cq->next) {
		if (!app_fired(cq))
			continue;
		if (k < n || !cqs) {
			if (cqs)
				cqs[k++] = cq;
			cq->app_armed = cq->app_fired = false;
		} else {
			more = true;
		}
	}
	if (more && write(dev->notify_fd, &one, sizeof(one)) < 0) {
		/* the counter cannot overflow in practice */
	}
	return k;
}

void iwx_ack_comp(struct iwx_device *dev)
{
	iwx_ack_comp_cqs(dev, NULL, 0);
}

#define FUTEX_SLICE_MS	100	/* a futex sleep looks at iwxd's socket this often */

/* iwx_wait_cq's wait, once cq was found empty; *took says whether it took wake-ups off the device's eventfd. */
static int wait_cq(struct iwx_cq *cq, int n, struct iwx_wc *wc, int timeout_ms, bool *took)
{
	struct iwx_device *dev = cq->dev;
	int64_t deadline = (int64_t)iwx_now_ms() + timeout_ms;

	for (;;) {
		struct pollfd p[2] = { { .fd = dev->notify_fd, .events = POLLIN },
				       { .fd = dev->sock, .events = POLLIN } };
		int k, left;

		app_fired(cq);
		arm(cq);
		k = iwx_poll_cq(cq, n, wc);	/* after arming: one may have come before it */
		if (k)
			return k;
		if (dev->lost)
			return -ESHUTDOWN;
		left = timeout_ms < 0 ? -1 : (int)(deadline - (int64_t)iwx_now_ms());
		if (timeout_ms >= 0 && left <= 0)
			return 0;
		if (poll(p, 2, left) < 0 && errno != EINTR)
			return -errno;
		if (p[0].revents) {
			take_wakeups(dev);
			*took = true;
		}
		if (p[1].revents && client_pump(dev) == -ESHUTDOWN)
			return iwx_poll_cq(cq, n, wc) ?: -ESHUTDOWN;
	}
}

/* Does iwxd take this client's bells on this CPU? Then a spin takes the CPU it needs. */
static bool daemon_here(const struct iwx_device *dev)
{
	uint32_t d = __atomic_load_n(&dev->bells->daemon_cpu, __ATOMIC_RELAXED);
	int cpu = sched_getcpu();

	return d && cpu >= 0 && d == (uint32_t)cpu + 1;
}

/*
 * Poll cq for up to the device's spin time (not beyond timeout_ms), yielding the CPU
 * between looks: a completion due within it costs no arming and no wake-up, and iwxd,
 * often on this CPU, runs meanwhile. Not while cq's waits outlast the spin (a stream of
 * large messages): spinning would only take CPU from iwxd. start: the wait's, in µs.
 * What iwx_poll_cq returns: 0 when none came.
 */
static int spin_cq(struct iwx_cq *cq, int n, struct iwx_wc *wc, int timeout_ms, uint64_t start)
{
	uint64_t budget = cq->dev->spin_us, end;
	int k = 0;

	if (timeout_ms >= 0 && (uint64_t)timeout_ms * 1000 < budget)
		budget = (uint64_t)timeout_ms * 1000;
	if (!budget || cq->slow || daemon_here(cq->dev))
		return 0;
	end = start + budget;
	do {
		sched_yield();
		k = iwx_poll_cq(cq, n, wc);
	} while (!k && iwx_now_us() < end);
	return k;
}

/*
 * sleep_cq by futex (iwxd says it wakes so: IWX_IPC_F_CQ_FUTEX), while no arming of the
 * application's is on cq: one system call to sleep, where poll and read of the eventfd are
 * two. iwxd's socket is looked at every FUTEX_SLICE_MS (what it says waits there until
 * then; iwxd's end is seen within a slice). -EAGAIN when the application armed cq meanwhile
 * (another thread): the eventfd's wait is then the one.
 */
static int futex_sleep_cq(struct iwx_cq *cq, int n, struct iwx_wc *wc, int timeout_ms)
{
	struct iwx_device *dev = cq->dev;
	int64_t deadline = (int64_t)iwx_now_ms() + timeout_ms;
	uint32_t mine = IWX_CQ_ARMED_FUTEX;
	int k;

	for (;;) {
		uint32_t was = 0;
		struct timespec ts;
		int left;

		if (!__atomic_compare_exchange_n(&cq->sh->armed, &was, IWX_CQ_ARMED_FUTEX, false,
						 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST) &&
		    was != IWX_CQ_ARMED_FUTEX)
			return -EAGAIN;
		k = iwx_poll_cq(cq, n, wc);	/* after arming: one may have come before it */
		if (k || dev->lost)
			break;
		left = timeout_ms < 0 ? FUTEX_SLICE_MS : (int)(deadline - (int64_t)iwx_now_ms());
		if (left <= 0)
			break;
		left = left < FUTEX_SLICE_MS ? left : FUTEX_SLICE_MS;
		ts = (struct timespec){ left / 1000, (long)(left % 1000) * 1000000 };
		if (syscall(SYS_futex, &cq->sh->armed, FUTEX_WAIT, IWX_CQ_ARMED_FUTEX, &ts, NULL, 0) &&
		    errno == ETIMEDOUT && client_pump(dev) == -ESHUTDOWN)
			break;
	}
	/* withdraw the arming, unless iwxd took it */
	__atomic_compare_exchange_n(&cq->sh->armed, &mine, 0, false, __ATOMIC_SEQ_CST,
				    __ATOMIC_SEQ_CST);
	if (!k && dev->lost)
		k = iwx_poll_cq(cq, n, wc) ?: -ESHUTDOWN;
	return k;
}

/* Arm cq, sleep until a completion comes (or timeout_ms), and withdraw the arming. */
static int sleep_cq(struct iwx_cq *cq, int n, struct iwx_wc *wc, int timeout_ms)
{
	struct iwx_device *dev = cq->dev;
	bool took = false;
	uint64_t one = 1;
	int k;

	if (dev->cq_futex && !cq->app_armed && (k = futex_sleep_cq(cq, n, wc, timeout_ms)) != -EAGAIN)
		return k;
	k = wait_cq(cq, n, wc, timeout_ms, &took);

	/* withdraw our own arming: its wake-up, if it came, is not the application's */
	if (!cq->app_armed && !__atomic_exchange_n(&cq->sh->armed, 0, __ATOMIC_SEQ_CST)) {
		take_wakeups(dev);
		took = true;
	}
	if (!took)
		return k;
	for (struct iwx_cq *c = dev->cqs; c; c = c->next) {
		if (app_fired(c)) {
			if (write(dev->notify_fd, &one, sizeof(one)) < 0) {
				/* the counter cannot overflow in practice */
			}
			break;
		}
	}
	return k;
}

int iwx_wait_cq(struct iwx_cq *cq, int n, struct iwx_wc *wc, int timeout_ms)
{
	uint32_t spin_us = cq->dev->spin_us;
	int k = iwx_poll_cq(cq, n, wc);
	uint64_t start;

	if (k)
		return k;	/* no arming, no system call */
	if (!spin_us)
		return sleep_cq(cq, n, wc, timeout_ms);
	start = iwx_now_us();
	k = spin_cq(cq, n, wc, timeout_ms, start);
	if (k)
		return k;	/* no arming, no system call beyond the yields */
	k = sleep_cq(cq, n, wc, timeout_ms);
	/* the next wait spins only if this one would have ended within the spin */
	cq->slow = iwx_now_us() - start > spin_us;
	return k;
}

/* -------------------------------------------------------------- queue pairs */

struct iwx_qp *iwx_create_qp(struct iwx_pd *pd, const struct iwx_qp_init_attr *attr)
{
	struct iwx_device *dev = pd->dev;
	struct iwx_ipc_qp_create req;
	struct iwx_qp *qp;
	unsigned nfds = 1;
	int fd, err;

	if (!attr || !attr->send_cq || !attr->recv_cq || (attr->srq && attr->srq->dev != dev))
		return fail_null(EINVAL);
	req = (struct iwx_ipc_qp_create){
		.pd = pd->id, .send_cq = attr->send_cq->id, .recv_cq = attr->recv_cq->id,
		.sq_depth = attr->sq_depth, .rq_depth = attr->rq_depth,
		.srq = attr->srq ? attr->srq->id : 0,
	};
	qp = iwx_ids_room(&dev->qp_nums) ? NULL : calloc(1, sizeof(*qp));
	if (!qp)
		return fail_null(ENOMEM);
	err = client_call(dev, IWX_IPC_QP_CREATE, &req, sizeof(req), &req, sizeof(req), &fd, &nfds);
	if (!err && nfds != 1)
		err = -EPROTO;
	if (!err && !(qp->sh = client_map_rings(fd, req.map_size)))
		err = -errno;
	if (!err && !(qp->swq.wr_id = calloc(req.sq_depth + req.rq_depth, sizeof(uint64_t))))
		err = -ENOMEM;
	if (err) {
		if (qp->sh) {
			struct iwx_ipc_id id = { req.qp };

			munmap(qp->sh, req.map_size);
			client_call(dev, IWX_IPC_QP_DESTROY, &id, sizeof(id), NULL, 0, NULL, NULL);
		}
		free(qp);
		return fail_null(err);
	}
	qp->dev = dev;
	qp->num = req.qp;
	qp->bell = req.bell;
	qp->map_size = req.map_size;
	iwx_ring_init(&qp->sq, &qp->sh->sq, (uint8_t *)qp->sh + IWX_IPC_QP_SQ_OFF, req.sq_depth,
		      sizeof(struct iwx_send_wr));
	iwx_ring_init(&qp->rq, &qp->sh->rq, (uint8_t *)qp->sh + iwx_ipc_qp_rq_off(req.sq_depth),
		      req.rq_depth, sizeof(struct iwx_recv_wr));
	qp->swq.depth = req.sq_depth;
	qp->rwq.depth = req.rq_depth;
	qp->rwq.wr_id = qp->swq.wr_id + req.sq_depth;
	qp->send_cq = attr->send_cq;
	qp->recv_cq = attr->recv_cq;
	qp->srq = attr->srq;
	if (qp->srq)
		qp->srq->users++;
	iwx_link_add_tail(&dev->qps, &qp->link);
	iwx_ids_add(&dev->qp_nums, qp->num, 0, qp);
	return qp;
}

int iwx_destroy_qp(struct iwx_qp *qp)
{
	struct iwx_device *dev = qp->dev;
	struct iwx_ipc_id req = { qp->num };
	int err = client_call(dev, IWX_IPC_QP_DESTROY, &req, sizeof(req), NULL, 0, NULL, NULL);

	if (err && err != -ESHUTDOWN)
		return err;
	retire_ready(qp->send_cq);
	retire_ready(qp->recv_cq);
	iwx_link_del(&qp->link);
	iwx_ids_del(&dev->qp_nums, qp->num);
	client_forget_async(dev, qp->num, 0);
	if (qp->srq)
		qp->srq->users--;
	munmap(qp->sh, qp->map_size);
	free(qp->swq.wr_id);
	free(qp);
	return 0;
}

uint32_t iwx_qp_num(const struct iwx_qp *qp)
{
	return qp->num;
}

struct iwx_qp *qp_of(struct iwx_device *dev, uint32_t num)
{
	return iwx_ids_find(&dev->qp_nums, num, 0);
}

int iwx_query_qp(const struct iwx_qp *qp, struct iwx_qp_attr *attr)
{
	*attr = (struct iwx_qp_attr){ .qp_num = qp->num, .state = iwx_qp_state(qp),
				      .sq_depth = qp->swq.depth, .rq_depth = qp->rwq.depth };
	return 0;
}

enum iwx_qp_state iwx_qp_state(const struct iwx_qp *qp)
{
	return (enum iwx_qp_state)__atomic_load_n(&qp->sh->state, __ATOMIC_ACQUIRE);
}

int iwx_post_send(struct iwx_qp *qp, const struct iwx_send_wr *wr)
{
	enum iwx_qp_state s = iwx_qp_state(qp);
	struct iwx_send_wr *e;

	if (!iwx_send_wr_valid(wr))
		return -EINVAL;
	if (client_lost(qp->dev))
		return -ESHUTDOWN;	/* nothing would take it, or flush it */
	if (s == IWX_QPS_INIT || s == IWX_QPS_CONNECTING)
		return -ENOTCONN;
	if (iwx_wr_is_rfc7306(wr->opcode) && !__atomic_load_n(&qp->sh->rfc7306, __ATOMIC_RELAXED))
		return -EOPNOTSUPP;	/* the peer did not agree to RFC 7306 (iwxd checks again) */
	if (wq_full(&qp->swq))
		return -ENOBUFS;
	e = iwx_ring_entry(&qp->sq, 0);
	memcpy(e, wr, sizeof(*wr));
	e->wr_id = wq_post(&qp->swq, wr->wr_id);
	iwx_ring_produce(&qp->sq, 1);
	client_ring(qp->dev, qp->bell);
	return 0;
}

int iwx_post_recv(struct iwx_qp *qp, const struct iwx_recv_wr *wr)
{
	struct iwx_recv_wr *e;

	if (!iwx_recv_wr_valid(wr) || qp->srq)
		return -EINVAL;
	if (client_lost(qp->dev))
		return -ESHUTDOWN;
	if (wq_full(&qp->rwq))
		return -ENOBUFS;
	e = iwx_ring_entry(&qp->rq, 0);
	memcpy(e, wr, sizeof(*wr));
	e->wr_id = wq_post(&qp->rwq, wr->wr_id);
	iwx_ring_produce(&qp->rq, 1);
	/*
	 * iwxd takes receives in before it reads the stream, so a connected queue pair
	 * needs no doorbell for them; one in error does, for the flush. The fence pairs
	 * with iwxd's: it publishes the error before it flushes the ring.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (iwx_qp_state(qp) == IWX_QPS_ERROR)
		client_ring(qp->dev, qp->bell);
	return 0;
}

const char *iwx_wc_opcode_name(enum iwx_wc_opcode op)
{
	static const char *const names[] = {
		[IWX_WC_SEND] = "Send", [IWX_WC_RDMA_WRITE] = "RDMA Write",
		[IWX_WC_RDMA_READ] = "RDMA Read", [IWX_WC_RECV] = "receive",
		[IWX_WC_FETCH_ADD] = "Fetch-Add", [IWX_WC_CMP_SWAP] = "Compare-and-Swap",
		[IWX_WC_RECV_IMM] = "receive of Immediate Data",
	};

	return (unsigned)op < sizeof(names) / sizeof(names[0]) ? names[op] : "unknown opcode";
}

const char *iwx_wc_status_name(enum iwx_wc_status s)
{
	static const char *const names[] = {
		[IWX_WC_SUCCESS] = "success",
		[IWX_WC_LOC_LEN_ERR] = "local length error",
		[IWX_WC_LOC_PROT_ERR] = "local protection error",
		[IWX_WC_REM_ACCESS_ERR] = "remote access error",
		[IWX_WC_REM_OP_ERR] = "remote operation error",
		[IWX_WC_REM_INV_REQ_ERR] = "remote invalid request error",
		[IWX_WC_FATAL_ERR] = "fatal error",
		[IWX_WC_WR_FLUSH_ERR] = "flushed",
		[IWX_WC_LOC_QP_OP_ERR] = "local queue pair operation error",
	};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "unknown status";
}
