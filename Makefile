# iwx: iWARP (RDMAP/DDP/MPA over TCP) for Linux.
#   make            build the library, daemon, CLI and BPF objects
#   make test       run every test (unit, conformance against tshark, BPF build check)
#   make fuzz       run the libFuzzer targets for FUZZ_SECONDS each (default 30)
#   make bench      run the protocol-core benchmark
#   make install    install under DESTDIR$(PREFIX)
# V=1 shows the commands.

PREFIX		?= /usr/local
LIBDIR		?= $(PREFIX)/lib
INCLUDEDIR	?= $(PREFIX)/include
PKGCONFIGDIR	?= $(LIBDIR)/pkgconfig
DESTDIR		?=

CC		?= cc
CLANG		?= clang
AR		?= ar
CFLAGS		?= -O2 -g
IWX_CFLAGS	:= -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -Iinclude $(CFLAGS)
LDLIBS_CORE	:= -lisal

VERSION		:= 0.1.0
SOVERSION	:= 0
BUILD		:= build
FUZZ_SECONDS	?= 30

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-7s %s\n' '$(1)' '$(2)';
endif

LIB_SRCS	:= $(wildcard lib/*.c)
LIB_OBJS	:= $(LIB_SRCS:%.c=$(BUILD)/%.o)
LIB_A		:= $(BUILD)/libiwx.a
LIB_SO		:= $(BUILD)/libiwx.so.$(SOVERSION)
LIB_PC		:= $(BUILD)/libiwx.pc
HEADERS		:= $(wildcard include/iwx/*.h)

TEST_SRCS	:= $(wildcard tests/test_*.c) $(wildcard tests/support/*.c)
TEST_BIN	:= $(BUILD)/tests/unit
FUZZ_SRCS	:= $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS	:= $(FUZZ_SRCS:tests/fuzz/%.c=$(BUILD)/fuzz/%)
FUZZ_FLAGS	:= -std=gnu11 -g -O1 -D_GNU_SOURCE -Iinclude \
		   -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
BENCH_BIN	:= $(BUILD)/bench/bench_proto
BPF_CHECK	:= $(BUILD)/bpf/wire_check.bpf.o

.PHONY: all lib test check-bpf fuzz bench install clean
all: lib

lib: $(LIB_A) $(LIB_SO) $(LIB_PC)

$(BUILD)/lib/%.o: lib/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(call msg,CC,$<)
	$(Q)$(CC) $(IWX_CFLAGS) -fPIC -fvisibility=default -c $< -o $@

$(LIB_A): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(LIB_SO): $(LIB_OBJS)
	$(call msg,LD,$@)
	$(Q)$(CC) -shared -Wl,-soname,libiwx.so.$(SOVERSION) -o $@ $^ $(LDLIBS_CORE)
	$(Q)ln -sf libiwx.so.$(SOVERSION) $(BUILD)/libiwx.so

$(LIB_PC): libiwx.pc.in Makefile
	$(call msg,GEN,$@)
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' $< > $@

# ---------------------------------------------------------------- tests

$(TEST_BIN): $(TEST_SRCS) $(LIB_A) $(HEADERS) $(wildcard tests/support/*.h)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(IWX_CFLAGS) -Itests/support -o $@ $(TEST_SRCS) $(LIB_A) \
		-lcriterion -lpcap $(LDLIBS_CORE)

# The wire header must compile for the BPF target: the fast path shares it.
$(BPF_CHECK): tests/bpf/wire_check.bpf.c $(HEADERS)
	@mkdir -p $(@D)
	$(call msg,CLANG,$@)
	$(Q)$(CLANG) -target bpf -O2 -g -Wall -Wextra -Werror -Iinclude \
		-I/usr/include/$(shell uname -m)-linux-gnu -c $< -o $@

check-bpf: $(BPF_CHECK)

test: $(TEST_BIN) check-bpf
	$(call msg,TEST,$(TEST_BIN))
	$(Q)$(TEST_BIN) --jobs 2

# ----------------------------------------------------------------- fuzz

$(BUILD)/fuzz/%: tests/fuzz/%.c $(LIB_SRCS) $(HEADERS)
	@mkdir -p $(@D)
	$(call msg,FUZZ-CC,$@)
	$(Q)$(CLANG) $(FUZZ_FLAGS) -o $@ $< $(LIB_SRCS) $(LDLIBS_CORE)

fuzz: $(FUZZ_BINS)
	$(Q)set -e; for f in $(FUZZ_BINS); do \
		name=$$(basename $$f); corpus=$(BUILD)/fuzz/corpus/$$name; \
		mkdir -p $$corpus; \
		echo "  FUZZ    $$name for $(FUZZ_SECONDS) s"; \
		$$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 $$corpus \
			2> $(BUILD)/fuzz/$$name.log || { tail -50 $(BUILD)/fuzz/$$name.log; exit 1; }; \
		grep -E '^stat::number_of_executed_units|^Done' $(BUILD)/fuzz/$$name.log | tr '\n' ' '; echo; \
	done

# ---------------------------------------------------------------- bench

$(BENCH_BIN): tests/bench/bench_proto.c $(LIB_A) $(HEADERS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(IWX_CFLAGS) -o $@ $< $(LIB_A) $(LDLIBS_CORE)

bench: $(BENCH_BIN)
	$(Q)$(BENCH_BIN)

# -------------------------------------------------------------- install

install: lib
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/iwx $(DESTDIR)$(PKGCONFIGDIR)
	$(Q)install -m 644 $(LIB_A) $(DESTDIR)$(LIBDIR)/
	$(Q)install -m 755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/
	$(Q)ln -sf libiwx.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libiwx.so
	$(Q)install -m 644 $(HEADERS) $(DESTDIR)$(INCLUDEDIR)/iwx/
	$(Q)install -m 644 $(LIB_PC) $(DESTDIR)$(PKGCONFIGDIR)/libiwx.pc

clean:
	$(call msg,CLEAN,$(BUILD))
	$(Q)rm -rf $(BUILD)
