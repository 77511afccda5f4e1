// SPDX-License-Identifier: MIT
/* Tagged payload placed from the packet before usrsctp sees it (sctp_place.h). */
#include <arpa/inet.h>
#include <string.h>

#include "proto/wire.h"

#include "sctp_place.h"

#define BUCKETS		256	/* associations hash by path and ports */
#define DATA_FLAGS	(IWX_SCTP_DATA_U | IWX_SCTP_DATA_B | IWX_SCTP_DATA_E)

static struct iwx_sctp_placer *table[BUCKETS];

static unsigned bucket(const void *token, uint16_t lport, uint16_t pport)
{
	uintptr_t h = (uintptr_t)token >> 4 ^ lport ^ (uint32_t)pport << 7;

	return (h ^ h >> 8) % BUCKETS;
}

void iwx_sctp_placer_add(struct iwx_sctp_placer *pl)
{
	struct iwx_sctp_placer **head = &table[bucket(pl->token, pl->lport, pl->pport)];

	pl->next = *head;
	*head = pl;
}

void iwx_sctp_placer_del(struct iwx_sctp_placer *pl)
{
	for (struct iwx_sctp_placer **p = &table[bucket(pl->token, pl->lport, pl->pport)]; *p;
	     p = &(*p)->next)
		if (*p == pl) {
			*p = pl->next;
			return;
		}
}

static struct iwx_sctp_placer *find(const struct iwx_sctp_path *path,
				    const struct iwx_sctp_common *h)
{
	for (struct iwx_sctp_placer *pl = table[bucket(path->token, h->dport, h->sport)]; pl;
	     pl = pl->next)
		if (pl->token == path->token && pl->lport == h->dport && pl->pport == h->sport)
			return pl;
	return NULL;
}

size_t iwx_sctp_place(const struct iwx_sctp_path *path, uint8_t *pkt, size_t len,
		      struct iwx_sctp_stats *st)
{
	const struct iwx_sctp_common *h = (const void *)pkt;
	struct iwx_sctp_placer *pl = len >= sizeof(*h) ? find(path, h) : NULL;
	size_t off = sizeof(*h), out = off;

	/* RFC 4960 §8.5: the Verification Tag is what keeps blind senders out of an association */
	if (!pl || h->vtag != pl->vtag)
		return len;
	while (len - off >= 4) {
		const struct iwx_sctp_data *c = (const void *)(pkt + off);
		size_t clen = ntohs(c->len), padded = (clen + 3) & ~(size_t)3, placed = 0;

		if (clen < 4 || clen > len - off)
			break;	/* malformed: usrsctp judges the rest as it stands */
		if (c->type == IWX_SCTP_CHUNK_DATA && clen >= sizeof(*c)) {
			/* the last chunk may lack its padding: usrsctp still reads it, we never shrink it */
			bool whole = (c->flags & DATA_FLAGS) == DATA_FLAGS && clen > sizeof(*c) &&
				     padded <= len - off;

			placed = pl->place(pl, ntohl(c->tsn), ntohs(c->sid),
					   whole ? pkt + off + sizeof(*c) : NULL,
					   whole ? clen - sizeof(*c) : 0);
		}
		if (padded > len - off)
			padded = len - off;
		if (placed) {
			size_t keep = clen - placed, kept = (keep + 3) & ~(size_t)3;

			memmove(pkt + out, pkt + off, keep);
			((struct iwx_sctp_data *)(pkt + out))->len = htons(keep);
			memset(pkt + out + keep, 0, kept - keep);
			out += kept;
			st->placed_chunks++;
			st->placed_bytes += placed;
		} else {
			memmove(pkt + out, pkt + off, padded);
			out += padded;
		}
		off += padded;
	}
	memmove(pkt + out, pkt + off, len - off);
	return out + (len - off);
}
