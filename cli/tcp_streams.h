/* SPDX-License-Identifier: MIT */
/*
 * TCP flows out of a capture file: each connection's two byte streams, in sequence
 * order. Each byte is delivered once, from the first segment captured that carried
 * it (later copies count as retransmitted); bytes that never appear in the capture
 * are reported as a gap, and nothing of that direction is delivered past it. Reads
 * pcap and pcapng through libpcap; Ethernet (with VLAN tags), Linux cooked (SLL,
 * SLL2), raw IP and BSD loopback; IPv4 and IPv6.
 */
#ifndef IWX_CLI_TCP_STREAMS_H
#define IWX_CLI_TCP_STREAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tcp_endpoint {
	int		family;		/* AF_INET or AF_INET6 */
	uint8_t		addr[16];	/* IPv4 in the first 4 bytes */
	uint16_t	port;
};

/* What happened to one direction of a connection. */
struct tcp_dir_info {
	uint64_t	delivered;	/* bytes handed to data(), in order */
	uint64_t	retrans;	/* bytes seen again and dropped */
	bool		syn, fin, rst;
	bool		gap;		/* bytes missing from the capture */
};

struct tcp_conn {
	unsigned int		id;	/* 1, 2, ... in order of the first packet seen */
	/* ep[0] is the active side when the SYN or SYN-ACK was captured, else the first sender */
	struct tcp_endpoint	ep[2];
	struct tcp_dir_info	dir[2];	/* dir[d]: bytes sent by ep[d] */
	uint64_t		first_frame;
	void			*user;	/* the caller's */
};

/*
 * Callbacks, all optional. frame is the 1-based number of the packet being read,
 * as Wireshark counts them. A negative return stops the reading and is returned
 * by tcp_streams_read.
 */
struct tcp_streams_ops {
	int (*open)(void *ctx, struct tcp_conn *c, uint64_t frame);
	/*
	 * The next len bytes sent by c->ep[dir], all from one captured segment;
	 * seg_start: buf[0] is the first byte of that segment's payload.
	 */
	int (*data)(void *ctx, struct tcp_conn *c, int dir, const uint8_t *buf, size_t len,
		    bool seg_start, uint64_t frame);
	/* lost bytes (0: unknown) are missing at stream offset off; no more data for dir */
	int (*gap)(void *ctx, struct tcp_conn *c, int dir, uint64_t off, uint64_t lost,
		   uint64_t frame);
	/* no more callbacks for c: both FINs delivered, a reset, reuse of its ports, or end of file */
	int (*close)(void *ctx, struct tcp_conn *c, uint64_t frame);
};

/* What the file held besides TCP connections. */
struct tcp_streams_stats {
	uint64_t	frames;
	uint64_t	tcp;		/* TCP segments */
	uint64_t	other;		/* frames that are not TCP over IP */
	uint64_t	fragments;	/* IP fragments, not reassembled */
	uint64_t	truncated;	/* frames cut short by the capture's snapshot length */
	unsigned int	conns;
};

/*
 * Read the capture at path and run ops over its connections. Returns 0, a
 * callback's negative errno, or -errno with a reason in err (err_len bytes):
 * unreadable file, not a capture, unsupported link type, damaged file. Connections
 * are closed (and their gaps reported) before it returns, whatever the outcome.
 */
int tcp_streams_read(const char *path, const struct tcp_streams_ops *ops, void *ctx,
		     struct tcp_streams_stats *stats, char *err, size_t err_len);

/* "192.0.2.1:7174" or "[2001:db8::1]:7174" */
#define TCP_ENDPOINT_STRLEN 56
const char *tcp_endpoint_str(const struct tcp_endpoint *ep, char buf[TCP_ENDPOINT_STRLEN]);

#endif /* IWX_CLI_TCP_STREAMS_H */
