// SPDX-License-Identifier: MIT
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture.h"
#include "stall.h"

#define TSHARK "tshark --disable-heuristic rpcrdma_iwarp --disable-heuristic smb_direct_iwarp "

pid_t capture_start(const char *ns, const char *dev, const char *path, const char *filter)
{
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stderr))
			_exit(127);
		/* a 64 MiB buffer: a bulk transfer of MSS-sized packets must not be dropped */
		execlp("ip", "ip", "netns", "exec", ns, "dumpcap", "-q", "-B", "64", "-i", dev, "-w",
		       path, "-f", filter, NULL);
		_exit(127);
	}
	for (int i = 0; i < STALL_MS / 20 && access(path, F_OK); i++)
		usleep(20000);	/* dumpcap creates the file once it captures */
	usleep(200000);
	return pid;
}

void capture_stop(pid_t pid)
{
	if (pid <= 0)
		return;
	usleep(300000);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
}

int tshark_check(const char *path, struct tshark_verdict *v)
{
	char cmd[512], line[512];
	FILE *f;

	memset(v, 0, sizeof(*v));
	snprintf(cmd, sizeof(cmd), TSHARK "-r %s -o tcp.desegment_tcp_streams:TRUE -V 2>/dev/null "
		 "| grep -o 'Good CRC32\\|Bad CRC32'", path);
	f = popen(cmd, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		strstr(line, "Good") ? v->good_crcs++ : v->bad_crcs++;
	pclose(f);
	snprintf(cmd, sizeof(cmd), TSHARK "-r %s -q -z expert,warn 2>/dev/null", path);
	f = popen(cmd, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned n;

		/* tshark 4.0 predates RFC 6581: these two on the revision-2 Request are expected */
		if (strstr(line, "Res field is NOT set to zero") || strstr(line, "Rev field is NOT set to one"))
			continue;
		if (sscanf(line, " %u %*s", &n) == 1 && strstr(line, "IWARP"))
			v->warnings += n;
		if (strstr(line, "Malformed"))
			v->warnings++;
	}
	pclose(f);
	return 0;
}

int tshark_fields(const char *path, const char *filter, const char *fields, char *out, size_t cap)
{
	char cmd[768];
	size_t n;
	int lines = 0;
	FILE *f;

	/* SCTP's checksum is CRC32c since RFC 3309; tshark checks none unless told which */
	snprintf(cmd, sizeof(cmd), "tshark -r %s -o sctp.checksum:\"CRC 32c\" -Y '%s' -T fields %s "
		 "2>/dev/null", path, filter, fields);
	f = popen(cmd, "r");
	if (!f)
		return -errno;
	n = fread(out, 1, cap - 1, f);
	out[n] = '\0';
	pclose(f);
	for (size_t i = 0; i < n; i++)
		lines += out[i] == '\n';
	return lines;
}
