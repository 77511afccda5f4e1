/* SPDX-License-Identifier: MIT */
/*
 * MSG_ZEROCOPY on a TCP socket (the kernel's Documentation/networking/msg_zerocopy.rst):
 * the kernel sends the pages of a call's buffers without copying them, and says on the
 * socket's error queue when it let go of them, by the calls' numbers (counted from 0 per
 * socket, in ranges). A message sent that way completes only once every call that
 * carried its bytes was let go of: this keeps, in order, the messages that wait for it,
 * and where their payload is until then (so that its memory stays mapped); and the
 * buffers of our own such calls sent from (FPDU heads and tails), until then.
 */
#ifndef IWX_TCP_ZC_H
#define IWX_TCP_ZC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bufpool.h"

#define IWX_TCP_ZC_CALLS	4096	/* zero-copy calls not let go of, at most */
#define IWX_TCP_ZC_MSGS		1024	/* messages waiting, at most */
#define IWX_TCP_ZC_HOLDS	256	/* buffers of our own waiting, at most */

/* A message TCP took, waiting for the calls up to end (exclusive) to be let go of. */
struct iwx_tcp_zc_msg {
	uint32_t	end;
	uintptr_t	lo, hi;		/* its payload lies within [lo, hi) (lo == hi: none) */
};

/* A buffer of our own the calls up to end (exclusive) sent from. */
struct iwx_tcp_zc_hold {
	void		*buf;
	uint32_t	end;
};

struct iwx_tcp_zc {
	uint32_t		min;		/* a call's payload from this many bytes goes
						   without a copy; 0: never */
	uint32_t		next;		/* the number the next zero-copy call gets */
	uint32_t		done;		/* every call numbered below was let go of */
	uint64_t		seen[IWX_TCP_ZC_CALLS / 64];	/* calls from done on that were,
								   by number mod IWX_TCP_ZC_CALLS */
	struct iwx_tcp_zc_msg	msg[IWX_TCP_ZC_MSGS];	/* waiting, oldest at head */
	uint32_t		head, n;
	struct iwx_bufpool	*pool;		/* where held buffers go back to */
	struct iwx_tcp_zc_hold	hold[IWX_TCP_ZC_HOLDS];	/* oldest at hold_head */
	uint32_t		hold_head, hold_n;
	uint64_t		copied;		/* zero-copy calls the kernel copied anyway */
	size_t			batch;		/* payload bytes of registered memory in the batch */
	uintptr_t		lo, hi;		/* where the message being sent took them from */
};

/*
 * Zero copy on fd from min bytes on (SO_ZEROCOPY), buffers held going back to pool; min
 * 0: off. -errno when the socket refuses it (then off).
 */
int iwx_tcp_zc_init(struct iwx_tcp_zc *z, int fd, uint32_t min, struct iwx_bufpool *pool);

/* Give back the buffers held: the socket is gone, and the kernel's copies with it. */
void iwx_tcp_zc_fini(struct iwx_tcp_zc *z);

/* A new batch is being filled. */
void iwx_tcp_zc_batch(struct iwx_tcp_zc *z);

/* The batch sends len bytes of payload from registered memory at p. */
void iwx_tcp_zc_payload(struct iwx_tcp_zc *z, const void *p, size_t len);

/* Does a call of the batch go without a copy? */
bool iwx_tcp_zc_use(const struct iwx_tcp_zc *z);

/* A zero-copy call sent bytes: it has the next number. */
void iwx_tcp_zc_called(struct iwx_tcp_zc *z);

/* Is there room to note one more message and hold one more buffer? (Else send no more
 * until some are let go of.) */
bool iwx_tcp_zc_room(const struct iwx_tcp_zc *z);

/*
 * TCP took all of the message whose payload iwx_tcp_zc_payload saw last: noted, to be
 * let go of in order. How many messages are let go of now (it, when nothing waits before
 * it). A batch ends with the message it ends, so the message is the batch's last.
 */
uint32_t iwx_tcp_zc_taken(struct iwx_tcp_zc *z);

/* Hold buf, from pool, until the zero-copy calls made so far are let go of. */
void iwx_tcp_zc_hold(struct iwx_tcp_zc *z, void *buf);

/*
 * Read the kernel's notices from fd's error queue (a bounded number), and pop the
 * messages now let go of: how many, in the order taken; -errno when the error queue
 * holds an error of the socket's (the stream is broken).
 */
int iwx_tcp_zc_reap(struct iwx_tcp_zc *z, int fd);

/* Nothing waits for the kernel. */
bool iwx_tcp_zc_idle(const struct iwx_tcp_zc *z);

/* Does a waiting message's payload lie in [base, base + len)? */
bool iwx_tcp_zc_refers_to(const struct iwx_tcp_zc *z, uintptr_t base, size_t len);

#endif /* IWX_TCP_ZC_H */
