/* SPDX-License-Identifier: MIT */
/*
 * A small writer of one synthetic TCP connection into a pcap file (Ethernet, IPv4,
 * TCP with correct checksums): handshake, data segments in either direction with
 * sequence and acknowledgement numbers that follow, pure ACKs and a FIN exchange.
 * Nothing is sent anywhere; the frames only go to the file.
 */
#ifndef IWX_PCAPGEN_H
#define IWX_PCAPGEN_H

#include <stddef.h>
#include <stdint.h>

/* Directions of the connection. */
enum pcapgen_dir {
	PCAPGEN_C2S = 0,	/* 192.0.2.1 (client, active side) to 192.0.2.2 */
	PCAPGEN_S2C = 1,
};

#define PCAPGEN_MAX_PAYLOAD	1460	/* one Ethernet MTU worth of TCP payload */

struct pcapgen;

/*
 * Create path and write the handshake of a connection from 192.0.2.1:cport to
 * 192.0.2.2:sport, announcing MSS mss on both SYNs. Returns 0 or -errno.
 */
int pcapgen_open(struct pcapgen **pg, const char *path, uint16_t cport, uint16_t sport,
		 uint16_t mss);

/*
 * One TCP segment carrying len bytes from dir, acknowledging all the peer sent.
 * Returns the frame number it got in the file (1-based), or -errno.
 */
int pcapgen_data(struct pcapgen *pg, enum pcapgen_dir dir, const void *data, size_t len);

/* A pure ACK from dir. Returns the frame number or -errno. */
int pcapgen_ack(struct pcapgen *pg, enum pcapgen_dir dir);

/* FIN from dir, FIN+ACK back, last ACK. Returns 0 or -errno. */
int pcapgen_close_flow(struct pcapgen *pg, enum pcapgen_dir dir);

/* Frames written so far. */
unsigned int pcapgen_frames(const struct pcapgen *pg);

/* Flush and close the file, free pg. Returns 0 or -errno (write error). */
int pcapgen_close(struct pcapgen *pg);

#endif /* IWX_PCAPGEN_H */
