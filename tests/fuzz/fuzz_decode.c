// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for `iwx decode` (cli/decode.c, cli/tcp_streams.c) on a capture
 * from the wild: the fuzzer's bytes become a pcap file of TCP segments between two
 * endpoints (a capture libpcap reads, so that the reassembly and the MPA, DDP and RDMAP
 * parsers behind it see them), and cmd_decode reads it, as text, JSON (--json) or with hex
 * (-x) as the input's first byte says.
 *
 * Input: byte 0, the output (low 2 bits: text, --json, -x, -q); then segments, each
 *   flags (1 byte: bit 0 the direction, b to a; bit 1 SYN, bit 2 FIN, bit 3 RST, bit 4
 *   a raw frame: the bytes that follow are the whole Ethernet frame, none built),
 *   seq (2 bytes: added to the direction's next sequence number, as a signed offset),
 *   len (2 bytes, at most MAX_SEG), then len bytes of payload (or frame)
 * A bare SYN goes ahead of each direction's first segment, unless that is one.
 * FUZZ_DECODE_PCAP=FILE: each capture is written there too (to read a finding's with
 * tshark or iwx decode).
 * What must hold, besides ASan's and UBSan's silence: cmd_decode returns 0 or 1 (a
 * capture it decoded, or one with errors it reported), never a usage error.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "decode.h"
#include "exit.h"

#include "fuzz_check.h"

#define MAX_SEG		4096
#define MAX_FILE	(1 << 20)

static int cap_fd = -1;
static uint8_t file[MAX_FILE];
static size_t flen;

static void put(const void *p, size_t n)
{
	if (flen + n <= sizeof(file)) {
		memcpy(file + flen, p, n);
		flen += n;
	}
}

static uint16_t sum16(const uint8_t *p, size_t n, uint32_t s)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* One record: an Ethernet, IPv4 and TCP frame from side dir, or the raw bytes. */
static void record(const uint8_t *frame, size_t n, uint32_t ts)
{
	uint32_t rec[4] = { ts, 0, (uint32_t)n, (uint32_t)n };

	put(rec, sizeof(rec));
	put(frame, n);
}

static void segment(int dir, uint8_t flags, uint32_t seq, uint32_t ack, const uint8_t *pay,
		    size_t len, uint32_t ts)
{
	static uint8_t f[14 + 20 + 20 + MAX_SEG];
	uint8_t *ip = f + 14, *tcp = ip + 20;
	uint32_t a = htonl(0xc0000201 + dir), b = htonl(0xc0000202 - dir), v;
	uint16_t sp = htons(dir ? 4791 : 40000), dp = htons(dir ? 40000 : 4791), s;

	memset(f, 0, 54);
	f[5] = 1 + dir, f[11] = 2 - dir;
	f[12] = 0x08;	/* IPv4 */
	ip[0] = 0x45;
	s = htons((uint16_t)(40 + len));
	memcpy(ip + 2, &s, 2);
	ip[8] = 64, ip[9] = 6;
	memcpy(ip + 12, &a, 4);
	memcpy(ip + 16, &b, 4);
	s = htons((uint16_t)~sum16(ip, 20, 0));
	memcpy(ip + 10, &s, 2);
	memcpy(tcp, &sp, 2);
	memcpy(tcp + 2, &dp, 2);
	v = htonl(seq);
	memcpy(tcp + 4, &v, 4);
	v = htonl(ack);
	memcpy(tcp + 8, &v, 4);
	tcp[12] = 5 << 4;
	tcp[13] = 0x10 | (flags & 2 ? 0x02 : 0) | (flags & 4 ? 0x01 : 0) | (flags & 8 ? 0x04 : 0);
	tcp[14] = 0xff, tcp[15] = 0xff;
	if (len)
		memcpy(tcp + 20, pay, len);
	record(f, 54 + len, ts);
}

static void capture(const uint8_t *p, const uint8_t *end)
{
	static const uint32_t global[6] = { 0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1 };
	uint32_t next[2] = { 1000, 500000 }, ts = 1;
	bool syn[2] = { false, false };

	flen = 0;
	put(global, sizeof(global));
	while (end - p >= 5) {
		uint8_t flags = p[0];
		int dir = flags & 1;
		int16_t off = (int16_t)(p[1] | p[2] << 8);
		size_t len = (size_t)(p[3] | p[4] << 8) % (MAX_SEG + 1);

		p += 5;
		if (len > (size_t)(end - p))
			len = (size_t)(end - p);
		if (flags & 0x10) {
			record(p, len, ts++);
		} else {
			if (!syn[dir] && !(flags & 2)) {	/* its handshake's segment, bare */
				segment(dir, 2, next[dir], next[!dir], NULL, 0, ts++);
				next[dir]++;
			}
			syn[dir] = true;
			segment(dir, flags, next[dir] + (uint32_t)off, next[!dir], p, len, ts++);
			next[dir] += (uint32_t)off + (uint32_t)len + !!(flags & 2);
		}
		p += len;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const modes[] = { NULL, "--json", "-x", "-q" };
	char path[64];
	char *argv[4] = { "decode" };
	int argc = 1, rc;

	if (size < 1)
		return 0;
	if (cap_fd < 0) {
		cap_fd = memfd_create("fuzz-capture", MFD_CLOEXEC);
		CHECK(cap_fd >= 0);
		/* what it prints is not the point: only that it decodes */
		CHECK(freopen("/dev/null", "w", stdout));
	}
	capture(data + 1, data + size);
	CHECK(!ftruncate(cap_fd, 0) && pwrite(cap_fd, file, flen, 0) == (ssize_t)flen);
	if (getenv("FUZZ_DECODE_PCAP")) {
		FILE *f = fopen(getenv("FUZZ_DECODE_PCAP"), "w");

		CHECK(f && fwrite(file, 1, flen, f) == flen && !fclose(f));
	}
	if (modes[data[0] & 3])
		argv[argc++] = (char *)modes[data[0] & 3];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", cap_fd);
	argv[argc++] = path;
	rc = cmd_decode(argc, argv);
	CHECK(rc == IWX_EXIT_OK || rc == IWX_EXIT_FAIL);
	return 0;
}
