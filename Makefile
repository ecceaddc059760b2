# inferbench - top-level GNU Makefile (see docs/build.md)
#
#   make                      build libinferbench.{a,so} and build/<variant>/bin/inferbench
#   make BUILD=debug|release|asan|ubsan|tsan
#   make check                build and run every test (final line: N passed, N failed, N skipped)
#   make deps                 install the Debian packages the project needs (root or sudo)
#   make install PREFIX=/usr/local DESTDIR=
#   make bench | fuzz | format | format-check | tidy | valgrind | regen-onnx
#   make CUDA=1 (default: auto when nvcc is found) builds the CUDA backend
#
# Sources are discovered by folder: a new src/<module>/*.c, tests/**/test_*.c,
# tests/fuzz/targets/fuzz_*.c or bench/**/*.c needs no Makefile change.

BUILD ?= release
# O=build/<name> gives a private build folder (several builds side by side)
O ?= build/$(BUILD)
CC ?= cc
ifeq ($(origin CC),default)
CC := gcc
endif
PKG_CONFIG ?= pkg-config
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
ifeq ($(filter -j%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(JOBS)
endif
# V=1 prints full command lines
ifeq ($(V),1)
Q :=
quiet = @true
else
Q := @
quiet = @printf '  %-6s %s\n' $(1) $(2)
endif

VERSION := 0.1.0
SOMAJOR := 0
GIT_REV := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)

# ---- warnings (STYLE.md §10) ---------------------------------------------
CWARNS := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
  -Wold-style-definition -Wpointer-arith -Wcast-qual -Wwrite-strings -Wundef \
  -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough -Wvla \
  -Werror=implicit-function-declaration -Werror=implicit-int
CWARNS_STRICT := -Wconversion
ifeq ($(WERROR),1)
CWARNS += -Werror
endif

# ---- variants ---------------------------------------------------------------
OPT_release := -O2 -DNDEBUG
OPT_debug := -O0 -g3 -DIB_DEBUG
OPT_asan := -O1 -g -fsanitize=address -fno-omit-frame-pointer -fno-sanitize-recover=all
OPT_ubsan := -O1 -g -fsanitize=undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
OPT_tsan := -O1 -g -fsanitize=thread
ifeq ($(OPT_$(BUILD)),)
$(error unknown BUILD=$(BUILD); use debug, release, asan, ubsan or tsan)
endif
SAN_LDFLAGS_asan := -fsanitize=address
SAN_LDFLAGS_ubsan := -fsanitize=undefined
SAN_LDFLAGS_tsan := -fsanitize=thread
TIMEOUT_MULT_asan := 4
TIMEOUT_MULT_ubsan := 3
TIMEOUT_MULT_tsan := 8
TIMEOUT_MULT_debug := 3
TIMEOUT_MULT_release := 1

# ---- dependencies (Debian packages; `make deps` installs them) -------------
PKGS := libprotobuf-c jansson cairo fontconfig libjpeg zlib sndfile fftw3f libcurl libmicrohttpd
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
PKG_OK := $(shell $(PKG_CONFIG) --exists $(PKGS) 2>/dev/null && echo yes)
# Debian's libdnnl-dev ships no .pc file: overridable, after a pkg-config probe.
DNNL_CFLAGS ?= $(shell $(PKG_CONFIG) --cflags dnnl 2>/dev/null)
DNNL_LIBS ?= $(shell $(PKG_CONFIG) --libs dnnl 2>/dev/null || echo -ldnnl)

# CUDA: auto-detected when nvcc exists; CUDA=0 disables.
CUDA_HOME ?= /usr/local/cuda
NVCC ?= $(CUDA_HOME)/bin/nvcc
ifeq ($(origin CUDA),undefined)
CUDA := $(shell test -x $(NVCC) && test -f $(CUDA_HOME)/include/cudnn.h -o -f /usr/include/cudnn.h && echo 1 || echo 0)
endif
CUDA_ARCHS ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90
NVCC_FLAGS ?= -O3 -std=c++17 $(CUDA_ARCHS) -Xcompiler -fPIC

BASE_CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L -fPIC -fvisibility=hidden -MMD -MP \
  -Iinclude -Isrc $(OPT_$(BUILD))
ALL_CFLAGS = $(BASE_CFLAGS) $(CWARNS) $(PKG_CFLAGS) $(DNNL_CFLAGS) $(CFLAGS)
# -fopenmp: the CPU backend shares oneDNN's OpenMP (libgomp) pool (docs/cpu_backend.md)
LDLIBS_ALL := $(PKG_LIBS) $(DNNL_LIBS) -fopenmp -lpthread -lm
LDFLAGS_ALL = $(SAN_LDFLAGS_$(BUILD)) $(LDFLAGS)

ifeq ($(CUDA),1)
BASE_CFLAGS += -DIB_WITH_CUDA -I$(CUDA_HOME)/include
LDLIBS_ALL += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudnn -lcublasLt -lcublas -lcudart -lstdc++
endif
BASE_CFLAGS += -DIB_WITH_DNNL

# ---- sources -----------------------------------------------------------------
LIB_DIRS := base text loadgen ir ir/ops onnx runtime backend backend/cpu models dataset net \
  metrics harness report compliance
LIB_SRCS := $(foreach d,$(LIB_DIRS),$(wildcard src/$(d)/*.c))
GEN_SRCS := $(wildcard src/onnx/gen/*.c)
CUDA_C_SRCS := $(wildcard src/backend/cuda/*.c)
CUDA_CU_SRCS := $(wildcard src/backend/cuda/kernels/*.cu)
ifeq ($(CUDA),1)
LIB_SRCS += $(CUDA_C_SRCS)
endif
# Files under src/<module>/embed/ become C arrays (tools/embed-file.sh).
EMBED_FILES := $(wildcard src/*/embed/*)
EMBED_SRCS := $(foreach f,$(EMBED_FILES),$(O)/gen/embed_$(subst /,_,$(subst src/,,$(f))).c)
CLI_SRCS := $(wildcard src/cli/*.c)
LOADGEN_SRCS := $(wildcard src/base/*.c src/loadgen/*.c)

obj = $(patsubst %.c,$(O)/obj/%.o,$(1))
LIB_OBJS := $(call obj,$(LIB_SRCS) $(GEN_SRCS)) $(patsubst %.c,%.o,$(EMBED_SRCS))
ifeq ($(CUDA),1)
LIB_OBJS += $(patsubst %.cu,$(O)/obj/%.o,$(CUDA_CU_SRCS))
endif
LOADGEN_OBJS := $(call obj,$(LOADGEN_SRCS)) $(patsubst %.c,%.o,$(filter $(O)/gen/embed_loadgen_%,$(EMBED_SRCS)))
CLI_OBJS := $(call obj,$(CLI_SRCS))

TEST_SRCS := $(wildcard tests/unit/*.c tests/integration/*.c tests/conformance/*.c)
TEST_OBJS := $(call obj,$(TEST_SRCS) tests/harness/runner.c)
FUZZ_TARGET_SRCS := $(wildcard tests/fuzz/targets/fuzz_*.c)
FUZZ_NAMES := $(patsubst fuzz_%,%,$(basename $(notdir $(FUZZ_TARGET_SRCS))))
FUZZ_REPLAYS := $(foreach n,$(FUZZ_NAMES),$(O)/fuzz/replay_$(n))
BENCH_SRCS := $(wildcard bench/*.c bench/*/*.c)
BENCH_BINS := $(patsubst bench/%.c,$(O)/bench/%,$(BENCH_SRCS))

LIB_A := $(O)/lib/libinferbench.a
LIB_SO := $(O)/lib/libinferbench.so.$(VERSION)
LOADGEN_A := $(O)/lib/libinferbench-loadgen.a
CLI := $(O)/bin/inferbench
TESTS := $(O)/tests/ib-tests

.PHONY: FORCE all check check-deps deps install uninstall clean bench fuzz format format-check \
  tidy valgrind regen-onnx loadgen-lib help
.DEFAULT_GOAL := all

MAN_PAGE := $(O)/man/inferbench.1

all: check-deps $(LIB_A) $(LIB_SO) $(LOADGEN_A) $(CLI) $(MAN_PAGE)

help:
	@sed -n '1,14p' Makefile | sed 's/^# \{0,1\}//'

check-deps:
ifneq ($(PKG_OK),yes)
	@echo "inferbench: missing build dependencies ($(PKGS) via pkg-config)." >&2
	@echo "inferbench: run 'make deps' (installs the Debian packages with apt) and retry." >&2
	@exit 2
endif

deps:
	@sh tools/deps.sh

# ---- compile -----------------------------------------------------------------
$(O)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(call quiet,CC,$<)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# the CPU backend: OpenMP kernels in the same libgomp pool as oneDNN
$(O)/obj/src/backend/cpu/%.o: ALL_CFLAGS += -fopenmp
# loadgen and base: -Wconversion (silent truncation would corrupt counts/timestamps)
$(O)/obj/src/loadgen/%.o $(O)/obj/src/base/%.o: ALL_CFLAGS += $(CWARNS_STRICT)
# generated protobuf-c code is not ours to warn about
$(O)/obj/src/onnx/gen/%.o: ALL_CFLAGS := $(BASE_CFLAGS) -w $(PKG_CFLAGS) $(CFLAGS)
$(O)/obj/tests/%.o: ALL_CFLAGS += -Itests/harness -I$(O)/gen
$(O)/obj/bench/%.o: ALL_CFLAGS += -Itests/harness
$(O)/obj/tests/harness/runner.o: $(O)/gen/test_list.h
# The git revision in a generated header rewritten only when it changes, so version.o is
# rebuilt after a commit (the cache key of generated models includes it) and only then.
$(O)/gen/git_rev.h: FORCE
	@mkdir -p $(@D)
	@echo '#define IB_GIT_REV "$(GIT_REV)"' > $@.tmp && (cmp -s $@.tmp $@ || mv $@.tmp $@); rm -f $@.tmp
$(O)/obj/src/base/version.o: $(O)/gen/git_rev.h
$(O)/obj/src/base/version.o: ALL_CFLAGS += -I$(O)/gen -DIB_HAVE_GIT_REV_H
FORCE:

$(O)/obj/%.o: %.cu
	@mkdir -p $(@D)
	$(call quiet,NVCC,$<)
	$(Q)$(NVCC) $(NVCC_FLAGS) -Iinclude -Isrc -c $< -o $@

define EMBED_RULE
$(O)/gen/embed_$(subst /,_,$(subst src/,,$(1))).c: $(1) tools/embed-file.sh
	@mkdir -p $$(@D)
	sh tools/embed-file.sh $(1) $$@
endef
$(foreach f,$(EMBED_FILES),$(eval $(call EMBED_RULE,$(f))))

$(O)/gen/embed_%.o: $(O)/gen/embed_%.c
	$(Q)$(CC) $(BASE_CFLAGS) -c $< -o $@

# The test table: every TEST(name)/TEST_TIMEOUT(name, s) in tests/, plus one
# corpus-replay entry per fuzz target.
$(O)/gen/test_list.h: $(TEST_SRCS) $(FUZZ_TARGET_SRCS) tools/gen-test-list.sh
	@mkdir -p $(@D)
	sh tools/gen-test-list.sh $(TEST_SRCS) -- $(FUZZ_NAMES) > $@.tmp && mv $@.tmp $@

# ---- link --------------------------------------------------------------------
$(LIB_A): $(LIB_OBJS)
	@mkdir -p $(@D)
	$(call quiet,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(LOADGEN_A): $(LOADGEN_OBJS)
	@mkdir -p $(@D)
	$(call quiet,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIB_SO): $(LIB_OBJS)
	@mkdir -p $(@D)
	$(call quiet,LD,$@)
	$(Q)$(CC) -shared -Wl,-soname,libinferbench.so.$(SOMAJOR) $(LDFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)
	ln -sf libinferbench.so.$(VERSION) $(O)/lib/libinferbench.so.$(SOMAJOR)
	ln -sf libinferbench.so.$(SOMAJOR) $(O)/lib/libinferbench.so

$(CLI): $(CLI_OBJS) $(LIB_A)
	@mkdir -p $(@D)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $(CLI_OBJS) $(LIB_A) $(LDLIBS_ALL)

# man pages from the commands' own --help (tools/gen-man.sh), so they cannot drift
$(MAN_PAGE): $(CLI) tools/gen-man.sh
	$(call quiet,MAN,$(O)/man)
	$(Q)sh tools/gen-man.sh $(CLI) $(O)/man $(VERSION)

$(TESTS): $(TEST_OBJS) $(LIB_A)
	@mkdir -p $(@D)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $(TEST_OBJS) $(LIB_A) $(LDLIBS_ALL)

$(O)/fuzz/replay_%: $(O)/obj/tests/fuzz/targets/fuzz_%.o $(O)/obj/tests/fuzz/replay_main.o $(LIB_A)
	@mkdir -p $(@D)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)

$(O)/bench/%: $(O)/obj/bench/%.o $(LIB_A)
	@mkdir -p $(@D)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)

# ---- test --------------------------------------------------------------------
TEST_ENV = IB_SRC_DIR=$(CURDIR) IB_BIN_DIR=$(CURDIR)/$(O)/bin IB_FUZZ_DIR=$(CURDIR)/$(O)/fuzz \
  IB_BUILD_DIR=$(CURDIR)/$(O) IB_SHARED_DIR=$(abspath $(CURDIR)/../shared) \
  IB_BUILD_ARGS="BUILD=$(BUILD) O=$(O) CUDA=$(CUDA)" \
  IB_TEST_TIMEOUT_MULT=$(TIMEOUT_MULT_$(BUILD))

check: all $(TESTS) $(FUZZ_REPLAYS) $(BENCH_BINS)
	$(TEST_ENV) $(TESTS) -j$(JOBS) $(T)

loadgen-lib: $(LOADGEN_A)

bench: all $(BENCH_BINS)
	@echo "bench programs in $(O)/bench/ (see docs/bench.md)"

# libFuzzer builds (clang): the library is built with clang into build/fuzz-lib
# (ASan + UBSan + fuzzer coverage), then each target links -fsanitize=fuzzer into
# build/fuzz/fuzz_<name>. Run: build/fuzz/fuzz_<name> tests/fuzz/corpus/<name>
FUZZ_CC ?= clang
FUZZ_SAN := -fsanitize=fuzzer-no-link,address,undefined
fuzz:
	$(MAKE) O=build/fuzz-lib BUILD=asan CC=$(FUZZ_CC) CUDA=0 \
	  CFLAGS="$(FUZZ_SAN) -Wno-unknown-warning-option" LDFLAGS="-fsanitize=address,undefined" \
	  build/fuzz-lib/lib/libinferbench.a
	@mkdir -p build/fuzz
	@for n in $(FUZZ_NAMES); do \
	  echo "  FUZZ   build/fuzz/fuzz_$$n"; \
	  $(FUZZ_CC) -g -O1 -fsanitize=fuzzer,address,undefined -std=c11 -D_POSIX_C_SOURCE=200809L \
	    -Iinclude -Isrc -Itests/harness $(PKG_CFLAGS) tests/fuzz/targets/fuzz_$$n.c \
	    build/fuzz-lib/lib/libinferbench.a -o build/fuzz/fuzz_$$n \
	    $(filter-out -lcudnn -lcublasLt -lcublas -lcudart,$(LDLIBS_ALL)) -fopenmp || exit 1; \
	done

valgrind: all $(TESTS)
	$(TEST_ENV) IB_TEST_TIMEOUT_MULT=20 IB_VALGRIND=1 $(TESTS) -j$(JOBS) $(T)

# ---- install -----------------------------------------------------------------
install: all
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/inferbench \
	  $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 644 $(LIB_A) $(LOADGEN_A) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf libinferbench.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libinferbench.so.$(SOMAJOR)
	ln -sf libinferbench.so.$(SOMAJOR) $(DESTDIR)$(LIBDIR)/libinferbench.so
	install -m 644 include/inferbench/*.h $(DESTDIR)$(INCLUDEDIR)/inferbench/
	install -m 755 $(CLI) $(DESTDIR)$(BINDIR)/
	install -m 644 $(O)/man/*.1 $(DESTDIR)$(MANDIR)/man1/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	  -e 's|@VERSION@|$(VERSION)|' -e 's|@PRIVATE_LIBS@|$(LDLIBS_ALL)|' tools/inferbench.pc.in \
	  > $(DESTDIR)$(LIBDIR)/pkgconfig/inferbench.pc

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libinferbench* $(DESTDIR)$(BINDIR)/inferbench \
	  $(DESTDIR)$(LIBDIR)/pkgconfig/inferbench.pc $(DESTDIR)$(MANDIR)/man1/inferbench*.1
	rm -rf $(DESTDIR)$(INCLUDEDIR)/inferbench

# ---- maintenance -------------------------------------------------------------
FORMAT_SRCS = $(shell git ls-files '*.c' '*.h' | grep -v '/gen/')
format:
	clang-format -i $(FORMAT_SRCS)
format-check:
	clang-format --dry-run --Werror $(FORMAT_SRCS)
tidy:
	clang-tidy $(LIB_SRCS) $(CLI_SRCS) -- $(BASE_CFLAGS) $(PKG_CFLAGS)

regen-onnx:
	cd src/onnx/gen && cp /usr/include/onnx/onnx.proto . && \
	  protoc-c --c_out=. onnx.proto && rm -f onnx.proto

clean:
	rm -rf build

-include $(shell find $(O)/obj -name '*.d' 2>/dev/null)
