# kite: `make` = dependency check + gen + build; `make test`; `make bench`.
# Generated kernels live in out/ (committed); everything built goes to build/.

.DEFAULT_GOAL := all
KITE_DIR := .
KITE_BUILD := build
include runtime/kite.mk
CFLAGS := $(KITE_CFLAGS) -Werror
LDLIBS := $(KITE_LDLIBS)
KITE_ONLY ?=
# Every GPU measured in bench/tuned/ (<gpu>.tsv, written by make tune on that GPU, and
# <gpu>.times.tsv) gets a set of rules in the table; the runtime uses the set whose name the
# device's name holds, else KITE_GPU's, the default, listed first.  Without the files the
# heuristics pick.
KITE_GPU ?= h200
KITE_TUNED := bench/tuned/$(KITE_GPU).tsv
KITE_TIMES := bench/tuned/$(KITE_GPU).times.tsv
KITE_GPUS := $(KITE_GPU) $(filter-out $(KITE_GPU),$(sort $(basename $(notdir \
  $(filter-out %.times.tsv,$(wildcard bench/tuned/*.tsv))))))
DEB_PACKAGES := liblua5.4-dev check pkg-config

include gen/gen.mk

.PHONY: all deps deps-lua gen gen-out build test test-bins bench tune clean
all: deps
	@$(MAKE) --no-print-directory gen-out
	@$(MAKE) --no-print-directory build

# Lua 5.4 and Check through pkg-config; missing ones are installed from
# Debian when run as root, else the one apt-get line to run is printed.
# `make gen` needs only these; the library needs nvcc as well.
deps-lua:
	@if ! pkg-config --exists lua5.4 check 2>/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then echo "kite: installing $(DEB_PACKAGES)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(DEB_PACKAGES); \
	  else echo "kite: Lua 5.4 or Check missing; run: sudo apt-get install -y $(DEB_PACKAGES)"; exit 1; fi; \
	fi

deps: deps-lua
	@if [ -z "$(KITE_NVCC)" ]; then echo "kite: nvcc not found on PATH or in $(CUDA_HOME)/bin;" \
	  "install the CUDA toolkit (12.0 or newer, for sm_90a) or set CUDA_HOME"; exit 1; fi

gen: deps-lua
	@$(MAKE) --no-print-directory gen-out

gen-out: $(KITE_GEN)
	$(KITE_GEN) -t templates -o out $(if $(KITE_ONLY),--only '$(KITE_ONLY)') \
	  $(foreach g,$(KITE_GPUS),--gpu $(g) \
	    $(if $(wildcard bench/tuned/$(g).tsv),--tuned bench/tuned/$(g).tsv) \
	    $(if $(wildcard bench/tuned/$(g).times.tsv),--times bench/tuned/$(g).times.tsv))

# ---- the library: out/ + runtime/, built by runtime/kite.mk ---------------
build: $(KITE_LIB_A) $(KITE_LIB_SO)

# ---- tests and benchmarks ---------------------------------------------------
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)
TEST_BINS := build/test_runtime build/test_gpu build/test_norm build/test_gemm build/test_tune build/test_dist
TEST_HDRS := tests/kite_test.h tests/kt_check.h   # what every CUDA test binary includes

build/test_%: tests/test_%.c $(TEST_HDRS) build/libkite.a
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -Itests $< -o $@ build/libkite.a $(CHECK_LIBS) $(LDLIBS)

# test_gemm's data, float64 reference and checks run on the device: a .cu of
# its own, compiled for sm_90a like the kernels and linked in.
build/tests/kt_gemm_ref.o: tests/kt_gemm_ref.cu tests/kt_gemm_ref.h runtime/kite.h
	@mkdir -p $(dir $@)
	$(KITE_NVCC) -O3 -std=c++17 $(KITE_ARCH) -Xcompiler -Wall,-Wextra,-Werror -Iruntime -Itests -c $< -o $@

build/test_gemm: tests/test_gemm.c $(TEST_HDRS) tests/kt_gemm_ref.h build/tests/kt_gemm_ref.o build/libkite.a
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -Itests $< -o $@ build/tests/kt_gemm_ref.o build/libkite.a $(CHECK_LIBS) $(LDLIBS)

# test_tune drives the tune's supervisor, which lives with the bench.
build/test_tune: tests/test_tune.c $(TEST_HDRS) bench/bench_util.c bench/bench_util.h build/libkite.a
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -Itests -Ibench $< bench/bench_util.c -o $@ build/libkite.a $(CHECK_LIBS) $(LDLIBS)

# The test binaries are built only after `all` is done, so that a parallel
# make never builds the library twice at once.
test: all
	@$(MAKE) --no-print-directory test-bins
	@bash tests/run.sh build/test_gen $(TEST_BINS)

test-bins: build/test_gen $(TEST_BINS)

# kite-bench times kite_gemm against cuBLASLt: -lcublasLt from the toolkit's
# lib64 (KITE_LDLIBS has its -L and rpath).
BENCH_SRC := bench/kite_bench.c bench/bench_util.c bench/bench_gemm.c bench/launch_clock.c
build/kite-bench: $(BENCH_SRC) bench/bench_util.h bench/bench_gemm.h build/libkite.a
	$(CC) $(CFLAGS) $(BENCH_SRC) -o $@ build/libkite.a $(LDLIBS) -lcublasLt

bench: all
	@$(MAKE) --no-print-directory build/kite-bench
	build/kite-bench

# On the GPU: time the variants over the shape grid into $(KITE_TUNED), then
# regenerate the table from it (commit both).  The GPU's name must hold
# KITE_GPU: an H100's times written as h200's would mislead the H200s.
tune:
	@name=$$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1); \
	if [ -n "$$name" ] && ! printf '%s' "$$name" | grep -qi -- "$(KITE_GPU)"; then \
	  echo "kite: the GPU is '$$name', not $(KITE_GPU): run make tune KITE_GPU=<the name's model, e.g. h100>"; exit 1; fi
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory build/kite-bench
	@mkdir -p $(dir $(KITE_TUNED))
	build/kite-bench --tune $(KITE_TUNED) --times $(KITE_TIMES)
	build/kite-bench gemm --tune $(KITE_TUNED) --times $(KITE_TIMES)
	@$(MAKE) --no-print-directory gen
	@$(MAKE) --no-print-directory build

clean:
	rm -rf build
