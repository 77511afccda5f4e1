# iwx: iWARP (RDMAP/DDP/MPA over TCP) for Linux. `make help` prints this.
#   make               build the library, iwxd, iwx, iwx_rping, the drop-ins, the BPF objects
#   make check         the tests that need neither root nor namespaces, under a minute;
#                      T='suite/test' runs those that match (Criterion's --filter)
#   make test          every test, as root (README, "Tests"): check-install, test-deb, fuzz
#                      (TEST_FUZZ_SECONDS each, BUILD_JOBS at once), test-dropin, interop,
#                      test-asan, test-fastpath
#   make check-install what make install and a PREFIX install put down, checked
#   make test-asan     the unit and integration suites under ASan and UBSan, iwxd too
#   make test-fastpath the daemon suites again with the fast path at TC, then at XDP
#   make test-dropin   unmodified rdma-core programs through iwx exec
#   make interop       rping and perftest against Linux's siw in a VM (../shared/interop)
#   make fuzz          the libFuzzer targets for FUZZ_SECONDS each (default 30)
#   make fuzz-long     soak them (FUZZ_SECONDS each, default 3600), the corpus kept in the tree
#   make bench         the protocol core's benchmark (scripts/bench*.sh: the rest, BENCHMARKS.md)
#   make install       install under DESTDIR$(PREFIX) (PREFIX=/usr/local)
#   make deb           the Debian packages in build/deb/, lintian-clean (make test-deb: installed
#                      into a fresh root and purged)
#   make clean         remove build/
# One test of any suite, as root: build/tests/unit --filter 'suite/test' (--list lists them).
# V=1 shows the commands; WERROR=1 makes warnings errors (CI); HARDENING= HARDENING_LD=
# build without the hardening flags; BUILD_JOBS=N (nproc) builds make test's programs.

PREFIX		?= /usr/local
BINDIR		?= $(PREFIX)/bin
# iwxd, a system daemon (iwxd(8)): sbin, as rdma-core's iwpmd
SBINDIR		?= $(PREFIX)/sbin
LIBDIR		?= $(PREFIX)/lib
INCLUDEDIR	?= $(PREFIX)/include
PKGCONFIGDIR	?= $(LIBDIR)/pkgconfig
DATADIR		?= $(PREFIX)/share
MANDIR		?= $(DATADIR)/man
DOCDIR		?= $(DATADIR)/doc/iwx
BASHCOMPDIR	?= $(DATADIR)/bash-completion/completions
# systemd looks in /usr/local/lib/systemd/system too, so PREFIX=/usr/local works as is
SYSTEMDUNITDIR	?= $(PREFIX)/lib/systemd/system
DESTDIR		?=

CC		?= cc
CLANG		?= clang
AR		?= ar
CFLAGS		?= -O2 -g
# include/iwx: the installed headers alone; the internal ones beside their code, named by
# their folder ("proto/wire.h", "ipc/ipc.h", "util/list.h"); bpf/fastpath_maps.h: the
# fast path's maps, shared by its programs and user space. $(BUILD)/gen: what the Makefile
# writes (iwx_config.h).
BUILD		:= build
INCLUDES	:= -Iinclude -Ilib -Ibpf -I$(BUILD)/gen
# rdma-core's warning set, and ours (-Wextra's sign-compare and unused-parameter stay on);
# WERROR=1 makes them errors, as CI builds: a distribution's newer compiler only warns.
WERROR_FLAG	:= $(if $(filter 1,$(WERROR)),-Werror)
WARNINGS	:= -Wall -Wextra -Wmissing-prototypes -Wmissing-declarations -Wwrite-strings -Wformat=2 \
		   -Wformat-nonliteral -Wdate-time -Wnested-externs -Wshadow -Wstrict-prototypes \
		   -Wold-style-definition -Wredundant-decls $(WERROR_FLAG)
# A root daemon that parses hostile bytes is built hardened whoever builds it, as Debian's
# hardening=+all would (HARDENING= HARDENING_LD= for none): fortified libc calls, stack
# canaries and clash probes, position independence, a read-only GOT bound at start.
HARDENING	?= -D_FORTIFY_SOURCE=2 -fstack-protector-strong -fstack-clash-protection -fPIE \
		   $(if $(filter x86_64-%,$(shell $(CC) -dumpmachine)),-fcf-protection)
HARDENING_LD	?= -pie -Wl,-z,relro -Wl,-z,now
IWX_CFLAGS	:= -std=gnu11 $(WARNINGS) -D_GNU_SOURCE $(INCLUDES) $(CPPFLAGS) $(HARDENING) $(CFLAGS)
IWX_LDFLAGS	:= $(HARDENING_LD) $(LDFLAGS)
LDLIBS_CORE	:= -lisal
LDLIBS_ENGINE	:= -lusrsctp -lxdp	# the engine's SCTP (sctp.c) and its AF_XDP carrier (sctp_xsk.c)

# The release: debian/changelog's newest entry, the one place it is written (README: "Cutting
# a release"); every program says it (iwx --version, iwxd --version, ibv_devinfo's fw_ver)
# through $(CONFIG_H).
VERSION		:= $(shell sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog)
ifeq ($(VERSION),)
$(error debian/changelog's first line names no version)
endif
SOVERSION	:= 0
FUZZ_SECONDS	?= 30
TEST_FUZZ_SECONDS ?= 5

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-7s %s\n' '$(1)' '$(2)';
endif

# lib/proto: the protocol core (wire formats, CRC, the parser), for iwxd, the CLI and the
# tests, in an internal archive. lib/ipc: the messages between libiwx and iwxd.
# lib/util: what any part uses, headers but for the id table (ids.c), in an archive of its own.
# lib/client: libiwx, which applications link: the client, the IPC, the utilities and, of
# the core, only the names of a Terminate's cause that its events carry (term.c); no ISA-L.
PROTO_SRCS	:= $(wildcard lib/proto/*.c)
IPC_SRCS	:= $(wildcard lib/ipc/*.c)
UTIL_SRCS	:= $(wildcard lib/util/*.c)
CLIENT_SRCS	:= $(wildcard lib/client/*.c)
LIB_SRCS	:= $(PROTO_SRCS) $(IPC_SRCS) $(UTIL_SRCS) $(CLIENT_SRCS)
PROTO_A		:= $(BUILD)/libiwx-proto.a
IPC_A		:= $(BUILD)/libiwx-ipc.a
UTIL_A		:= $(BUILD)/libiwx-util.a
LIBIWX_OBJS	:= $(patsubst %.c,$(BUILD)/%.o,$(CLIENT_SRCS) $(IPC_SRCS) $(UTIL_SRCS) lib/proto/term.c)
LIB_A		:= $(BUILD)/libiwx.a
LIB_SO		:= $(BUILD)/libiwx.so.$(SOVERSION)
HEADERS		:= $(wildcard include/iwx/*.h lib/*/*.h bpf/*.h)
# what an application includes: the API and the headers it includes (the rest is internal)
PUBLIC_HEADERS	:= $(addprefix include/iwx/,iwx.h verbs.h access.h)

# the drop-ins for rdma-core programs (see their rules below)
DROPIN		:= $(BUILD)/dropin
VERBS_OBJS	:= $(patsubst %.c,$(BUILD)/%.o,$(wildcard lib/ibverbs/*.c))
RDMACM_OBJS	:= $(patsubst %.c,$(BUILD)/%.o,$(wildcard lib/rdmacm/*.c))
DROPIN_LIBS	:= $(addprefix $(DROPIN)/,libibverbs.so.1 librdmacm.so.1 libmlx5.so.1 libefa.so.1)

CLI_SRCS	:= $(wildcard cli/*.c)
CLI_BIN		:= $(BUILD)/iwx
# bash's completion of iwx, from what iwx --help says (dist/bash-completion/gen.sh)
COMPLETION	:= $(BUILD)/iwx.bash
# the man pages (doc/man: mdoc, read by groff and mandoc alike); `man iwx_post_send` and
# every other call of iwx.h finds libiwx(3)
MAN_PAGES	:= $(wildcard doc/man/*.[0-9])
LIBIWX_CALLS	= $(shell doc/man/calls.sh include/iwx/iwx.h)
RPING_BIN	:= $(BUILD)/iwx_rping

# the engine (connections, queue pairs, memory) and the daemon around it
ENGINE_SRCS	:= $(wildcard control/engine/*.c)
ENGINE_HDRS	:= $(wildcard control/engine/*.h)
DAEMON_SRCS	:= $(wildcard control/iwxd/*.c)
DAEMON_HDRS	:= $(wildcard control/iwxd/*.h)
IWXD_BIN	:= $(BUILD)/iwxd

# The tests exercise the engine, iwxd's loop and fair shares, and the CLI's TCP reassembly directly:
# tests/unit needs neither root nor namespaces (make check), tests/integration both.
TEST_BASE	:= $(wildcard tests/support/*.c) cli/tcp_streams.c $(ENGINE_SRCS) control/iwxd/loop.c \
		   control/iwxd/shares.c control/iwxd/log.c
UNIT_SRCS	:= $(wildcard tests/unit/*.c)
TEST_SRCS	:= $(UNIT_SRCS) $(wildcard tests/integration/*.c) $(TEST_BASE)
TEST_BIN	:= $(BUILD)/tests/unit
CHECK_BIN	:= $(BUILD)/tests/check
VICTIM_BIN	:= $(BUILD)/tests/setuid_victim
FUZZ_SRCS	:= $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS	:= $(FUZZ_SRCS:tests/fuzz/%.c=$(BUILD)/fuzz/%)
# the targets' instrumentation (scripts/fuzz-coverage.sh builds them again with source coverage)
FUZZ_SAN	:= -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_FLAGS	:= -std=gnu11 -g -O1 -D_GNU_SOURCE $(INCLUDES) $(FUZZ_SAN)
BENCH_BIN	:= $(BUILD)/bench/bench_proto
BPFTOOL		?= bpftool
BPF_TEST_OBJ	:= $(BUILD)/bpf/check_prog.bpf.o
BPF_TEST_SKEL	:= $(BUILD)/bpf/check_prog.skel.h
# the fault injector of the fault tests (tests/support/faults.c)
BPF_FAULTS_OBJ	:= $(BUILD)/bpf/faults.bpf.o
BPF_FAULTS_SKEL	:= $(BUILD)/bpf/faults.skel.h
# the fast path's programs (bpf/), built into iwxd through their skeleton
FASTPATH_OBJ	:= $(BUILD)/bpf/fastpath.bpf.o
FASTPATH_SKEL	:= $(BUILD)/bpf/fastpath.skel.h
# ... and the headers only its programs include, a job each (fastpath.bpf.c says which)
FASTPATH_HDRS	:= $(wildcard bpf/fastpath/*.h)
# iwxd's SCTP datagrams to its AF_XDP sockets (control/engine/sctp_xsk.h)
SCTP_XSK_OBJ	:= $(BUILD)/bpf/sctp_xsk.bpf.o
SCTP_XSK_SKEL	:= $(BUILD)/bpf/sctp_xsk.skel.h
# which client memories the kernel still has (control/iwxd/arenas_live.h)
ARENAS_LIVE_OBJ	:= $(BUILD)/bpf/arenas_live.bpf.o
ARENAS_LIVE_SKEL := $(BUILD)/bpf/arenas_live.skel.h
# -mcpu=v3: clang 14 emits the atomics and 32-bit bounds the verifier needs
BPF_CFLAGS	:= -target bpf -mcpu=v3 -O2 -g -Wall -Wextra $(WERROR_FLAG) $(INCLUDES) \
		   -I/usr/include/$(shell uname -m)-linux-gnu

# Each program's objects go under $(OBJ)/PROGRAM/, each with the headers it includes
# (-MMD): an edit rebuilds the objects that include what changed, and relinks.
OBJ		:= $(BUILD)/obj
DEPFLAGS	:= -MMD -MP
DAEMON_INC	:= -Icontrol/engine -Icontrol/iwxd -I$(BUILD)/bpf
TEST_INC	:= -Itests/support -Itests/bpf -Icli -Icontrol/engine -Icontrol/iwxd -Ilib/client \
		   -I$(BUILD)/bpf
IWXD_OBJS	:= $(patsubst %.c,$(OBJ)/iwxd/%.o,$(DAEMON_SRCS) $(ENGINE_SRCS))
CLI_OBJS	:= $(patsubst %.c,$(OBJ)/cli/%.o,$(CLI_SRCS))
TEST_OBJS	:= $(patsubst %.c,$(OBJ)/tests/%.o,$(TEST_SRCS))
CHECK_OBJS	:= $(patsubst %.c,$(OBJ)/tests/%.o,$(UNIT_SRCS) $(TEST_BASE))

.PHONY: FORCE all help lib check test test-asan test-fastpath test-dropin check-install interop fuzz fuzz-long bench install deb test-deb clean
all: lib $(CLI_BIN) $(RPING_BIN) $(IWXD_BIN) $(DROPIN_LIBS) $(COMPLETION)

lib: $(LIB_A) $(LIB_SO) $(PROTO_A) $(IPC_A) $(UTIL_A)

# iwx_config.h: what the programs are to know of this build, the release and where `make
# install` puts the drop-ins, written again when either changes (a PREFIX given to `make
# install` alone rebuilds what names it, and the installed iwx finds what it came with)
CONFIG_H	:= $(BUILD)/gen/iwx_config.h
$(CONFIG_H): FORCE
	@mkdir -p $(@D)
	$(Q)printf '%s\n' '/* made by the Makefile: the release (debian/changelog), LIBDIR/iwx */' \
		'#define IWX_VERSION "$(VERSION)"' '#define IWX_DROPIN_DIR "$(LIBDIR)/iwx"' > $@.tmp
	$(Q)if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi

# the flags every object is built with: objects depend on it, so that another CFLAGS,
# WERROR=1 or HARDENING= rebuilds them rather than mixing builds
BUILD_FLAGS	:= $(BUILD)/gen/build-flags
$(BUILD_FLAGS): FORCE
	@mkdir -p $(@D)
	$(Q)printf '%s\n' 'CC $(CC)' 'CFLAGS $(IWX_CFLAGS)' 'LDFLAGS $(IWX_LDFLAGS)' 'ASAN $(ASAN_FLAGS)' > $@.tmp
	$(Q)if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi

FORCE:

# libiwx.so exports the API; the IPC and the utilities inside it are its own business
$(BUILD)/lib/%.o: lib/%.c $(BUILD_FLAGS) | $(CONFIG_H)
	@mkdir -p $(@D)
	$(call msg,CC,$<)
	$(Q)$(CC) $(IWX_CFLAGS) $(DEPFLAGS) -fPIC -fvisibility=$(if $(filter lib/ipc/% lib/util/%,$<),hidden,default) -c $< -o $@

$(OBJ)/iwxd/%.o: %.c $(BUILD_FLAGS) | $(FASTPATH_SKEL) $(SCTP_XSK_SKEL) $(ARENAS_LIVE_SKEL) $(CONFIG_H)
	@mkdir -p $(@D)
	$(call msg,CC,$<)
	$(Q)$(CC) $(IWX_CFLAGS) $(DEPFLAGS) $(DAEMON_INC) -c $< -o $@

$(OBJ)/cli/%.o: %.c $(BUILD_FLAGS) | $(CONFIG_H)
	@mkdir -p $(@D)
	$(call msg,CC,$<)
	$(Q)$(CC) $(IWX_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(OBJ)/tests/%.o: %.c $(BUILD_FLAGS) | $(BPF_TEST_SKEL) $(BPF_FAULTS_SKEL) $(FASTPATH_SKEL) $(SCTP_XSK_SKEL) $(CONFIG_H)
	@mkdir -p $(@D)
	$(call msg,CC,$<)
	$(Q)$(CC) $(IWX_CFLAGS) $(DEPFLAGS) $(TEST_INC) -c $< -o $@

$(LIB_A): $(LIBIWX_OBJS)
$(PROTO_A): $(PROTO_SRCS:%.c=$(BUILD)/%.o)
$(IPC_A): $(IPC_SRCS:%.c=$(BUILD)/%.o)
$(UTIL_A): $(UTIL_SRCS:%.c=$(BUILD)/%.o)
# The Makefile too: a source moved to another archive must leave the one it was in.
$(LIB_A) $(PROTO_A) $(IPC_A) $(UTIL_A): Makefile
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $(filter %.o,$^)

$(LIB_SO): $(LIBIWX_OBJS) lib/client/libiwx.map
	$(call msg,LD,$@)
	$(Q)$(CC) $(IWX_LDFLAGS) -shared -Wl,-soname,libiwx.so.$(SOVERSION) -Wl,--no-undefined \
		-Wl,--version-script=lib/client/libiwx.map -o $@ $(LIBIWX_OBJS)
	$(Q)ln -sf libiwx.so.$(SOVERSION) $(BUILD)/libiwx.so

$(CLI_BIN): $(CLI_OBJS) $(PROTO_A) $(IPC_A) $(UTIL_A)
	$(call msg,LD,$@)
	$(Q)$(CC) $(IWX_LDFLAGS) -o $@ $(CLI_OBJS) $(PROTO_A) $(IPC_A) $(UTIL_A) -lpcap $(LDLIBS_CORE)

$(COMPLETION): $(CLI_BIN) dist/bash-completion/gen.sh
	$(call msg,GEN,$@)
	$(Q)dist/bash-completion/gen.sh $(CLI_BIN) > $@.tmp && mv $@.tmp $@

$(IWXD_BIN): $(IWXD_OBJS) $(PROTO_A) $(IPC_A) $(UTIL_A)
	$(call msg,LD,$@)
	$(Q)$(CC) $(IWX_LDFLAGS) -o $@ $(IWXD_OBJS) $(PROTO_A) $(IPC_A) $(UTIL_A) \
		-pthread -lxdp -lbpf -lelf -lz -lcap $(LDLIBS_CORE) $(LDLIBS_ENGINE)

# Tests only: iwxd whose fast path leaves out the checks TCP makes after iwx_accepted's
# tracepoint (the ACK, PAWS), so that forged copies TCP then refuses are placed
# (test_fastpath_forged.c: TCP's verdict must still decide). Its skeleton keeps the name.
UNCHECKED_DIR	:= $(BUILD)/bpf/unchecked
IWXD_UNCHECKED	:= $(BUILD)/tests/iwxd_unchecked
IWXD_UNCHECKED_OBJS := $(filter-out $(OBJ)/iwxd/control/iwxd/fastpath.o,$(IWXD_OBJS)) \
		       $(OBJ)/iwxd-unchecked/fastpath.o

$(UNCHECKED_DIR)/fastpath.skel.h: bpf/fastpath.bpf.c $(HEADERS) $(wildcard bpf/*.h) $(FASTPATH_HDRS)
	@mkdir -p $(@D)
	$(call msg,CLANG,$(UNCHECKED_DIR)/fastpath.bpf.o)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DIWX_FP_TEST_NO_TCP_CHECKS -c $< -o $(UNCHECKED_DIR)/fastpath.bpf.o
	$(Q)$(BPFTOOL) gen skeleton $(UNCHECKED_DIR)/fastpath.bpf.o name fastpath_bpf > $@.tmp && mv $@.tmp $@

$(OBJ)/iwxd-unchecked/fastpath.o: control/iwxd/fastpath.c $(UNCHECKED_DIR)/fastpath.skel.h $(BUILD_FLAGS) | $(SCTP_XSK_SKEL) $(ARENAS_LIVE_SKEL) $(CONFIG_H)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(IWX_CFLAGS) $(DEPFLAGS) -I$(UNCHECKED_DIR) $(DAEMON_INC) -c $< -o $@

$(IWXD_UNCHECKED): $(IWXD_UNCHECKED_OBJS) $(PROTO_A) $(IPC_A) $(UTIL_A)
	@mkdir -p $(@D)
	$(call msg,LD,$@)
	$(Q)$(CC) $(IWX_LDFLAGS) -o $@ $(IWXD_UNCHECKED_OBJS) $(PROTO_A) $(IPC_A) $(UTIL_A) \
		-pthread -lxdp -lbpf -lelf -lz -lcap $(LDLIBS_CORE) $(LDLIBS_ENGINE)

# The drop-ins (lib/ibverbs, lib/rdmacm): libibverbs.so.1 and librdmacm.so.1 on libiwx,
# compiled against rdma-core's own headers and exporting its symbol versions, so that
# programs built against rdma-core run over iwxd (iwx exec puts them in front of the
# system's); librdmacm reaches libiwx through libibverbs. And the stand-ins for the
# provider libraries perftest links (lib/standin).

$(DROPIN)/libibverbs.so.1: $(VERBS_OBJS) $(LIBIWX_OBJS) lib/ibverbs/libibverbs.map
	@mkdir -p $(@D)
	$(call msg,LD,$@)
	$(Q)$(CC) $(IWX_LDFLAGS) -shared -Wl,-soname,$(@F) -Wl,--version-script=lib/ibverbs/libibverbs.map \
		-Wl,--no-undefined -o $@ $(VERBS_OBJS) $(LIBIWX_OBJS) -pthread

$(DROPIN)/librdmacm.so.1: $(RDMACM_OBJS) $(DROPIN)/libibverbs.so.1 lib/rdmacm/librdmacm.map
	$(call msg,LD,$@)
	$(Q)$(CC) $(IWX_LDFLAGS) -shared -Wl,-soname,$(@F) -Wl,--version-script=lib/rdmacm/librdmacm.map \
		-Wl,--no-undefined -o $@ $(RDMACM_OBJS) $(DROPIN)/libibverbs.so.1 -pthread

$(DROPIN)/lib%.so.1: lib/standin/%.c lib/standin/lib%.map $(BUILD_FLAGS)
	@mkdir -p $(@D)
	$(call msg,LD,$@)
	$(Q)$(CC) $(IWX_CFLAGS) $(IWX_LDFLAGS) -fPIC -shared -Wl,-soname,$(@F) -Wl,--version-script=lib/standin/lib$*.map \
		-o $@ $<

# ---------------------------------------------------------------- tests

TEST_LIBS	:= $(LIB_A) $(PROTO_A) $(UTIL_A) -lcriterion -lpcap -lbpf -lelf -lz $(LDLIBS_CORE) $(LDLIBS_ENGINE)

$(TEST_BIN): $(TEST_OBJS) $(LIB_A) $(PROTO_A) $(UTIL_A) $(VICTIM_BIN) $(IWXD_UNCHECKED)
	@mkdir -p $(@D)
	$(call msg,LD,$@)
	$(Q)$(CC) -o $@ $(TEST_OBJS) $(TEST_LIBS)

$(CHECK_BIN): $(CHECK_OBJS) $(LIB_A) $(PROTO_A) $(UTIL_A)
	@mkdir -p $(@D)
	$(call msg,LD,$@)
	$(Q)$(CC) -o $@ $(CHECK_OBJS) $(TEST_LIBS)

# What needs neither root nor namespaces: the protocol core, the engine, the loop.
check: $(CHECK_BIN)
	$(call msg,TEST,$(CHECK_BIN)$(if $(T), --filter '$(T)'))
	$(Q)$(CHECK_BIN) --jobs 2 $(if $(T),--filter '$(T)')

help:
	@sed -n '1,/^$$/s/^# \{0,1\}//p' Makefile

# the setuid-root victim of tests/integration/test_daemon_shm.c's attack
$(VICTIM_BIN): tests/attack/setuid_victim.c $(BUILD_FLAGS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(IWX_CFLAGS) -o $@ $<

# BPF objects and their skeletons: the shared headers must build for the BPF target.
$(BUILD)/bpf/%.bpf.o: tests/bpf/%.bpf.c $(HEADERS) $(wildcard tests/bpf/*.h)
	@mkdir -p $(@D)
	$(call msg,CLANG,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -Itests/bpf -c $< -o $@

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(HEADERS) $(wildcard bpf/*.h)
	@mkdir -p $(@D)
	$(call msg,CLANG,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(FASTPATH_OBJ): $(FASTPATH_HDRS)

# kept, objects and the test programs' skeletons alike: else make deletes them after each
# build, and their tests rebuild every time
.SECONDARY: $(BPF_TEST_OBJ) $(BPF_FAULTS_OBJ) $(FASTPATH_OBJ) $(SCTP_XSK_OBJ) $(ARENAS_LIVE_OBJ) \
	    $(BUILD)/bpf/softirq_time.bpf.o $(BPF_TEST_SKEL) $(BPF_FAULTS_SKEL)
$(BUILD)/bpf/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

# Install into a scratch root and build a program against it with pkg-config; the
# headers installed must be iwx.h and what it includes, no internal one. Then what else
# it installed: iwxd's unit, the man pages, bash's completion of iwx (tests/install).
comma		:= ,
space		:= $(subst ,, )
INSTALL_CHECK	:= $(BUILD)/install-check
check-install: all
	$(Q)rm -rf $(INSTALL_CHECK)
	$(Q)$(MAKE) --no-print-directory install DESTDIR=$(abspath $(INSTALL_CHECK)) PREFIX=/usr >/dev/null
	$(call msg,CHECK,headers installed: iwx.h and what it includes)
	$(Q)need=$$($(CC) -MM -Iinclude include/iwx/iwx.h | tr ' \\' '\n\n' | grep '^include/iwx/' | \
		xargs -n1 basename | sort); have=$$(ls $(INSTALL_CHECK)/usr/include/iwx | sort); \
	if [ "$$need" != "$$have" ]; then \
		echo "installed:" $$have; echo "iwx.h needs:" $$need; exit 1; fi
	$(call msg,CHECK,install with pkg-config)
	$(Q)PKG_CONFIG_SYSROOT_DIR=$(abspath $(INSTALL_CHECK)) \
		PKG_CONFIG_LIBDIR=$(abspath $(INSTALL_CHECK))/usr/lib/pkgconfig \
		sh -c '$(CC) -std=gnu11 -Wall -Werror tests/install/use_libiwx.c -o $(INSTALL_CHECK)/use_libiwx \
			$$(pkg-config --cflags --libs libiwx)'
	$(Q)LD_LIBRARY_PATH=$(INSTALL_CHECK)/usr/lib $(INSTALL_CHECK)/use_libiwx
	$(call msg,CHECK,make install PREFIX=DIR: iwx exec finds the drop-ins there and runs ibv_devinfo)
	$(Q)$(MAKE) --no-print-directory install PREFIX=$(abspath $(INSTALL_CHECK))/prefix >/dev/null
	$(Q)tests/install/prefix.sh $(abspath $(INSTALL_CHECK))/prefix
	$(call msg,CHECK,hardened: PIE$(comma) stack canaries$(comma) fortified$(comma) RELRO$(comma) BIND_NOW)
	$(Q)tests/install/hardened.sh $(INSTALL_CHECK)
	$(call msg,CHECK,iwxd.service: systemd-analyze verify)
	$(Q)tests/install/unit.sh $(INSTALL_CHECK)
	$(call msg,CHECK,man pages: groff -ww$(comma) mandoc -T lint$(comma) every option and call)
	$(Q)tests/install/man.sh $(INSTALL_CHECK)/usr/share/man $(CLI_BIN) $(IWXD_BIN) include/iwx/iwx.h
	$(call msg,CHECK,bash completion of iwx)
	$(Q)tests/install/completion.sh $(INSTALL_CHECK)/usr/share/bash-completion/completions/iwx
	$(call msg,CHECK,libiwx.so: the client alone$(comma) exporting what iwx.h declares$(comma) versioned)
	$(Q)tests/install/exports.sh $(INSTALL_CHECK)/usr/lib/libiwx.so.$(SOVERSION) $(INSTALL_CHECK)/usr/include

# The same suite under AddressSanitizer and UBSan; any report fails it.
ASAN_BIN	:= $(BUILD)/asan/unit
ASAN_FLAGS	:= -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
		   -fno-sanitize-recover=undefined

# Each object once per program, as the plain build's, under $(OBJ)/asan-*/ (-MMD too);
# -U_FORTIFY_SOURCE: ASan checks what fortified calls would.
ASAN_CFLAGS	:= $(IWX_CFLAGS) $(ASAN_FLAGS) -U_FORTIFY_SOURCE $(DEPFLAGS)
ASAN_TEST_OBJS	:= $(patsubst %.c,$(OBJ)/asan-tests/%.o,$(TEST_SRCS) $(LIB_SRCS))
ASAN_IWXD_OBJS	:= $(patsubst %.c,$(OBJ)/asan-iwxd/%.o,$(DAEMON_SRCS) $(ENGINE_SRCS) $(PROTO_SRCS) \
		   $(IPC_SRCS) $(UTIL_SRCS))

$(OBJ)/asan-tests/%.o: %.c $(BUILD_FLAGS) | $(BPF_TEST_SKEL) $(BPF_FAULTS_SKEL) $(FASTPATH_SKEL) $(SCTP_XSK_SKEL) $(CONFIG_H)
	@mkdir -p $(@D)
	$(call msg,CC-ASAN,$<)
	$(Q)$(CC) $(ASAN_CFLAGS) $(TEST_INC) -c $< -o $@

$(OBJ)/asan-iwxd/%.o: %.c $(BUILD_FLAGS) | $(FASTPATH_SKEL) $(SCTP_XSK_SKEL) $(ARENAS_LIVE_SKEL) $(CONFIG_H)
	@mkdir -p $(@D)
	$(call msg,CC-ASAN,$<)
	$(Q)$(CC) $(ASAN_CFLAGS) $(DAEMON_INC) -c $< -o $@

$(ASAN_BIN): $(ASAN_TEST_OBJS)
	@mkdir -p $(@D)
	$(call msg,LD-ASAN,$@)
	$(Q)$(CC) $(ASAN_FLAGS) -o $@ $^ -lcriterion -lpcap -lbpf -lelf -lz $(LDLIBS_CORE) $(LDLIBS_ENGINE)

# the daemon the integration tests start, sanitized as well (tests/support/iwxd_pair.c)
ASAN_IWXD	:= $(BUILD)/asan/iwxd

$(ASAN_IWXD): $(ASAN_IWXD_OBJS)
	@mkdir -p $(@D)
	$(call msg,LD-ASAN,$@)
	$(Q)$(CC) $(ASAN_FLAGS) -o $@ $^ -pthread -lxdp -lbpf -lelf -lz -lcap $(LDLIBS_CORE) $(LDLIBS_ENGINE)

# Criterion's workers for the suites that run daemons: their tests mostly wait (namespaces,
# daemons starting, settle timers, a peer's Terminate), so 4 on 2 CPUs: the ASan pass 232 ->
# 150-172 s, the fast path's 246 -> 153-181 s (TEST_JOBS=2 for fewer).
TEST_JOBS	?= 4

test-asan: $(ASAN_BIN) $(ASAN_IWXD) $(CLI_BIN) $(VICTIM_BIN) $(IWXD_UNCHECKED)
	$(call msg,TEST,$(ASAN_BIN) under ASan/UBSan)
	$(Q)rm -rf $(BUILD)/asan/logs && mkdir -p $(BUILD)/asan/logs && \
	IWX_IWXD=$(ASAN_IWXD) LSAN_OPTIONS=suppressions=$(abspath tests/lsan.supp) \
		IWX_TEST_KEEP_LOGS=$(abspath $(BUILD)/asan/logs) \
		$(ASAN_BIN) --jobs $(TEST_JOBS) > $(BUILD)/asan/unit.log 2>&1; st=$$?; \
	if [ $$st -ne 0 ] || grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' $(BUILD)/asan/unit.log; then \
		tests/support/failed_logs.sh $(BUILD)/asan/unit.log $(BUILD)/asan/logs; \
		grep -a "Synthesis:" $(BUILD)/asan/unit.log | tail -1; exit 1; \
	fi; grep -a "Synthesis:" $(BUILD)/asan/unit.log | tail -1

# the benchmarks are built too, so that they keep building
BENCH_BINS	= $(BENCH_BIN) $(addprefix $(BUILD)/bench/,bench_verbs bench_engine bench_usrsctp bench_reg \
		  bench_scale bench_ringer softirq_time) $(if $(MPICC),$(BUILD)/bench/mpi_bench)

# The integration suites again, with the fast path attached on both daemons (iwxd_pair.c):
# at TC ingress, every one, then at XDP (native on veth) those whose traffic or set-up the
# hook changes: RDMA Writes and Reads, Sends, errors and Terminates, SCTP's AF_XDP beside
# the fast path's XDP program, attaching without the capabilities iwxd drops. The others
# (limits, thousands of queue pairs, SRQs, the socket's rights) run the same loop whatever
# the hook, and each test's two attaches cost the verifier about a second of CPU.
FASTPATH_XDP_SUITES := daemon daemon_settle daemon_large daemon_zerocopy daemon_bells \
		       daemon_client daemon_errors daemon_access daemon_sctp daemon_caps

test-fastpath: $(TEST_BIN) $(IWXD_BIN) $(CLI_BIN)
	$(Q)for mode in tc xdp; do \
		echo "  TEST    the daemon suites with the fast path ($$mode)"; \
		filter='daemon*/*'; [ $$mode = tc ] || filter='@($(subst $(space),|,$(strip $(FASTPATH_XDP_SUITES))))/*'; \
		logs=$(BUILD)/tests/fastpath-$$mode-logs; rm -rf $$logs && mkdir -p $$logs; \
		IWX_TEST_FASTPATH=$$mode IWX_TEST_KEEP_LOGS=$$(realpath $$logs) $(TEST_BIN) --jobs $(TEST_JOBS) \
			--filter "$$filter" > $(BUILD)/tests/fastpath-$$mode.log 2>&1; st=$$?; \
		[ $$st -eq 0 ] || tests/support/failed_logs.sh $(BUILD)/tests/fastpath-$$mode.log $$logs; \
		grep -a "Synthesis:" $(BUILD)/tests/fastpath-$$mode.log | tail -1; \
		[ $$st -eq 0 ] || exit $$st; \
	done

# Every test runs once, under ASan and UBSan (test-asan), and the daemon suites again in
# the plain build with the fast path (test-fastpath): a third pass, the plain build without
# the fast path, ran the same code once more for 5 of CI's minutes. Criterion closes it.
# What they run is built first, on every CPU (BUILD_JOBS); then the suites, one at a time.
BUILD_JOBS	?= $(shell nproc)
TEST_PROGRAMS	= all $(TEST_BIN) $(VICTIM_BIN) $(IWXD_UNCHECKED) $(BENCH_BINS) $(ASAN_BIN) $(ASAN_IWXD) \
		  $(FUZZ_BINS) $(SEEDS_BIN) $(VERBS_CHECK) $(MPI_CHECK)

test:
	$(Q)$(MAKE) --no-print-directory -j$(BUILD_JOBS) $(TEST_PROGRAMS)
	$(Q)$(MAKE) --no-print-directory check-install
	$(Q)DEB_BUILD_OPTIONS="nocheck parallel=$(BUILD_JOBS)" $(MAKE) --no-print-directory test-deb
	$(Q)$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(TEST_FUZZ_SECONDS) FUZZ_JOBS=$(BUILD_JOBS)
	$(Q)$(MAKE) --no-print-directory test-dropin
	$(Q)$(MAKE) --no-print-directory interop
	$(Q)$(MAKE) --no-print-directory test-asan
	$(Q)$(MAKE) --no-print-directory test-fastpath

# Unmodified rdma-core programs (rping, qperf, perftest, ibv_devinfo, Open MPI) through iwx exec,
# and verbs_check: built against rdma-core's libraries, as any application, run on ours.
VERBS_CHECK	:= $(BUILD)/tests/verbs_check

$(VERBS_CHECK): tests/dropin/verbs_check.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(IWX_CFLAGS) -o $@ $< -libverbs -lrdmacm -pthread

# mpi_check (tests) and mpi_bench (scripts/bench-perftest.sh --mpi-only): Open MPI's ranks
# over iwx, built where Open MPI's mpicc is (libopenmpi-dev)
MPICC		?= $(shell command -v mpicc)
MPI_CHECK	:= $(if $(MPICC),$(BUILD)/tests/mpi_check)

$(BUILD)/tests/mpi_check: tests/dropin/mpi_check.c
$(BUILD)/bench/mpi_bench: tests/bench/mpi_bench.c
$(BUILD)/tests/mpi_check $(BUILD)/bench/mpi_bench:
	@mkdir -p $(@D)
	$(call msg,MPICC,$@)
	$(Q)$(MPICC) -std=gnu11 -O2 -Wall -Wextra $(WERROR_FLAG) -o $@ $<

test-dropin: all $(VERBS_CHECK) $(MPI_CHECK)
	$(call msg,TEST,rdma-core programs over the drop-ins)
	$(Q)tests/dropin/run.sh $(abspath $(BUILD))

# ------------------------------------------------------------- interop

# a libiwx application: the library alone (and its own -lisal), served by iwxd
$(RPING_BIN): examples/iwx_rping.c $(LIB_A) $(HEADERS) $(BUILD_FLAGS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(IWX_CFLAGS) $(IWX_LDFLAGS) -o $@ $< $(LIB_A)

# Against Linux's siw in a qemu guest (../shared/interop): rping both ways, through iwxd.
interop: $(RPING_BIN) $(CLI_BIN) $(IWXD_BIN)
	$(Q)tests/interop/run.sh $(abspath $(BUILD))

# ----------------------------------------------------------------- fuzz

$(BUILD)/fuzz/%: tests/fuzz/%.c $(PROTO_SRCS) $(HEADERS)
	@mkdir -p $(@D)
	$(call msg,FUZZ-CC,$@)
	$(Q)$(CLANG) $(FUZZ_FLAGS) -o $@ $< $(PROTO_SRCS) $(LDLIBS_CORE)

# iwxd in-process (tests/fuzz/fuzz_ipc.c): its sources but main(), instrumented as the target
FUZZ_IPC_SRCS	:= $(filter-out control/iwxd/iwxd.c,$(DAEMON_SRCS)) $(ENGINE_SRCS) $(PROTO_SRCS) \
		   $(IPC_SRCS) $(UTIL_SRCS)

$(BUILD)/fuzz/fuzz_ipc: tests/fuzz/fuzz_ipc.c tests/fuzz/fuzz_ipc_input.h $(FUZZ_IPC_SRCS) $(wildcard control/*/*.h lib/*/*.h) \
		$(HEADERS) $(FASTPATH_SKEL) $(SCTP_XSK_SKEL) $(ARENAS_LIVE_SKEL) $(CONFIG_H)
	@mkdir -p $(@D)
	$(call msg,FUZZ-CC,$@)
	$(Q)$(CLANG) $(FUZZ_FLAGS) -Icontrol/engine -Icontrol/iwxd -I$(BUILD)/bpf -o $@ $< \
		$(FUZZ_IPC_SRCS) -pthread -lxdp -lbpf -lelf -lz -lcap $(LDLIBS_CORE) $(LDLIBS_ENGINE)

# iwx decode's reading of a capture (tests/fuzz/fuzz_decode.c)
FUZZ_DECODE_SRCS := cli/decode.c cli/tcp_streams.c cli/json.c $(PROTO_SRCS)

$(BUILD)/fuzz/fuzz_decode: tests/fuzz/fuzz_decode.c $(FUZZ_DECODE_SRCS) $(wildcard cli/*.h) $(HEADERS)
	@mkdir -p $(@D)
	$(call msg,FUZZ-CC,$@)
	$(Q)$(CLANG) $(FUZZ_FLAGS) -Icli -o $@ $< $(FUZZ_DECODE_SRCS) -lpcap $(LDLIBS_CORE)

# placement from the SCTP packet (tests/fuzz/fuzz_sctp_place.c)
$(BUILD)/fuzz/fuzz_sctp_place: tests/fuzz/fuzz_sctp_place.c control/engine/sctp_place.c \
		$(wildcard control/engine/*.h) $(HEADERS)
	@mkdir -p $(@D)
	$(call msg,FUZZ-CC,$@)
	$(Q)$(CLANG) $(FUZZ_FLAGS) -Icontrol/engine -o $@ $< control/engine/sctp_place.c

# the SCTP lower layer's receive, usrsctp and the queue pair modelled (tests/fuzz/fuzz_sctp_rx.c)
$(BUILD)/fuzz/fuzz_sctp_rx: tests/fuzz/fuzz_sctp_rx.c control/engine/llp_sctp.c $(wildcard control/engine/*.h) \
		$(PROTO_SRCS) $(HEADERS) $(wildcard tests/fuzz/*.h)
	@mkdir -p $(@D)
	$(call msg,FUZZ-CC,$@)
	$(Q)$(CLANG) $(FUZZ_FLAGS) -Icontrol/engine -o $@ $< $(PROTO_SRCS) $(LDLIBS_CORE)

# the fast path's programs through BPF_PROG_TEST_RUN (tests/fuzz/fuzz_fastpath.c)
FUZZ_FASTPATH_SRCS := tests/support/fastpath_rig.c tests/support/netns.c $(PROTO_SRCS)

$(BUILD)/fuzz/fuzz_fastpath: tests/fuzz/fuzz_fastpath.c $(FUZZ_FASTPATH_SRCS) tests/support/fastpath_rig.h \
		tests/support/netns.h $(HEADERS) $(wildcard tests/fuzz/*.h) $(FASTPATH_SKEL)
	@mkdir -p $(@D)
	$(call msg,FUZZ-CC,$@)
	$(Q)$(CLANG) $(FUZZ_FLAGS) -Itests/support -I$(BUILD)/bpf -o $@ $< $(FUZZ_FASTPATH_SRCS) \
		-pthread -lbpf -lelf -lz $(LDLIBS_CORE)

# Seeds are valid FPDU streams and frames built with the library at build time.
SEEDS_BIN	:= $(BUILD)/fuzz/make_seeds
SEEDS_DIR	:= $(BUILD)/fuzz/seeds

$(SEEDS_BIN): tests/fuzz/make_seeds.c tests/fuzz/fuzz_ipc_input.h $(PROTO_A) $(HEADERS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(IWX_CFLAGS) -o $@ $< $(PROTO_A) $(LDLIBS_CORE)

# Each target starts from its seeds and from the corpus kept in the tree (tests/fuzz/corpus/,
# what earlier soaks found, minimized); `make fuzz` adds what it finds under $(BUILD) only,
# `make fuzz-long` soaks (FUZZ_SECONDS each) and then minimizes what it found into the tree.
FUZZ_TREE	:= tests/fuzz/corpus

# FUZZ_JOBS targets at once (make test: BUILD_JOBS), each on its own CPU
FUZZ_JOBS	?= 1

fuzz: $(FUZZ_BINS) $(SEEDS_BIN)
	$(Q)rm -rf $(SEEDS_DIR) && $(SEEDS_BIN) $(SEEDS_DIR)
	$(Q)printf '%s\n' $(FUZZ_BINS) | xargs -P $(FUZZ_JOBS) -I{} tests/fuzz/run.sh $(BUILD) {} $(FUZZ_SECONDS)

fuzz-long: FUZZ_SECONDS = 3600
fuzz-long: fuzz
	$(Q)set -e; for f in $(FUZZ_BINS); do \
		name=$$(basename $$f); min=$(BUILD)/fuzz/min/$$name; \
		rm -rf $$min && mkdir -p $$min; \
		$$f -merge=1 $$min $(FUZZ_TREE)/$$name $(BUILD)/fuzz/corpus/$$name \
			2> $(BUILD)/fuzz/$$name-merge.log || { tail -20 $(BUILD)/fuzz/$$name-merge.log; exit 1; }; \
		rm -rf $(FUZZ_TREE)/$$name && mv $$min $(FUZZ_TREE)/$$name; \
		echo "  CORPUS  $$name: $$(ls $(FUZZ_TREE)/$$name | wc -l) inputs," \
			"$$(du -sk $(FUZZ_TREE)/$$name | cut -f1) KiB in $(FUZZ_TREE)/$$name"; \
	done

# ---------------------------------------------------------------- bench

$(BENCH_BIN): tests/bench/bench_proto.c $(PROTO_A) $(HEADERS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(IWX_CFLAGS) -o $@ $< $(PROTO_A) $(LDLIBS_CORE)

bench: $(BENCH_BIN)
	$(Q)$(BENCH_BIN)

# the cost of registering ordinary memory (1 MiB, 64 MiB): run it against an iwxd
$(BUILD)/bench/bench_reg: tests/bench/bench_reg.c $(LIB_A) $(HEADERS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(IWX_CFLAGS) $(IWX_LDFLAGS) -o $@ $< $(LIB_A)

# RDMA between two namespaces beside plain TCP and iperf3: scripts/bench.sh runs both.
# One benchmark (bench.c), two RDMA sides (bench.h): bench_verbs through libiwx and
# iwxd, the product path; bench_engine on the engine in-process, without the daemon.
# bench_engine --llp sctp: the queue pair on the DDP adaptation over usrsctp in UDP
# (bench_carrier.c), which bench_usrsctp, plain usrsctp, shares.
BENCH_UTIL	:= tests/bench/bench_util.c tests/bench/bench_util.h
BENCH_CARRIER	:= tests/bench/bench_carrier.c $(SCTP_XSK_SKEL)
BENCH_NET	:= tests/bench/bench.c tests/bench/bench.h $(BENCH_UTIL)

$(BUILD)/bench/bench_verbs: tests/bench/bench_verbs.c $(BENCH_NET) $(LIB_A) $(HEADERS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(IWX_CFLAGS) -o $@ tests/bench/bench.c tests/bench/bench_util.c $< $(LIB_A)

$(BUILD)/bench/bench_engine: tests/bench/bench_engine.c $(BENCH_NET) $(BENCH_CARRIER) \
		$(ENGINE_SRCS) $(ENGINE_HDRS) $(PROTO_A) $(UTIL_A) $(HEADERS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(IWX_CFLAGS) -Icontrol/engine -I$(BUILD)/bpf -o $@ tests/bench/bench.c tests/bench/bench_util.c \
		tests/bench/bench_carrier.c $< $(ENGINE_SRCS) $(PROTO_A) $(UTIL_A) \
		-lbpf -lelf -lz $(LDLIBS_CORE) $(LDLIBS_ENGINE)

# iwxd at scale: many queue pairs between two iwxds (scripts/bench-scale.sh runs it)
$(BUILD)/bench/bench_scale: tests/bench/bench_scale.c $(BENCH_UTIL) $(LIB_A) $(HEADERS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(IWX_CFLAGS) -o $@ $< tests/bench/bench_util.c $(LIB_A)

# a client that rings its doorbells without end (scripts/bench-bell.sh runs it)
$(BUILD)/bench/bench_ringer: tests/bench/bench_ringer.c tests/support/ringer.c tests/support/ringer.h \
		$(LIB_A) $(HEADERS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(IWX_CFLAGS) -Itests/support -Ilib/client -o $@ $< tests/support/ringer.c $(LIB_A)

# Plain usrsctp on the carrier of bench_engine --llp sctp: scripts/bench-sctp.sh runs both
$(BUILD)/bench/bench_usrsctp: tests/bench/bench_usrsctp.c $(BENCH_UTIL) $(BENCH_CARRIER) \
		$(ENGINE_SRCS) $(ENGINE_HDRS) $(PROTO_A) $(UTIL_A) $(HEADERS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(IWX_CFLAGS) -Icontrol/engine -I$(BUILD)/bpf -o $@ $< tests/bench/bench_util.c \
		tests/bench/bench_carrier.c $(ENGINE_SRCS) $(PROTO_A) $(UTIL_A) -lbpf -lelf -lz $(LDLIBS_CORE) \
		$(LDLIBS_ENGINE)

# the CPU meter: softirq a daemon was charged for, and softirq from idle /proc/stat misses
$(BUILD)/bench/softirq_time: tests/bench/softirq_time.c tests/bpf/softirq_time.h $(BUILD)/bpf/softirq_time.skel.h
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(IWX_CFLAGS) -Itests/bpf -I$(BUILD)/bpf -o $@ $< -lbpf -lelf -lz

# -------------------------------------------------------------- install

install: all
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(LIBDIR) \
		$(DESTDIR)$(INCLUDEDIR)/iwx $(DESTDIR)$(PKGCONFIGDIR)
	$(Q)install -m 755 $(CLI_BIN) $(RPING_BIN) $(DESTDIR)$(BINDIR)/
	$(Q)install -m 755 $(IWXD_BIN) $(DESTDIR)$(SBINDIR)/
	$(Q)install -m 644 $(LIB_A) $(DESTDIR)$(LIBDIR)/
	$(Q)install -m 755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/
	$(Q)ln -sf libiwx.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libiwx.so
	$(Q)install -m 644 $(PUBLIC_HEADERS) $(DESTDIR)$(INCLUDEDIR)/iwx/
	$(Q)install -d $(DESTDIR)$(LIBDIR)/iwx
	$(Q)install -m 755 $(DROPIN_LIBS) $(DESTDIR)$(LIBDIR)/iwx/
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
		libiwx.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/libiwx.pc
	$(Q)install -d $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(BASHCOMPDIR) \
		$(addprefix $(DESTDIR)$(MANDIR)/man,$(sort $(subst .,,$(suffix $(MAN_PAGES)))))
	$(Q)sed 's|@SBINDIR@|$(SBINDIR)|' dist/systemd/iwxd.service.in > $(DESTDIR)$(SYSTEMDUNITDIR)/iwxd.service
	$(Q)install -m 644 dist/systemd/iwxd.default $(DESTDIR)$(DOCDIR)/examples/
	$(Q)install -m 644 $(COMPLETION) $(DESTDIR)$(BASHCOMPDIR)/iwx
	$(Q)for m in $(MAN_PAGES); do \
		install -m 644 $$m $(DESTDIR)$(MANDIR)/man$${m##*.}/ || exit 1; done
	$(Q)for f in $(LIBIWX_CALLS); do \
		echo '.so man3/libiwx.3' > $(DESTDIR)$(MANDIR)/man3/$$f.3 || exit 1; done

# -------------------------------------------------------------- Debian

# make deb: the packages of debian/ (iwx, libiwx0, libiwx-dev, iwx-dropin), built by
# dpkg-buildpackage from a copy of the tracked files in $(DEB_DIR)/iwx-$(VERSION), so that
# neither the tree nor its build/ changes; the .debs land in $(DEB_DIR), and any tag of
# lintian's, down to pedantic, fails it. DEB_BUILD_OPTIONS=nocheck skips its make check.
DEB_DIR		:= $(BUILD)/deb
DEB_SRC		:= $(DEB_DIR)/iwx-$(VERSION)

deb:
	$(call msg,DEB,$(DEB_DIR))
	$(Q)v=$$(dpkg-parsechangelog -S Version); [ "$$v" = $(VERSION) ] || { \
		echo "deb: dpkg reads version $$v in debian/changelog, the Makefile $(VERSION)" >&2; exit 1; }
	$(Q)git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { \
		echo "deb: builds from a git checkout (the files git tracks)" >&2; exit 1; }
	$(Q)rm -rf $(DEB_DIR) && mkdir -p $(DEB_SRC)
	$(Q)git ls-files -z | tar --null -T - -cf - | tar -xf - -C $(DEB_SRC)
	$(Q)cd $(DEB_SRC) && dpkg-buildpackage -b -us -uc > ../build.log 2>&1 || { \
		tail -40 ../build.log; echo "deb: dpkg-buildpackage failed ($(DEB_DIR)/build.log)" >&2; exit 1; }
	$(call msg,LINTIAN,$(DEB_DIR)/iwx_$(VERSION)_*.changes)
	$(Q)lintian --allow-root --info --pedantic --fail-on error,warning,info,pedantic $(DEB_DIR)/iwx_$(VERSION)_*.changes
	$(Q)ls $(DEB_DIR)/*.deb

# the packages installed into a fresh root, run and purged (tests/install/deb.sh; root)
test-deb: deb
	$(call msg,TEST,the packages in a fresh root)
	$(Q)tests/install/deb.sh $(DEB_DIR)

clean:
	$(call msg,CLEAN,$(BUILD))
	$(Q)rm -rf $(BUILD)

-include $(IWXD_OBJS:.o=.d) $(OBJ)/iwxd-unchecked/fastpath.d $(CLI_OBJS:.o=.d) $(TEST_OBJS:.o=.d) \
	 $(ASAN_TEST_OBJS:.o=.d) $(ASAN_IWXD_OBJS:.o=.d) \
	 $(VERBS_OBJS:.o=.d) $(RDMACM_OBJS:.o=.d) $(patsubst %.c,$(BUILD)/%.d,$(LIB_SRCS))
