// SPDX-License-Identifier: MIT
/* usrsctp as iwx runs it: AF_CONN, no threads, packets on the caller's paths. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include <usrsctp.h>

#include "proto/crc32c.h"
#include "proto/wire.h"

#include "sctp.h"
#include "sctp_place.h"
#include "util/clock.h"

#define TOKEN_BUCKETS	1024	/* paths hash by token */

static struct iwx_sctp_stats stats;
static struct iwx_sctp_path *paths[TOKEN_BUCKETS];
/* iwx_sctp_input_unknown's peer, while its packet is in the stack: where replies go */
static struct {
	void	*token;
	int	(*reply)(void *arg, const void *pkt, size_t len);
	void	*arg;
	bool	cookie_ack;	/* a reply was a COOKIE-ACK: the association exists now */
} unknown;
static unsigned users;
static bool running;	/* usrsctp_finish refused: the stack is still up, for the next user */
static uint64_t last_tick_ms;

static uint32_t packet_crc(const uint8_t *pkt, size_t len)
{
	static const uint8_t zero[4];
	uint32_t st = iwx_crc32c_update(IWX_CRC32C_INIT, pkt, 8);

	/* RFC 4960 Appendix B: over the whole packet, its checksum field taken as zero */
	st = iwx_crc32c_update(st, zero, sizeof(zero));
	return iwx_crc32c_final(iwx_crc32c_update(st, pkt + 12, len - 12));
}

static unsigned bucket(const void *token)
{
	uintptr_t h = (uintptr_t)token;

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return (unsigned)(h >> 40) % TOKEN_BUCKETS;
}

struct iwx_sctp_path *iwx_sctp_path_of(const void *token)
{
	for (struct iwx_sctp_path *p = paths[bucket(token)]; p; p = p->hnext)
		if (p->token == token)
			return p;
	return NULL;
}

/*
 * usrsctp's output: addr is the token the association knows its peer by (AF_CONN). A
 * token without a path is a peer that has none yet, being answered now
 * (iwx_sctp_input_unknown), or one whose path is gone: its packet is dropped. usrsctp
 * leaves the checksum to us (crc32c offload): ISA-L's is the faster.
 */
static int path_output(void *addr, void *pkt, size_t len, uint8_t tos, uint8_t set_df)
{
	struct iwx_sctp_path *path = iwx_sctp_path_of(addr);
	struct iwx_sctp_common *h = pkt;

	(void)tos;
	(void)set_df;
	if (len < sizeof(*h))
		return -1;
	if (!path && (addr != unknown.token || !unknown.reply)) {
		stats.no_path++;
		return -1;
	}
	iwx_crc32c_put((uint8_t *)&h->crc32c, packet_crc(pkt, len));
	if (path)
		return path->send(path, pkt, len) ? -1 : 0;
	/* RFC 4960 §3.3.4: COOKIE-ACK answers a valid COOKIE-ECHO, and leads its packet */
	unknown.cookie_ack |= len > sizeof(*h) && ((const uint8_t *)pkt)[sizeof(*h)] == 11;
	return unknown.reply(unknown.arg, pkt, len) ? -1 : 0;
}

int iwx_sctp_init(void)
{
	if (users++)
		return 0;
	/* a second usrsctp_init on a live stack would reset its state (sctp_init) */
	if (!running)
		/* port 0: no UDP encapsulation of usrsctp's own (it needs its threads) */
		usrsctp_init_nothreads(0, path_output, NULL);
	/* every packet's CRC32c is ours to fill in and check (path_output, iwx_sctp_input) */
	usrsctp_enable_crc32c_offload();
	running = true;
	last_tick_ms = iwx_now_ms();
	return 0;
}

void iwx_sctp_finish(void)
{
	if (!users || --users)
		return;
	/* sockets closed: their associations still need packets and time to end */
	for (int i = 0; i < 100; i++) {
		struct timespec ts = { .tv_nsec = IWX_SCTP_TICK_MS * 1000000L };

		if (usrsctp_finish() == 0) {
			running = false;
			return;
		}
		nanosleep(&ts, NULL);
		iwx_sctp_tick();
	}
}

void iwx_sctp_path_add(struct iwx_sctp_path *path, void *token)
{
	path->token = token ? token : path;
	path->hnext = paths[bucket(path->token)];
	paths[bucket(path->token)] = path;
	usrsctp_register_address(path->token);
}

void iwx_sctp_path_del(struct iwx_sctp_path *path)
{
	for (struct iwx_sctp_path **p = &paths[bucket(path->token)]; *p; p = &(*p)->hnext)
		if (*p == path) {
			*p = path->hnext;
			break;
		}
	if (running)	/* after usrsctp_finish there is nothing to deregister from */
		usrsctp_deregister_address(path->token);
}

static bool checked(const void *pkt, size_t len)
{
	const struct iwx_sctp_common *h = pkt;

	if (len >= sizeof(*h) && iwx_crc32c_get((const uint8_t *)&h->crc32c) == packet_crc(pkt, len))
		return true;
	stats.bad_crc++;	/* RFC 4960 §6.8: silently discarded */
	return false;
}

void iwx_sctp_input(struct iwx_sctp_path *path, void *pkt, size_t len)
{
	if (!checked(pkt, len))
		return;
	if (path->place)
		len = iwx_sctp_place(path, pkt, len, &stats);
	usrsctp_conninput(path->token, pkt, len, 0);
}

bool iwx_sctp_input_unknown(void *token, void *pkt, size_t len,
			    int (*reply)(void *arg, const void *pkt, size_t len), void *arg)
{
	bool made;

	if (!checked(pkt, len))
		return false;
	unknown.token = token;
	unknown.reply = reply;
	unknown.arg = arg;
	unknown.cookie_ack = false;
	usrsctp_conninput(token, pkt, len, 0);
	made = unknown.cookie_ack;
	unknown.reply = NULL;
	return made;
}

const struct iwx_sctp_stats *iwx_sctp_stats(void)
{
	return &stats;
}

void iwx_sctp_tick(void)
{
	uint64_t now = iwx_now_ms();

	usrsctp_handle_timers((uint32_t)(now - last_tick_ms));
	last_tick_ms = now;
}

static int set(struct socket *so, int level, int name, const void *v, socklen_t len)
{
	return usrsctp_setsockopt(so, level, name, v, len);
}

struct socket *iwx_sctp_socket(void)
{
	static const uint16_t events[] = { SCTP_ASSOC_CHANGE, SCTP_ADAPTATION_INDICATION,
					   SCTP_SHUTDOWN_EVENT, SCTP_SENDER_DRY_EVENT };
	/* draft-otis-sctp-ddp §3.1: the indication in INIT and INIT-ACK */
	struct sctp_setadaptation ad = { .ssb_adaptation_ind = IWX_SHIM_IND_TAG };
	struct sctp_paddrparams pp = { .spp_assoc_id = SCTP_FUTURE_ASSOC,
				       .spp_flags = SPP_PMTUD_DISABLE,
				       .spp_pathmtu = IWX_SCTP_PATH_MTU };
	struct sctp_assoc_value fcfs = { SCTP_FUTURE_ASSOC, SCTP_SS_FIRST_COME };
	struct sctp_assoc_value burst = { SCTP_FUTURE_ASSOC, 0 };
	uint32_t one = 1;
	int on = 1, err;
	struct socket *so = usrsctp_socket(AF_CONN, SOCK_STREAM, IPPROTO_SCTP, NULL, NULL, 0, NULL);

	if (!so)
		return NULL;
	if (usrsctp_set_non_blocking(so, 1) ||
	    set(so, IPPROTO_SCTP, SCTP_ADAPTATION_LAYER, &ad, sizeof(ad)) ||
	    set(so, IPPROTO_SCTP, SCTP_DISABLE_FRAGMENTS, &one, sizeof(one)) ||
	    set(so, IPPROTO_SCTP, SCTP_PEER_ADDR_PARAMS, &pp, sizeof(pp)) ||
	    /* TSNs in the order messages are sent: R5's ordering rests on it (docs/ddp-over-sctp.md) */
	    set(so, IPPROTO_SCTP, SCTP_PLUGGABLE_SS, &fcfs, sizeof(fcfs)) ||
	    set(so, IPPROTO_SCTP, SCTP_MAX_BURST, &burst, sizeof(burst)) ||
	    set(so, IPPROTO_SCTP, SCTP_NODELAY, &on, sizeof(on)) ||
	    set(so, IPPROTO_SCTP, SCTP_RECVRCVINFO, &on, sizeof(on)))
		goto fail;
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		struct sctp_event ev = { .se_assoc_id = SCTP_FUTURE_ASSOC, .se_type = events[i],
					 .se_on = 1 };

		if (set(so, IPPROTO_SCTP, SCTP_EVENT, &ev, sizeof(ev)))
			goto fail;
	}
	return so;
fail:
	err = errno;
	usrsctp_close(so);
	errno = err;
	return NULL;
}
