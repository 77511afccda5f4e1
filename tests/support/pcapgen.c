// SPDX-License-Identifier: MIT
/* Synthetic TCP connection to pcap: Ethernet II, IPv4 (RFC 791), TCP (RFC 9293). */
#include <arpa/inet.h>
#include <errno.h>
#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pcapgen.h"
#include "testutil.h"

#define ETH_HLEN	14
#define IP_HLEN		20
#define TCP_HLEN	20
#define TCP_OPT_MSS_LEN	4
#define FRAME_MAX	(ETH_HLEN + IP_HLEN + TCP_HLEN + TCP_OPT_MSS_LEN + PCAPGEN_MAX_PAYLOAD)

#define TH_FIN	0x01
#define TH_SYN	0x02
#define TH_PSH	0x08
#define TH_ACK	0x10

struct pcapgen {
	pcap_t		*pcap;
	pcap_dumper_t	*dumper;
	unsigned int	frames;
	struct timeval	ts;
	uint16_t	ip_id[2];
	uint32_t	addr[2];	/* host order */
	uint16_t	port[2];
	uint8_t		mac[2][6];
	uint32_t	snd_nxt[2];	/* next sequence number each side sends */
	bool		acked[2];	/* the side has seen its peer's SYN: ACK valid */
};

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

/* Write one segment from dir with flags, an MSS option when mss != 0, and len bytes. */
static int emit(struct pcapgen *pg, enum pcapgen_dir dir, uint8_t flags, uint16_t mss,
		const void *data, size_t len)
{
	uint8_t f[FRAME_MAX];
	uint8_t *ip = f + ETH_HLEN, *tcp = ip + IP_HLEN;
	size_t opt_len = mss ? TCP_OPT_MSS_LEN : 0;
	size_t tcp_len = TCP_HLEN + opt_len + len;
	int peer = !dir;
	struct pcap_pkthdr h;
	uint32_t sum;

	if (len > PCAPGEN_MAX_PAYLOAD)
		return -EMSGSIZE;
	memset(f, 0, sizeof(f));

	memcpy(f, pg->mac[peer], 6);
	memcpy(f + 6, pg->mac[dir], 6);
	put16(f + 12, 0x0800);

	ip[0] = 0x45;
	put16(ip + 2, IP_HLEN + tcp_len);
	put16(ip + 4, pg->ip_id[dir]++);
	put16(ip + 6, 0x4000);			/* DF */
	ip[8] = 64;
	ip[9] = IPPROTO_TCP;
	put32(ip + 12, pg->addr[dir]);
	put32(ip + 16, pg->addr[peer]);
	put16(ip + 10, iwx_csum_fold(iwx_csum_add(0, ip, IP_HLEN)));

	put16(tcp, pg->port[dir]);
	put16(tcp + 2, pg->port[peer]);
	put32(tcp + 4, pg->snd_nxt[dir]);
	if (pg->acked[dir]) {
		flags |= TH_ACK;
		put32(tcp + 8, pg->snd_nxt[peer]);
	}
	tcp[12] = (TCP_HLEN + opt_len) / 4 << 4;
	tcp[13] = flags;
	put16(tcp + 14, 65535);
	if (mss) {
		tcp[20] = 2;			/* kind MSS */
		tcp[21] = TCP_OPT_MSS_LEN;
		put16(tcp + 22, mss);
	}
	if (len)
		memcpy(tcp + TCP_HLEN + opt_len, data, len);

	/* pseudo-header: source, destination, protocol, TCP length */
	sum = iwx_csum_add(0, ip + 12, 8);
	sum += IPPROTO_TCP + tcp_len;
	put16(tcp + 16, iwx_csum_fold(iwx_csum_add(sum, tcp, tcp_len)));

	pg->snd_nxt[dir] += len + !!(flags & (TH_SYN | TH_FIN));

	h.ts = pg->ts;
	h.caplen = h.len = ETH_HLEN + IP_HLEN + tcp_len;
	pcap_dump((u_char *)pg->dumper, &h, f);
	pg->ts.tv_usec += 50;
	if (pg->ts.tv_usec >= 1000000) {
		pg->ts.tv_sec++;
		pg->ts.tv_usec -= 1000000;
	}
	return ++pg->frames;
}

int pcapgen_open(struct pcapgen **pgp, const char *path, uint16_t cport, uint16_t sport,
		 uint16_t mss)
{
	static const uint8_t macs[2][6] = {
		{ 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 },
		{ 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 },
	};
	struct pcapgen *pg = calloc(1, sizeof(*pg));
	int ret;

	if (!pg)
		return -ENOMEM;
	pg->pcap = pcap_open_dead(DLT_EN10MB, 65535);
	if (!pg->pcap) {
		free(pg);
		return -ENOMEM;
	}
	pg->dumper = pcap_dump_open(pg->pcap, path);
	if (!pg->dumper) {
		pcap_close(pg->pcap);
		free(pg);
		return -EIO;
	}
	pg->ts.tv_sec = 1700000000;
	pg->addr[PCAPGEN_C2S] = 0xc0000201;	/* 192.0.2.1 */
	pg->addr[PCAPGEN_S2C] = 0xc0000202;	/* 192.0.2.2 */
	pg->port[PCAPGEN_C2S] = cport;
	pg->port[PCAPGEN_S2C] = sport;
	memcpy(pg->mac, macs, sizeof(macs));
	pg->ip_id[0] = 0x1000;
	pg->ip_id[1] = 0x2000;
	pg->snd_nxt[PCAPGEN_C2S] = 0x1a2b3c4d;
	pg->snd_nxt[PCAPGEN_S2C] = 0x5e6f7081;

	ret = emit(pg, PCAPGEN_C2S, TH_SYN, mss, NULL, 0);
	pg->acked[PCAPGEN_S2C] = true;
	if (ret > 0)
		ret = emit(pg, PCAPGEN_S2C, TH_SYN, mss, NULL, 0);
	pg->acked[PCAPGEN_C2S] = true;
	if (ret > 0)
		ret = emit(pg, PCAPGEN_C2S, 0, 0, NULL, 0);
	if (ret < 0) {
		pcapgen_close(pg);
		return ret;
	}
	*pgp = pg;
	return 0;
}

int pcapgen_data(struct pcapgen *pg, enum pcapgen_dir dir, const void *data, size_t len)
{
	return emit(pg, dir, len ? TH_PSH : 0, 0, data, len);
}

int pcapgen_ack(struct pcapgen *pg, enum pcapgen_dir dir)
{
	return emit(pg, dir, 0, 0, NULL, 0);
}

int pcapgen_close_flow(struct pcapgen *pg, enum pcapgen_dir dir)
{
	int ret = emit(pg, dir, TH_FIN, 0, NULL, 0);

	if (ret > 0)
		ret = emit(pg, !dir, TH_FIN, 0, NULL, 0);
	if (ret > 0)
		ret = emit(pg, dir, 0, 0, NULL, 0);
	return ret < 0 ? ret : 0;
}

unsigned int pcapgen_frames(const struct pcapgen *pg)
{
	return pg->frames;
}

int pcapgen_close(struct pcapgen *pg)
{
	int ret = 0;

	if (!pg)
		return 0;
	if (pcap_dump_flush(pg->dumper) != 0)
		ret = -EIO;
	pcap_dump_close(pg->dumper);
	pcap_close(pg->pcap);
	free(pg);
	return ret;
}
