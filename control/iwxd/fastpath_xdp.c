// SPDX-License-Identifier: MIT
/* The fast path at XDP through libxdp (fastpath_xdp.h). */
#include <errno.h>
#include <net/if.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "fastpath_xdp.h"
#include "log.h"
#include "privs.h"

/* iwxd's XDP programs by name, how a dead iwxd's are known: the fast path's, SCTP's */
static const char *const programs[] = { "iwx_xdp", "iwx_sctp_xsk" };
#define BPFFS		"/sys/fs/bpf"
#define BPFFS_MAGIC	0xcafe4a11	/* linux/magic.h's BPF_FS_MAGIC */

/*
 * libxdp pins its dispatchers in bpffs. `ip netns exec` gives a process a /sys of its
 * own, without it: mount it there (in this mount namespace only).
 */
static int need_bpffs(void)
{
	struct statfs st;

	if (!statfs(BPFFS, &st) && (unsigned long)st.f_type == BPFFS_MAGIC)
		return 0;
	if (mount("bpf", BPFFS, "bpf", 0, NULL))
		return -errno;
	log_info("fast path: mounted bpffs at %s for libxdp", BPFFS);
	return 0;
}

/* A program made from an object of ours: libxdp leaves the object to us. */
static void close_program(struct xdp_program *p)
{
	struct bpf_object *obj = xdp_program__bpf_obj(p);

	xdp_program__close(p);
	bpf_object__close(obj);
}

static bool ours(const char *name)
{
	for (size_t i = 0; i < sizeof(programs) / sizeof(programs[0]); i++)
		if (!strcmp(name, programs[i]))
			return true;
	return false;
}

static int attach(const struct bpf_object *skel_obj, const void *elf, size_t len,
		  const char *prog_name, int ifindex, struct xdp_program **out)
{
	DECLARE_LIBXDP_OPTS(xdp_program_opts, xo, .prog_name = prog_name);
	/* the same object name: its global data maps are found by name (name.bss) */
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = bpf_object__name(skel_obj));
	struct bpf_program *prog;
	struct bpf_map *map;
	struct bpf_object *obj;
	struct xdp_program *p;
	int err = need_bpffs();

	if (err)
		return err;
	/* an object of its own (libxdp loads it), sharing every map with the running one */
	obj = bpf_object__open_mem(elf, len, &oo);
	if (!obj)
		return -errno;
	bpf_object__for_each_program(prog, obj)
		bpf_program__set_autoload(prog, !strcmp(bpf_program__name(prog), prog_name));
	bpf_object__for_each_map(map, obj) {
		const struct bpf_map *m = bpf_object__find_map_by_name(skel_obj, bpf_map__name(map));

		err = m ? bpf_map__reuse_fd(map, bpf_map__fd(m)) : -ENOENT;
		if (err) {
			bpf_object__close(obj);
			return err;
		}
	}
	xo.obj = obj;
	p = xdp_program__create(&xo);
	err = libxdp_get_error(p);
	if (err) {
		bpf_object__close(obj);
		return err;
	}
	err = xdp_program__attach(p, ifindex, XDP_MODE_NATIVE, 0);
	if (err) {
		close_program(p);
		return err;
	}
	*out = p;
	return 0;
}

/*
 * libxdp asks for the programs already at the hook by id (BPF_PROG_GET_FD_BY_ID), which
 * takes CAP_SYS_ADMIN: iwxd has it only for that while (privs.h).
 */
int fastpath_xdp_attach(const struct bpf_object *skel_obj, const void *elf, size_t len,
			const char *prog_name, int ifindex, struct xdp_program **out)
{
	int err = privs_admin(true);

	if (!err)
		err = attach(skel_obj, elf, len, prog_name, ifindex, out);
	privs_admin(false);
	return err;
}

void fastpath_xdp_detach(struct xdp_program *p, int ifindex)
{
	int err;

	privs_admin(true);
	err = xdp_program__detach(p, ifindex, XDP_MODE_NATIVE, 0);
	privs_admin(false);

	if (err)
		log_warn("fast path: XDP program on ifindex %d not detached: %s", ifindex, strerror(-err));
	close_program(p);
}

/* Detach from ifindex every program of ours that libxdp reports there. */
static void remove_from(int ifindex, const char *name)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);
	enum xdp_attach_mode mode;
	struct xdp_program *p;

	if (libxdp_get_error(mp))
		return;	/* nothing attached */
	mode = xdp_multiprog__attach_mode(mp);
	if (xdp_multiprog__is_legacy(mp)) {
		p = xdp_multiprog__main_prog(mp);
		if (p && ours(xdp_program__name(p)) && !xdp_multiprog__detach(mp))
			log_info("fast path: removed the XDP program a previous iwxd left on %s", name);
	} else {
		for (p = xdp_multiprog__next_prog(NULL, mp); p; p = xdp_multiprog__next_prog(p, mp))
			if (ours(xdp_program__name(p)) &&
			    !xdp_program__detach(p, ifindex, mode, 0))
				log_info("fast path: removed the XDP program a previous iwxd left on %s",
					 name);
	}
	xdp_multiprog__close(mp);
}

void fastpath_xdp_remove_stale(void)
{
	struct if_nameindex *ifs;

	if (need_bpffs())
		return;	/* libxdp cannot have attached anything here either */
	ifs = if_nameindex();
	for (struct if_nameindex *i = ifs; i && i->if_index; i++)
		remove_from(i->if_index, i->if_name);
	if_freenameindex(ifs);
}

