# kite: `make` = dependency check + gen + build; `make test`; `make bench`.
# Generated kernels live in out/ (committed); everything built goes to build/.

KITE_DIR := .
KITE_BUILD := build
include runtime/kite.mk
CFLAGS := $(KITE_CFLAGS) -Werror
LDLIBS := $(KITE_LDLIBS)
KITE_ONLY ?=
DEB_PACKAGES := liblua5.4-dev check pkg-config

include gen/gen.mk

.PHONY: all deps gen build test bench tune clean
all: deps
	@$(MAKE) --no-print-directory gen
	@$(MAKE) --no-print-directory build

# Debian packages: installed when run as root, else the one line to run.
deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then echo "kite: installing$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else echo "kite: missing Debian packages; run: sudo apt-get install -y$$missing"; exit 1; fi; \
	fi
	@if [ -z "$(KITE_NVCC)" ]; then echo "kite: nvcc not found on PATH or in $(CUDA_HOME)/bin;" \
	  "install the CUDA toolkit (12.0 or newer, for sm_90a) or set CUDA_HOME"; exit 1; fi

gen: $(KITE_GEN)
	$(KITE_GEN) -t templates -o out $(if $(KITE_ONLY),--only '$(KITE_ONLY)')

# ---- the library: out/ + runtime/, built by runtime/kite.mk ---------------
build: $(KITE_LIB_A) $(KITE_LIB_SO)

# ---- tests and benchmarks ---------------------------------------------------
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)
TEST_BINS := build/test_runtime build/test_gpu build/test_dist

build/test_%: tests/test_%.c tests/kite_test.h build/libkite.a
	$(CC) $(CFLAGS) -Itests $< -o $@ build/libkite.a $(CHECK_LIBS) $(LDLIBS)

test: all $(KITE_GEN) build/test_gen $(TEST_BINS)
	@bash tests/run.sh build/test_gen $(TEST_BINS)

build/kite-bench: bench/kite_bench.c build/libkite.a
	$(CC) $(CFLAGS) $< -o $@ build/libkite.a $(LDLIBS) -lcublasLt

bench: all build/kite-bench
	build/kite-bench

clean:
	rm -rf build
