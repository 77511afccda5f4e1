// SPDX-License-Identifier: MIT
/* An interface's driver and receive steering, as the kernel reports them (iface_props.h). */
#include <dirent.h>
#include <ifaddrs.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "iface_props.h"

bool iface_is_veth(int ifindex)
{
	struct ethtool_drvinfo info = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr = { .ifr_data = (void *)&info };
	int fd;
	bool veth;

	if (!if_indextoname(ifindex, ifr.ifr_name) || (fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return false;
	veth = !ioctl(fd, SIOCETHTOOL, &ifr) && !strcmp(info.driver, "veth");
	close(fd);
	return veth;
}

static bool same_addr(const struct sockaddr *a, const struct sockaddr_storage *b)
{
	if (a->sa_family != b->ss_family)
		return false;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return a->sa_family == AF_INET6 &&
	       !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		       &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr));
}

int iface_of_addr(const struct sockaddr_storage *addr)
{
	struct ifaddrs *all, *i;
	int ifindex = 0;

	if (getifaddrs(&all))
		return 0;
	for (i = all; i && !ifindex; i = i->ifa_next)
		if (i->ifa_addr && same_addr(i->ifa_addr, addr))
			ifindex = (int)if_nametoindex(i->ifa_name);
	freeifaddrs(all);
	return ifindex;
}

/* The first line of /sys/class/net/NAME/REL into buf; false when it cannot be read. */
static bool sys_line(const char *name, const char *rel, char *buf, size_t len)
{
	char path[512];
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), "/sys/class/net/%s/%s", name, rel);
	if (!(f = fopen(path, "re")))
		return false;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	return ok;
}

/* A CPU mask as sysfs writes it ("00000000,00000003\n"): does it name any CPU? */
static bool mask_any(const char *m)
{
	return strspn(m, "0,\n") != strlen(m);
}

/* Some receive queue of name steered by RPS: 1; none: 0; not known: -1. */
static int rps_steered(const char *name)
{
	char path[128], buf[256], rel[320];
	struct dirent *e;
	int steered = -1;
	DIR *dir;

	snprintf(path, sizeof(path), "/sys/class/net/%s/queues", name);
	if (!(dir = opendir(path)))
		return -1;
	while ((e = readdir(dir)) && steered < 1) {
		if (strncmp(e->d_name, "rx-", 3))
			continue;
		snprintf(rel, sizeof(rel), "queues/%s/rps_cpus", e->d_name);
		if (sys_line(name, rel, buf, sizeof(buf)))
			steered = mask_any(buf);
	}
	closedir(dir);
	return steered;
}

bool iface_receives_on_sender(int ifindex, const char *name, bool xdp)
{
	char buf[16];

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || !iface_is_veth(ifindex))
		return false;
	if (xdp)	/* "0": NAPI polled in the softirq of the CPU that scheduled it */
		return sys_line(name, "threaded", buf, sizeof(buf)) && buf[0] == '0';
	return rps_steered(name) == 0;
}
